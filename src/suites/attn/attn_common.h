// What every attention variant (`attn.*`, encodings.md sections 0 and 3)
// shares: the common parameters, the tensors q [B,H,N,D], k and v
// [B,Hkv,M,D], o [B,H,N,D], input generation, the float64 reference, the
// cost model, the error model behind the tolerance, and the two
// implementations' dispatch sequences:
//
//   naive  scores (attn_scores_<kernel>), softmax (attn_softmax), P.V
//          (attn_pv) as separate dispatches over (b, h) slices, through an
//          f32 score scratch of at most 128 MiB (Vulkan's minimum
//          maxStorageBufferRange), so large N x M runs slice batch by batch.
//   flash  one fused kernel (attn_flash_<kernel>): online softmax over K/V
//          tiles in shared memory, tile sizes from the device's limits; when
//          there are few query rows (decode) or the keys would run past
//          llvmpipe's loop budget, the keys are split across workgroups and
//          attn_combine merges the partial (m, l, acc) (flash-decoding).
//
// Adding a variant (attn.t5, attn.shaw, attn.xl, ...) is a subclass of
// AttnCase that names its kernel and adds its terms (attn_term.h: tensors,
// bindings, push and spec constants, pre-passes, reference term, cost and
// error model in one object each), plus small shader wrappers; nothing here
// is copied:
//   * shaders: `attn_flash_<kernel>.comp` and `attn_scores_<kernel>.comp`
//     include flash_decl.glsl / scores_decl.glsl, the variant's hooks
//     (tensor i at ATTN_EXTRA_BINDING(i), indexed from ATTN_EXTRA_OFF_S(i) so
//     that the packed build works: attn_pack.glsl; ATTN_SCORE_TERM for additive score
//     terms, ATTN_ROW_STATE for per-row state, ATTN_Q_* / ATTN_K_* for q/k
//     transforms as rows are loaded, ATTN_VALUE_TERM for value
//     terms, ATTN_EXTRA_PUSH), then the main part. A value term in naive
//     needs an `attn_pv_<kernel>.comp` wrapper of pv.glsl (naive_pv_shader()).
//     Beyond additive terms (flash_decl.glsl lists them all): ATTN_SCORES /
//     ATTN_SCORE replace the score (complex); ATTN_PARTS > 1 widens q, k, v,
//     the accumulator and the output to several D-wide parts (complex's real
//     and imaginary: row_parts(), part_tensors()); ATTN_KEYS_BEGIN,
//     ATTN_KEY_FOLDED and ATTN_ROWS_FINISH keep per-distance state per row and
//     apply it once per row (Shaw's terms); ATTN_SLOTS_BY_HEAD with
//     ATTN_KEYS_BEGIN / ATTN_SCORES share distance-indexed
//     rows between an invocation's consecutive slots (XL:
//     flash_slots_by_head()).
//   * host: the constructor adds the terms (add_term) and calls plan(); the
//     few hooks below that are about the kernel rather than a term (its
//     name, row parts, slot order, a naive pre-pass, the magnitude of q and
//     k) are overridden where they apply. A different default scale is the
//     `default_scale` passed to resolve_attn_params().
// docs/attention-kernels.md describes the kernels, tiling and limits.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/contract/params.h"
#include "harness/contract/variant.h"
#include "suites/attn/attn_mask.h"
#include "suites/attn/attn_term.h"
#include "suites/common/suite_util.h"

