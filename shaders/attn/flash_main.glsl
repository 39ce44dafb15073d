// Fused ("flash") attention, part 2 of 2: the kernel (see flash_decl.glsl).
//
// Staged mode (DIRECT = false). Grid: x = tiles of ROWS * wg query rows of
// one kv head, y = batch * kv head, z = key split. A workgroup walks its
// split's keys in tiles of BC: its invocations stage the K and V rows in
// shared memory, then each invocation folds every key into its ROWS rows.
// Direct mode (decode). Grid: x = tiles of ROWS rows, y = batch * kv head,
// z * wg + invocation = key split: an invocation folds its split's keys,
// read straight from memory, into ROWS rows (for GQA decode, all the query
// heads of one kv head: each K/V element is read once for all of them).
// Either way each key is folded in with the online softmax of encodings.md
// section 0 and the N x M matrix is never written; with splits, partial
// (m, l, acc) go to attn_combine (QW = ATTN_PARTS * D4P accumulator chunks a
// row, combined part by part). The loops that run per key or per tile are
// the only ones not unrolled: the host counts them against llvmpipe's loop
// budget (attn_common.cc, flash_loop_iterations).
#ifndef PEBENCH_ATTN_FLASH_MAIN_GLSL
#define PEBENCH_ATTN_FLASH_MAIN_GLSL

#include "attn/mask.glsl"
#include "attn/hook_defaults.glsl"

// Part p >= 1 of a row: the variant's hook (ATTN_PARTS > 1).
#if ATTN_PARTS > 1
#define ATTN_FOR_EXTRA_PARTS(p) [[unroll]] for (uint p = 1; p < ATTN_PARTS; ++p)
#endif

#if defined(ATTN_FAR_SCORE_TERM) && defined(ATTN_SLOTS_BY_HEAD)
#error "far ranges assume the workgroup's rows are consecutive (not ATTN_SLOTS_BY_HEAD)"
#endif

// Direct: loads the k row of key `kpos` of this kv head into attn_k (every
// part) and applies the variant's transform.
void attn_load_k(uint kv_row0, uint kpos) {
  const uint base = (kv_row0 + kpos) * HEAD_DIM;
  [[unroll]] for (uint c = 0; c < D4P; ++c) {
    attn_k[c] = ATTN_K_CHUNK(base, c);
#if ATTN_PARTS > 1
    ATTN_FOR_EXTRA_PARTS(p) attn_k[p * D4P + c] = ATTN_K_PART(p, base, c);
#endif
  }
  ATTN_K_ROW_TRANSFORM(kpos);
}

// Direct: chunk c (of QW: part c / D4P) of the v row of key `kpos`.
vec4 attn_load_v(uint kv_row0, uint kpos, uint c) {
  const uint base = (kv_row0 + kpos) * HEAD_DIM;
#if ATTN_PARTS > 1
  if (c >= D4P) {
    vec4 x = vec4(0.0);
    ATTN_FOR_EXTRA_PARTS(p) {
      if (c / D4P == p) x = ATTN_V_PART(p, base, c - p * D4P);
    }
    return x;
  }
#endif
  return ATTN_V_CHUNK(base, c);
}

// Slot r's score for key kpos from its content score scale q.k (`dot`):
// ATTN_MASKED where the mask hides the key, tested only where `masked` (a
// constant after inlining: docs/lavapipe.md); `content` false leaves out
// ATTN_CONTENT_TERM (a direct block's padding key).
float attn_slot_score(uint r, uint kpos, float dot, const bool far, const bool masked, bool content) {
  float s = ATTN_MASKED;
  if (!masked || attn_key_visible(attn_qpos[r], kpos)) {
    s = ATTN_MODIFIED_SCORE(dot, ATTN_TERM_AT(r, kpos, far));
#ifdef ATTN_CONTENT_TERM
    // CoPE's e_ij: a position term after the cap; its gate reads the
    // uncapped content score.
    if (content) s += ATTN_CONTENT_TERM(r, dot);
#endif
  }
  return s;
}

