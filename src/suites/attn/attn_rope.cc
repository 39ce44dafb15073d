// attn.rope: q rotated at its position i', k at j (rope.apply's styles,
// rotary_dim and scalings, encodings.md section 2), then plain attention.
// naive rotates q and k into f32 copies first, as a straightforward
// implementation would; so does flash on a CPU device where many query
// rows share each key (staged), as inference engines apply RoPE before
// attention: f32 then runs attn.nope's flash kernel on the copies, f16 the
// rope kernel reading q and k from them, v and o at f16 (f16 copies would
// round the rotated values once more). Rotating inside the staged kernel,
// every K tile once per block of query rows, had cost 76% (f32) and 141%
// (f16) over attn.nope at N = M = 2048 on lavapipe. Decode (direct) and GPUs
// rotate inside the fused kernel, where the rotation rides the loads: the
// pre-pass had cost decode, which folds each key once, 5.8x nope's time (N =
// 1, M = 8192, f32). Those runs declare the copies with one element
// (AttnRopeCase::configure): at N = 8192, H 32, D 128 they would hold 128
// MiB of q alone. The forms of 2024-25 (encodings.md section 2) ride the
// same paths: LongRoPE folds its factor list (L = M) into the frequency
// table on the host, M-RoPE reads each token's (t, h, w) from pos_ids
// [3, M] (q at column i', k at j), xPos scales q's pairs by
// zeta_t^((p - ceil(M/2)) / scale_base) and k's by the inverse.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <memory>

#include "harness/contract/registry.h"
#include "suites/attn/attn_common.h"
#include "suites/common/phase.h"
#include "suites/rope/rope_scaling.h"

namespace pebench {
namespace {

// q rotated at i', k at j: in the fused kernel (rope_hooks.glsl: the
// frequency table, the attention factor, rotary_dim and the style) or by
// record_rotations into f32 copies.
class RotaryQK : public AttnTerm {
 public:
  RotaryQK(const Params& p, const AttnShape& s)
      : shape_(s),
        flash_(p.impl() == "flash"),
        // xPos's L and dynamic NTK's and LongRoPE's: the keys span M positions.
        spec_(rope_spec(p, s.kv_seq)),
        longrope_(spec_.scaling == "longrope"),
        inv_freq_(longrope_ ? std::vector<double>() : rope_inv_freq(spec_, s.kv_seq)) {}

  // Whether the run reads the f32 copies (declared full size until told).
  void set_copies(bool used) { copies_ = used; }

  std::vector<TensorDesc> tensors() const override {
    const AttnShape& s = shape_;
    auto copy = [&](const char* name, std::vector<int64_t> shape, const char* doc) {
      return tensor(name, TensorRole::kScratch, DType::kF32, copies_ ? std::move(shape) : std::vector<int64_t>{1}, doc);
    };
    std::vector<TensorDesc> out{
        tensor("freq", TensorRole::kConstant, DType::kI32, {spec_.rotary_dim / 2, 2}, "[R/2,2]"),
        copy("q_rot", {s.batch, s.heads, s.seq, s.dim}, "[B,H,N,D]"),
        copy("k_rot", {s.batch, s.kv_heads, s.kv_seq, s.dim}, "[B,Hkv,M,D]")};
    if (longrope_) add_longrope_factor_tensors(out, spec_.rotary_dim, "M");
    if (spec_.mrope) {
      out.push_back(
          tensor("pos_ids", TensorRole::kInput, DType::kI32, {3, s.kv_seq}, "[3,M]: (t, h, w); query i reads i'"));
    }
    return out;
  }
  void fill(TensorMap& t, Rng& rng) const override {
    if (longrope_) {
      t.at("short_factor").fill_uniform(rng, 1.0, spec_.factor);
      t.at("long_factor").fill_uniform(rng, 1.0, spec_.factor);
    }
    if (spec_.mrope) fill_mrope_pos_ids(t.at("pos_ids"), shape_.kv_seq);
    const std::vector<double> inv_freq = frequencies(t);
    HostTensor& freq = t.at("freq");
    for (size_t i = 0; i < inv_freq.size(); ++i) {
      const auto [lo, hi] = turn_fraction_q64(inv_freq[i]);
      freq.set(static_cast<int64_t>(2 * i), static_cast<int32_t>(lo));
      freq.set(static_cast<int64_t>(2 * i + 1), static_cast<int32_t>(hi));
    }
  }
  // The naive score pass reads pre-rotated q and k and needs none of these;
  // of the fused kernels, the GPU one reads freq and the CPU one the copies.
  std::vector<std::string> bindings() const override {
    // Without M-RoPE, freq stands in for pos_ids (never read).
    return flash_ ? std::vector<std::string>{"freq", "q_rot", "k_rot", spec_.mrope ? "pos_ids" : "freq"}
                  : std::vector<std::string>{};
  }
  void push(PushConstants& push) const override {
    if (!flash_) return;
    push.f32(static_cast<float>(spec_.attention_factor));
    push_forms(push, false);
  }
  std::vector<NamedConstant> spec_constants() const override {
    if (!flash_) return {};
    return {{"ROPE_DIM", static_cast<uint32_t>(spec_.rotary_dim)},
            {"ROPE_NEOX", spec_.neox ? 1u : 0u},
            {"ROPE_MROPE", mrope_mode()},
            {"ROPE_XPOS", xpos() ? 1u : 0u}};
  }

