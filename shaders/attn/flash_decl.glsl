// Fused ("flash") attention, part 1 of 2: interface and state. A variant's
// kernel is a small .comp file:
//
//   #version 450
//   #define ATTN_EXTRA_PUSH ...          (optional, before this include)
//   #include "attn/flash_decl.glsl"
//   ... the variant's bindings (ATTN_EXTRA_BINDING(i)), functions, hooks
//   #include "attn/flash_main.glsl"
//
// Hooks (all optional, defaulted in hook_defaults.glsl; docs/attention-kernels.md
// has the table; masks and modifiers: mask.glsl and docs/masks.md):
//   ATTN_TERM_IS_BIAS                 true where ATTN_SCORE_TERM is a position-only bias
//                                     (ALiBi, T5/TUPE's table): softcap caps the score
//                                     before it is added, else after
//   ATTN_EXTRA_PUSH                   push-constant members after the common ones
//   ATTN_PARTS                        D-wide parts of every q, k, v and output row (default
//                                     1; complex: 2, real and imaginary). Define before this
//                                     include; parts p >= 1 come from the variant:
//   ATTN_Q_PART(p, base, c) / ATTN_K_PART(p, base, c) / ATTN_V_PART(p, base, c)
//                                     chunk c of part p of the q / k / v row at element base
//   ATTN_STORE_PART(p, base, c, y)    stores chunk c of output part p (y: vec4; scalar
//                                     stores where !VEC4)
//   ATTN_SLOTS_BY_HEAD                (define before this include) staged mode: an
//                                     invocation's ROWS slots are consecutive positions of
//                                     one head (each head's rows padded to a multiple of
//                                     ROWS), so distance-indexed rows can be shared (XL)
//   ATTN_ROW_STATE(r, h, qpos)        once per row slot, its q row (attn_q[r * QW + c])
//                                     loaded: per-row state (ALiBi's slope, T5's row
//                                     base) and q transforms (direct mode only: RoPE,
//                                     XL's q + u). Staged, keep row state to values
//                                     loaded, not computed (the scale, below)
//   ATTN_K_ROW_TRANSFORM(kpos)        a k row loaded whole into attn_k[c] (direct mode; the
//                                     texel build reads k and v as texels: flash_io.glsl)
//   ATTN_K_STAGE_TRANSFORM(kpos, c, x, base)  one k chunk as it is staged (staged mode)
//   ATTN_STAGE_CHUNK(jt, c, kpos, far)  staged mode, per chunk c of tile key jt (position
//                                     kpos; far: a far range's tile) as K and V are staged:
//                                     the variant stages its own STAGED_CHUNKS chunks a key
//                                     at attn_staged_at(jt) (the host's
//                                     AttnTerm::flash_cpu_staged_chunks)
//   ATTN_NEAR_BEGIN(k0)               staged, before each run of keys outside far ranges
//                                     (from k0 on, folded in order; the sink keys and the
//                                     local keys of a mask are two runs)
//   ATTN_NEAR_KEY(kpos)               staged, per such key after its dots and before
//                                     ATTN_SCORE_TERM, in uniform control flow (subgroup
//                                     ops allowed: near_window.glsl)
//   ATTN_KEYS_BEGIN(kb, ke)           once per invocation, every slot loaded,
//                                     before the key loop over keys [kb, ke) (the first
//                                     and last key the mask's ranges fold; empty when
//                                     kb >= ke): state derived from
//                                     the slots' rows and per-distance precomputation for
//                                     those keys (Shaw's q.rel_k, XL's vb - u and queues)
//   ATTN_SCORES(kpos, dots)           replaces scale * q.k: fills float dots[ROWS] from attn_q
//                                     (not scaled) and attn_k_chunk(c) (a non-additive score:
//                                     complex; further dots in the same pass over the chunks:
//                                     TUPE, XL)
//   ATTN_SCORE_TERM(r, h, qpos, kpos) float added to scale * q.k of a visible key (scaled by
//                                     the hook where it should be); attn_q_chunk(r, c) is
//                                     the q row, not scaled
//   ATTN_CONTENT_TERM(r, content)     float added to a visible key's score, given its content
//                                     score scale q.k (CoPE: the gate's argument); called for
//                                     each slot's visible keys in the kernel's key order
//   ATTN_KEYS_LAST_TO_FIRST           (define before this include) keys are folded from the
//                                     last to the first (tiles and keys within a tile, both
//                                     modes), so running state over keys is a suffix sum
//                                     (CoPE); the host plans one key split
//                                     (AttnTerm::flash_one_key_split)
//   ATTN_VALUE_TERM(r, h, qpos, kpos, c)  vec4 added to v's chunk c, weighted like v
//   ATTN_KEY_FOLDED(r, kpos, s, w, alpha, far)  per (slot, key) after the online-softmax step
//                                     (far: the key is in a far range, see ATTN_FAR_BEGIN):
//                                     score s (ATTN_MASKED if masked), weight w = e^(s-m),
//                                     alpha rescales sums kept under the old max (per-distance
//                                     weight sums: Shaw). Direct mode folds a block of keys
//                                     at once: w is against the block's max, alpha comes
//                                     with the block's first key and is 1 for the others
//   ATTN_FAR_BEGIN(side)              staged, where the score term takes a simpler form from
//                                     distances FAR_LEFT / FAR_RIGHT on (T5's last buckets,
//                                     Shaw's clipped ends, DeBERTa's saturated idx): keys that
//                                     far from every row of the workgroup are folded in ranges
//                                     of their own; this runs once before each side's range
//                                     (0: keys before the rows, 1: after them)
//   ATTN_FAR_SCORE_TERM(r, kpos)      ATTN_SCORE_TERM for the keys of a far range (defining
//                                     it turns far ranges on)
//   ATTN_FAR_END(side)                after each far side's keys: what the range added to the
//                                     running sums (Shaw's clipped-end weights)
//   ATTN_SEGMENT(s0, s1max, rows_qpos)  staged, the untested local keys in segments: returns
//                                     uvec2(x, y), keys [s0, x) folded as far keys (with
//                                     ATTN_FAR_SCORE_TERM, what the hook loaded for them),
//                                     then [x, y) as near ones (FIRE: its MLP linear but for a
//                                     few ramps over a run of keys; flash_main.glsl's
//                                     attn_fold_seen); rows_qpos: the workgroup's smallest and
//                                     largest position
//   ATTN_NEAR_KEY_FAR                 true: ATTN_NEAR_KEY runs for far keys too (FIRE's segments)
//   ATTN_VALUES_EARLY                 true: staged, a key's v chunks are read before its softmax
//                                     step, not after (FIRE: else LLVM hoisted the accumulators'
//                                     rescale over the reads and spilled it, docs/lavapipe.md)
//   ATTN_ROWS_FINISH()                once per invocation after its keys, before the output
//                                     or partials: may add to attn_acc (relative to attn_m)
// Layout: one invocation owns ROWS query rows (q as loaded, and the f32
// accumulator in registers), so the online softmax needs no cross-invocation
// reductions, and each K/V element it reads serves ROWS rows. Rows of a
// workgroup are the G = H/Hkv query heads of one kv head at consecutive
// positions (row r of the group: i = r / G, h = kvh*G + r % G), so GQA and
// MQA reuse every K/V element across heads.
#ifndef PEBENCH_ATTN_FLASH_DECL_GLSL
#define PEBENCH_ATTN_FLASH_DECL_GLSL

