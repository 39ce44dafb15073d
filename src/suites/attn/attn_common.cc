#include "suites/attn/attn_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pebench {
namespace {

// The terms' specialization constants start at this constant_id.
constexpr uint32_t kTermConstant0 = 6;
// flash_decl.glsl's TILE_SHUFFLE, then STAGED_CHUNKS (CPU kernel; after the terms' ids).
constexpr uint32_t kTileShuffleConstant = 20;
// flash_decl.glsl's FAR_LEFT, FAR_RIGHT (CPU kernel).
constexpr uint32_t kFarConstant = 22;
// flash_decl.glsl's GROUP (CPU kernel; after the pack offsets).
constexpr uint32_t kGroupConstant = 32;
// shaders/attn/mask.glsl's MASK_WINDOW, MASK_CHUNK, MASK_SINKS, MASK_SOFTCAP, MASK_SINK_LOGITS.
constexpr uint32_t kMaskConstant = 33;
// shaders/attn/mask.glsl's ATTN_SINK_BINDING: sinks [H] in the flash
// kernels' ordinary builds (bindings before it the kernel does not use are
// padded with v).
constexpr size_t kFlashSinkBinding = 11;

// Packed builds (shaders/attn/attn_pack.glsl): the one pack of a case, and
// the spec constants of its members' word offsets.
constexpr const char* kPack = "attn_pack";
constexpr uint32_t kPackConstant0 = 24;  // ATTN_PACK_OUT, _ML, _ACC, then ATTN_PACK_X0...
constexpr uint32_t kPackExtraConstants = 5;
constexpr const char* kPackConstantNames[] = {"ATTN_PACK_OUT", "ATTN_PACK_ML", "ATTN_PACK_ACC", "ATTN_PACK_X0",
                                              "ATTN_PACK_X1",  "ATTN_PACK_X2", "ATTN_PACK_X3",  "ATTN_PACK_X4"};

// Naive score scratch: at most Vulkan's minimum maxStorageBufferRange.
constexpr int64_t kScoreScratchBytes = int64_t{1} << 27;
// Query rows per staged workgroup assumed when planning splits.
constexpr int64_t kFlashRowsPerGroup = 64;
// Flash-decoding: split the keys until about this many workgroups exist,
// keeping at least this many keys per split.
constexpr int64_t kFlashTargetGroups = 128;
constexpr int64_t kFlashMinSplitKeys = 256;

}  // namespace

std::vector<ParamSpec> attn_params(const std::string& scale_doc) {
  std::vector<ParamSpec> specs{shape::batch(),
                               shape::heads(),
                               shape::kv_heads(),
                               shape::seq(),
                               shape::kv_seq(),
                               shape::dim(),
                               shape::causal(),
                               derived_param("scale", ParamType::kFloat, scale_doc, "score scale s = scale * q.k (+ bias)")};
  for (auto& m : attn_mask_params()) specs.push_back(std::move(m));
  return specs;
}

void resolve_attn_params(Params& p, double default_scale) {
  if (!p.has("scale")) p.set("scale", default_scale);
  if (!std::isfinite(p.f("scale"))) throw CaseRejected(fmt::format("scale={} must be finite", p.f("scale")));
  resolve_attn_mask_params(p);
  const int64_t dim = p.i("dim");
  if (p.impl() == "flash" && dim > kFlashMaxHeadDim) {
    throw CaseRejected(fmt::format("dim={} exceeds the flash kernel's largest head dim {} (each invocation holds "
                                   "its q row and accumulator)",
                                   dim, kFlashMaxHeadDim));
  }
  if (p.i("kv_seq") >= (int64_t{1} << 31)) {
    throw CaseRejected(fmt::format("kv_seq={} exceeds 2^31 positions", p.i("kv_seq")));
  }
  require_u32_items(p.i("batch") * p.i("heads") * p.i("seq") * dim, "q");
  require_u32_items(p.i("batch") * p.i("kv_heads") * p.i("kv_seq") * dim, "k");
}

AttnShape::AttnShape(const Params& p)
    : batch(p.i("batch")),
      heads(p.i("heads")),
      kv_heads(p.i("kv_heads")),
      seq(p.i("seq")),
      kv_seq(p.i("kv_seq")),
      dim(p.i("dim")),
      causal(p.b("causal")),
      scale(p.f("scale")),
      dtype(p.dtype()),
      mask(p),
      softcap(p.has("softcap") ? p.f("softcap") : 0.0),
      sink_logits(p.has("sink_logits") && p.b("sink_logits")),
      visible_pairs_(mask.on() ? mask.visible_pairs() : 0.0) {}

double AttnShape::scores() const {
  if (mask.on()) return static_cast<double>(batch * heads) * visible_pairs_;
  const double n = static_cast<double>(batch * heads) * static_cast<double>(seq) * static_cast<double>(kv_seq);
  return causal && seq == kv_seq ? n / 2 : n;
}

PushConstants AttnShape::push() const {
  PushConstants p;
  p.u32(static_cast<uint32_t>(heads))
      .u32(static_cast<uint32_t>(kv_heads))
      .u32(static_cast<uint32_t>(seq))
      .u32(static_cast<uint32_t>(kv_seq))
      .u32(causal ? 1 : 0)
      .f32(static_cast<float>(scale));
  return p;
}