namespace pebench {

// batch, heads, kv_heads, seq, kv_seq, dim, causal and scale (derived:
// `scale_doc` says how, e.g. "1/sqrt(dim)"), then the masks and modifiers
// (attn_mask_params: window, chunk, sink_tokens, softcap, sink_logits).
std::vector<ParamSpec> attn_params(const std::string& scale_doc = "1/sqrt(dim)");

// Fills `scale` with default_scale when absent and rejects what the kernels
// cannot run: flash beyond kFlashMaxHeadDim, non-finite scale, positions or
// tensors past 32-bit indexing. (heads % kv_heads and kv_seq >= seq are
// checked by the harness.)
void resolve_attn_params(Params& p, double default_scale);

// sink_logits: the range the suite draws sinks[h] from (the scores of
// uniform q, k in [-1, 1] have |s| of about 0.6 at most keys), so that the
// sink takes a share of the denominator that validation sees.
constexpr double kSinkLogitMin = -1.0;
constexpr double kSinkLogitMax = 3.0;

// q and the accumulator live in each flash invocation's registers.
constexpr int64_t kFlashMaxHeadDim = 256;
// CPU devices: row slots per invocation x vec4 chunks per row, at most (the
// registers the compiler must juggle; its time grows faster than linearly).
// More slots serve every K/V element an invocation loads to more rows, so
// the kernel runs faster, but llvmpipe takes 15-20 s longer to compile a
// pipeline of 256 chunks than one of 128 (docs/attention-kernels.md, "Row
// slots on CPU devices"). Cases with at least kFlashCpuLargeWork q.k multiply-adds get the
// larger budget, where one execution takes a sizeable part of a second; the
// rest, tests and the quick preset among them, keep the cheap compile, and
// so do rows of several parts (complex), which run faster with it.
constexpr int64_t kFlashCpuRowChunks = 128;
constexpr int64_t kFlashCpuRowChunksLarge = 256;
constexpr double kFlashCpuLargeWork = 1073741824.0;  // 2^30: N = M = 1024, H 8, D 128
// CPU devices: row slots per invocation, at most. attn.xl's queue shift
// (xl_hooks.glsl, xl_step) is three unrolled chunks of 16 steps, enough for
// the R (R + 1) / 2 - 1 steps of R slots up to 9: llvmpipe leaves a longer
// loop rolled, which spends its loop budget and cuts key ranges short.
constexpr int64_t kFlashCpuMaxRowSlots = 8;
static_assert(kFlashCpuMaxRowSlots * (kFlashCpuMaxRowSlots + 1) / 2 - 1 <= 3 * 16,
              "xl_hooks.glsl shifts XL's queues in three chunks of 16 steps");

struct AttnShape {
  explicit AttnShape(const Params& p);
  int64_t batch, heads, kv_heads, seq, kv_seq, dim;
  bool causal;
  double scale;
  DType dtype;
  AttnMask mask;        // causal plus window, chunk, sink_tokens
  AttnSoftcap softcap;  // softcap (0: off)
  bool sink_logits;     // sink_logits: input sinks [H]

  int64_t group() const { return heads / kv_heads; }        // query heads per kv head
  int64_t q_rows() const { return batch * heads * seq; }    // rows of q and o
  int64_t query_pos(int64_t i) const { return i + kv_seq - seq; }  // i'
  // Score entries the definition computes: B*H*N*M, halved for causal N = M
  // (encodings.md section 4); with a window, chunk or sink tokens the
  // visible (i', j) pairs exactly, B*H*V ("Masks and modifiers").
  double scores() const;
  // q.k multiply-adds of the definition: scores() x dim.
  double score_work() const { return scores() * static_cast<double>(dim); }
  // The push constants every attention kernel starts with: H, Hkv, N, M,
  // causal, scale (ATTN_PUSH_SHAPE, shaders/attn/attn_util.glsl).
  PushConstants push() const;