// ATTN_VALUE_TERM of key kpos, weighted w, into slot r's accumulator.
void attn_add_value_term(uint r, uint kpos, float w) {
#ifdef ATTN_VALUE_TERM
  if (w != 0.0) {
    [[unroll]] for (uint c = 0; c < D4P; ++c) {
      attn_acc[r * QW + c] += w * ATTN_VALUE_TERM(r, attn_h[r], attn_qpos[r], kpos, c);
    }
  }
#endif
}

// Staged: folds key `kpos` (attn_k_chunk, attn_v_chunk) into every row slot. far
// is a constant after inlining: the key is in a far range of the
// workgroup's rows (ATTN_FAR_BEGIN), where ATTN_FAR_SCORE_TERM replaces
// ATTN_SCORE_TERM and ATTN_KEY_FOLDED is told so. masked, a constant too:
// the mask may hide the key from some slot (a tile that straddles a
// boundary of the mask: main's attn_key_ranges); else every slot sees it.
// The kernel carries one fold body per (far, masked) it uses, not one per
// kind of range.
void attn_fold_key(uint kpos, const bool far, const bool masked) {
  float dots[ROWS];
  ATTN_SCORES(kpos, dots);
  // After the dots: DeBERTa's window updated before them kept more values
  // in the coroutine frame over the dots (2121 vector moves a key in the
  // band's loop against 1501; docs/attention-kernels.md, "The near window").
  if (!far || ATTN_NEAR_KEY_FAR) ATTN_NEAR_KEY(kpos);
  // Online softmax, branch-free: alpha rescales what was summed under the
  // old max (1 when the max is unchanged, 0 when it was ATTN_MASKED).
  // ATTN_VALUES_EARLY: v before the softmax step (FIRE: the term's
  // arithmetic in front of it otherwise let LLVM rescale every accumulator
  // chunk ahead of v's reads, and spill the products: docs/lavapipe.md).
  if (ATTN_VALUES_EARLY) attn_read_tile_values();
  float w[ROWS], alpha[ROWS];
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    const float s = attn_slot_score(r, kpos, dots[r], far, masked, true);
    const float m_new = max(attn_m[r], s);
    alpha[r] = exp(attn_m[r] - m_new);
    w[r] = attn_weight(s, m_new);
    attn_l[r] = attn_l[r] * alpha[r] + w[r];
    attn_m[r] = m_new;
    ATTN_KEY_FOLDED(r, kpos, s, w[r], alpha[r], far);
  }
  if (!ATTN_VALUES_EARLY) attn_read_tile_values();
  [[unroll]] for (uint c = 0; c < QW; ++c) {
    [[unroll]] for (uint r = 0; r < ROWS; ++r) attn_acc[r * QW + c] = attn_acc[r * QW + c] * alpha[r] + w[r] * attn_v_chunk(c);
  }
  [[unroll]] for (uint r = 0; r < ROWS; ++r) attn_add_value_term(r, kpos, w[r]);
}

