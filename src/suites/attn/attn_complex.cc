// attn.complex: complex-order attention as in its reference code
// (encodings.md section 3): q, k, v are the real parts, qi, ki, vi the
// imaginary ones; re = q.k - qi.ki, im = q.ki + qi.k (no conjugate),
// s = scale sqrt(re^2 + im^2), scale default 1/sqrt(2D); o = p.v, oi = p.vi
// with p the softmax of s over the visible keys. Every row has two parts
// (real, imaginary): the flash kernel carries both in one online softmax,
// naive runs one P.V pass per output (complex_hooks.glsl).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/contract/registry.h"
#include "suites/attn/attn_common.h"

namespace pebench {
namespace {

// The imaginary parts qi, ki, vi, oi and what they cost (complex_hooks.glsl
// replaces the score; the reference is the case's own).
class ImaginaryParts : public AttnTerm {
 public:
  ImaginaryParts(const AttnShape& s, bool flash) : shape_(s), flash_(flash) {}

  std::vector<TensorDesc> tensors() const override {
    const AttnShape& s = shape_;
    return {tensor("qi", TensorRole::kInput, s.dtype, {s.batch, s.heads, s.seq, s.dim}, "[B,H,N,D]"),
            tensor("ki", TensorRole::kInput, s.dtype, {s.batch, s.kv_heads, s.kv_seq, s.dim}, "[B,Hkv,M,D]"),
            tensor("vi", TensorRole::kInput, s.dtype, {s.batch, s.kv_heads, s.kv_seq, s.dim}, "[B,Hkv,M,D]"),
            tensor("oi", TensorRole::kOutput, s.dtype, {s.batch, s.heads, s.seq, s.dim}, "[B,H,N,D]")};
  }
  void fill(TensorMap& t, Rng& rng) const override {
    for (const char* name : {"qi", "ki", "vi"}) t.at(name).fill_uniform(rng, -1.0, 1.0);
  }
  // Flash reads and writes the imaginary parts itself; naive's score pass
  // reads qi and ki (vi and oi go to the second P.V pass).
  std::vector<std::string> bindings() const override {
    return flash_ ? std::vector<std::string>{"qi", "ki", "vi", "oi"} : std::vector<std::string>{"qi", "ki"};
  }
  double reference_cost_per_key() const override { return 8.0 * static_cast<double>(shape_.dim); }

  // Per score: three more D-term dot products (qi.ki, q.ki, qi.k) and the
  // second P.V (p.vi), D multiply-adds each, and re^2 + im^2 (two).
  double flops() const override { return (8.0 * static_cast<double>(shape_.dim) + 4) * shape_.scores(); }

  // s_before: the case's score_max, |s| <= scale 2 sqrt(2) D.
  TermError score_error(double s_before) const override {
    // re and im are f32 sums of 2D products of size <= 1 each (worst case
    // (2D)^2 u apiece); |z| moves by at most sqrt(2) times that (the norm is
    // 1-Lipschitz), scaled; the squares, their sum and sqrt round 3 more
    // times, u |s| each. The core counts scale D^2 u + u s_max already.
    const double u = std::ldexp(1.0, -24), D = static_cast<double>(shape_.dim);
    TermError err;
    err.abs = std::fabs(shape_.scale) * (4 * std::sqrt(2.0) - 1) * D * D * u + 3 * u * s_before;
    err.model = "(re, im over 2D terms each, |z|)";
    return err;
  }

 private:
  AttnShape shape_;
  bool flash_;
};

class AttnComplexCase : public AttnCase {
 public:
  explicit AttnComplexCase(const Params& p) : AttnCase(p) {
    add_term(std::make_unique<ImaginaryParts>(shape_, flash_));
    plan();
  }