  // q and k rotated into the f32 copies q_rot and k_rot, and the barrier.
  void record_rotations(Recorder& rec) const {
    const AttnShape& s = shape_;
    const int64_t per_row = spec_.rotary_dim / 2 + (s.dim - spec_.rotary_dim);
    auto rotate = [&](const std::string& in, const std::string& out, int64_t rows, int64_t seq, int64_t offset,
                      bool is_k) {
      PushConstants push;
      push.u32(static_cast<uint32_t>(rows))
          .u32(static_cast<uint32_t>(seq))
          .u32(static_cast<uint32_t>(s.dim))
          .u32(static_cast<uint32_t>(spec_.rotary_dim))
          .u32(static_cast<uint32_t>(offset))
          .u32(spec_.neox ? 1 : 0)
          .f32(static_cast<float>(spec_.attention_factor))
          .u32(static_cast<uint32_t>(s.kv_seq));
      push_forms(push, is_k);
      Dispatch d =
          grid_dispatch(rec, "attn_rope_qk", {in, "freq", out, spec_.mrope ? "pos_ids" : "freq"}, rows * per_row, push);
      d.constant("MROPE", mrope_mode()).constant("XPOS", xpos() ? 1u : 0u);
      rec.dispatch(d);
    };
    rotate("q", "q_rot", s.batch * s.heads * s.seq, s.seq, s.kv_seq - s.seq, false);  // i' = i + M - N
    rotate("k", "k_rot", s.batch * s.kv_heads * s.kv_seq, s.kv_seq, 0, true);
    rec.barrier();
  }

  void add_reference(const TensorMap& t, AttnRefTerms& terms) const override {
    auto inv_freq = std::make_shared<const std::vector<double>>(frequencies(t));
    // Each position column j as (t, h, w): pos_ids' under M-RoPE, else (j, j, j).
    auto thw = std::make_shared<std::vector<std::array<double, 3>>>(static_cast<size_t>(shape_.kv_seq));
    for (int64_t j = 0; j < shape_.kv_seq; ++j) {
      for (int c = 0; c < 3; ++c) {
        (*thw)[static_cast<size_t>(j)][static_cast<size_t>(c)] =
            spec_.mrope ? t.at("pos_ids").get(c * shape_.kv_seq + j) : static_cast<double>(j);
      }
    }
    terms.add_q([this, inv_freq, thw](int64_t, int64_t qpos, double* q) { rotate(q, *inv_freq, (*thw)[qpos], false); });
    terms.add_k([this, inv_freq, thw](int64_t, int64_t kpos, double* k) { rotate(k, *inv_freq, (*thw)[kpos], true); });
  }
  double reference_cost_per_key() const override { return 20.0 * static_cast<double>(spec_.rotary_dim); }

