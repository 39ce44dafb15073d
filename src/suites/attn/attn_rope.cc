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
// MiB of q alone.
#include <fmt/format.h>

#include <cmath>

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
        spec_(rope_spec(p)),
        // Dynamic NTK's L: the keys span M positions.
        inv_freq_(rope_inv_freq(spec_, s.kv_seq)) {}

  // Whether the run reads the f32 copies (declared full size until told).
  void set_copies(bool used) { copies_ = used; }

  std::vector<TensorDesc> tensors() const override {
    const AttnShape& s = shape_;
    auto copy = [&](const char* name, std::vector<int64_t> shape, const char* doc) {
      return tensor(name, TensorRole::kScratch, DType::kF32, copies_ ? std::move(shape) : std::vector<int64_t>{1}, doc);
    };
    return {tensor("freq", TensorRole::kConstant, DType::kI32, {spec_.rotary_dim / 2, 2}, "[R/2,2]"),
            copy("q_rot", {s.batch, s.heads, s.seq, s.dim}, "[B,H,N,D]"),
            copy("k_rot", {s.batch, s.kv_heads, s.kv_seq, s.dim}, "[B,Hkv,M,D]")};
  }
  void fill(TensorMap& t, Rng&) const override {
    HostTensor& freq = t.at("freq");
    for (size_t i = 0; i < inv_freq_.size(); ++i) {
      const auto [lo, hi] = turn_fraction_q64(inv_freq_[i]);
      freq.set(static_cast<int64_t>(2 * i), static_cast<int32_t>(lo));
      freq.set(static_cast<int64_t>(2 * i + 1), static_cast<int32_t>(hi));
    }
  }
  // The naive score pass reads pre-rotated q and k and needs none of these;
  // of the fused kernels, the GPU one reads freq and the CPU one the copies.
  std::vector<std::string> bindings() const override {
    return flash_ ? std::vector<std::string>{"freq", "q_rot", "k_rot"} : std::vector<std::string>{};
  }
  void push(PushConstants& push) const override {
    if (flash_) push.f32(static_cast<float>(spec_.attention_factor));
  }
  std::vector<NamedConstant> spec_constants() const override {
    if (!flash_) return {};
    return {{"ROPE_DIM", static_cast<uint32_t>(spec_.rotary_dim)}, {"ROPE_NEOX", spec_.neox ? 1u : 0u}};
  }

  // q and k rotated into the f32 copies q_rot and k_rot, and the barrier.
  void record_rotations(Recorder& rec) const {
    const AttnShape& s = shape_;
    const int64_t per_row = spec_.rotary_dim / 2 + (s.dim - spec_.rotary_dim);
    auto rotate = [&](const std::string& in, const std::string& out, int64_t rows, int64_t seq, int64_t offset) {
      PushConstants push;
      push.u32(static_cast<uint32_t>(rows))
          .u32(static_cast<uint32_t>(seq))
          .u32(static_cast<uint32_t>(s.dim))
          .u32(static_cast<uint32_t>(spec_.rotary_dim))
          .u32(static_cast<uint32_t>(offset))
          .u32(spec_.neox ? 1 : 0)
          .f32(static_cast<float>(spec_.attention_factor));
      rec.dispatch(grid_dispatch(rec, "attn_rope_qk", {in, "freq", out}, rows * per_row, push));
    };
    rotate("q", "q_rot", s.batch * s.heads * s.seq, s.seq, s.kv_seq - s.seq);  // i' = i + M - N
    rotate("k", "k_rot", s.batch * s.kv_heads * s.kv_seq, s.kv_seq, 0);
    rec.barrier();
  }

  void add_reference(const TensorMap&, AttnRefTerms& terms) const override {
    terms.add_q([this](int64_t, int64_t qpos, double* q) { rotate(q, qpos); });
    terms.add_k([this](int64_t, int64_t kpos, double* k) { rotate(k, kpos); });
  }
  double reference_cost_per_key() const override { return 20.0 * static_cast<double>(spec_.rotary_dim); }

  double flops() const override {
    // Per rotated pair: two outputs of two multiply-adds (plus the attention
    // factor when it is not 1), for every q row and every k row once.
    const AttnShape& s = shape_;
    const double per_pair = spec_.attention_factor != 1.0 ? 6.0 : 4.0;
    const double rows = static_cast<double>(s.batch * s.heads * s.seq + s.batch * s.kv_heads * s.kv_seq);
    return 2.0 * per_pair * rows * static_cast<double>(spec_.rotary_dim / 2);
  }

  // |q|, |k| components after rotation (and the attention factor).
  double qk_max() const { return std::sqrt(2.0) * std::max(1.0, spec_.attention_factor); }

  TermError score_error(double) const override {
    // Vulkan only guarantees sin and cos to 2^-11 absolute on [-pi, pi]; the
    // exact-phase angle adds 2 pi 2^-25. Independent errors e on (c, s) give
    // rotated components of inputs uniform in [-1, 1] an rms error
    // f e sqrt(2/3), so a score's error has rms scale f^2 e sqrt(R) 2/3.
    const double e = std::ldexp(1.0, -11) + 2 * M_PI * std::ldexp(1.0, -25);
    const double f = spec_.attention_factor;
    TermError err;
    err.rms = std::fabs(shape_.scale) * f * f * e * std::sqrt(static_cast<double>(spec_.rotary_dim)) * 2.0 / 3.0;
    err.model = "(RoPE sin/cos 2^-11)";
    return err;
  }

 private:
  void rotate(double* x, int64_t pos) const {
    std::vector<double> in(x, x + shape_.dim);
    rope_rotate(in.data(), x, shape_.dim, spec_, inv_freq_, static_cast<double>(pos));
  }

  AttnShape shape_;
  bool flash_;
  RopeSpec spec_;
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
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnRopeCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnRope);

}  // namespace
}  // namespace pebench