namespace {

uint32_t pow2_ceil(uint64_t x) {
  uint32_t p = 1;
  while (p < x) p *= 2;
  return p;
}
uint32_t pow2_floor(uint64_t x) {
  uint32_t p = 1;
  while (2ull * p <= x) p *= 2;
  return p;
}

// The GPU kernel's tiles (flash_gpu_decl.glsl): a row's head dim split over
// `lanes` invocations holding at most kFlashGpuLaneChunks chunks each (with
// shuffles, lanes stay within a subgroup), ROWS_WG = invocations / lanes
// rows per workgroup sharing each K/V tile, tiles within kFlashGpuTileBytes.
FlashTiles flash_gpu_tiles(const AttnShape& s, const FlashPlan& plan, const FlashDevice& dev, FlashTiles t) {
  const uint32_t sg = std::max(1u, dev.subgroup);
  const uint32_t max_wg = std::max(1u, pow2_floor(dev.max_invocations));
  t.shared_reduce = !dev.shuffle;
  uint32_t lanes = pow2_ceil(ceil_div(t.d4, kFlashGpuLaneChunks));
  // A cluster must sit inside one subgroup whatever size the driver picks
  // for this pipeline (Intel's compiler chooses 8, 16 or 32).
  if (dev.shuffle) lanes = std::min(lanes, pow2_floor(dev.min_subgroup > 0 ? std::min(dev.min_subgroup, sg) : sg));
  t.lanes = std::min(lanes, max_wg);
  t.row_slots = 1;
  const int64_t rows = s.group() * s.seq;
  // Direct: one cluster per key split; staged: one per query row.
  const int64_t clusters = plan.direct ? plan.splits : rows;
  const uint64_t wanted = std::min<uint64_t>(kFlashGpuInvocations, static_cast<uint64_t>(clusters) * t.lanes);
  t.invocations = std::min(max_wg, std::max(t.lanes, pow2_ceil(std::max<uint64_t>(wanted, sg))));
  if (plan.direct) return t;
  const uint64_t per_key = 2ull * t.d4 * t.parts * 16;  // one K and one V row, f32
  const uint64_t reduce_bytes = t.shared_reduce ? 16ull * t.invocations : 0;  // gpu_red
  // At most kFlashGpuTileBytes for a full workgroup (kFlashGpuInvocations),
  // proportionally less for a smaller one (a GQA group's decode: G
  // clusters; at least a quarter), so that shared memory does not bound
  // occupancy more than in prefill (on RADV's navi21, a 64-invocation decode
  // workgroup with 16 KiB of tiles ran 4 subgroups per SIMD, with 8 KiB 8).
  const uint64_t tile_bytes = std::max<uint64_t>(
      kFlashGpuTileBytes / 4, kFlashGpuTileBytes * std::min<uint64_t>(t.invocations, kFlashGpuInvocations) /
                                  kFlashGpuInvocations);
  const uint64_t budget =
      std::min<uint64_t>(dev.shared_bytes - std::min<uint64_t>(dev.shared_bytes, reduce_bytes), tile_bytes);
  t.keys = kFlashMaxTileKeys;
  while (t.keys > 4 && t.keys * per_key > budget) t.keys /= 2;
  t.tile_over_share = t.keys * per_key > budget;
  if (t.keys * per_key + reduce_bytes > dev.shared_bytes) {
    throw Unsupported(fmt::format("dim={} needs {} bytes of shared memory for a 4-key K/V tile; the device has {}",
                                  s.dim, t.keys * per_key + reduce_bytes, dev.shared_bytes));
  }
  return t;
}

}  // namespace

int64_t flash_cpu_row_budget(const AttnShape& s, int64_t parts) {
  // Rows of several parts (complex) run faster with the base budget: at
  // N = M = 2048 D 64, 4 slots 473-486 ms against 8 slots' 537-540; at 1024
  // D 128, 2 slots 285-287 against 4 slots' 313-316 (docs/attention-kernels.md).
  return s.score_work() >= kFlashCpuLargeWork && parts == 1 ? kFlashCpuRowChunksLarge : kFlashCpuRowChunks;
}

bool cpu_shuffles_fit(bool shuffle, uint32_t size, uint32_t min_size, uint32_t invocations) {
  return shuffle && (min_size == 0 || min_size == size) && size > 1 && invocations % size == 0;
}

int64_t flash_cpu_row_slots(const AttnShape& s, int64_t d4, int64_t parts) {
  return std::clamp<int64_t>(flash_cpu_row_budget(s, parts) / std::max<int64_t>(1, d4 * parts), 1,
                             kFlashCpuMaxRowSlots);
}

namespace {
// The row slots the CPU kernel gives its invocations for `slots` wanted: no
// more than the kv head's rows fill (direct: one invocation's; staged: a
// subgroup's, one lane each).
int64_t cpu_slots_for_rows(const AttnShape& s, const FlashPlan& plan, int64_t slots, uint32_t subgroup) {
  const int64_t rows = s.group() * s.seq;
  return plan.direct ? std::min(rows, slots) : std::min(slots, ceil_div(rows, int64_t{std::max(1u, subgroup)}));
}
}  // namespace

std::vector<int64_t> flash_cpu_slot_choices(const AttnShape& s, const FlashPlan& plan, uint32_t subgroup) {
  const auto used = [&](int64_t slots) { return cpu_slots_for_rows(s, plan, slots, subgroup); };
  const int64_t planned = flash_cpu_row_slots(s, ceil_div(s.dim, 4), plan.parts);
  std::vector<int64_t> choices{used(planned)};
  for (int64_t slots = std::max<int64_t>(1, planned / 2); slots <= std::min(kFlashCpuMaxRowSlots, 2 * planned);
       ++slots) {
    if (std::find(choices.begin(), choices.end(), used(slots)) == choices.end()) choices.push_back(used(slots));
  }
  return choices;
}

FlashTiles flash_tiles(const AttnShape& s, const FlashPlan& plan, const FlashDevice& dev) {
  FlashTiles t;
  if (!dev.cpu) {
    t.d4 = static_cast<uint32_t>(ceil_div(s.dim, 4));
    t.parts = static_cast<uint32_t>(plan.parts);
    return flash_gpu_tiles(s, plan, dev, t);
  }
  const int64_t d4 = ceil_div(s.dim, 4);
  t.d4 = static_cast<uint32_t>(d4);
  t.parts = static_cast<uint32_t>(plan.parts);
  const int64_t row_chunks = d4 * plan.parts;  // per row slot, of q and of the accumulator
  const int64_t rows = s.group() * s.seq;  // query rows per kv head
  const uint32_t sg = std::max(1u, dev.subgroup);
  const int64_t max_wg = std::max<int64_t>(1, dev.max_invocations / sg * sg);
  // Row slots: on CPUs every K/V element an invocation loads then serves
  // that many rows (loads dominate there: docs/attention-kernels.md); GPUs
  // keep one row per invocation to keep registers low.
  const int64_t cpu_slots = plan.cpu_row_slots > 0 ? plan.cpu_row_slots : flash_cpu_row_slots(s, d4, plan.parts);
  if (plan.direct) {
    // All rows of the kv head in one invocation where registers allow, so
    // that each K/V element is read once for them (GPUs: at most 32 chunks).
    t.row_slots = static_cast<uint32_t>(dev.cpu ? cpu_slots_for_rows(s, plan, cpu_slots, sg)
                                                : std::min(rows, std::clamp<int64_t>(32 / row_chunks, 1, 8)));
    t.invocations = static_cast<uint32_t>(std::min({int64_t{64}, max_wg, ceil_div(plan.splits, sg) * sg}));
    return t;
  }
  t.row_slots = static_cast<uint32_t>(dev.cpu ? cpu_slots_for_rows(s, plan, cpu_slots, sg) : 1);
  const int64_t wanted = dev.cpu ? std::max<int64_t>(sg, 128 / t.row_slots) : 64;
  t.invocations = static_cast<uint32_t>(
      std::min({wanted / sg * sg, max_wg, ceil_div(ceil_div(rows, t.row_slots), sg) * sg}));
  // One K and one V row and the terms' staged chunks, f32; as many whole
  // 4-key steps as fit (DeBERTa's staged chunk: 60 keys, not 32).
  const uint64_t per_key = (2ull * static_cast<uint64_t>(row_chunks) + static_cast<uint64_t>(plan.cpu_staged_chunks)) * 16;
  t.keys = static_cast<uint32_t>(std::min<uint64_t>(kFlashMaxTileKeys, dev.shared_bytes / per_key) / 4 * 4);
  if (t.keys < 4) {
    throw Unsupported(fmt::format("dim={} needs {} bytes of shared memory for a 4-key K/V tile; the device has {}",
                                  s.dim, 4 * per_key, dev.shared_bytes));
  }
  // Tile chunks shared out by shuffles: only where every subgroup is full and
  // has a size the shader can know (no variable subgroup size).
  if (plan.cpu_tile_shuffle && cpu_shuffles_fit(dev.shuffle, dev.subgroup, dev.min_subgroup, t.invocations)) {
    t.tile_shuffle = dev.subgroup;
  }
  return t;
}