  double flops() const override {
    // Per rotated pair: two outputs of two multiply-adds (plus the attention
    // factor when it is not 1), for every q row and every k row once.
    const AttnShape& s = shape_;
    const double per_pair = spec_.attention_factor != 1.0 || xpos() ? 6.0 : 4.0;
    const double rows = static_cast<double>(s.batch * s.heads * s.seq + s.batch * s.kv_heads * s.kv_seq);
    return 2.0 * per_pair * rows * static_cast<double>(spec_.rotary_dim / 2);
  }

  // |q|, |k| components after rotation (and the attention factor) as a
  // product sees them: with xPos, q_i and k_j carry zeta_t^((i' - j)/b)
  // together, at most xpos_reach() (per side: its square root).
  double qk_max() const { return std::sqrt(2.0) * std::max(1.0, spec_.attention_factor) * std::sqrt(xpos_reach()); }

  // xPos: the largest factor a score's pair carries, zeta_0^(-(j - i')/b)
  // over visible keys j > i' (non-causal; 1 when causal), and the largest
  // |p - c| / b of any row.
  double xpos_reach() const {
    if (!xpos() || shape_.causal) return 1.0;
    return std::pow(xpos_zeta(spec_.rotary_dim, 0), -static_cast<double>(shape_.seq - 1) / spec_.xpos_scale_base);
  }
  double xpos_exponent() const {
    const auto c = static_cast<double>(spec_.xpos_centre), m = static_cast<double>(shape_.kv_seq);
    return std::max(c, m - 1 - c) / spec_.xpos_scale_base;
  }

  TermError score_error(double) const override {
    // Vulkan only guarantees sin and cos to 2^-11 absolute on [-pi, pi]; the
    // exact-phase angle adds 2 pi 2^-25. Independent errors e on (c, s) give
    // rotated components of inputs uniform in [-1, 1] an rms error
    // f e sqrt(2/3), so a score's error has rms scale f^2 e sqrt(R) 2/3.
    // xPos: the pair's factors scale that by at most xpos_reach(), and each
    // has a relative error of its own (exp2 3 + 2|x| ulp at x = e log2
    // zeta, log2 2^-21 absolute times |e|), as large for (c, s) as e.
    double e = std::ldexp(1.0, -11) + 2 * M_PI * std::ldexp(1.0, -25);
    if (xpos()) {
      const double ex = xpos_exponent(), x = ex * std::log2(1.0 / xpos_zeta(spec_.rotary_dim, 0));
      e += 2 * (std::ldexp(ex, -21) * M_LN2 + (3 + 3 * x) * std::ldexp(1.0, -23));
    }
    const double f = spec_.attention_factor;
    TermError err;
    err.rms = std::fabs(shape_.scale) * f * f * xpos_reach() * e * std::sqrt(static_cast<double>(spec_.rotary_dim)) *
              2.0 / 3.0;
    err.model = xpos() ? "(RoPE sin/cos 2^-11, xPos factors)" : "(RoPE sin/cos 2^-11)";
    return err;
  }

