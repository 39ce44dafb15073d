// attn.t5: attention with T5's bucketed relative bias (encodings.md
// section 3): s = scale q.k + bias_table[bucket(j - i'), h], scale default
// 1.0 (T5 folds it into the initialisation). Also the T5Bias that attn.tupe
// reuses (attn_t5.h).
#include "suites/attn/attn_t5.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "harness/contract/registry.h"
#include "suites/common/rel_buckets.h"

namespace pebench {

std::vector<ParamSpec> t5_bias_params() {
  return {
      int_param("num_buckets", 32, "T5 buckets nb (even; rows of bias_table [nb,H])"),
      int_param("max_distance", 128, "T5: distance at which the log buckets end"),
      derived_param("bidirectional", ParamType::kBool, "!causal",
                    "T5 buckets: half the buckets for keys after the query (else all keys after it share bucket 0)")};
}

void resolve_t5_bias_params(Params& p) {
  if (!p.has("bidirectional")) p.set("bidirectional", !p.b("causal"));
  check_t5_params(p.b("bidirectional"), int_param_value(p, "num_buckets"), int_param_value(p, "max_distance"));
  rel_table_length(p.i("seq"), p.i("kv_seq"));
}

T5Bias::T5Bias(const Params& p, const AttnShape& s)
    : shape_(s),
      bidirectional_(p.b("bidirectional")),
      num_buckets_(static_cast<int>(p.i("num_buckets"))),
      max_distance_(static_cast<int>(p.i("max_distance"))),
      thresholds_(t5_thresholds(bidirectional_, num_buckets_, max_distance_)),
      buckets_(t5_bucket_table(s.seq, s.kv_seq, bidirectional_, num_buckets_, max_distance_)) {}

std::vector<TensorDesc> T5Bias::tensors() const {
  const AttnShape& s = shape_;
  return {tensor("bias_table", TensorRole::kInput, s.dtype, {num_buckets_, s.heads}, "[nb,H]"),
          rel_thresholds_tensor("t5_thresholds", thresholds_),
          tensor("rel_bias", TensorRole::kScratch, DType::kF32, {s.heads, s.kv_seq + s.seq - 1}, "[H,M+N-1]")};
}

void T5Bias::fill(TensorMap& t, Rng& rng) const {
  t.at("bias_table").fill_uniform(rng, -kRange, kRange);
  store_rel_thresholds(t.at("t5_thresholds"), thresholds_);
}

void T5Bias::record(Recorder& rec) const {
  const AttnShape& s = shape_;
  const int64_t length = s.kv_seq + s.seq - 1;
  PushConstants push;
  push.u32(static_cast<uint32_t>(s.heads))
      .u32(static_cast<uint32_t>(length))
      .u32(static_cast<uint32_t>(s.kv_seq))
      .u32(static_cast<uint32_t>(num_buckets_))
      .u32(bidirectional_ ? 1u : 0u);
  rec.dispatch(grid_dispatch(rec, "attn_t5_bias", {"bias_table", "t5_thresholds", "rel_bias"}, s.heads * length, push));
}

std::function<double(int64_t, int64_t, int64_t)> T5Bias::reference_bias(const TensorMap& t) const {
  return [this, table = t.at("bias_table").to_f64()](int64_t h, int64_t qpos, int64_t kpos) {
    const int32_t bucket = buckets_[static_cast<size_t>(kpos - qpos + shape_.kv_seq - 1)];
    return table[static_cast<size_t>(bucket * shape_.heads + h)];  // bias_table [nb,H]
  };
}

namespace {

class AttnT5Case : public T5BiasedAttnCase {
 public:
  explicit AttnT5Case(const Params& p) : T5BiasedAttnCase(p) { plan(); }

 protected:
  std::string kernel() const override { return "t5"; }
  std::vector<TensorDesc> extra_tensors() const override { return t5_.tensors(); }
  std::vector<std::string> extra_bindings() const override { return {"rel_bias"}; }
  void fill_extra(TensorMap& t, Rng& rng) const override { t5_.fill(t, rng); }

  AttnRefTerms reference_terms(const TensorMap& t) const override {
    AttnRefTerms terms;
    terms.score = [bias = t5_.reference_bias(t)](int64_t h, int64_t qpos, int64_t kpos, const double*,
                                                 const double*) { return bias(h, qpos, kpos); };
    return terms;
  }

  // One add per score.
  double extra_flops() const override { return shape_.scores(); }

  ScoreError extra_score_error() const override {
    // The bias is exact in f32 (a stored value); adding it to the rounded
    // scale q.k rounds once more, u |s| with |s| <= s_max + kRange. The
    // bias also widens the scores' spread by up to 2 kRange, which the
    // core's exp error (3 + 2|x|) ulp then sees: 4 kRange * 2u more.
    const double u = std::ldexp(1.0, -24);
    const double s_max = std::fabs(shape_.scale) * static_cast<double>(shape_.dim);
    ScoreError err;
    err.abs = u * (s_max + T5Bias::kRange) + 8 * T5Bias::kRange * u;
    err.model = "(bias sum u|s|, spread 2|b|)";
    return err;
  }
};

class AttnT5 : public Variant {
 public:
  std::string id() const override { return "attn.t5"; }
  std::string summary() const override { return "attention with T5's bucketed relative-position bias"; }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override {
    std::vector<ParamSpec> specs = attn_params("1.0");
    for (auto& s : t5_bias_params()) specs.push_back(std::move(s));
    return specs;
  }
  void resolve(Params& p) const override {
    resolve_attn_params(p, 1.0);
    resolve_t5_bias_params(p);
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnT5Case>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnT5);

}  // namespace
}  // namespace pebench
