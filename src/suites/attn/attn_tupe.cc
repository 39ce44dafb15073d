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

// The untied positional term scale pq[h,i'].pk[h,j] (tupe_hooks.glsl,
// bound after the T5 bias).
class UntiedPositions : public AttnTerm {
 public:
  explicit UntiedPositions(const AttnShape& s) : shape_(s) {}

  std::vector<TensorDesc> tensors() const override {
    const AttnShape& s = shape_;
    return {tensor("pq", TensorRole::kInput, s.dtype, {s.heads, s.kv_seq, s.dim}, "[H,M,D]"),
            tensor("pk", TensorRole::kInput, s.dtype, {s.heads, s.kv_seq, s.dim}, "[H,M,D]")};
  }
  void fill(TensorMap& t, Rng& rng) const override {
    t.at("pq").fill_uniform(rng, -1.0, 1.0);
    t.at("pk").fill_uniform(rng, -1.0, 1.0);
  }
  std::vector<std::string> bindings() const override { return {"pq", "pk"}; }
  // MHA: a key's pk row serves the whole workgroup (tupe_hooks.glsl, TUPE_STAGE_PK).
  int64_t flash_cpu_staged_chunks() const override { return shape_.group() == 1 ? (shape_.dim + 3) / 4 : 0; }

  void add_reference(const TensorMap& t, AttnRefTerms& terms) const override {
    terms.add_score([this, pq = t.at("pq").to_f64(), pk = t.at("pk").to_f64()](int64_t h, int64_t qpos, int64_t kpos,
                                                                              const double*, const double*) {
      const int64_t D = shape_.dim, M = shape_.kv_seq;
      const double* a = &pq[static_cast<size_t>((h * M + qpos) * D)];
      const double* b = &pk[static_cast<size_t>((h * M + kpos) * D)];
      double dot = 0;
      for (int64_t c = 0; c < D; ++c) dot += a[c] * b[c];
      return shape_.scale * dot;
    });
  }
  double reference_cost_per_key() const override { return 4.0 * static_cast<double>(shape_.dim); }

  // Per score: the untied dot product (D multiply-adds) and adding it to q.k.
  double flops() const override { return (2.0 * static_cast<double>(shape_.dim) + 1) * shape_.scores(); }

  TermError score_error(double s_before) const override {
    // A second f32 dot product of D terms with entries in [-1, 1] and the
    // same scale: the same worst case as q.k's, scale D^2 u, plus scaling pq
    // (u |term| <= u scale D); adding it rounds, u |s| with |s| <= s_before +
    // scale D, which is also how far it moves a score.
    const double u = std::ldexp(1.0, -24);
    const double D = static_cast<double>(shape_.dim), sc = std::fabs(shape_.scale);
    TermError err;
    err.abs = sc * D * D * u + sc * D * u + u * (s_before + sc * D);
    err.reach = sc * D;
    err.model = "(untied dot scale D^2 u, sum)";
    return err;
  }

 private:
  AttnShape shape_;
};

class AttnTupeCase : public AttnCase {
 public:
  explicit AttnTupeCase(const Params& p) : AttnCase(p) {
    add_term(std::make_unique<T5Bias>(p, shape_));
    add_term(std::make_unique<UntiedPositions>(shape_));
    plan();
  }

 protected:
  std::string kernel() const override { return "tupe"; }
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