#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common/storage.glsl"
#include "attn/attn_util.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const uint HEAD_DIM = 64;
layout(constant_id = 2) const uint BC = 32;       // keys per staged tile
layout(constant_id = 3) const bool VEC4 = true;   // HEAD_DIM % 4 == 0: chunked loads and stores
layout(constant_id = 4) const uint ROWS = 1;      // query rows per invocation
// false: a workgroup's invocations share K/V tiles staged in shared memory
// (many query rows). true (decode, few rows): every invocation is its own
// key split and reads its keys straight from memory.
layout(constant_id = 5) const bool DIRECT = false;
// Staged: > 0, the subgroup size, when every subgroup is full and has
// shuffles; then each lane reads a different chunk of the key's tile rows
// and the chunks reach every lane by subgroupShuffle (attn_k_chunk). 0: every
// lane reads every chunk from the tile.
layout(constant_id = 20) const uint TILE_SHUFFLE = 0;
// Staged: vec4 chunks a key the variant stages beside K and V (the host's
// AttnTerm::flash_cpu_staged_chunks).
layout(constant_id = 21) const uint STAGED_CHUNKS = 0;
// Staged, where the variant defines ATTN_FAR_SCORE_TERM: from these
// distances on (key before the row: i' - j >= FAR_LEFT; after it: j - i' >=
// FAR_RIGHT) its score term takes a simpler form, so the keys that far from
// every row of the workgroup are folded with that (flash_main.glsl; the
// host's AttnTerm::flash_cpu_far). ATTN_FAR_NONE: no key of the case is
// that far on that side.
const uint ATTN_FAR_NONE = 1u << 30;  // kRelFarNone
layout(constant_id = 22) const uint FAR_LEFT = ATTN_FAR_NONE;
layout(constant_id = 23) const uint FAR_RIGHT = ATTN_FAR_NONE;  // >= 1: see flash_main.glsl's fold
layout(constant_id = 32) const uint GROUP = 1;  // G = H / Hkv
const uint D4P = (HEAD_DIM + 3) / 4;  // vec4 chunks per row
#define ATTN_ROW_SLOTS ROWS
// Slot r's head is slot (r % ATTN_SLOT_HEADS)'s, so per-head reads are
// written for the first ATTN_SLOT_HEADS slots and shared (TUPE's pk rows,
// DeBERTa's far p2c entries). Staged: slot r is row row0 + r * wg, so when G
// divides the workgroup every slot has one head (by head: always); direct:
// slot r is row row0 + r with row0 a multiple of ROWS, so when G divides
// ROWS the heads cycle with period G.
#ifdef ATTN_SLOTS_BY_HEAD
const uint ATTN_SLOT_HEADS = DIRECT ? (ROWS % GROUP == 0 ? GROUP : ROWS) : 1;
#else
const uint ATTN_SLOT_HEADS = DIRECT ? (ROWS % GROUP == 0 ? GROUP : ROWS) : (gl_WorkGroupSize.x % GROUP == 0 ? 1 : ROWS);
#endif
// vec4 chunks per slot of attn_q / attn_acc and per key of attn_k / attn_v.
#ifndef ATTN_PARTS
#define ATTN_PARTS 1
#define QW D4P
#else
const uint QW = ATTN_PARTS * D4P;
#endif