// Staged: folds the staged tile's keys [t0, t0 + n) in the kernel's key
// order. far and masked are constants after inlining: the keys every row
// sees fold in a loop of their own, without the mask's test. (The test in
// the loop, taken or not, made nope's key loop spill on a Zen 5 host: 25-35%
// slower, docs/lavapipe.md.)
void attn_fold_tile(uint t0, uint n, const bool far, const bool masked) {
#ifdef ATTN_KEYS_LAST_TO_FIRST
  for (uint jn = n; jn > 0; --jn) {
    const uint jt = jn - 1;
#else
  for (uint jt = 0; jt < n; ++jt) {
#endif
    attn_read_tile_key(jt);
    attn_fold_key(t0 + jt, far, masked);
  }
}

// Direct: keys fold DIRECT_BLOCK at a time. The block's scores come
// first, key by key, with every per-key hook as in attn_fold_key; then one
// online-softmax step for the block (one rescale of the accumulators
// instead of one a key: alpha goes to the hooks with the block's first key,
// 1 with the others, every weight against the block's max); then the v rows
// chunk by chunk, each accumulator chunk read and written once a block.
// Decode is bound by this loop on llvmpipe: folding a key at a time, the
// accumulator's rescale and its trips through memory took more instructions
// than the dots (docs/attention-kernels.md, "Decode").
const uint DIRECT_BLOCK = 4;

// Direct: folds the block of keys from kpos0 on in the kernel's key order
// (ATTN_KEYS_LAST_TO_FIRST: kpos0, kpos0 - 1, ...); keys outside [k0, k1)
// pad the last block: they read key kpos0, are masked, and reach none of
// the hooks that keep state (ATTN_CONTENT_TERM, ATTN_KEY_FOLDED). masked: as
// attn_fold_key. (ATTN_NEAR_KEY is staged only.)
void attn_fold_direct_block(uint kv_row0, uint kpos0, uint k0, uint k1, const bool masked) {
  uint kp[DIRECT_BLOCK];
  bool in_range[DIRECT_BLOCK];
  float s[DIRECT_BLOCK * ROWS];  // key b, slot r at b * ROWS + r
  [[unroll]] for (uint b = 0; b < DIRECT_BLOCK; ++b) {
#ifdef ATTN_KEYS_LAST_TO_FIRST
    in_range[b] = kpos0 >= k0 + b;
    kp[b] = in_range[b] ? kpos0 - b : kpos0;
#else
    in_range[b] = kpos0 + b < k1;
    kp[b] = in_range[b] ? kpos0 + b : kpos0;
#endif
    attn_load_k(kv_row0, kp[b]);
    float dots[ROWS];
    ATTN_SCORES(kp[b], dots);
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
      const float x = attn_slot_score(r, kp[b], dots[r], false, masked, in_range[b]);
      s[b * ROWS + r] = in_range[b] ? x : ATTN_MASKED;
    }
  }
  float w[DIRECT_BLOCK * ROWS], alpha[ROWS];
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    float m_new = attn_m[r];
    [[unroll]] for (uint b = 0; b < DIRECT_BLOCK; ++b) m_new = max(m_new, s[b * ROWS + r]);
    alpha[r] = exp(attn_m[r] - m_new);
    float l = attn_l[r] * alpha[r];
    [[unroll]] for (uint b = 0; b < DIRECT_BLOCK; ++b) {
      w[b * ROWS + r] = attn_weight(s[b * ROWS + r], m_new);
      l += w[b * ROWS + r];
    }
    attn_l[r] = l;
    attn_m[r] = m_new;
    // A padding key is not folded (it repeats a real key's position).
    [[unroll]] for (uint b = 0; b < DIRECT_BLOCK; ++b) {
      if (in_range[b]) ATTN_KEY_FOLDED(r, kp[b], s[b * ROWS + r], w[b * ROWS + r], b == 0 ? alpha[r] : 1.0, false);
    }
  }
  [[unroll]] for (uint c = 0; c < QW; ++c) {
    vec4 vc[DIRECT_BLOCK];
    [[unroll]] for (uint b = 0; b < DIRECT_BLOCK; ++b) vc[b] = attn_load_v(kv_row0, kp[b], c);
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
      vec4 a = attn_acc[r * QW + c] * alpha[r];
      [[unroll]] for (uint b = 0; b < DIRECT_BLOCK; ++b) a += w[b * ROWS + r] * vc[b];
      attn_acc[r * QW + c] = a;
    }
  }
  [[unroll]] for (uint b = 0; b < DIRECT_BLOCK; ++b) {
    [[unroll]] for (uint r = 0; r < ROWS; ++r) attn_add_value_term(r, kp[b], w[b * ROWS + r]);
  }
}

// Direct: folds the keys [k0, k1), read from memory, in the kernel's key
// order, a block at a time (masked: as attn_fold_tile).
void attn_fold_direct(uint kv_row0, uint k0, uint k1, const bool masked) {
#ifdef ATTN_KEYS_LAST_TO_FIRST
  for (uint kn = k1; kn > k0; kn -= min(kn - k0, DIRECT_BLOCK)) {
    attn_fold_direct_block(kv_row0, kn - 1, k0, k1, masked);
  }
#else
  for (uint kpos = k0; kpos < k1; kpos += DIRECT_BLOCK) {
    attn_fold_direct_block(kv_row0, kpos, k0, k1, masked);
  }
#endif
}

