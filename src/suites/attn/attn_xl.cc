// attn.xl: Transformer-XL's relative attention (Dai et al. 2019,
// encodings.md section 3): with r = i' - j,
// s = scale ((q_i + u_h).k_j + (q_i + vb_h).rk[h, r + N - 1]). rk [H, M+N-1, D]
// is built here as the model builds it: the concat-layout sinusoid of r
// (inv_freq 1/10000^(2t/d), d = H*D) times a random projection [d, H*D]
// (sparse, |rk| <= 1: XlPositions::fill); u and vb [H, D] are random like q. All three
// are dumped inputs. The flash kernel shares each rk row between an
// invocation's consecutive query positions (xl_hooks.glsl).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/contract/registry.h"
#include "suites/attn/attn_common.h"

namespace pebench {
namespace {

// Non-zero rows per column of the random projection that builds rk.
constexpr int64_t kXlProjectionTaps = 16;

// XL's terms on top of scale q.k: scale (u_h.k + (q + vb_h).rk[h, i' - j +
// N - 1]) (xl_hooks.glsl).
class XlPositions : public AttnTerm {
 public:
  explicit XlPositions(const AttnShape& s) : shape_(s) {}

  std::vector<TensorDesc> tensors() const override {
    const AttnShape& s = shape_;
    return {tensor("rk", TensorRole::kInput, s.dtype, {s.heads, distances(), s.dim}, "[H,M+N-1,D]"),
            tensor("u", TensorRole::kInput, s.dtype, {s.heads, s.dim}, "[H,D]"),
            tensor("vb", TensorRole::kInput, s.dtype, {s.heads, s.dim}, "[H,D]")};
  }
  std::vector<std::string> bindings() const override { return {"rk", "u", "vb"}; }
  // Each lane of the CPU kernel reads its own rk row per key.
  std::vector<TexelTensor> flash_cpu_texel_tensors() const override {
    return {{"rk", shape_.dtype == DType::kF16 ? TexelFormat::kRgba16f : TexelFormat::kRgba32f}};
  }