uint64_t flash_loop_iterations(const FlashPlan& plan, const FlashTiles& t, const FlashHookLoops& hooks) {
  const uint64_t keys = static_cast<uint64_t>(plan.keys_per_split);
  if (t.lanes > 0) {
    // GPU kernel: no rolled hook loops; keys are folded four at a time.
    if (plan.direct) return (keys + 3) / 4;
    const uint64_t tiles = (keys + t.keys - 1) / t.keys;
    const uint64_t staging = (uint64_t{t.keys} * t.d4 + t.invocations - 1) / t.invocations;
    return tiles * (1 + staging + (t.keys + 3) / 4);
  }
  const uint64_t rows = hooks.per_invocation + t.row_slots * hooks.per_row;
  // flash_main.glsl folds its keys in pieces, each a loop of its own: the
  // sink keys, the two far sides (staged, in a loop over the sides, whose
  // exit test runs its body once more with every lane off) and the local
  // keys in three (tested, untested, tested). Each piece ends in a partial
  // tile (or block) at worst, and its exit test runs one more with every
  // lane off (docs/lavapipe.md): two more a piece.
  const uint64_t per_key = 1 + hooks.per_key;
  if (plan.direct) {
    const uint64_t pieces = 4, block = 4;  // flash_main.glsl's DIRECT_BLOCK
    return rows + pieces * 2 * block * (per_key + hooks.per_key_load) + keys * (per_key + hooks.per_key_load);
  }
  const uint64_t sides = plan.cpu_far_ranges() ? 3 : 0;  // the side loop's iterations, its exit's included
  const uint64_t pieces = 4 + sides;
  const uint64_t tiles = (keys + t.keys - 1) / t.keys + 2 * pieces;
  const uint64_t d4 = t.d4;
  const uint64_t staging = (t.keys * d4 + t.invocations - 1) / t.invocations;
  return rows + sides + tiles * (1 + staging * (1 + hooks.per_chunk) + t.keys * per_key);
}

AttnCase::AttnCase(const Params& p) : shape_(p), flash_(p.impl() == "flash") {}

void AttnCase::plan() {
  const AttnShape& s = shape_;
  // Naive: as many (b, h) slices per pass as the score scratch holds.
  const int64_t slice_bytes = s.seq * s.kv_seq * 4;
  slices_per_pass_ = std::clamp<int64_t>(kScoreScratchBytes / slice_bytes, 1, s.batch * s.heads);

  // Flash: from the parameters and the terms (see FlashPlan); again after a
  // term changed its choices for the device (Case::configure).
  const int64_t tuned_slots = flash_plan_.cpu_row_slots;  // select_tuning's, kept across plans
  const int64_t tuned_split_keys = flash_plan_.direct_split_keys;
  flash_plan_ = FlashPlan{};
  FlashPlan& f = flash_plan_;
  f.cpu_row_slots = tuned_slots;
  f.direct_split_keys = tuned_split_keys;
  const int64_t rows = s.group() * s.seq;
  const FlashHookLoops hooks = term_loops();
  f.parts = row_parts();
  f.slots_by_head = flash_slots_by_head();
  std::optional<RelFarDistances> far;
  for (const auto& term : terms_) {
    f.cpu_staged_chunks += term->flash_cpu_staged_chunks();
    f.cpu_tile_shuffle = f.cpu_tile_shuffle && term->flash_cpu_tile_shuffle();
    if (const auto t = term->flash_cpu_far()) {
      far = RelFarDistances{std::max(t->left, far ? far->left : 0u), std::max(t->right, far ? far->right : 0u)};
    }
  }
  if (far) {
    // A far range after the rows starts at least 1 after the last of them,
    // so a causal mask hides all of it (and cuts it away): every key of a far
    // range is then visible, and the kernel folds those keys without the mask
    // (flash_main.glsl). A term's form holds beyond its distance too.
    far->right = std::max(far->right, 1u);
    // The farthest key before a row is M - 1 away (i' - j), after it N - 1
    // (j - i'). With no far key on either side the kernel compiles its
    // plain loop.
    f.cpu_far_left = far->left > s.kv_seq - 1 ? kRelFarNone : far->left;
    f.cpu_far_right = far->right > s.seq - 1 ? kRelFarNone : far->right;
  }
  bool one_split = false;
  for (const auto& term : terms_) one_split = one_split || term->flash_one_key_split();
  f.direct = rows <= kFlashDirectMaxRows;
  if (one_split) {
    // Every key of a row in one invocation (direct) or workgroup (staged);
    // record_flash checks the loop budget for the device's tiles.
    f.keys_per_split = f.direct ? s.kv_seq : ceil_div(s.kv_seq, kFlashMaxTileKeys) * kFlashMaxTileKeys;
    f.splits = 1;
    f.scratch_splits = 1;
    return;
  }
  if (f.direct) {
    f.scratch_splits = ceil_div(s.kv_seq, std::min(s.kv_seq, kFlashDirectSplitKeys));
    f.keys_per_split = std::min(s.kv_seq, f.direct_split_keys > 0 ? f.direct_split_keys : kFlashDirectSplitKeys);
    f.splits = ceil_div(s.kv_seq, f.keys_per_split);
    return;
  }
  // Staged: split the keys only when there are few workgroups of rows (to
  // fill the device) or an invocation would run past the loop budget.
  const int64_t query_groups = s.batch * s.kv_heads * ceil_div(rows, kFlashRowsPerGroup);
  int64_t splits = 1;
  if (query_groups < kFlashTargetGroups) {
    splits = std::clamp<int64_t>(ceil_div(kFlashTargetGroups, query_groups), 1,
                                 std::max<int64_t>(1, s.kv_seq / kFlashMinSplitKeys));
  }
  // Splits hold whole tiles of any size (multiples of the largest tile).
  // The budget is checked for small tiles (4 keys, a workgroup of at most 16
  // invocations with one row each), so that any device's real tiles, checked
  // again at record time, stay under it.
  f.keys_per_split = ceil_div(ceil_div(s.kv_seq, splits), kFlashMaxTileKeys) * kFlashMaxTileKeys;
  FlashTiles small;
  small.d4 = static_cast<uint32_t>(ceil_div(s.dim, 4));
  small.parts = static_cast<uint32_t>(f.parts);
  small.invocations = static_cast<uint32_t>(std::clamp<int64_t>(ceil_div(rows, 8), 1, 16));
  small.row_slots = 1;
  small.keys = 4;
  while (f.keys_per_split > kFlashMaxTileKeys && flash_loop_iterations(f, small, hooks) > kFlashLoopBudget) {
    f.keys_per_split -= kFlashMaxTileKeys;
  }
  f.splits = ceil_div(s.kv_seq, f.keys_per_split);
  f.scratch_splits = f.splits;
}

