// attn.tupe: TUPE's untied positional attention (encodings.md section 3):
// s = scale (q_i.k_j + pq[h,i'].pk[h,j]) + bias_table[bucket(j - i'), h],
// scale default 1/sqrt(2D) (the spec's (q.k + pq.pk) / sqrt(2D)), T5
// buckets (attn_t5.h) with their defaults; no [CLS] special case.
#include <fmt/format.h>

#include <cmath>

#include "harness/contract/registry.h"
#include "suites/attn/attn_t5.h"

namespace pebench {
namespace {

class AttnTupeCase : public T5BiasedAttnCase {
 public:
  explicit AttnTupeCase(const Params& p) : T5BiasedAttnCase(p) { plan(); }

 protected:
  std::string kernel() const override { return "tupe"; }
  std::vector<TensorDesc> extra_tensors() const override {
    const AttnShape& s = shape_;
    std::vector<TensorDesc> t{tensor("pq", TensorRole::kInput, s.dtype, {s.heads, s.kv_seq, s.dim}, "[H,M,D]"),
                              tensor("pk", TensorRole::kInput, s.dtype, {s.heads, s.kv_seq, s.dim}, "[H,M,D]")};
    for (auto& e : t5_.tensors()) t.push_back(std::move(e));
    return t;
  }
  std::vector<std::string> extra_bindings() const override { return {"rel_bias", "pq", "pk"}; }
  std::vector<uint32_t> flash_spec_constants() const override { return {static_cast<uint32_t>(shape_.group())}; }
  void fill_extra(TensorMap& t, Rng& rng) const override {
    t.at("pq").fill_uniform(rng, -1.0, 1.0);
    t.at("pk").fill_uniform(rng, -1.0, 1.0);
    t5_.fill(t, rng);
  }

  AttnRefTerms reference_terms(const TensorMap& t) const override {
    AttnRefTerms terms;
    terms.score = [this, bias = t5_.reference_bias(t), pq = t.at("pq").to_f64(), pk = t.at("pk").to_f64()](
                      int64_t h, int64_t qpos, int64_t kpos, const double*, const double*) {
      const int64_t D = shape_.dim, M = shape_.kv_seq;
      const double* a = &pq[static_cast<size_t>((h * M + qpos) * D)];
      const double* b = &pk[static_cast<size_t>((h * M + kpos) * D)];
      double dot = 0;
      for (int64_t c = 0; c < D; ++c) dot += a[c] * b[c];
      return shape_.scale * dot + bias(h, qpos, kpos);
    };
    return terms;
  }
  double reference_extra_cost_per_key() const override { return 4.0 * static_cast<double>(shape_.dim); }

  // Per score: the untied dot product (D multiply-adds), adding it to q.k
  // and adding the bias.
  double extra_flops() const override { return (2.0 * static_cast<double>(shape_.dim) + 2) * shape_.scores(); }

  ScoreError extra_score_error() const override {
    // The untied term is a second f32 dot product of D terms with entries in
    // [-1, 1] and the same scale: the same worst case as q.k's, scale D^2 u,
    // plus scaling pq (u |term| <= u scale D). Then two sums round (the
    // untied term, the bias), u |s| each with |s| <= 2 scale D + kRange, and
    // the scores' spread widens by 2 (scale D + kRange), seen by the exp
    // error (3 + 2|x|) ulp.
    const double u = std::ldexp(1.0, -24);
    const double D = static_cast<double>(shape_.dim), sc = std::fabs(shape_.scale);
    const double s_max = 2 * sc * D + T5Bias::kRange;
    ScoreError err;
    err.abs = sc * D * D * u + sc * D * u + 2 * u * s_max + 4 * (sc * D + T5Bias::kRange) * 2 * u;
    err.model = "(untied dot scale D^2 u, sums, spread)";
    return err;
  }
};

class AttnTupe : public Variant {
 public:
  std::string id() const override { return "attn.tupe"; }
  std::string summary() const override { return "TUPE: untied positional attention plus T5 relative bias"; }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override {
    std::vector<ParamSpec> specs = attn_params("1/sqrt(2*dim)");
    for (auto& s : t5_bias_params()) specs.push_back(std::move(s));
    return specs;
  }
  void resolve(Params& p) const override {
    resolve_attn_params(p, 1.0 / std::sqrt(2.0 * static_cast<double>(p.i("dim"))));
    resolve_t5_bias_params(p);
    require_u32_items(p.i("heads") * p.i("kv_seq") * p.i("dim"), "pq");
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnTupeCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnTupe);

}  // namespace
}  // namespace pebench
