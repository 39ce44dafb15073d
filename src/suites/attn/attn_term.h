// One position term of an attention variant (ALiBi's bias, T5's bucketed
// bias, TUPE's untied dot, Shaw's relative rows, ...), as one object that
// carries everything the term adds to a case: its tensors and how they are
// filled, its pre-passes, what its kernel hooks bind and read from push and
// spec constants, its float64 reference term, its cost and its error model.
// A variant is AttnCase plus a list of terms (T5Bias serves attn.t5 and
// attn.tupe); AttnCase sums what the terms add, in their order.
//
// Order matters to the shaders: a case's terms' bindings follow the common
// buffers as ATTN_EXTRA_BINDING(0), (1), ... across the terms in order, and
// their specialization constants take constant_id 6, 7, ... likewise. Each
// spec constant carries the name the shader declares at its id, and the
// pipeline checks it against the SPIR-V (a mismatch is an error, not a wrong
// answer).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/contract/variant.h"
#include "suites/common/rel_buckets.h"

namespace pebench {

// A variant's terms in the float64 reference, built from the inputs for one
// reference() call, so that no state outlives the call or depends on the
// order of calls. Every member is optional (empty: no term); the add_*
// functions compose the terms of several AttnTerms.
struct AttnRefTerms {
  // q row of head h at position qpos / k row of kv head kvh at kpos, in place.
  using RowTransform = std::function<void(int64_t h, int64_t pos, double* row)>;
  // Added to scale * q.k of a visible key; q after `q` (unscaled) and k
  // after `k`, D doubles each.
  using Score = std::function<double(int64_t h, int64_t qpos, int64_t kpos, const double* q, const double* k)>;
  // Adds w * (the pair's value term) to acc[D].
  using Value = std::function<void(int64_t h, int64_t qpos, int64_t kpos, double w, double* acc)>;
  // A position-only term that depends on the whole row (CoPE: key j's
  // position sums the gates of keys j..last): given the row's uncapped
  // content scores content[j] = scale q.k_j (-inf where j is not visible)
  // and q, adds the term of each visible key to bias[j] (M doubles each).
  using RowBias = std::function<void(int64_t h, int64_t qpos, const double* q, const double* content, double* bias)>;

  RowTransform q, k;
  Score score;
  // The position-only additive term (ALiBi's slope term, T5's and TUPE's
  // bias_table lookup): added after `softcap` caps the content score
  // (encodings.md, "Masks and modifiers"); `score` is capped with q.k.
  Score bias;
  RowBias row_bias;  // at most one term's (added after softcap, as `bias`)
  Value value;

  void add_q(RowTransform f) { q = then(std::move(q), std::move(f)); }
  void add_k(RowTransform f) { k = then(std::move(k), std::move(f)); }
  void add_score(Score f) { score = sum(std::move(score), std::move(f)); }
  void add_bias(Score f) { bias = sum(std::move(bias), std::move(f)); }
  void add_value(Value f);

 private:
  static RowTransform then(RowTransform first, RowTransform second);
  static Score sum(Score first, Score second);
};

// A term's error on a visible score, given the largest |score| of the parts
// before it (the core's scale q.k, then earlier terms): `abs` bounds it,
// `rms` is the rms of independent per-score errors (e.g. Vulkan's sin/cos),
// `reach` is how far the term can move a score's magnitude (the core then
// sees the wider spread in exp's error and the sums' rounding).
struct TermError {
  double abs = 0;
  double rms = 0;
  double reach = 0;
  std::string model;
};

// A specialization constant of a term's hooks, by the name its shader gives it.
struct NamedConstant {
  std::string name;
  uint32_t value;
};

// A tensor as a texel build reads it: vec4 texels of the case's dtype (rows
// of whole texels: D % 4 == 0) or single floats.
struct TexelTensor {
  std::string name;
  TexelFormat format;
};

// Loop iterations one flash invocation runs in the hooks' own rolled loops
// (counted against llvmpipe's loop budget: flash_loop_iterations).
struct FlashHookLoops {
  uint64_t per_invocation = 0;  // of ATTN_KEYS_BEGIN / ATTN_ROWS_FINISH, once each
  uint64_t per_row = 0;       // rolled loop iterations of the q-row hooks, per row slot
  uint64_t per_key = 0;       // of ATTN_SCORE_TERM / ATTN_VALUE_TERM per key folded in
  uint64_t per_key_load = 0;  // of ATTN_K_ROW_PREPARE / ATTN_K_CHUNK_TRANSFORM per key row (direct)
  uint64_t per_chunk = 0;     // of ATTN_K_STAGE_TRANSFORM per staged chunk