bool flash_gpu_decode_staged(const AttnShape& s, const FlashPlan& plan, const FlashDevice& dev) {
  return !dev.cpu && plan.direct && s.group() > 1 && plan.scratch_splits > 1;
}

int64_t flash_gpu_direct_split_keys(int64_t kv_seq) {
  int64_t keys = kFlashDirectSplitKeys;
  while (ceil_div(kv_seq, keys) > kFlashGpuDirectMaxSplits) keys *= 2;
  return keys;
}

// The knobs' names in results[].tuning.
constexpr const char* kRowSlotsKnob = "row_slots";
constexpr const char* kSplitKeysKnob = "split_keys";

std::vector<TuningChoice> AttnCase::tuning_choices(const LaunchPlanner& launch) const {
  if (!flash_) return {};
  if (!launch.is_cpu()) {
    // GPU decode: keys per split (the planner's first).
    if (!flash_plan_.direct || flash_plan_.scratch_splits < 2) return {};
    const int64_t planned = flash_gpu_direct_split_keys(shape_.kv_seq);
    std::vector<TuningChoice> choices{{kSplitKeysKnob, planned}};
    for (const int64_t keys : kFlashDirectSplitKeyChoices) {
      if (keys < shape_.kv_seq && keys != planned) choices.push_back({kSplitKeysKnob, keys});
    }
    return choices;
  }
  std::vector<TuningChoice> choices;
  for (const int64_t slots : flash_cpu_slot_choices(shape_, flash_plan_, launch.subgroup_size())) {
    choices.push_back({kRowSlotsKnob, slots});
  }
  return choices;
}

void AttnCase::select_tuning(const TuningChoice& choice) {
  if (choice.knob == kSplitKeysKnob) {
    if (!flash_plan_.direct || choice.value < kFlashDirectSplitKeys || choice.value % 4 != 0) {
      throw std::logic_error(fmt::format("attn: no tuning {}={} for this plan", choice.knob, choice.value));
    }
    flash_plan_.direct_split_keys = choice.value;
    plan();
    return;
  }
  if (choice.knob != kRowSlotsKnob || choice.value < 1 || choice.value > kFlashCpuMaxRowSlots) {
    throw std::logic_error(fmt::format("attn: no tuning {}={}", choice.knob, choice.value));
  }
  flash_plan_.cpu_row_slots = choice.value;
}

std::vector<TensorDesc> AttnCase::tensors() const {
  const AttnShape& s = shape_;
  std::vector<TensorDesc> t{
      tensor("q", TensorRole::kInput, s.dtype, {s.batch, s.heads, s.seq, s.dim}, "[B,H,N,D]"),
      tensor("k", TensorRole::kInput, s.dtype, {s.batch, s.kv_heads, s.kv_seq, s.dim}, "[B,Hkv,M,D]"),
      tensor("v", TensorRole::kInput, s.dtype, {s.batch, s.kv_heads, s.kv_seq, s.dim}, "[B,Hkv,M,D]"),
      tensor("o", TensorRole::kOutput, s.dtype, {s.batch, s.heads, s.seq, s.dim}, "[B,H,N,D]")};
  if (s.sink_logits) t.push_back(tensor("sinks", TensorRole::kInput, s.dtype, {s.heads}, "[H]"));
  for (const auto& term : terms_) {
    for (auto& e : term->tensors()) t.push_back(std::move(e));
  }
  if (flash_) {
    // Partials of the key splits (a placeholder element when unsplit: the
    // kernel always binds them).
    const int64_t splits = flash_plan_.scratch_splits;
    const int64_t rows = splits > 1 ? s.q_rows() : 1;
    t.push_back(tensor("part_ml", TensorRole::kScratch, DType::kF32, {splits, rows, 2}, "[splits,B*H*N,2]"));
    t.push_back(tensor("part_acc", TensorRole::kScratch, DType::kF32,
                       {splits, rows, flash_plan_.parts * ceil_div(s.dim, 4) * 4}, "[splits,B*H*N,parts*4*ceil(D/4)]"));
  } else {
    t.push_back(
        tensor("scores", TensorRole::kScratch, DType::kF32, {slices_per_pass_, s.seq, s.kv_seq}, "[slices,N,M]"));
  }
  // What a packed build reaches through one binding: the kernel's output,
  // its partials and the variant's tensors. Packing places them in one
  // device buffer whatever the build; unpacked builds bind them one by one.
  const std::vector<std::string> bound = term_bindings();
  for (auto& d : t) {
    const bool kernel_own = d.name == "o" || d.name == "part_ml" || d.name == "part_acc" || d.name == "scores";
    if (kernel_own || std::find(bound.begin(), bound.end(), d.name) != bound.end()) d.pack = kPack;
  }
  return t;
}

bool AttnCase::needs_packing(const Recorder& rec, const Dispatch& d) {
  return d.buffers.size() > rec.limits().max_per_stage_descriptor_storage_buffers;
}

void AttnCase::pack_if_needed(Recorder& rec, Dispatch& d, size_t unpacked_bindings, const PackMembers& m) const {
  if (needs_packing(rec, d)) pack(d, unpacked_bindings, m);
}

