// attn.fire: attention with FIRE's learned function of a progressively
// normalised distance (Li et al. 2023, arXiv 2310.04418; encodings.md
// section 3): with d = i' - j,
//   u = ln(1 + c d) / (ln(1 + c max(i', L)) + eps)
//   bias_h = w2[h] . relu(w1 u + b1) + b2[h]     (one MLP of width W, shared)
// s = scale q.k + bias. Causal only.
//
// Kernels (fire_hooks.glsl): rows with i' < L share the normaliser, so their
// bias depends on (h, d) only and a pre-pass runs the MLP once per (head,
// distance) into fire_table [H, M+N-1]; rows with i' >= L run it per score.
// The CPU flash kernel runs it per score for every row, each hidden unit as
// a ramp c max(u - beta, 0), shares ln(1 + c d) along diagonals, and over
// runs of keys evaluates only the 4 ramps that start inside the run's range
// of u, the rest summed as one line (attn_fire_sort.comp's sorted ramps).
#include <fmt/format.h>

#include <cmath>

#include "harness/contract/registry.h"
#include "suites/attn/attn_common.h"

namespace pebench {
namespace {

constexpr int64_t kFireMaxWidth = 256;
// Ramps a CPU flash kernel's segment evaluates (fire_hooks.glsl's
// FIRE_WINDOW; attn_fire_sort.comp pads its tables by as many).
constexpr int64_t kFireWindow = 4;

class FireBias : public AttnTerm {
 public:
  FireBias(const Params& p, const AttnShape& s)
      : shape_(s),
        width_(p.i("mlp_width")),
        c_(p.f("fire_c")),
        L_(p.i("fire_L")),
        eps_(p.f("eps")) {}

  std::vector<TensorDesc> tensors() const override {
    const AttnShape& s = shape_;
    return {tensor("w1", TensorRole::kInput, DType::kF32, {width_}, "[W]"),
            tensor("b1", TensorRole::kInput, DType::kF32, {width_}, "[W]"),
            tensor("w2", TensorRole::kInput, DType::kF32, {s.heads, width_}, "[H,W]"),
            tensor("b2", TensorRole::kInput, DType::kF32, {s.heads}, "[H]"),
            tensor("fire_mlp", TensorRole::kScratch, DType::kF32, {mlp_floats()},
                   "[w1 W | b1 W | w2 H W | b2 H | sorted ramps (attn_fire_sort.comp)]"),
            tensor("fire_table", TensorRole::kScratch, DType::kF32, {s.heads, s.kv_seq + s.seq - 1}, "[H,M+N-1]")};
  }
  // PyTorch's nn.Linear initialisation (FIRE's reference MLP): layer 1 has
  // fan-in 1, so w1, b1 in [-1, 1]; layer 2 fan-in W, so w2, b2 in
  // [-1/sqrt(W), 1/sqrt(W)].
  void fill(TensorMap& t, Rng& rng) const override {
    const double a = 1.0 / std::sqrt(static_cast<double>(width_));
    t.at("w1").fill_uniform(rng, -1.0, 1.0);
    t.at("b1").fill_uniform(rng, -1.0, 1.0);
    t.at("w2").fill_uniform(rng, -a, a);
    t.at("b2").fill_uniform(rng, -a, a);
  }
  // The CPU flash kernel runs the MLP per score for every row and never reads
  // fire_table (fire_hooks.glsl), so it gets the pack and the sorted ramps
  // its segments read (attn_fire_sort.comp) instead: in decode the table
  // pass would cost as much as the kernel's own MLPs.
  bool record_prepass(Recorder& rec, const PrepassTarget& target) const override {
    const AttnShape& s = shape_;
    const uint32_t w = static_cast<uint32_t>(width_), h = static_cast<uint32_t>(s.heads);
    PushConstants first;
    first.u32(w).u32(w).u32(0);
    rec.dispatch(grid_dispatch(rec, "attn_fire_pack", {"w1", "b1", "fire_mlp"}, 2 * width_, first));
    PushConstants second;
    second.u32(h * w).u32(h).u32(2 * w);
    rec.dispatch(grid_dispatch(rec, "attn_fire_pack", {"w2", "b2", "fire_mlp"}, s.heads * (width_ + 1), second));
    rec.barrier();
    if (target.cpu_flash) {
      PushConstants sort;
      sort.u32(h);
      Dispatch d = grid_dispatch(rec, "attn_fire_sort", {"fire_mlp"}, s.heads, sort);
      d.constant("FIRE_WIDTH", w);
      rec.dispatch(d);
      return true;
    }
    const int64_t length = s.kv_seq + s.seq - 1;
    PushConstants push;
    push.u32(h).u32(static_cast<uint32_t>(length)).u32(static_cast<uint32_t>(s.kv_seq));
    add_push(push);
    Dispatch d = grid_dispatch(rec, "attn_fire_table", {"fire_mlp", "fire_table"}, s.heads * length, push);
    d.constant("FIRE_WIDTH", w);
    rec.dispatch(d);
    return true;
  }
  std::vector<std::string> bindings() const override { return {"fire_table", "fire_mlp"}; }
  void push(PushConstants& push) const override { add_push(push); }
  std::vector<NamedConstant> spec_constants() const override {
    return {{"FIRE_WIDTH", static_cast<uint32_t>(width_)}};
  }