  FlashHookLoops& operator+=(const FlashHookLoops& o);
};

// The kernel a term's pre-passes feed.
struct PrepassTarget {
  bool cpu_flash = false;  // the CPU flash kernel (flash_main.glsl); else the GPU kernel or naive
};

class AttnTerm {
 public:
  virtual ~AttnTerm() = default;

  // Tensors it adds (inputs, constants, scratch) and fills (inputs and constants).
  virtual std::vector<TensorDesc> tensors() const { return {}; }
  virtual void fill(TensorMap& t, Rng& rng) const {}
  // Dispatches that must run before the attention (e.g. a bias table);
  // true if it recorded any. The case adds one barrier after all terms'
  // pre-passes. `target` says which kernel reads them: a table only some
  // kernels read is recorded for those only.
  virtual bool record_prepass(Recorder& rec, const PrepassTarget& target) const { return false; }

  // What the attention kernel (flash) or the naive score pass reads: tensors
  // bound after the common buffers, push words after the common ones, spec
  // constants from id 6 (naive: also the first P.V pass's).
  virtual std::vector<std::string> bindings() const { return {}; }
  virtual void push(PushConstants& push) const {}
  virtual std::vector<NamedConstant> spec_constants() const { return {}; }
  virtual FlashHookLoops flash_loops() const { return {}; }
  // Flash: the term's state runs over a row's keys in the kernel's order
  // (CoPE's suffix sums: ATTN_KEYS_LAST_TO_FIRST), so the plan keeps every
  // row's keys in one split (no flash-decoding partials).
  virtual bool flash_one_key_split() const { return false; }
  // CPU kernel, staged: vec4 chunks the term stages per key in shared memory
  // beside K and V (ATTN_STAGE_CHUNK); the planner fits the tile to them.
  virtual int64_t flash_cpu_staged_chunks() const { return 0; }
  // CPU kernel, staged: false where the term's hooks run slower with the
  // tile read one chunk a lane (TILE_SHUFFLE, flash_decl.glsl; measured:
  // docs/attention-kernels.md), so the planner keeps every lane reading it.
  virtual bool flash_cpu_tile_shuffle() const { return true; }
  // CPU kernel: tensors of bindings() that the kernel's texel build
  // (`// pebench-build: texel ATTN_TEXEL`) reads as storage texel buffers;
  // where the device can bind them so (AttnCase::texel_build_fits), the CPU
  // kernel runs that build. For data that every lane reads at a different
  // address (XL's rk rows, DeBERTa's table entries): llvmpipe fetches a
  // texel for all lanes at once (docs/lavapipe.md).
  virtual std::vector<TexelTensor> flash_cpu_texel_tensors() const { return {}; }
  // CPU kernel, staged: where the term's hooks define ATTN_FAR_SCORE_TERM, the
  // distances from which its score term takes a simpler form (T5 and Shaw:
  // one value per row and side; DeBERTa: no idx): keys that far before or
  // after every row of a workgroup are folded in ranges of their own
  // (flash_main.glsl). Empty: the term is the same at every distance (e.g.
  // TUPE's dot, in ATTN_SCORES).
  virtual std::optional<RelFarDistances> flash_cpu_far() const { return std::nullopt; }
  // Naive: dispatches between the score pass and the softmax over the
  // score scratch `scores` ([slices, N, M], slices slice0.. of this pass)
  // that turn whole rows of scores into the variant's (CoPE's suffix sums);
  // true if it recorded any (the case adds the barrier after them).
  virtual bool record_naive_rows(Recorder& rec, int64_t slice0, int64_t slices) const { return false; }
  // Naive: true if those row passes apply `softcap` themselves (CoPE: its
  // gates read the uncapped content score), so the score pass leaves the
  // scores uncapped.
  virtual bool caps_in_naive_rows() const { return false; }
  // Naive: tensors the first P.V pass's value term reads (after its three
  // buffers) and the loop iterations it adds per item.
  virtual std::vector<std::string> pv_bindings() const { return {}; }
  virtual uint32_t pv_loops() const { return 0; }

  // Reference: adds the term to `terms`, from the inputs in `t`.
  virtual void add_reference(const TensorMap& t, AttnRefTerms& terms) const {}
  // Rough float64 operations per (row, key) the reference spends on it.
  virtual double reference_cost_per_key() const { return 0; }

  // Operations beyond q.k and p.v (the report's flops).
  virtual double flops() const { return 0; }
  // See TermError; s_before: the largest |score| of the parts before it.
  virtual TermError score_error(double s_before) const { return {}; }
};

}  // namespace pebench
