// attn.kerple: attention with KERPLE's learned kernels (Chi et al. 2022,
// chijames/KERPLE ParallelKerpleLog / ParallelKerplePower; encodings.md
// section 3): with d = i' - j,
//   kind=log   bias = -r1[h] ln(1 + r2[h] d)
//   kind=power bias = -r1[h] d^r2[h], 0^r2 = 0
// s = scale q.k + bias. Causal only.
//
// The bias depends on (h, d) only, so a pre-pass (attn_kerple_bias.comp)
// evaluates it once per head and distance into rel_bias [H, M+N-1] (T5's
// layout), and the kernels read one float per score (kerple_hooks.glsl):
// H (M+N-1) logs (or log2 + exp2) instead of one per score.
#include <fmt/format.h>

#include <cmath>

#include "harness/contract/registry.h"
#include "suites/attn/attn_common.h"

namespace pebench {
namespace {

// The ranges the suite draws r1 and r2 from: the reference code's
// initialisation, floored at its clamp 0.01 (encodings.md).
struct KerpleRanges {
  double r1_max, r2_max;
};
KerpleRanges kerple_ranges(bool power) { return power ? KerpleRanges{1.0, 2.0} : KerpleRanges{2.0, 1.0}; }
constexpr double kKerpleMin = 0.01;

class KerpleBias : public AttnTerm {
 public:
  KerpleBias(const Params& p, const AttnShape& s) : shape_(s), power_(p.s("kind") == "power") {}

  std::vector<TensorDesc> tensors() const override {
    const AttnShape& s = shape_;
    return {tensor("r1", TensorRole::kInput, DType::kF32, {s.heads}, "[H]"),
            tensor("r2", TensorRole::kInput, DType::kF32, {s.heads}, "[H]"),
            tensor("rel_bias", TensorRole::kScratch, DType::kF32, {s.heads, s.kv_seq + s.seq - 1}, "[H,M+N-1]")};
  }
  void fill(TensorMap& t, Rng& rng) const override {
    const KerpleRanges r = kerple_ranges(power_);
    t.at("r1").fill_uniform(rng, kKerpleMin, r.r1_max);
    t.at("r2").fill_uniform(rng, kKerpleMin, r.r2_max);
  }
  bool record_prepass(Recorder& rec, const PrepassTarget&) const override {
    const AttnShape& s = shape_;
    const int64_t length = s.kv_seq + s.seq - 1;
    PushConstants push;
    push.u32(static_cast<uint32_t>(s.heads))
        .u32(static_cast<uint32_t>(length))
        .u32(static_cast<uint32_t>(s.kv_seq))
        .u32(power_ ? 1u : 0u);
    rec.dispatch(grid_dispatch(rec, "attn_kerple_bias", {"r1", "r2", "rel_bias"}, s.heads * length, push));
    return true;
  }
  std::vector<std::string> bindings() const override { return {"rel_bias"}; }

  void add_reference(const TensorMap& t, AttnRefTerms& terms) const override {
    terms.add_bias([power = power_, r1 = t.at("r1").to_f64(), r2 = t.at("r2").to_f64()](
                       int64_t h, int64_t qpos, int64_t kpos, const double*, const double*) {
      return kerple_bias(power, r1[static_cast<size_t>(h)], r2[static_cast<size_t>(h)],
                         static_cast<double>(qpos - kpos));
    });
  }
  double reference_cost_per_key() const override { return 30; }

  // Per score of the definition: r2 d, 1 + (log) or the power, r1 times it,
  // the sum into s: 4 flops (the log or pow counted as one). The kernels
  // spend them per (head, distance) instead: H (M + N - 1), far fewer.
  double flops() const override { return 4.0 * shape_.scores(); }

  TermError score_error(double s_before) const override {
    // The bias at d = 0 is 0 and every other is negative, so keys whose
    // weight matters (s >= max - 40) have |bias| <= b = 40 + 2 s_before
    // (ALiBi's argument), and the bias never widens that spread (reach 0).
    // Vulkan's precision: log / log2 within 3 ulp, or 2^-21 absolute on
    // [0.5, 2]; exp2 within 3 + 2|x| ulp.
    //   log:   r1 2^-21 + (3 ulp of ln, r2 d, 1 + x, r1 times, the add) 7u b
    //   power: y = r2 log2 d, |y| <= Y = log2(b / 0.01): exp2's (3 + 2Y) u,
    //          y's 4u relative error times Y ln 2, log2(1)'s 2^-21 times
    //          r2 ln 2, then r1 times and the add: b ((6 + 5Y) u + 2^-20)
    const double u = std::ldexp(1.0, -24);
    const double b = 40 + 2 * s_before;
    TermError err;
    if (!power_) {
      err.abs = kerple_ranges(false).r1_max * std::ldexp(1.0, -21) + 7 * u * b;
      err.model = "(log table r1 2^-21 + 7u|b|)";
    } else {
      const double y = std::log2(b / kKerpleMin);
      err.abs = b * ((6 + 5 * y) * u + std::ldexp(1.0, -20));
      err.model = fmt::format("(power table ({:.3g}u + 2^-20)|b|)", 6 + 5 * y);
    }
    return err;
  }

  static double kerple_bias(bool power, double r1, double r2, double d) {
    if (!power) return -r1 * std::log1p(r2 * d);
    return d == 0 ? 0.0 : -r1 * std::pow(d, r2);  // 0^r2 = 0, never exp(r2 ln 0)
  }

 private:
  AttnShape shape_;
  bool power_;
};

class AttnKerpleCase : public AttnCase {
 public:
  explicit AttnKerpleCase(const Params& p) : AttnCase(p) {
    add_term(std::make_unique<KerpleBias>(p, shape_));
    plan();
  }

 protected:
  std::string kernel() const override { return "kerple"; }
};

class AttnKerple : public Variant {
 public:
  std::string id() const override { return "attn.kerple"; }
  std::string summary() const override {
    return "attention with KERPLE's learned log or power kernel bias (Chi et al. 2022); causal only";
  }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override {
    std::vector<ParamSpec> specs = attn_params();
    for (ParamSpec& s : specs) {
      if (s.key == "causal") s = shape::causal(true);
    }
    specs.push_back(enum_param("kind", "log", {"log", "power"},
                               "log: -r1 ln(1 + r2 d); power: -r1 d^r2 (0^r2 = 0); d = i' - j, r1 r2 [H] learned"));
    return specs;
  }
  void resolve(Params& p) const override {
    if (!p.b("causal")) {
      throw CaseRejected("causal=false: KERPLE's kernels are defined for keys at or before the query (d = i' - j >= 0); "
                         "attn.kerple is causal only");
    }
    resolve_attn_params(p, 1.0 / std::sqrt(static_cast<double>(p.i("dim"))));
    // Distances are exact in f32 only below 2^24.
    if (p.i("kv_seq") > (int64_t{1} << 24)) {
      throw CaseRejected(fmt::format("kv_seq={} exceeds 2^24: KERPLE's distances would not be exact in f32",
                                     p.i("kv_seq")));
    }
    require_u32_items(p.i("heads") * (p.i("kv_seq") + p.i("seq") - 1), "rel_bias");
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnKerpleCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnKerple);

}  // namespace
}  // namespace pebench