 private:
  double visible_pairs_ = 0;  // mask.visible_pairs(), where mask.on()
};

// The flash plan. Two modes of one kernel (flash_main.glsl):
//   staged  (many query rows) a workgroup stages K/V tiles in shared memory
//           for its rows; keys split across workgroups only for parallelism
//           or the loop budget;
//   direct  (few query rows: decode) every invocation is a key split of
//           kFlashDirectSplitKeys keys reading K/V straight from memory,
//           merged by attn_combine (flash-decoding).
// The mode and the splits depend on the parameters only (the partials'
// scratch is sized before the device is known); the tiles come from the
// device's limits at record time. One exception at record time: on a GPU, a
// GQA group's decode runs staged (flash_gpu_decode_staged), within the same
// scratch.
struct FlashPlan {
  bool direct = false;
  int64_t splits = 1;          // key splits (> 1: partials + attn_combine)
  int64_t keys_per_split = 0;  // a multiple of kFlashMaxTileKeys when staged
  int64_t parts = 1;           // D-wide parts of q, k, v and o rows (AttnCase::row_parts)
  bool slots_by_head = false;  // staged slots in head-major order (AttnCase::flash_slots_by_head)
  bool cpu_tile_shuffle = true;  // CPU kernel, staged: the terms allow TILE_SHUFFLE
  // CPU kernel, staged: the terms' far distances (AttnTerm::flash_cpu_far),
  // kRelFarNone on a side where no key of the case is that far.
  uint32_t cpu_far_left = kRelFarNone, cpu_far_right = kRelFarNone;
  bool cpu_far_ranges() const { return cpu_far_left != kRelFarNone || cpu_far_right != kRelFarNone; }
  int64_t cpu_staged_chunks = 0;  // CPU kernel, staged: vec4 chunks a key stages beside K and V (the terms')
  // CPU kernel: query rows per invocation as `run --tune` chose them (0: the
  // planner's, flash_cpu_row_slots).
  int64_t cpu_row_slots = 0;
  // Direct (decode): keys per split as `run --tune` chose them on a GPU (0:
  // kFlashDirectSplitKeys). The partials' scratch keeps the untuned plan's
  // split count (scratch_splits), the most any choice makes.
  int64_t direct_split_keys = 0;
  int64_t scratch_splits = 1;
};
constexpr int64_t kFlashDirectMaxRows = 16;    // query rows per kv head up to which decode runs direct
constexpr int64_t kFlashDirectSplitKeys = 64;  // keys per direct split
// GPU kernel, direct: the keys per split `run --tune` tries (those below the
// key count), beside kFlashDirectSplitKeys: fewer splits shorten
// attn_combine's loop over them and make each cluster stream longer.
constexpr int64_t kFlashDirectSplitKeyChoices[] = {64, 128, 256, 512, 1024, 2048};
// GPU kernel, direct, untuned: keys per split for at most this many splits
// (a power of two, at least kFlashDirectSplitKeys). On an H100 (`run --tune`,
// docs/gpus.md) the fastest choice at M 8K, 32K and 64K made 128, 256 and 256
// splits: fewer leave the GPU idle, more lengthen attn_combine.
constexpr int64_t kFlashGpuDirectMaxSplits = 256;
int64_t flash_gpu_direct_split_keys(int64_t kv_seq);
constexpr uint32_t kFlashMaxTileKeys = 64;     // largest staged tile
// The loop budget of llvmpipe (LaunchPlanner's, with its margin): splits are
// planned against it whatever the device.
constexpr uint64_t kFlashLoopBudget = 60000;

struct FlashDevice {
  uint32_t shared_bytes;     // maxComputeSharedMemorySize
  uint32_t max_invocations;  // maxComputeWorkGroupInvocations (and size x)
  uint32_t subgroup;         // subgroup size
  bool cpu;                  // a CPU device: many rows per invocation (see flash_tiles)
  bool shuffle = false;      // subgroup shuffles (GPU kernel: reductions without shared memory)
  // The smallest subgroup the driver may choose (subgroupSizeControl's
  // minSubgroupSize; 0: `subgroup`): a shuffle cluster must fit in it.
  uint32_t min_subgroup = 0;
};
// GPU decode of a GQA group (direct plan, G > 1, several splits) runs the
// staged mode: the G heads' clusters share each staged K/V tile of a split.
bool flash_gpu_decode_staged(const AttnShape& s, const FlashPlan& plan, const FlashDevice& dev);
struct FlashTiles {
  uint32_t invocations = 1;  // per workgroup
  uint32_t row_slots = 1;    // query rows per invocation (ROWS; CPU kernel)
  // GPU kernel (flash_gpu_main.glsl; 0: the CPU kernel): invocations per
  // query row, each holding d4 / lanes chunks of q and of the accumulator.
  uint32_t lanes = 0;
  bool shared_reduce = false;  // GPU kernel without subgroup shuffles
  uint32_t tile_shuffle = 0;   // CPU kernel, staged: TILE_SHUFFLE (flash_decl.glsl), 0 or the subgroup size
  uint32_t keys = 4;         // keys per staged tile (BC)
  uint32_t d4 = 1;           // vec4 chunks per row (of one part)
  uint32_t parts = 1;        // FlashPlan::parts: registers and shared memory per row scale with it
  // GPU kernel, staged: even a 4-key tile is past the workgroup's share of
  // shared memory (flash_gpu_tiles), so it bounds occupancy.
  bool tile_over_share = false;
  // Staged: query rows per workgroup.
  uint32_t rows() const { return lanes > 0 ? invocations / lanes : invocations * row_slots; }
};
// GPU kernel: vec4 chunks of a row each lane holds at most (registers for q
// and the accumulator: 2 x 4 x this), and the shared memory its K/V tiles
// may take per workgroup, so that several workgroups fit on a compute unit.
constexpr uint32_t kFlashGpuLaneChunks = 4;
constexpr uint32_t kFlashGpuTileBytes = 16384;
constexpr uint32_t kFlashGpuInvocations = 128;
// CPU devices: the case's chunk budget for rows of `parts` D-wide parts
// (kFlashCpuRowChunks, or kFlashCpuRowChunksLarge for large cases of one
// part), and the query rows per flash invocation for rows of d4 * parts vec4
// chunks (q, and the accumulator as many again) within it.
int64_t flash_cpu_row_budget(const AttnShape& s, int64_t parts);
int64_t flash_cpu_row_slots(const AttnShape& s, int64_t d4, int64_t parts);
// CPU kernel: the row slot counts `run --tune` times, the planner's first,
// then every count from half of its budget's to twice that (at most
// kFlashCpuMaxRowSlots) that gives these rows a different kernel. Which
// count is fastest depends on the host CPU: on one VM 4 slots ran D 128 17%
// faster than 8, on another 8 ran it a third faster (docs/attention-kernels.md).
std::vector<int64_t> flash_cpu_slot_choices(const AttnShape& s, const FlashPlan& plan, uint32_t subgroup);
// Whether a CPU kernel may hand chunks between lanes with subgroupShuffle,
// the subgroup size a constant: the device has shuffles (`shuffle`), one
// fixed subgroup size (`min_size` 0 or `size`: no size control that could
// change it) and `invocations` fills whole subgroups.
bool cpu_shuffles_fit(bool shuffle, uint32_t size, uint32_t min_size, uint32_t invocations);
// Throws Unsupported when not even a 4-key tile fits in shared memory.
FlashTiles flash_tiles(const AttnShape& s, const FlashPlan& plan, const FlashDevice& dev);

// Loop iterations one flash invocation runs in the loops that are not
// unrolled ([[unroll]] loops have specialization-constant trip counts and
// are unrolled by the driver's compiler), plus the terms' hook loops.
uint64_t flash_loop_iterations(const FlashPlan& plan, const FlashTiles& t, const FlashHookLoops& hooks);

class AttnCase : public Case {
 public:
  explicit AttnCase(const Params& p);