  void fill(TensorMap& t, Rng& rng) const override {
    const AttnShape& s = shape_;
    const int64_t d = s.heads * s.dim, half = d / 2, rows = distances();
    // The projection [d, H*D]: a sparse random one, kXlProjectionTaps random
    // rows per column with uniform weights scaled to sum |w| = 1 (so |rk| <=
    // 1, which the error model assumes). Building rk then costs (M+N-1) H D
    // taps instead of (M+N-1) d H D multiply-adds (hours on the host at LLM
    // sizes).
    const int64_t taps = std::min<int64_t>(d, kXlProjectionTaps);
    std::vector<int64_t> tap_row(static_cast<size_t>(d * taps));
    std::vector<double> tap_weight(static_cast<size_t>(d * taps));
    for (int64_t c = 0; c < d; ++c) {
      double l1 = 0;
      for (int64_t e = c * taps; e < (c + 1) * taps; ++e) {
        tap_row[static_cast<size_t>(e)] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(d)));
        tap_weight[static_cast<size_t>(e)] = rng.uniform(-1.0, 1.0);
        l1 += std::fabs(tap_weight[static_cast<size_t>(e)]);
      }
      for (int64_t e = c * taps; e < (c + 1) * taps; ++e) tap_weight[static_cast<size_t>(e)] /= l1;
    }
    std::vector<double> inv_freq(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i) {
      inv_freq[static_cast<size_t>(i)] = std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(d));
    }
    // rk[h, r + N - 1, :] = (pe(r) W)[h*D : (h+1)*D], pe in the concat layout
    // (sin of every frequency, then cos).
    HostTensor& rk = t.at("rk");
    std::vector<double> pe(static_cast<size_t>(d));
    for (int64_t row = 0; row < rows; ++row) {
      const double r = static_cast<double>(row - (s.seq - 1));
      for (int64_t i = 0; i < half; ++i) {
        pe[static_cast<size_t>(i)] = std::sin(r * inv_freq[static_cast<size_t>(i)]);
        pe[static_cast<size_t>(half + i)] = std::cos(r * inv_freq[static_cast<size_t>(i)]);
      }
      for (int64_t c = 0; c < d; ++c) {
        double acc = 0;
        for (int64_t e = c * taps; e < (c + 1) * taps; ++e) {
          acc += tap_weight[static_cast<size_t>(e)] * pe[static_cast<size_t>(tap_row[static_cast<size_t>(e)])];
        }
        const int64_t h = c / s.dim;
        rk.set((h * rows + row) * s.dim + c % s.dim, acc);
      }
    }
    t.at("u").fill_uniform(rng, -1.0, 1.0);
    t.at("vb").fill_uniform(rng, -1.0, 1.0);
  }

  FlashHookLoops flash_loops() const override {
    FlashHookLoops h;
    h.per_row = 1;  // priming the queues: ROWS - 1 steps (+ 1)
    // The queue shift (xl_step) is unrolled in chunks of 16 steps: as one
    // loop of ROWS (ROWS + 1) / 2 - 1 = 35 steps (8 slots) llvmpipe left it
    // rolled, about 5 loop iterations per slot and key, which cut unsplit
    // key ranges short past M = 1600-1728 and forced a key split (measured
    // on lavapipe, H 8, D 64: unsplit, validated at M = 4096 now).
    return h;
  }

  void add_reference(const TensorMap& t, AttnRefTerms& terms) const override {
    terms.add_score([this, rk = t.at("rk").to_f64(), u = t.at("u").to_f64(), vb = t.at("vb").to_f64()](
                        int64_t h, int64_t qpos, int64_t kpos, const double* q, const double* k) {
      const AttnShape& s = shape_;
      const double* uh = &u[static_cast<size_t>(h * s.dim)];
      const double* vbh = &vb[static_cast<size_t>(h * s.dim)];
      const double* r = &rk[static_cast<size_t>((h * distances() + qpos - kpos + s.seq - 1) * s.dim)];
      double dot = 0;
      for (int64_t c = 0; c < s.dim; ++c) dot += uh[c] * k[c] + (q[c] + vbh[c]) * r[c];
      return s.scale * dot;
    });
  }
  double reference_cost_per_key() const override { return 6.0 * static_cast<double>(shape_.dim); }

  // The position term: one more multiply-add per (score, dim); q + u and
  // q + vb once per row.
  double flops() const override {
    const AttnShape& s = shape_;
    return 2.0 * s.scores() * static_cast<double>(s.dim) + 2.0 * static_cast<double>(s.q_rows() * s.dim);
  }

  TermError score_error(double) const override {
    // The position term: direct flash forms (q + u).rk + (vb - u).rk, two
    // f32 dots over D with factors up to 2 (worst case 2 D^2 u each), and
    // rounds q + u and vb - u (u |.| <= 2u per component, D terms of
    // |rk| <= 1); staged flash forms q.rk + vb.rk (factors up to 1, and the
    // content term likewise as q.k + u.k, one rounded sum in place of
    // rounding q + u); naive's one accumulator over 2D terms stays within
    // that.
    // |q + vb| <= 2 and |rk| <= 1: the position term reaches scale 2D.
    const double D = static_cast<double>(shape_.dim), u = std::ldexp(1.0, -24);
    TermError err;
    err.abs = std::fabs(shape_.scale) * (4 * D * D + 4 * D) * u;
    err.reach = 2 * std::fabs(shape_.scale) * D;
    err.model = "(position term over D)";
    return err;
  }

 private:
  int64_t distances() const { return shape_.kv_seq + shape_.seq - 1; }

  AttnShape shape_;
};

class AttnXlCase : public AttnCase {
 public:
  explicit AttnXlCase(const Params& p) : AttnCase(p) {
    add_term(std::make_unique<XlPositions>(shape_));
    plan();
  }

 protected:
  std::string kernel() const override { return "xl"; }
  bool flash_slots_by_head() const override { return true; }
  // |q + u| <= 2 and |k| <= 1: the content term (q + u).k reaches 2D, as a
  // dot of components up to sqrt(2) would.
  double qk_max() const override { return std::sqrt(2.0); }
};

class AttnXl : public Variant {
 public:
  std::string id() const override { return "attn.xl"; }
  std::string summary() const override {
    return "Transformer-XL relative attention (u, v biases, projected relative sinusoid per head)";
  }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override { return attn_params(); }
  void resolve(Params& p) const override {
    resolve_attn_params(p, 1.0 / std::sqrt(static_cast<double>(p.i("dim"))));
    const int64_t d = p.i("heads") * p.i("dim");
    if (d % 2 != 0) {
      throw CaseRejected(fmt::format("heads*dim={} must be even: rk's concat-layout sinusoid has d/2 frequencies", d));
    }
    require_u32_items(p.i("heads") * (p.i("kv_seq") + p.i("seq") - 1) * p.i("dim"), "rk");
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnXlCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnXl);

}  // namespace
}  // namespace pebench