#include "attn/flash_io.glsl"

// The staged tile, f32 (the K transform's output is not rounded): the BC
// keys' k rows, then their v rows, then the STAGED_CHUNKS chunks a key the
// variant stages (ATTN_STAGE_CHUNK; key jt at attn_staged_at(jt)).
const uint TILE_V0 = BC * QW, TILE_X0 = 2 * BC * QW;
shared vec4 attn_tile[DIRECT ? 1 : BC * (2 * QW + STAGED_CHUNKS)];
uint attn_staged_at(uint jt) { return TILE_X0 + jt * STAGED_CHUNKS; }

// The invocation's rows: q (as loaded, never scaled: flash_main.glsl) and
// the output accumulators, slot r at [r * QW, (r + 1) * QW) (part p at
// r * QW + p * D4P).
vec4 attn_q[ROWS * QW];
vec4 attn_acc[ROWS * QW];

// Per row slot: head, position i', running max m and sum l.
uint attn_h[ROWS], attn_qpos[ROWS];
float attn_m[ROWS], attn_l[ROWS];
// The key being folded in, direct mode: its k row (transformed).
vec4 attn_k[QW];

vec4 attn_q_chunk(uint r, uint c) { return attn_q[r * QW + c]; }

// The key being folded in, staged: its first chunk in the k rows of the tile.
uint attn_tile_at;
// Staged with TILE_SHUFFLE: llvmpipe reads shared memory at an address that
// is the same in every lane as a gather of that address, one per component,
// so every lane reading every chunk of a key costs a gather per component
// and chunk. Instead lane l reads chunk g * TILE_SHUFFLE + l of a row
// (attn_tile_group) and subgroupShuffle hands chunk c to every lane
// (ATTN_TILE_SHUFFLED): nope ran 40% faster on llvmpipe
// (docs/attention-kernels.md).
const uint TILE_GROUPS = TILE_SHUFFLE == 0 ? 1 : (QW + TILE_SHUFFLE - 1) / TILE_SHUFFLE;
// The chunk of group g this lane reads (clamped into a row of `width`).
uint attn_group_chunk(uint g, uint width) { return min(g * TILE_SHUFFLE + gl_SubgroupInvocationID, width - 1); }
vec4 attn_tile_group(uint at, uint width, uint g) { return attn_tile[at + attn_group_chunk(g, width)]; }
#define ATTN_TILE_SHUFFLED(groups, c) subgroupShuffle(groups[(c) / TILE_SHUFFLE], (c) % TILE_SHUFFLE)
// Chunk c of the staged row at attn_tile[at]: from `groups` (that row's
// attn_tile_group reads) with TILE_SHUFFLE, else read in every lane.
#define ATTN_TILE_CHUNK(groups, at, c) (TILE_SHUFFLE > 0 ? ATTN_TILE_SHUFFLED(groups, c) : attn_tile[(at) + (c)])
vec4 attn_kg[TILE_GROUPS], attn_vg[TILE_GROUPS];