  std::vector<TensorDesc> tensors() const override;
  void fill_inputs(TensorMap& t, Rng& rng) const override;
  int64_t reference_rows() const override { return shape_.q_rows(); }
  double reference_row_cost() const override;
  void reference(const TensorMap& t, const std::vector<int64_t>& rows, Reference& ref) const override;
  void record(Recorder& rec) const override;
  Cost cost() const override;
  Tolerance tolerance() const override;

  // Flash on CPU devices: the row slots (flash_cpu_slot_choices).
  std::vector<TuningChoice> tuning_choices(const LaunchPlanner& launch) const override;
  void select_tuning(const TuningChoice& choice) override;

  const AttnShape& shape() const { return shape_; }
  const FlashPlan& flash_plan() const { return flash_plan_; }
  // (b, h) slices per naive pass.
  int64_t naive_slices_per_pass() const { return slices_per_pass_; }
  // The variant's rolled hook loops, as record() counts them against the
  // loop budget (flash_loop_iterations).
  FlashHookLoops hook_loops() const { return term_loops(); }

 protected:
  // Must be called at the end of the subclass constructor (it asks the hooks).
  void plan();

  // The variant's terms, in binding order (attn_term.h); the constructor
  // adds them before plan().
  template <class Term>
  Term& add_term(std::unique_ptr<Term> term) {
    Term& added = *term;
    terms_.push_back(std::move(term));
    return added;
  }