// Staged: stages the keys [k0, k1) tile by tile, in the kernel's key order
// (ATTN_KEYS_LAST_TO_FIRST, CoPE: from the last to the first), and folds
// each tile into every row slot (far, masked: constants, as
// attn_fold_key). The range is the same in the whole workgroup (the
// barriers).
void attn_fold_staged(uint kv_row0, uint k0, uint k1, const bool far, const bool masked) {
#ifdef ATTN_KEYS_LAST_TO_FIRST
  for (uint t1 = k1; t1 > k0;) {
    const uint n = min(BC, t1 - k0);
    const uint t0 = t1 - n;
#else
  for (uint t0 = k0; t0 < k1;) {
    const uint n = min(BC, k1 - t0);
#endif
    barrier();  // the previous tile is no longer read
    for (uint e = gl_LocalInvocationID.x; e < n * D4P; e += gl_WorkGroupSize.x) {
      const uint jt = e / D4P, c = e - jt * D4P;
      const uint base = (kv_row0 + t0 + jt) * HEAD_DIM;
      vec4 kc = ATTN_K_CHUNK(base, c);
      kc = ATTN_K_STAGE_TRANSFORM(t0 + jt, c, kc, base);
#if ATTN_PARTS > 1
      // Every part of the chunk: the staging loop's trip count does not grow.
      const uint te = jt * QW + c;
      ATTN_FOR_EXTRA_PARTS(p) {
        attn_tile[te + p * D4P] = ATTN_K_PART(p, base, c);
        attn_tile[TILE_V0 + te + p * D4P] = ATTN_V_PART(p, base, c);
      }
#else
      const uint te = e;
#endif
      attn_tile[te] = kc;
      attn_tile[TILE_V0 + te] = ATTN_V_CHUNK(base, c);
      ATTN_STAGE_CHUNK(jt, c, t0 + jt, far);
    }
    barrier();
    attn_fold_tile(t0, n, far, masked);
#ifdef ATTN_KEYS_LAST_TO_FIRST
    t1 = t0;
#else
    t0 += n;
#endif
  }
}

// The keys [k0, k1) of one piece, staged or direct (far: staged only).
void attn_fold_piece(uint kv_row0, uint k0, uint k1, const bool far, const bool masked) {
  if (DIRECT) {
    attn_fold_direct(kv_row0, k0, k1, masked);
  } else {
    attn_fold_staged(kv_row0, k0, k1, far, masked);
  }
}

// The keys [v0, v1), seen by every row (positions rows_qpos.x ..
// rows_qpos.y), untested. Where the variant's term takes a simpler form over
// runs of these keys that only the kernel can find (ATTN_SEGMENT: FIRE's
// MLP is linear but for a few ramps over a run, fire_hooks.glsl), they fold
// segment by segment, staged: the hook returns [s0, x), folded as far keys
// (ATTN_FAR_SCORE_TERM, with what the hook loaded for it), and [x, y),
// folded as near keys; one of the two is empty. Each segment costs one more
// pass of a fold body (the empty one: docs/lavapipe.md), so a hook makes
// few and long segments.
void attn_fold_seen(uint kv_row0, uint v0, uint v1, const bool far, uvec2 rows_qpos) {
#ifdef ATTN_SEGMENT
  if (!DIRECT && !far) {
    for (uint s0 = v0; s0 < v1;) {
      const uvec2 seg = ATTN_SEGMENT(s0, v1, rows_qpos);
      attn_fold_staged(kv_row0, s0, seg.x, true, false);
      attn_fold_staged(kv_row0, seg.x, seg.y, false, false);
      s0 = seg.y;
    }
    return;
  }
#endif
  attn_fold_piece(kv_row0, v0, v1, far, false);
}

// The keys [k0, k1) in the kernel's key order, of which [v0, v1) are seen
// by every row (v0 = v1 = k0: every key tested), as three pieces one after
// the other: [k0, v0) and [v1, k1) with the per-element test, [v0, v1)
// without. Each piece is a loop of its own whose `masked` is a constant,
// not one loop choosing per tile: gallivm runs both sides of a branch and a
// loop no lane enters still runs its body once (docs/lavapipe.md), so a
// choice per tile folded every tile's keys plus one masked-off key of the
// other kind (nope at N 512 non-causal: 2.3% more instructions than before
// the masks). Without a window or chunk, v0 = k0 always: the first piece
// is not compiled.
void attn_fold_range(uint kv_row0, uint k0, uint k1, const bool far, uint v0, uint v1, uvec2 rows_qpos) {
#ifdef ATTN_KEYS_LAST_TO_FIRST
  attn_fold_piece(kv_row0, v1, k1, far, true);
  attn_fold_piece(kv_row0, v0, v1, far, false);
  if (MASK_LOCAL) attn_fold_piece(kv_row0, k0, v0, far, true);
#else
  if (MASK_LOCAL) attn_fold_piece(kv_row0, k0, v0, far, true);
  attn_fold_seen(kv_row0, v0, v1, far, rows_qpos);
  attn_fold_piece(kv_row0, v1, k1, far, true);
#endif
}

#ifdef ATTN_FAR_SCORE_TERM
// Staged: the keys [band.x, band.y) of [kb, ke) closer to some row of the
// workgroup than the far distances; [kb, band.x) and [band.y, ke) are the
// far ranges. Rows are the workgroup's ROWS * wg consecutive rows of this kv
// head (not ATTN_SLOTS_BY_HEAD), positions first / G .. last / G.
uvec2 attn_far_band(uint rows, uint group, uint kb, uint ke) {
  const ivec2 pos = attn_wg_positions(rows, group);
  // Far left: pos.x - j >= FAR_LEFT; far right: j - pos.y >= FAR_RIGHT.
  const uint lo = uint(clamp(pos.x - int(FAR_LEFT) + 1, int(kb), int(ke)));
  const uint hi = uint(clamp(pos.y + int(FAR_RIGHT), int(lo), int(ke)));
  return uvec2(lo, hi);
}
// Whether the case has far ranges (staged): some key that far on a side.
// (A function: a `const` of spec constants in main broke glslc's optimizer.)
bool attn_far_ranges() { return !DIRECT && (FAR_LEFT < ATTN_FAR_NONE || FAR_RIGHT < ATTN_FAR_NONE); }
#endif

// G = H / Hkv from the GROUP spec constant, not from the push constants:
// llvmpipe recomputes a row's position and head from their operands at
// every use after a barrier, so a divisor it cannot fold costs a scalar
// division per lane, row slot and key (docs/lavapipe.md). A function, since
// a `const` initialised from GROUP would be a spec-constant op that takes
// over GROUP's name in the SPIR-V.
uint attn_group() { return GROUP; }

// The invocation's index for the row layout. With TILE_SHUFFLE (full
// subgroups) it is counted by subgroup, so the lanes of a subgroup hold
// consecutive rows whatever the device's mapping of local invocations to
// subgroups (the near window relies on it: near_window.glsl).
uint attn_row_lane() {
  return TILE_SHUFFLE > 0 && !DIRECT ? gl_SubgroupID * TILE_SHUFFLE + gl_SubgroupInvocationID : gl_LocalInvocationID.x;
}

void main() {
  const uint lid = attn_row_lane();
  const uint wg = gl_WorkGroupSize.x;
  const uint group = attn_group();
  const uint rows = group * pc.seq;  // query rows reading this kv head
  const uint kvh = gl_WorkGroupID.y % pc.kv_heads;
  const uint kv_row0 = gl_WorkGroupID.y * pc.kv_seq;  // row of key 0 in k and v

#ifdef ATTN_SLOTS_BY_HEAD
  // Staged: slot r is row row0 + r in head-major order, each head's rows
  // padded to np (a multiple of ROWS), so an invocation's slots are
  // consecutive positions of one head; slots past the head's N rows idle.
  // Direct: as below.
  const uint np = (pc.seq + ROWS - 1) / ROWS * ROWS;
  const uint row0 = DIRECT ? gl_WorkGroupID.x * ROWS : (gl_WorkGroupID.x * wg + lid) * ROWS;
  const uint row_step = 1;
#else
  // Slot r holds row row0 + r * row_step of this kv head's rows.
  const uint row0 = DIRECT ? gl_WorkGroupID.x * ROWS : gl_WorkGroupID.x * wg * ROWS + lid;
  const uint row_step = DIRECT ? 1 : wg;
#endif
  const uint split = DIRECT ? gl_WorkGroupID.z * wg + lid : gl_WorkGroupID.z;
  // Keys of this split; of them the rows fold only the ranges the mask
  // gives their positions (attn_key_ranges: the one place that asks).
  const uint kb = min(pc.kv_seq, split * pc.keys_per_split);
  const uint ke = min(pc.kv_seq, kb + pc.keys_per_split);
  uint first_i, last_i;  // the smallest and largest position of the rows
  {
#ifdef ATTN_SLOTS_BY_HEAD
    if (!DIRECT) {
      // Rows spanning two heads: positions 0 .. N - 1.
      const uint first = gl_WorkGroupID.x * wg * ROWS, last = first + wg * ROWS - 1;
      const bool two_heads = first / np != last / np;
      first_i = two_heads ? 0 : min(first % np, pc.seq - 1);
      last_i = two_heads ? pc.seq - 1 : min(last % np, pc.seq - 1);
    } else
#endif
    {
      const uint first_row = DIRECT ? row0 : gl_WorkGroupID.x * wg * ROWS;
      const uint last_row = min(rows, DIRECT ? row0 + ROWS : first_row + wg * ROWS) - 1;
      first_i = min(first_row, last_row) / group;
      last_i = last_row / group;
    }
  }
  const AttnKeyRanges kr = attn_key_ranges(first_i + pc.kv_seq - pc.seq, last_i + pc.kv_seq - pc.seq, kb, ke);

#ifdef ATTN_SLOTS_BY_HEAD
  // Staged: row0 and np are multiples of ROWS, so the invocation's slots
  // share one head block: one division for all of them (see attn_group).
  const uint slot_block = row0 / np, slot_pos0 = row0 - slot_block * np;
#endif
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
#ifdef ATTN_SLOTS_BY_HEAD
    uint i;
    if (DIRECT) {
      const uint rr = min(row0 + r * row_step, rows - 1);
      i = rr / group;
      attn_h[r] = kvh * group + rr % group;
    } else {
      // Idle slots read a row in range and write nothing; their position
      // continues the slots' sequence.
      i = min(slot_pos0 + r, pc.seq - 1);
      attn_h[r] = kvh * group + min(slot_block, group - 1);
    }
    attn_qpos[r] = (DIRECT ? i : slot_pos0 + r) + pc.kv_seq - pc.seq;
#else
    const uint rr = min(row0 + r * row_step, rows - 1);  // idle slots shadow the last row, write nothing
    const uint i = rr / group;
    attn_h[r] = kvh * group + rr % group;
    attn_qpos[r] = i + pc.kv_seq - pc.seq;  // i' = i + M - N
#endif
    const uint qbase = attn_q_row(attn_h[r], i) * HEAD_DIM;
    [[unroll]] for (uint c = 0; c < D4P; ++c) attn_q[r * QW + c] = ATTN_LOAD_CHUNK(q, q_c, qbase, c);
#if ATTN_PARTS > 1
    ATTN_FOR_EXTRA_PARTS(p) {
      [[unroll]] for (uint c = 0; c < D4P; ++c) attn_q[r * QW + p * D4P + c] = ATTN_Q_PART(p, qbase, c);
    }
#endif
    ATTN_ROW_STATE(r, attn_h[r], attn_qpos[r]);
    // q stays as loaded; the scale multiplies each score (attn_fold_key).
    // A scaled copy would be recomputed from q at every use in the key
    // loop (docs/lavapipe.md): 512 multiplies a key in nope at D 64.
    [[unroll]] for (uint c = 0; c < QW; ++c) attn_acc[r * QW + c] = vec4(0.0);
    // sink_logits: the sink is one more term of the denominator, in the
    // first split only (attn_combine adds the splits).
    const bool sink = ATTN_SINK_LOGITS && split == 0;
    attn_m[r] = sink ? attn_sink_logit(attn_h[r]) : ATTN_MASKED;
    attn_l[r] = sink ? 1.0 : 0.0;
  }
  // The hooks see the keys from the first sink key (or local key) on.
  ATTN_KEYS_BEGIN(kr.sink_end > kb ? kb : kr.begin, kr.end);

  // The runs of keys, in key order: the sink keys before the local range
  // (every key tested); the far sides (staged, where the variant has far
  // ranges and the case keys that far: keys FAR_LEFT or more before every
  // row of the workgroup, side 0, or FAR_RIGHT or more after it, side 1,
  // see the term in a simpler form, T5: one value per row and side, and are
  // tested only where a window or chunk may cut them); the local keys (of
  // the far band), those every row sees untested. Straight code, each run
  // under a condition of specialization constants, not one loop over the
  // runs: gallivm runs a loop's body once more with every lane off (and both
  // sides of the choice of run), which cost every case a tile of each kind
  // of fold. So the local keys compile two fold bodies, tested and
  // untested (three with a window or chunk: attn_fold_range), the far
  // sides one and the sink keys one, where the case has them.
  // ATTN_KEYS_LAST_TO_FIRST (CoPE) has the local run alone: no far ranges
  // (below) and no sink tokens (the host skips them for such a variant).
  if (MASK_SINKS > 0) {
    if (!DIRECT) ATTN_NEAR_BEGIN(kb);
    attn_fold_piece(kv_row0, kb, kr.sink_end, false, true);
  }
  uvec2 band = uvec2(kr.begin, kr.end);  // the local keys not in a far range
#if defined(ATTN_KEYS_LAST_TO_FIRST) && (defined(ATTN_FAR_SCORE_TERM) || defined(ATTN_SEGMENT))
#error "ATTN_KEYS_LAST_TO_FIRST walks one run of keys: no far ranges or segments"
#endif
#ifdef ATTN_FAR_SCORE_TERM
  if (attn_far_ranges()) {
    band = attn_far_band(rows, group, kr.begin, kr.end);
    [[dont_unroll]] for (uint side = 0; side < 2; ++side) {
      const uint k0 = side == 0 ? kr.begin : band.y, k1 = side == 0 ? band.x : kr.end;
      ATTN_FAR_BEGIN(side);
      // masked a specialization constant: one copy in the SPIR-V, a
      // constant again once specialized (a window can hide a far key).
      attn_fold_staged(kv_row0, k0, k1, true, MASK_LOCAL);
      ATTN_FAR_END(side);
    }
  }
#endif
  {
    const uint k0 = band.x, k1 = band.y;
    const uint v0 = clamp(kr.all_begin, k0, k1), v1 = clamp(kr.all_end, v0, k1);
    if (!DIRECT) ATTN_NEAR_BEGIN(k0);
    const uint qpos_shift = pc.kv_seq - pc.seq;
    attn_fold_range(kv_row0, k0, k1, false, v0, v1, uvec2(first_i, last_i) + qpos_shift);
  }
  ATTN_ROWS_FINISH();

  if (DIRECT && split >= pc.splits) return;
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
#ifdef ATTN_SLOTS_BY_HEAD
    uint qrow;
    if (DIRECT) {
      const uint row = row0 + r * row_step;
      if (row >= rows) break;
      qrow = attn_q_row(attn_h[r], row / group);
    } else {
      if (slot_block >= group || slot_pos0 + r >= pc.seq) break;  // idle slots are the last ones
      qrow = attn_q_row(attn_h[r], slot_pos0 + r);
    }
#else
    const uint row = row0 + r * row_step;
    if (row >= rows) break;
    const uint qrow = attn_q_row(attn_h[r], row / group);
#endif
    if (pc.splits > 1) {
      const uint prow = split * pc.total_rows + qrow;
      part_ml[ATTN_ML_OFF + prow] = vec2(attn_m[r], attn_l[r]);
      [[unroll]] for (uint c = 0; c < QW; ++c) part_acc[ATTN_ACC_OFF + prow * QW + c] = attn_acc[r * QW + c];
    } else {
      const float inv_l = attn_l[r] > 0.0 ? 1.0 / attn_l[r] : 0.0;  // no visible key: zeros
      const uint obase = qrow * HEAD_DIM;
      [[unroll]] for (uint c = 0; c < D4P; ++c) {
        const vec4 y = attn_acc[r * QW + c] * inv_l;
        ATTN_STORE_CHUNK(o, o_c, ATTN_O_OFF + obase, c, y);
#if ATTN_PARTS > 1
        ATTN_FOR_EXTRA_PARTS(p) ATTN_STORE_PART(p, obase, c, attn_acc[r * QW + p * D4P + c] * inv_l);
#endif
      }
    }
  }
}

#endif
