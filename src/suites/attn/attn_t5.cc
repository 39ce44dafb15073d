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

bool T5Bias::record_prepass(Recorder& rec, const PrepassTarget&) const {
  const AttnShape& s = shape_;
  const int64_t length = s.kv_seq + s.seq - 1;
  PushConstants push;
  push.u32(static_cast<uint32_t>(s.heads))
      .u32(static_cast<uint32_t>(length))
      .u32(static_cast<uint32_t>(s.kv_seq))
      .u32(static_cast<uint32_t>(num_buckets_))
      .u32(bidirectional_ ? 1u : 0u);
  rec.dispatch(grid_dispatch(rec, "attn_t5_bias", {"bias_table", "t5_thresholds", "rel_bias"}, s.heads * length, push));
  return true;
}

std::optional<RelFarDistances> T5Bias::flash_cpu_far() const {
  return t5_far_distances(bidirectional_, num_buckets_, max_distance_);
}

void T5Bias::add_reference(const TensorMap& t, AttnRefTerms& terms) const {
  terms.add_bias([this, table = t.at("bias_table").to_f64()](int64_t h, int64_t qpos, int64_t kpos, const double*,
                                                              const double*) {
    const int32_t bucket = buckets_[static_cast<size_t>(kpos - qpos + shape_.kv_seq - 1)];
    return table[static_cast<size_t>(bucket * shape_.heads + h)];  // bias_table [nb,H]
  });
}

TermError T5Bias::score_error(double s_before) const {
  // The bias is exact in f32 (a stored value); adding it to the rounded
  // score rounds once more, u |s| with |s| <= s_before + kRange; it moves a
  // score by up to kRange (the reach the core's exp error sees).
  TermError err;
  err.abs = std::ldexp(1.0, -24) * (s_before + kRange);
  err.reach = kRange;
  err.model = "(bias sum u|s|)";
  return err;
}

namespace {

class AttnT5Case : public AttnCase {
 public:
  explicit AttnT5Case(const Params& p) : AttnCase(p) {
    add_term(std::make_unique<T5Bias>(p, shape_));
    plan();
  }

 protected:
  std::string kernel() const override { return "t5"; }
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