  // ---- kernel hooks -------------------------------------------------------
  // Shader suffix: attn_flash_<kernel>, attn_scores_<kernel>.
  virtual std::string kernel() const = 0;
  virtual std::string naive_scores_shader() const { return "attn_scores_" + kernel(); }
  virtual std::string naive_pv_shader() const { return "attn_pv"; }
  // D-wide parts of every q, k, v and output row (ATTN_PARTS in the flash
  // kernel), and per part the value tensor and the output it is weighted
  // into: one naive P.V pass and one attn_combine pass each. Complex: 2.
  virtual int64_t row_parts() const { return 1; }
  struct Part {
    std::string value, output;
  };
  virtual std::vector<Part> part_tensors() const { return {{"v", "o"}}; }
  // Staged flash slots are consecutive positions of one head
  // (ATTN_SLOTS_BY_HEAD): the grid pads each head's rows to the row slots.
  virtual bool flash_slots_by_head() const { return false; }
  // Naive: dispatches before the score pass (e.g. rotating q and k); returns
  // the tensors the score pass reads as q and k and the build to read them with.
  struct NaiveQK {
    std::string q = "q", k = "k";
    DType storage;
  };
  virtual NaiveQK record_naive_prepass(Recorder& rec) const { return {"q", "k", shape_.dtype}; }
  // Error model: largest |component| of q and k as the dot product sees
  // them (inputs are uniform in [-1, 1]), and the largest |score| before
  // the terms (exp's error grows with it); default |scale| D qk_max^2.
  virtual double qk_max() const { return 1.0; }
  virtual double score_max() const;

  AttnShape shape_;
  bool flash_;  // impl=flash (else naive)

  // What the flash dispatch runs on: by default the case's own kernel on q
  // and k with its own terms; a variant that transforms q and k in a
  // pre-pass runs another kernel (without this variant's terms) on its
  // scratch copies.
  struct FlashInputs {
    std::string kernel;
    std::string q = "q", k = "k";
    bool own_terms = true;  // extra bindings, push and spec constants, hook loops
  };
  void record_flash(Recorder& rec, const FlashInputs& in) const;

 private:
  // Where the device allows fewer storage buffers than `d` binds, turns it
  // into its packed build (shaders/attn/attn_pack.glsl): the first
  // `unpacked_bindings` stay, the rest come through the case's pack, and the
  // members' word offsets become the build's spec constants.
  struct PackMembers {
    std::string out, ml, acc;         // the kernel's output and partials ("": none)
    std::vector<std::string> extras;  // the variant's extra bindings, in order
  };
  // Whether `d` binds more storage buffers than the device allows a stage.
  static bool needs_packing(const Recorder& rec, const Dispatch& d);
  void pack_if_needed(Recorder& rec, Dispatch& d, size_t unpacked_bindings, const PackMembers& m) const;
  // The packed build without the test (the flash kernel's ordinary build
  // binds the sinks' binding too, which the packed build has not).
  void pack(Dispatch& d, size_t unpacked_bindings, const PackMembers& m) const;
  // Whether the CPU kernel's unpacked dispatch `d` can run its texel build,
  // which reads k and v (and the terms' texel tensors) as storage texel
  // buffers: used in direct mode (decode) or where the terms name texel
  // tensors (AttnTerm::flash_cpu_texel_tensors, `in.own_terms`); vec4 rows
  // are whole texels (D % 4 == 0) and the device binds each tensor as a
  // storage texel buffer of its format.
  bool texel_build_fits(const Recorder& rec, const Dispatch& d, const FlashInputs& in, bool direct) const;
  void record_naive(Recorder& rec) const;

  // What the terms add, in order (see AttnTerm).
  std::vector<std::string> term_bindings() const;
  void add_term_push(PushConstants& push) const;
  void add_term_constants(Dispatch& d) const;
  // The mask's specialization constants (shaders/attn/mask.glsl), 0 when off.
  void add_mask_constants(Dispatch& d) const;
  FlashHookLoops term_loops() const;
  AttnRefTerms reference_terms(const TensorMap& t) const;

  std::vector<std::unique_ptr<AttnTerm>> terms_;

  FlashPlan flash_plan_;
  int64_t slices_per_pass_ = 1;
};

// Slopes m_h of ALiBi for H heads: get_slopes(H) of Press et al.
// (encodings.md section 3), in float64.
std::vector<double> alibi_slopes(int64_t heads);

}  // namespace pebench