  // The score is not scale q.k plus terms: a reference of its own, over
  // both outputs, in float64 from the stored values.
  void reference(const TensorMap& t, const std::vector<int64_t>& rows, Reference& ref) const override {
    const AttnShape& s = shape_;
    const int64_t D = s.dim, M = s.kv_seq;
    const HostTensor &q = t.at("q"), &qi = t.at("qi");
    const std::vector<double> sinks = s.sink_logits ? t.at("sinks").to_f64() : std::vector<double>{};
    // k, ki, v, vi of the current (b, kv head), as in AttnCase::reference:
    // rows are sorted, so each slice is read once.
    const std::vector<const HostTensor*> kv{&t.at("k"), &t.at("ki"), &t.at("v"), &t.at("vi")};
    std::vector<std::vector<double>> slice(4, std::vector<double>(static_cast<size_t>(M * D)));
    int64_t slice_id = -1;
    std::vector<double> qr(static_cast<size_t>(D)), qm(static_cast<size_t>(D)), score(static_cast<size_t>(M));
    for (const int64_t r : rows) {
      const int64_t i = r % s.seq, h = (r / s.seq) % s.heads, b = r / (s.seq * s.heads);
      const int64_t kv_slice = b * s.kv_heads + h / s.group();
      if (kv_slice != slice_id) {
        for (size_t x = 0; x < kv.size(); ++x) {
          for (int64_t e = 0; e < M * D; ++e) slice[x][static_cast<size_t>(e)] = kv[x]->get(kv_slice * M * D + e);
        }
        slice_id = kv_slice;
      }
      const std::vector<double>&k = slice[0], &ki = slice[1], &v = slice[2], &vi = slice[3];
      for (int64_t c = 0; c < D; ++c) {
        qr[static_cast<size_t>(c)] = q.get(r * D + c);
        qm[static_cast<size_t>(c)] = qi.get(r * D + c);
      }
      const int64_t qpos = s.query_pos(i);
      // The whole score is content: softcap caps it; the mask and the sink
      // logit as in AttnCase::reference.
      double mx = sinks.empty() ? -INFINITY : sinks[static_cast<size_t>(h)];
      for (int64_t j = 0; j < M; ++j) {
        score[static_cast<size_t>(j)] = -INFINITY;
        if (!s.mask.visible(qpos, j)) continue;
        double re = 0, im = 0;
        for (int64_t c = 0; c < D; ++c) {
          const size_t e = static_cast<size_t>(j * D + c), cc = static_cast<size_t>(c);
          re += qr[cc] * k[e] - qm[cc] * ki[e];
          im += qr[cc] * ki[e] + qm[cc] * k[e];
        }
        const double sc = s.softcap.apply(std::sqrt(re * re + im * im) * s.scale);
        score[static_cast<size_t>(j)] = sc;
        mx = std::max(mx, sc);
      }
      double* o = ref.row("o", r);
      double* oi = ref.row("oi", r);
      std::fill(o, o + D, 0.0);
      std::fill(oi, oi + D, 0.0);
      double l = sinks.empty() ? 0.0 : std::exp(sinks[static_cast<size_t>(h)] - mx);
      for (int64_t j = 0; j < M; ++j) {
        if (score[static_cast<size_t>(j)] == -INFINITY) continue;
        const double w = std::exp(score[static_cast<size_t>(j)] - mx);
        l += w;
        for (int64_t c = 0; c < D; ++c) {
          o[c] += w * v[static_cast<size_t>(j * D + c)];
          oi[c] += w * vi[static_cast<size_t>(j * D + c)];
        }
      }
      for (int64_t c = 0; c < D; ++c) {
        o[c] = l > 0 ? o[c] / l : 0.0;
        oi[c] = l > 0 ? oi[c] / l : 0.0;
      }
    }
  }

 protected:
  std::string kernel() const override { return "complex"; }
  int64_t row_parts() const override { return 2; }
  std::vector<Part> part_tensors() const override { return {{"v", "o"}, {"vi", "oi"}}; }

  // |re|, |im| <= 2D (components in [-1, 1]): |s| <= scale 2 sqrt(2) D.
  double score_max() const override {
    return 2 * std::sqrt(2.0) * std::fabs(shape_.scale) * static_cast<double>(shape_.dim);
  }
};

class AttnComplex : public Variant {
 public:
  std::string id() const override { return "attn.complex"; }
  std::string summary() const override {
    return "complex-order attention: scores |q.k| of complex q, k (no conjugate), outputs o + i oi";
  }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override { return attn_params("1/sqrt(2*dim)"); }
  void resolve(Params& p) const override {
    resolve_attn_params(p, 1.0 / std::sqrt(2.0 * static_cast<double>(p.i("dim"))));
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnComplexCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnComplex);

}  // namespace
}  // namespace pebench
