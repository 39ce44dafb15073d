// The T5 relative-position bias (encodings.md section 3) that attn.t5 and
// attn.tupe share: bias_table[bucket(j - i'), h] added to the score, with
// the exact T5 bucket of rel_buckets.h.
//
// The bias depends on (h, j - i') only, so a small pre-pass
// (attn_t5_bias.comp) writes it once per head and distance,
// rel_bias [H, M+N-1] (f32), from bias_table and the bucket that
// rel_buckets.glsl's t5_bucket computes from the host's threshold list
// (exact integers, no float log); both kernels then read one float per
// score, rel_bias[h, j - i' + M - 1] (t5_hooks.glsl). The host's
// t5_bucket_table serves the reference only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/contract/params.h"
#include "harness/contract/variant.h"
#include "suites/attn/attn_common.h"

namespace pebench {

// num_buckets (32), max_distance (128), bidirectional (derived: !causal).
std::vector<ParamSpec> t5_bias_params();
// Fills bidirectional and rejects bucket parameters the bucket cannot use
// (check_t5_params), naming the value.
void resolve_t5_bias_params(Params& p);

class T5Bias : public AttnTerm {
 public:
  // Range of the generated bias_table entries (uniform in [-kRange, kRange]).
  static constexpr double kRange = 1.0;

  T5Bias(const Params& p, const AttnShape& s);

  // bias_table [nb,H] (input, storage dtype), t5_thresholds (i32 constant,
  // t5_thresholds()), rel_bias [H, M+N-1] (f32 scratch, what the kernels
  // read, bound).
  std::vector<TensorDesc> tensors() const override;
  void fill(TensorMap& t, Rng& rng) const override;
  // The pre-pass that writes rel_bias.
  bool record_prepass(Recorder& rec, const PrepassTarget&) const override;
  std::vector<std::string> bindings() const override { return {"rel_bias"}; }
  // Where the bias stops changing: T5's last bucket of each side.
  std::optional<RelFarDistances> flash_cpu_far() const override;

  // The bias of (h, i', j) from bias_table as stored in t.
  void add_reference(const TensorMap& t, AttnRefTerms& terms) const override;
  // One add per score.
  double flops() const override { return shape_.scores(); }
  TermError score_error(double s_before) const override;

 private:
  AttnShape shape_;
  bool bidirectional_;
  int num_buckets_, max_distance_;
  std::vector<uint32_t> thresholds_;   // t5_thresholds, for the pre-pass
  std::vector<int32_t> buckets_;       // t5_bucket_table (reference): entry j - i' + M - 1
};

}  // namespace pebench