void AttnCase::pack(Dispatch& d, size_t unpacked_bindings, const PackMembers& m) const {
  const TensorLayout layout = tensor_layout(tensors());
  auto words = [&](const std::string& name) {
    return name.empty() ? 0u : static_cast<uint32_t>(layout.at(name).offset / 4);
  };
  if (m.extras.size() > kPackExtraConstants) throw std::logic_error(d.shader + ": too many tensors to pack");
  d.shader += "_packed";
  d.buffers.resize(unpacked_bindings);
  d.buffers.push_back(kPack);
  // Grow only: the CPU kernel's GROUP sits past the pack offsets.
  d.spec_constants.resize(std::max<size_t>(d.spec_constants.size(), kPackConstant0 + 3 + kPackExtraConstants), 0);
  d.spec_constants[kPackConstant0] = words(m.out);
  d.spec_constants[kPackConstant0 + 1] = words(m.ml);
  d.spec_constants[kPackConstant0 + 2] = words(m.acc);
  for (size_t i = 0; i < m.extras.size(); ++i) d.spec_constants[kPackConstant0 + 3 + i] = words(m.extras[i]);
  for (uint32_t i = 0; i < 3 + kPackExtraConstants; ++i) d.spec_names.emplace_back(kPackConstant0 + i, kPackConstantNames[i]);
}