// Staged: makes tile key jt the key being folded in (its k chunks).
void attn_read_tile_key(uint jt) {
  attn_tile_at = jt * QW;
  if (TILE_SHUFFLE == 0) return;
  [[unroll]] for (uint g = 0; g < TILE_GROUPS; ++g) attn_kg[g] = attn_tile_group(attn_tile_at, QW, g);
}
// Staged: the key's v chunks, read after its scores (fewer registers live:
// complex ran 30% faster than with both read at once).
void attn_read_tile_values() {
  if (TILE_SHUFFLE == 0) return;
  [[unroll]] for (uint g = 0; g < TILE_GROUPS; ++g) attn_vg[g] = attn_tile_group(TILE_V0 + attn_tile_at, QW, g);
}
// Chunk c of the key's k row (c constant after unrolling): direct, from
// attn_k; staged, from the tile; and of its v row, staged (direct mode reads
// v in flash_main.glsl's block fold). Call them in uniform control flow (the
// shuffles); attn_k_chunk_at reads the tile in any control flow.
vec4 attn_k_chunk_at(uint c) { return DIRECT ? attn_k[c] : attn_tile[attn_tile_at + c]; }
vec4 attn_k_chunk(uint c) { return DIRECT ? attn_k[c] : ATTN_TILE_CHUNK(attn_kg, attn_tile_at, c); }
vec4 attn_v_chunk(uint c) { return ATTN_TILE_CHUNK(attn_vg, TILE_V0 + attn_tile_at, c); }

// Staged, without ATTN_SLOTS_BY_HEAD: the positions i' of the workgroup's
// first and last row, its ROWS * wg consecutive rows of the rows = G N of
// this kv head. The same in every invocation.
ivec2 attn_wg_positions(uint rows, uint group) {
  const uint first = gl_WorkGroupID.x * gl_WorkGroupSize.x * ROWS;
  const uint last = min(rows, first + gl_WorkGroupSize.x * ROWS) - 1;
  return ivec2(first / group + pc.kv_seq - pc.seq, last / group + pc.kv_seq - pc.seq);
}

// Staged with TILE_SHUFFLE, in uniform control flow: `row` (vec4[D4P]) gets
// the D4P chunks of a buffer row that every lane reads at the same address,
// one read a group (lane l: chunk g * TILE_SHUFFLE + l) and shuffles, as
// for the tile; a storage-buffer read inside a loop is a loop over the lanes
// on llvmpipe (docs/lavapipe.md). Else every lane reads every chunk.
const bool ATTN_SHARED_ROW_SHUFFLE = !DIRECT && TILE_SHUFFLE > 0;
#define ATTN_LOAD_SHARED_ROW(row, buf, bufc, base)                                                        \
  {                                                                                                       \
    vec4 g_[TILE_GROUPS];                                                                                 \
    if (ATTN_SHARED_ROW_SHUFFLE) {                                                                        \
      [[unroll]] for (uint g = 0; g < TILE_GROUPS; ++g)                                                   \
        g_[g] = ATTN_LOAD_CHUNK(buf, bufc, base, attn_group_chunk(g, D4P));                               \
    }                                                                                                     \
    [[unroll]] for (uint c = 0; c < D4P; ++c)                                                             \
      row[c] = ATTN_SHARED_ROW_SHUFFLE ? ATTN_TILE_SHUFFLED(g_, c) : ATTN_LOAD_CHUNK(buf, bufc, base, c); \
  }

// scale q.k of every slot for the key being folded in: the core's score,
// and a variant's where ATTN_SCORES keeps it for some mode (XL's direct).
void attn_qk_scores(out float dots[ROWS]) {
  [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] = 0.0;
  [[unroll]] for (uint c = 0; c < D4P; ++c) {
    [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] += dot(attn_q[r * QW + c], attn_k_chunk(c));
  }
  [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] *= pc.scale;
}

#endif