 private:
  bool xpos() const { return spec_.xpos_scale_base > 0; }
  uint32_t mrope_mode() const { return spec_.mrope ? (spec_.mrope_interleaved ? 2u : 1u) : 0u; }
  // M-RoPE's section, then xPos's rate (negated for k) and centre: the
  // push constants the fused kernel and the pre-pass share.
  void push_forms(PushConstants& push, bool is_k) const {
    push.u32(static_cast<uint32_t>(spec_.mrope_section[0]))
        .u32(static_cast<uint32_t>(spec_.mrope_section[1]))
        .u32(static_cast<uint32_t>(spec_.mrope_section[2]))
        .f32(static_cast<float>(xpos() ? (is_k ? -1.0 : 1.0) / spec_.xpos_scale_base : 0.0))
        .u32(static_cast<uint32_t>(spec_.xpos_centre));
  }
  // th'_t: LongRoPE's from its factor lists as stored, L = M.
  std::vector<double> frequencies(const TensorMap& t) const {
    if (!longrope_) return inv_freq_;
    const HostTensor& f = t.at(longrope_long(spec_, shape_.kv_seq) ? "long_factor" : "short_factor");
    std::vector<double> ext(static_cast<size_t>(f.numel()));
    for (int64_t i = 0; i < f.numel(); ++i) ext[static_cast<size_t>(i)] = f.get(i);
    return rope_inv_freq(spec_, shape_.kv_seq, &ext);
  }
  void rotate(double* x, const std::vector<double>& inv_freq, const std::array<double, 3>& thw, bool is_k) const {
    std::vector<double> in(x, x + shape_.dim);
    rope_rotate(in.data(), x, shape_.dim, spec_, inv_freq, thw, is_k);
  }

  AttnShape shape_;
  bool flash_;
  RopeSpec spec_;
  bool longrope_;
  std::vector<double> inv_freq_;
  bool copies_ = true;
};

class AttnRopeCase : public AttnCase {
 public:
  explicit AttnRopeCase(const Params& p) : AttnCase(p), rotary_(add_term(std::make_unique<RotaryQK>(p, shape_))) {
    plan();
  }

  void configure(const LaunchPlanner& launch) override { rotary_.set_copies(!flash_ || prerotates(launch)); }

  void record(Recorder& rec) const override {
    if (!flash_ || !prerotates(rec.launch())) {  // naive: AttnCase's pre-pass (record_naive_prepass)
      AttnCase::record(rec);
      return;
    }
    rotary_.record_rotations(rec);
    // f16: the fused kernel, reading q and k from the copies (rope_hooks.glsl)
    // and v and o at f16.
    if (shape_.dtype == DType::kF32) {
      record_flash(rec, {"nope", "q_rot", "k_rot", false});
    } else {
      AttnCase::record(rec);
    }
  }

 protected:
  std::string kernel() const override { return "rope"; }
  std::string naive_scores_shader() const override { return "attn_scores_nope"; }  // on q_rot, k_rot
  NaiveQK record_naive_prepass(Recorder& rec) const override {
    rotary_.record_rotations(rec);
    return {"q_rot", "k_rot", DType::kF32};
  }
  double qk_max() const override { return rotary_.qk_max(); }

 private:
  // Flash rotates q and k into the copies first on CPU devices when staged;
  // GPUs, and decode (direct: each key is folded once, so the fused kernel
  // rotates it as it loads it), run the fused kernel alone.
  bool prerotates(const LaunchPlanner& launch) const { return launch.is_cpu() && !flash_plan().direct; }

  RotaryQK& rotary_;
};

class AttnRope : public Variant {
 public:
  std::string id() const override { return "attn.rope"; }
  std::string summary() const override { return "attention with rotary position embedding fused in (RoFormer)"; }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override {
    std::vector<ParamSpec> specs = attn_params();
    for (auto& s : rope_params()) specs.push_back(std::move(s));
    return specs;
  }
  void resolve(Params& p) const override {
    resolve_attn_params(p, 1.0 / std::sqrt(static_cast<double>(p.i("dim"))));
    resolve_rope_params(p, p.i("dim"));
    if (p.f("xpos_scale_base") > 0) {
      // q's factor falls to zeta_0^(ceil(M/2) / b) and k's rises to its inverse: keep both well inside f32.
      const double e = static_cast<double>(xpos_centre(p.i("kv_seq"))) / p.f("xpos_scale_base");
      if (std::pow(xpos_zeta(p.i("rotary_dim"), 0), -e) > 0x1p60) {
        throw CaseRejected(fmt::format("xPos's factors pass 2^60 at kv_seq={} with xpos_scale_base={}",
                                       p.i("kv_seq"), p.f("xpos_scale_base")));
      }
    }
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnRopeCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnRope);

}  // namespace
}  // namespace pebench