  void add_reference(const TensorMap& t, AttnRefTerms& terms) const override {
    terms.add_bias([this, w1 = t.at("w1").to_f64(), b1 = t.at("b1").to_f64(), w2 = t.at("w2").to_f64(),
                    b2 = t.at("b2").to_f64()](int64_t h, int64_t qpos, int64_t kpos, const double*, const double*) {
      const double d = static_cast<double>(qpos - kpos);
      const double norm = std::log1p(c_ * static_cast<double>(std::max<int64_t>(qpos, L_))) + eps_;
      const double u = std::log1p(c_ * d) / norm;
      double acc = b2[static_cast<size_t>(h)];
      for (int64_t k = 0; k < width_; ++k) {
        const size_t kk = static_cast<size_t>(k);
        acc += w2[static_cast<size_t>(h * width_ + k)] * std::max(w1[kk] * u + b1[kk], 0.0);
      }
      return acc;
    });
  }
  double reference_cost_per_key() const override { return 3.0 * static_cast<double>(width_) + 40; }

  // encodings.md: about 5W + 4 flops per score and head (the log not counted).
  double flops() const override { return (5.0 * static_cast<double>(width_) + 4) * shape_.scores(); }

  TermError score_error(double s_before) const override {
    // With the suite's weights (fill) and 0 <= u <= 1 (d <= i' <= max(i', L)):
    // |bias| <= B = 2 sqrt(W) + 1/sqrt(W), which is also how far it can move
    // a score (reach). u: GLSL's log within 2^-21 absolute (on [0.5, 2]) or
    // 3 ulp, in the numerator and the normaliser (>= ln(1 + c L) > 0 where
    // L > 0), and ~8 roundings (c as f32, c d, 1 + x, the reciprocal, the
    // product): du <= 2 2^-21 / n + 8u. Each hidden unit errs by
    // |w1| du + 4u, weighted by |w2| <= 1/sqrt(W) over W units; the sum of W
    // + 1 terms rounds by (W + 1) u B. The CPU flash kernel sums the same
    // function as alpha u + gamma + sum c max(u - beta, 0) (fire_hooks.glsl):
    // each of its terms is within a few roundings of |w2| (|w1| + |b1|), and
    // gamma and alpha are sums of W of them, so its sums round by at most
    // 2 (W + 2) u B; its segments' A[p] u + G[p] + 4 ramps sum the same
    // terms in another order (the prefix sums of attn_fire_sort.comp). The
    // model takes that larger bound for every kernel.
    const double u = std::ldexp(1.0, -24);
    const double W = static_cast<double>(width_);
    const double B = 2 * std::sqrt(W) + 1 / std::sqrt(W);
    const double n = std::log1p(c_ * static_cast<double>(std::max<int64_t>(L_, 1))) + eps_;
    const double du = 2 * std::ldexp(1.0, -21) / n + 8 * u;
    TermError err;
    err.abs = std::sqrt(W) * (du + 4 * u) + 2 * (W + 2) * u * B + u * (s_before + B);
    err.reach = B;
    err.model = fmt::format("(MLP W={} du {:.2g}, |b| <= {:.3g})", width_, du, B);
    return err;
  }

