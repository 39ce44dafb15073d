// attn.shaw: relative position representations (Shaw et al. 2018,
// encodings.md section 3): idx = clip(j - i', -K, K) + K, K = max_rel;
// s = scale (q_i.k_j + q_i.rel_k[idx]), o_i = sum_j p_ij (v_j + rel_v[idx]),
// with rel_k and rel_v [2K+1, D] shared by the heads. The flash kernel works
// per distance (shaw_hooks.glsl): 2K+1 products q.rel_k per row, per-idx
// weight sums, rel_v applied once per idx and row.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "harness/contract/registry.h"
#include "suites/attn/attn_common.h"

namespace pebench {
namespace {

// The flash kernel keeps two tables of 2K+1 floats per row slot.
constexpr int64_t kShawFlashMaxRel = 64;

// Shaw's two terms: scale q.rel_k[idx] on the score and rel_v[idx] on the
// value (shaw_hooks.glsl; naive: the score pass reads rel_k, attn_pv_shaw
// rel_v).
class ShawRelative : public AttnTerm {
 public:
  ShawRelative(const AttnShape& s, bool flash, int64_t max_rel) : shape_(s), flash_(flash), max_rel_(max_rel) {}

  std::vector<TensorDesc> tensors() const override {
    const AttnShape& s = shape_;
    return {tensor("rel_k", TensorRole::kInput, s.dtype, {rel_rows(), s.dim}, "[2K+1,D]"),
            tensor("rel_v", TensorRole::kInput, s.dtype, {rel_rows(), s.dim}, "[2K+1,D]")};
  }
  void fill(TensorMap& t, Rng& rng) const override {
    t.at("rel_k").fill_uniform(rng, -1.0, 1.0);
    t.at("rel_v").fill_uniform(rng, -1.0, 1.0);
  }
  std::vector<std::string> bindings() const override {
    return flash_ ? std::vector<std::string>{"rel_k", "rel_v"} : std::vector<std::string>{"rel_k"};
  }
  // Past max_rel the distance clips: rel_k[0] / rel_k[2K] and rel_v alike.
  std::optional<RelFarDistances> flash_cpu_far() const override {
    return RelFarDistances{static_cast<uint32_t>(max_rel_), static_cast<uint32_t>(max_rel_)};
  }
  std::vector<NamedConstant> spec_constants() const override {
    return {{"SHAW_K", static_cast<uint32_t>(max_rel_)}};
  }
  FlashHookLoops flash_loops() const override {
    FlashHookLoops h;
    h.per_invocation = 2 * static_cast<uint64_t>(rel_rows() + 1);  // the q.rel_k table and the rel_v pass
    return h;
  }
  std::vector<std::string> pv_bindings() const override { return {"rel_v"}; }
  // pv.glsl's value-term loop over the keys.
  uint32_t pv_loops() const override { return static_cast<uint32_t>(shape_.kv_seq + 1); }

  void add_reference(const TensorMap& t, AttnRefTerms& terms) const override {
    terms.add_score([this, rel_k = t.at("rel_k").to_f64()](int64_t, int64_t qpos, int64_t kpos, const double* q,
                                                          const double*) {
      const double* rk = &rel_k[static_cast<size_t>(idx(qpos, kpos) * shape_.dim)];
      double dot = 0;
      for (int64_t c = 0; c < shape_.dim; ++c) dot += q[c] * rk[c];
      return shape_.scale * dot;
    });
    terms.add_value([this, rel_v = t.at("rel_v").to_f64()](int64_t, int64_t qpos, int64_t kpos, double w,
                                                          double* acc) {
      const double* rv = &rel_v[static_cast<size_t>(idx(qpos, kpos) * shape_.dim)];
      for (int64_t c = 0; c < shape_.dim; ++c) acc[c] += w * rv[c];
    });
  }
  double reference_cost_per_key() const override { return 4.0 * static_cast<double>(shape_.dim); }

  double flops() const override {
    // Where each term is cheapest, whichever implementation runs: per row,
    // q.rel_k and W_idx rel_v once for each idx its visible keys reach (at
    // most 2K+1; per score when keys are fewer), D multiply-adds each; per
    // score, adding its q.rel_k and adding its weight to W_idx.
    const AttnShape& s = shape_;
    double idx_rows = 0;  // (row, idx) pairs over one (b, h)
    for (int64_t i = 0; i < s.seq; ++i) {
      const int64_t qpos = s.query_pos(i), last = s.causal ? std::min(qpos, s.kv_seq - 1) : s.kv_seq - 1;
      idx_rows += static_cast<double>(idx(qpos, last) - idx(qpos, 0) + 1);
    }
    const double bh = static_cast<double>(s.batch * s.heads);
    return 2 * 2 * static_cast<double>(s.dim) * bh * idx_rows + 2 * s.scores();
  }

  TermError score_error(double) const override {
    // q.rel_k is a second f32 dot over D (flash: added to q.k; naive: one
    // accumulator over 2D terms, worst case (2D)^2 u against the base D^2
    // u); like q.k it reaches scale D (components in [-1, 1]).
    const double D = static_cast<double>(shape_.dim);
    TermError err;
    err.abs = std::fabs(shape_.scale) * 3 * D * D * std::ldexp(1.0, -24);
    err.reach = std::fabs(shape_.scale) * D;
    err.model = "(q.rel_k over D)";
    return err;
  }

 private:
  int64_t rel_rows() const { return 2 * max_rel_ + 1; }
  int64_t idx(int64_t qpos, int64_t kpos) const { return std::clamp(kpos - qpos, -max_rel_, max_rel_) + max_rel_; }

  AttnShape shape_;
  bool flash_;
  int64_t max_rel_;
};

class AttnShawCase : public AttnCase {
 public:
  explicit AttnShawCase(const Params& p) : AttnCase(p) {
    add_term(std::make_unique<ShawRelative>(shape_, flash_, p.i("max_rel")));
    plan();
  }

 protected:
  std::string kernel() const override { return "shaw"; }
  std::string naive_pv_shader() const override { return "attn_pv_shaw"; }
};

class AttnShaw : public Variant {
 public:
  std::string id() const override { return "attn.shaw"; }
  std::string summary() const override {
    return "attention with Shaw et al.'s clipped relative key and value embeddings";
  }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override {
    std::vector<ParamSpec> specs = attn_params();
    specs.push_back(int_param("max_rel", 16, "K: relative distances are clipped to [-K, K]; rel_k, rel_v [2K+1, D]"));
    return specs;
  }
  void resolve(Params& p) const override {
    resolve_attn_params(p, 1.0 / std::sqrt(static_cast<double>(p.i("dim"))));
    const int64_t k = p.i("max_rel");
    if (k < 0) throw CaseRejected(fmt::format("max_rel={} must be >= 0", k));
    if (p.impl() == "flash" && k > kShawFlashMaxRel) {
      throw CaseRejected(fmt::format("max_rel={} exceeds the flash kernel's {} (it keeps 2K+1 floats per row and "
                                     "distance table in registers)",
                                     k, kShawFlashMaxRel));
    }
    if (k > (int64_t{1} << 20)) throw CaseRejected(fmt::format("max_rel={} exceeds 2^20", k));
    require_u32_items((2 * k + 1) * p.i("dim"), "rel_k");
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnShawCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnShaw);

}  // namespace
}  // namespace pebench