bool AttnCase::texel_build_fits(const Recorder& rec, const Dispatch& d, const FlashInputs& in, bool direct) const {
  std::vector<TexelTensor> texel;
  if (in.own_terms) {
    for (const auto& term : terms_) {
      for (auto& t : term->flash_cpu_texel_tensors()) texel.push_back(std::move(t));
    }
  }
  if (texel.empty() && !direct) return false;
  const TexelFormat kv = shape_.dtype == DType::kF16 ? TexelFormat::kRgba16f : TexelFormat::kRgba32f;
  texel.push_back({in.k, kv});
  texel.push_back({"v", kv});
  const DeviceLimits& limits = rec.limits();
  if (needs_packing(rec, d) || texel.size() > limits.max_per_stage_descriptor_storage_images ||
      limits.min_texel_buffer_offset_alignment == 0) {
    return false;
  }
  const TensorLayout layout = tensor_layout(tensors());
  for (const TexelTensor& t : texel) {
    const TensorPlacement& p = layout.at(t.name);
    if (!rec.enabled().storage_texel(t.format) || (texel_is_vec4(t.format) && shape_.dim % 4 != 0) ||
        p.offset % limits.min_texel_buffer_offset_alignment != 0 ||
        p.span() / texel_bytes(t.format) > limits.max_texel_buffer_elements) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> AttnCase::term_bindings() const {
  std::vector<std::string> names;
  for (const auto& term : terms_) {
    for (auto& b : term->bindings()) names.push_back(std::move(b));
  }
  return names;
}

void AttnCase::add_term_push(PushConstants& push) const {
  for (const auto& term : terms_) term->push(push);
}

void AttnCase::add_term_constants(Dispatch& d) const {
  std::vector<NamedConstant> constants;
  for (const auto& term : terms_) {
    for (auto& c : term->spec_constants()) constants.push_back(std::move(c));
  }
  if (constants.empty()) return;
  d.spec_constants.resize(kTermConstant0, 0);
  for (const NamedConstant& c : constants) d.constant(c.name, c.value);
}

void AttnCase::add_mask_constants(Dispatch& d) const {
  const AttnMask& m = shape_.mask;  // 0: off (pipelines check every id the shader declares)
  d.constant_at(kMaskConstant, "MASK_WINDOW", static_cast<uint32_t>(m.window()))
      .constant_at(kMaskConstant + 1, "MASK_CHUNK", static_cast<uint32_t>(m.chunk()))
      .constant_at(kMaskConstant + 2, "MASK_SINKS", static_cast<uint32_t>(m.sink_tokens()));
  const float cap = static_cast<float>(shape_.softcap.cap());
  uint32_t cap_bits;
  std::memcpy(&cap_bits, &cap, 4);
  d.constant_at(kMaskConstant + 3, "MASK_SOFTCAP", cap_bits)
      .constant_at(kMaskConstant + 4, "MASK_SINK_LOGITS", shape_.sink_logits ? 1u : 0u);
}

FlashHookLoops AttnCase::term_loops() const {
  FlashHookLoops loops;
  for (const auto& term : terms_) loops += term->flash_loops();
  return loops;
}

AttnRefTerms AttnCase::reference_terms(const TensorMap& t) const {
  AttnRefTerms terms;
  for (const auto& term : terms_) term->add_reference(t, terms);
  return terms;
}

void AttnCase::fill_inputs(TensorMap& t, Rng& rng) const {
  for (const char* name : {"q", "k", "v"}) t.at(name).fill_uniform(rng, -1.0, 1.0);
  for (const auto& term : terms_) term->fill(t, rng);
  // Sink logits around the scores' own size and above it, so that the sink
  // takes a visible share of the denominator (kSinkLogitMax).
  if (shape_.sink_logits) t.at("sinks").fill_uniform(rng, kSinkLogitMin, kSinkLogitMax);
}

double AttnCase::reference_row_cost() const {
  double per_key = 4.0 * static_cast<double>(shape_.dim) + 30.0;
  for (const auto& term : terms_) per_key += term->reference_cost_per_key();
  return static_cast<double>(shape_.kv_seq) * per_key;
}

void AttnCase::reference(const TensorMap& t, const std::vector<int64_t>& rows, Reference& ref) const {
  const AttnShape& s = shape_;
  const int64_t D = s.dim, M = s.kv_seq;
  const AttnRefTerms terms = reference_terms(t);
  const HostTensor &q = t.at("q"), &k = t.at("k"), &v = t.at("v");
  const std::vector<double> sinks = s.sink_logits ? t.at("sinks").to_f64() : std::vector<double>{};
  // k (as the scores see it) and v of the current (b, kv head): rows are
  // sorted, so each slice is built once.
  std::vector<double> ks(static_cast<size_t>(M * D)), vs(static_cast<size_t>(M * D));
  int64_t slice = -1;
  std::vector<double> qrow(static_cast<size_t>(D)), score(static_cast<size_t>(M)), acc(static_cast<size_t>(D));
  std::vector<double> content(static_cast<size_t>(M)), row_bias(static_cast<size_t>(M));
  for (const int64_t r : rows) {
    const int64_t i = r % s.seq, h = (r / s.seq) % s.heads, b = r / (s.seq * s.heads);
    const int64_t kvh = h / s.group();
    const int64_t kv_slice = b * s.kv_heads + kvh;
    if (kv_slice != slice) {
      for (int64_t j = 0; j < M; ++j) {
        double* kr = &ks[static_cast<size_t>(j * D)];
        for (int64_t c = 0; c < D; ++c) {
          kr[c] = k.get((kv_slice * M + j) * D + c);
          vs[static_cast<size_t>(j * D + c)] = v.get((kv_slice * M + j) * D + c);
        }
        if (terms.k) terms.k(kvh, j, kr);
      }
      slice = kv_slice;
    }
    const int64_t qpos = s.query_pos(i);
    for (int64_t c = 0; c < D; ++c) qrow[static_cast<size_t>(c)] = q.get(r * D + c);
    if (terms.q) terms.q(h, qpos, qrow.data());
    // encodings.md "Masks and modifiers": t = the content score, capped;
    // s = t + the position-only bias; the sink logit joins the denominator.
    double mx = sinks.empty() ? -INFINITY : sinks[static_cast<size_t>(h)];
    for (int64_t j = 0; j < M; ++j) {
      const bool visible = s.mask.visible(qpos, j);
      double dot = 0;
      if (visible) {
        const double* kr = &ks[static_cast<size_t>(j * D)];
        for (int64_t c = 0; c < D; ++c) dot += qrow[static_cast<size_t>(c)] * kr[c];
      }
      content[static_cast<size_t>(j)] = visible ? s.scale * dot : -INFINITY;
    }
    std::fill(row_bias.begin(), row_bias.end(), 0.0);
    if (terms.row_bias) terms.row_bias(h, qpos, qrow.data(), content.data(), row_bias.data());
    for (int64_t j = 0; j < M; ++j) {
      if (content[static_cast<size_t>(j)] == -INFINITY) {
        score[static_cast<size_t>(j)] = -INFINITY;
        continue;
      }
      const double* kr = &ks[static_cast<size_t>(j * D)];
      const double t = s.softcap.apply(content[static_cast<size_t>(j)] +
                                       (terms.score ? terms.score(h, qpos, j, qrow.data(), kr) : 0.0));
      const double sc = t + row_bias[static_cast<size_t>(j)] +
                        (terms.bias ? terms.bias(h, qpos, j, qrow.data(), kr) : 0.0);
      score[static_cast<size_t>(j)] = sc;
      mx = std::max(mx, sc);
    }
    std::fill(acc.begin(), acc.end(), 0.0);
    double l = sinks.empty() ? 0.0 : std::exp(sinks[static_cast<size_t>(h)] - mx);
    for (int64_t j = 0; j < M; ++j) {
      if (score[static_cast<size_t>(j)] == -INFINITY) continue;
      const double w = std::exp(score[static_cast<size_t>(j)] - mx);
      l += w;
      const double* vr = &vs[static_cast<size_t>(j * D)];
      for (int64_t c = 0; c < D; ++c) acc[static_cast<size_t>(c)] += w * vr[c];
      if (terms.value) terms.value(h, qpos, j, w, acc.data());
    }
    double* out = ref.row("o", r);
    for (int64_t c = 0; c < D; ++c) out[c] = l > 0 ? acc[static_cast<size_t>(c)] / l : 0.0;
  }
}

void AttnCase::record(Recorder& rec) const {
  PrepassTarget target;
  target.cpu_flash = flash_ && rec.launch().is_cpu();  // flash_tiles: CPU devices get the CPU kernel
  bool prepass = false;
  for (const auto& term : terms_) prepass = term->record_prepass(rec, target) || prepass;
  if (prepass) rec.barrier();
  if (flash_) {
    record_flash(rec, {kernel()});
  } else {
    record_naive(rec);
  }
}

void AttnCase::record_naive(Recorder& rec) const {
  const AttnShape& s = shape_;
  const NaiveQK qk = record_naive_prepass(rec);
  const bool vec4_d = s.dim % 4 == 0, vec4_m = s.kv_seq % 4 == 0;
  const uint32_t dim_loops = static_cast<uint32_t>(vec4_d ? s.dim / 4 : s.dim);
  const uint32_t key_loops = static_cast<uint32_t>(vec4_m ? s.kv_seq / 4 : s.kv_seq);
  const int64_t slices = s.batch * s.heads;
  // What the terms add to the score pass and (part 0) the P.V pass: the same every pass.
  const std::vector<std::string> extras = term_bindings();
  std::vector<std::string> pv_extra;
  uint32_t pv_term_loops = 0;
  for (const auto& term : terms_) {
    for (auto& e : term->pv_bindings()) pv_extra.push_back(std::move(e));
    pv_term_loops += term->pv_loops();
  }
  const std::vector<Part> parts = part_tensors();
  for (int64_t s0 = 0; s0 < slices; s0 += slices_per_pass_) {
    const int64_t n = std::min(slices_per_pass_, slices - s0);
    if (s0 > 0) rec.barrier();  // the previous pass's P.V has read the scratch

    PushConstants sp = s.push();
    sp.u32(static_cast<uint32_t>(s0))
        .u32(static_cast<uint32_t>(n));
    add_term_push(sp);
    std::vector<std::string> bufs{qk.q, qk.k, "scores"};
    bufs.insert(bufs.end(), extras.begin(), extras.end());
    Dispatch scores = grid_dispatch(rec, naive_scores_shader(), bufs, n * s.seq * s.kv_seq, sp, dim_loops);
    scores.constant("HEAD_DIM", static_cast<uint32_t>(s.dim)).constant("VEC4", vec4_d ? 1 : 0);
    add_term_constants(scores);
    add_mask_constants(scores);
    for (const auto& term : terms_) {
      if (term->caps_in_naive_rows()) scores.constant_at(kMaskConstant + 3, "MASK_SOFTCAP", 0u);
    }
    scores.storage = qk.storage;
    pack_if_needed(rec, scores, 2, {"scores", "", "", extras});
    rec.dispatch(scores);
    rec.barrier();
    bool rows_pass = false;
    for (const auto& term : terms_) rows_pass = term->record_naive_rows(rec, s0, n) || rows_pass;
    if (rows_pass) rec.barrier();

    PushConstants mp;
    mp.u32(static_cast<uint32_t>(n * s.seq))
        .u32(static_cast<uint32_t>(s.kv_seq))
        .u32(static_cast<uint32_t>(s.heads))
        .u32(static_cast<uint32_t>(s.seq))
        .u32(static_cast<uint32_t>(s0));
    // sink_logits: the sinks build, sinks[h] in each row's denominator.
    Dispatch softmax =
        grid_dispatch(rec, s.sink_logits ? "attn_softmax_sinks" : "attn_softmax",
                      s.sink_logits ? std::vector<std::string>{"scores", "sinks"} : std::vector<std::string>{"scores"},
                      n * s.seq, mp, 3 * key_loops);
    softmax.constant("VEC4", vec4_m ? 1 : 0);
    rec.dispatch(softmax);
    rec.barrier();

    PushConstants pp;
    pp.u32(static_cast<uint32_t>(s.heads))
        .u32(static_cast<uint32_t>(s.kv_heads))
        .u32(static_cast<uint32_t>(s.seq))
        .u32(static_cast<uint32_t>(s.kv_seq))
        .u32(static_cast<uint32_t>(s0))
        .u32(static_cast<uint32_t>(n));
    // One P.V per part; the variant's value term (if any) belongs to part 0.
    for (size_t p = 0; p < parts.size(); ++p) {
      std::vector<std::string> pv_bufs{"scores", parts[p].value, parts[p].output};
      if (p == 0) pv_bufs.insert(pv_bufs.end(), pv_extra.begin(), pv_extra.end());
      Dispatch pv = grid_dispatch(rec, p == 0 ? naive_pv_shader() : "attn_pv", pv_bufs, n * s.seq * dim_loops, pp,
                                  key_loops + (p == 0 ? pv_term_loops : 0));
      pv.constant("HEAD_DIM", static_cast<uint32_t>(s.dim)).constant("VEC4", vec4_d ? 1 : 0).constant("VEC4_M", vec4_m ? 1 : 0);
      if (p == 0) add_term_constants(pv);
      rec.dispatch(pv);
    }
  }
}

namespace {
// The CPU kernel's far distances for these tiles: the plan's, and none on a
// side where no workgroup of rows has a key that far. Keys far before need
// the last workgroup's first position >= left; keys far after need the first
// workgroup's last position + right <= M - 1. So a case without far keys
// (e.g. one workgroup holding every row of a kv head) compiles the plain loop.
RelFarDistances flash_far_for_tiles(const AttnShape& s, const FlashPlan& f, const FlashTiles& t) {
  RelFarDistances far{f.cpu_far_left, f.cpu_far_right};
  if (f.direct) return far;
  const int64_t rows = s.group() * s.seq, per_group = t.rows(), shift = s.kv_seq - s.seq;  // i' = row / G + shift
  const int64_t last_group_first = (rows - 1) / per_group * per_group / s.group() + shift;
  const int64_t first_group_last = (std::min(rows, per_group) - 1) / s.group() + shift;
  if (far.left != kRelFarNone && last_group_first < int64_t{far.left}) far.left = kRelFarNone;
  if (far.right != kRelFarNone && first_group_last + far.right > s.kv_seq - 1) far.right = kRelFarNone;
  return far;
}
}  // namespace

void AttnCase::record_flash(Recorder& rec, const FlashInputs& in) const {
  const AttnShape& s = shape_;
  const DeviceLimits& limits = rec.limits();
  const SubgroupInfo& subgroup = rec.subgroup();
  const FlashDevice dev{limits.max_compute_shared_memory_size,
                        std::min(limits.max_compute_work_group_invocations, limits.max_compute_work_group_size[0]),
                        subgroup.size, rec.launch().is_cpu(),
                        (subgroup.supported_operations & kSubgroupFeatureShuffle) != 0, subgroup.min_size};
  // GPU decode, untuned: fewer, longer splits than the CPU's (within the
  // scratch, which holds the CPU plan's).
  FlashPlan f = flash_plan_;
  if (!dev.cpu && f.direct && f.direct_split_keys == 0 && f.scratch_splits > 1) {
    f.keys_per_split = std::min(s.kv_seq, flash_gpu_direct_split_keys(s.kv_seq));
    f.splits = ceil_div(s.kv_seq, f.keys_per_split);
  }
  // GPU decode of a GQA group (G > 1 query heads per kv head): staged, so
  // that the workgroup of a key split stages each K/V tile in shared memory
  // once for its G heads' clusters, instead of each head's cluster reading
  // K and V from memory (direct): K and V are read once per kv head and
  // split. Splits stay as direct planned them (tuned or not): whole tiles.
  // Not where even 4 keys' tile is past the small workgroup's share of
  // shared memory (complex at D 256: staged it ran 4 subgroups per SIMD on
  // navi21, direct 8).
  if (flash_gpu_decode_staged(s, f, dev)) {
    FlashPlan staged = f;
    staged.direct = false;
    staged.keys_per_split = ceil_div(f.keys_per_split, kFlashMaxTileKeys) * kFlashMaxTileKeys;
    staged.splits = ceil_div(s.kv_seq, staged.keys_per_split);
    bool fits = false;
    try {
      fits = !flash_tiles(s, staged, dev).tile_over_share;
    } catch (const Unsupported&) {  // no 4-key tile at all: direct needs none
    }
    if (fits) f = staged;
  }
  const FlashTiles tiles = flash_tiles(s, f, dev);
  const uint64_t loops = flash_loop_iterations(f, tiles, in.own_terms ? term_loops() : FlashHookLoops{});
  if (loops > rec.launch().max_loop_iterations()) {
    throw Unsupported(fmt::format(
        "flash: an invocation would run {} loop iterations over {} keys ({} keys per tile); this driver stops "
        "loops after {}",
        loops, f.keys_per_split, tiles.keys, rec.launch().max_loop_iterations()));
  }
  const int64_t rows = s.group() * s.seq;
  PushConstants push = s.push();
  push.u32(static_cast<uint32_t>(f.keys_per_split))
      .u32(static_cast<uint32_t>(f.splits))
      .u32(static_cast<uint32_t>(s.q_rows()));
  if (in.own_terms) add_term_push(push);
  Dispatch d;
  const bool gpu = tiles.lanes > 0;
  d.shader = std::string(gpu ? (tiles.shared_reduce ? "attn_flash_gpusm_" : "attn_flash_gpu_") : "attn_flash_") +
             in.kernel;
  const std::vector<std::string> extras = in.own_terms ? term_bindings() : std::vector<std::string>{};
  d.buffers = {in.q, in.k, "v", "o", "part_ml", "part_acc"};
  d.buffers.insert(d.buffers.end(), extras.begin(), extras.end());
  d.constant("local_size_x", tiles.invocations)
      .constant("HEAD_DIM", static_cast<uint32_t>(s.dim))
      .constant("BC", tiles.keys)
      .constant("VEC4", s.dim % 4 == 0 ? 1u : 0u)
      .constant(gpu ? "LANES" : "ROWS", gpu ? tiles.lanes : tiles.row_slots)
      .constant("DIRECT", f.direct ? 1u : 0u);
  if (in.own_terms) add_term_constants(d);
  add_mask_constants(d);
  if (!gpu) {
    const RelFarDistances far = flash_far_for_tiles(s, f, tiles);
    d.constant_at(kTileShuffleConstant, "TILE_SHUFFLE", tiles.tile_shuffle)
        .constant_at(kTileShuffleConstant + 1, "STAGED_CHUNKS", static_cast<uint32_t>(f.cpu_staged_chunks))
        .constant_at(kFarConstant, "FAR_LEFT", in.own_terms ? far.left : kRelFarNone)
        .constant_at(kFarConstant + 1, "FAR_RIGHT", in.own_terms ? far.right : kRelFarNone)
        .constant_at(kGroupConstant, "GROUP", static_cast<uint32_t>(s.group()));
  }
  d.push = push;
  // sink_logits (MASK_SINK_LOGITS, add_mask_constants): sinks at binding
  // kFlashSinkBinding of the ordinary build (mask.glsl), which declares it
  // in every case: without sinks, v is bound there (never read). The packed
  // and texel builds have no such binding.
  if (!s.sink_logits && !gpu && texel_build_fits(rec, d, in, f.direct)) {
    d.shader += "_texel";
  } else {
    Dispatch ordinary = d;
    if (ordinary.buffers.size() > kFlashSinkBinding) throw std::logic_error(d.shader + ": bindings reach the sinks'");
    ordinary.buffers.resize(kFlashSinkBinding, "v");
    ordinary.buffers.push_back(s.sink_logits ? "sinks" : "v");
    if (!needs_packing(rec, ordinary)) {
      d = std::move(ordinary);
    } else if (s.sink_logits) {
      throw Unsupported(fmt::format("sink_logits: the flash kernel binds {} storage buffers, this device allows {}",
                                    ordinary.buffers.size(), rec.limits().max_per_stage_descriptor_storage_buffers));
    } else {
      pack(d, 3, {"o", "part_ml", "part_acc", extras});
    }
  }
  // Staged slots by head: each head's rows padded to a multiple of the slots.
  const int64_t grid_rows =
      f.slots_by_head && !f.direct ? s.group() * ceil_div(s.seq, tiles.row_slots) * tiles.row_slots : rows;
  const int64_t row_tiles = ceil_div(grid_rows, f.direct ? tiles.row_slots : tiles.rows());
  // Direct: the CPU kernel's invocations, the GPU kernel's clusters are key splits.
  const int64_t split_groups =
      f.direct ? ceil_div(f.splits, gpu ? tiles.invocations / tiles.lanes : tiles.invocations) : f.splits;
  d.groups = {static_cast<uint32_t>(row_tiles), static_cast<uint32_t>(s.batch * s.kv_heads),
              static_cast<uint32_t>(split_groups)};
  rec.dispatch(d);
  if (f.splits == 1) return;

  rec.barrier();
  const std::vector<Part> parts = part_tensors();
  for (size_t p = 0; p < parts.size(); ++p) {
    PushConstants cp;
    cp.u32(static_cast<uint32_t>(s.q_rows()))
        .u32(static_cast<uint32_t>(f.splits))
        .u32(static_cast<uint32_t>(s.dim))
        .u32(static_cast<uint32_t>(f.parts * ceil_div(s.dim, 4)))
        .u32(static_cast<uint32_t>(static_cast<int64_t>(p) * ceil_div(s.dim, 4)));
    // Per item: two passes over the splits (and up to 4 scalar stores).
    Dispatch combine = grid_dispatch(rec, "attn_combine", {"part_ml", "part_acc", parts[p].output},
                                     s.q_rows() * ceil_div(s.dim, 4), cp, static_cast<uint32_t>(2 * f.splits + 4));
    combine.constant("VEC4", s.dim % 4 == 0 ? 1 : 0);
    rec.dispatch(combine);
  }
}

double AttnCase::score_max() const {
  const double qk = qk_max();
  return std::fabs(shape_.scale) * static_cast<double>(shape_.dim) * qk * qk;  // largest |scale q.k|
}

Cost AttnCase::cost() const {
  // q.k and p.v: two multiply-adds per (score, dim).
  double flops = 4.0 * shape_.scores() * static_cast<double>(shape_.dim);
  for (const auto& term : terms_) flops += term->flops();
  if (shape_.softcap.on()) flops += AttnSoftcap::kFlopsPerScore * shape_.scores();
  return {io_bytes(tensors()), flops};
}

Tolerance AttnCase::tolerance() const {
  // Relative error of o, to first order: independent per-score errors ds
  // perturb the softmax weights by exp(ds) and o by about their size
  // relative to |o|; weight errors (exp) likewise; the f32 sums of acc and l
  // over M keys err by ~4 sqrt(M) u (probabilistic bound, partial sums of
  // the order of the total); the stored output rounds once.
  const AttnShape& s = shape_;
  const double u = std::ldexp(1.0, -24);
  const double D = static_cast<double>(s.dim), M = static_cast<double>(s.kv_seq);
  const double qk = qk_max();
  // The terms' errors, each seeing the largest |score| of the parts before
  // it; s_max ends as the largest |score| of all.
  double s_max = score_max();
  TermError extra;
  for (const auto& term : terms_) {
    const TermError e = term->score_error(s_max);
    extra.abs += e.abs;
    extra.rms += e.rms;
    if (!e.model.empty()) extra.model += (extra.model.empty() ? "" : " ") + e.model;
    s_max += e.reach;
  }
  // Dot product (f32, D terms, worst case) and the scaling.
  const double dot_err = std::fabs(s.scale) * D * D * qk * qk * u + s_max * u;
  // GLSL's exp: (3 + 2|x|) ulp; weights that matter have |x| <= 40 + 2 s_max.
  const double exp_err = (3 + 2 * (40 + 2 * s_max)) * 2 * u;
  const double sum_err = 4 * std::sqrt(M) * u;
  const double store = s.dtype == DType::kF16 ? std::ldexp(1.0, -11) : u;
  const double rel = dot_err + extra.abs + extra.rms + exp_err + sum_err + store;
  Tolerance t;
  t.nmse = 4 * rel * rel;
  const double ceiling = s.dtype == DType::kF16 ? 1e-3 : 1e-6;
  const bool capped = t.nmse > ceiling;
  t.nmse = std::min(t.nmse, ceiling);
  t.model = fmt::format(
      "rel. error of o <= score error ({:.2g} dot over D={} + {:.2g}{}) + exp {:.2g} + sums over M={} {:.2g} + "
      "{} storage {:.2g}; nmse = (2 rel)^2{}",
      dot_err, s.dim, extra.abs + extra.rms, extra.model.empty() ? "" : " " + extra.model, exp_err, s.kv_seq,
      sum_err, dtype_name(s.dtype), store, capped ? ", capped at the spec ceiling" : "");
  return t;
}

}  // namespace pebench