 private:
  // The MLP, then attn_fire_sort.comp's beta [W + window] and per head c
  // [W + window], A [W + 1], G [W + 1].
  int64_t mlp_floats() const {
    const int64_t w = width_, h = shape_.heads;
    return 2 * w + h * w + h + (w + kFireWindow) + h * (3 * w + kFireWindow + 2);
  }
  void add_push(PushConstants& push) const {
    push.f32(static_cast<float>(c_)).u32(static_cast<uint32_t>(L_)).f32(static_cast<float>(eps_));
  }

  AttnShape shape_;
  int64_t width_;
  double c_;
  int64_t L_;
  double eps_;
};

class AttnFireCase : public AttnCase {
 public:
  explicit AttnFireCase(const Params& p) : AttnCase(p) {
    add_term(std::make_unique<FireBias>(p, shape_));
    plan();
  }

 protected:
  std::string kernel() const override { return "fire"; }
};

class AttnFire : public Variant {
 public:
  std::string id() const override { return "attn.fire"; }
  std::string summary() const override {
    return "attention with FIRE's learned MLP of a progressively normalised distance (Li et al. 2023); causal only";
  }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override {
    std::vector<ParamSpec> specs = attn_params();
    for (ParamSpec& s : specs) {
      if (s.key == "causal") s = shape::causal(true);
    }
    specs.push_back(int_param("mlp_width", 32, "FIRE's MLP width W (w1, b1 [W], w2 [H,W])"));
    specs.push_back(float_param("fire_c", 0.1, "FIRE's c: u = ln(1 + c d) / (ln(1 + c max(i', L)) + eps)"));
    specs.push_back(int_param("fire_L", 512, "FIRE's L: positions below it share the normaliser ln(1 + c L)"));
    specs.push_back(float_param("eps", 1e-6, "FIRE's eps in u's denominator"));
    return specs;
  }
  void resolve(Params& p) const override {
    if (!p.b("causal")) {
      throw CaseRejected("causal=false: FIRE's normalised distance is defined for keys at or before the query "
                         "(d = i' - j >= 0); attn.fire is causal only");
    }
    resolve_attn_params(p, 1.0 / std::sqrt(static_cast<double>(p.i("dim"))));
    const int64_t w = p.i("mlp_width");
    if (w < 1 || w > kFireMaxWidth) {
      throw CaseRejected(fmt::format("mlp_width={} must be in [1, {}] (the kernels unroll the MLP)", w, kFireMaxWidth));
    }
    const double c = p.f("fire_c"), eps = p.f("eps");
    if (!(std::isfinite(c) && c > 0)) throw CaseRejected(fmt::format("fire_c={} must be finite and positive", c));
    if (!(std::isfinite(eps) && eps > 0)) throw CaseRejected(fmt::format("eps={} must be finite and positive", eps));
    const int64_t L = p.i("fire_L");
    if (L < 0 || L > (int64_t{1} << 24)) throw CaseRejected(fmt::format("fire_L={} must be in [0, 2^24]", L));
    if (p.i("kv_seq") > (int64_t{1} << 24)) {
      throw CaseRejected(fmt::format("kv_seq={} exceeds 2^24: FIRE's distances would not be exact in f32",
                                     p.i("kv_seq")));
    }
    require_u32_items(p.i("heads") * (p.i("kv_seq") + p.i("seq") - 1), "fire_table");
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnFireCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnFire);

}  // namespace
}  // namespace pebench
