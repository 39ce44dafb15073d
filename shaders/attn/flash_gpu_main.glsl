// Fused ("flash") attention for GPUs, part 2 of 2: the kernel (see
// flash_gpu_decl.glsl for the layout and the hooks).
//
// Staged (DIRECT = false). Grid: x = tiles of ROWS_WG = wg / LANES query
// rows of one kv head (row r: i = r / G, h = kvh G + r % G, so GQA shares
// every tile among the G heads), y = batch * kv head, z = key split. The
// workgroup stages BC keys of K and V in shared memory, then every cluster
// folds them into its row four keys at a time: each lane forms its partial
// dots for four keys, one reduction (a vec4) gives the four scores, and one
// online-softmax step (encodings.md section 0) takes all four, so the
// reduction and the rescaling of the accumulator are paid once per four
// keys. Direct (decode). Grid: x = query row, y = batch * kv head,
// z * ROWS_WG + cluster = key split of keys_per_split keys, those in the
// row's ranges (mask.glsl) read straight from memory. Every loop that
// contains a reduction has a trip count that is uniform over the workgroup
// (masked keys instead of early exits), as the shared-memory reduction's
// barriers need. Partials for attn_combine are laid out as the CPU kernel's.
#ifndef PEBENCH_ATTN_FLASH_GPU_MAIN_GLSL
#define PEBENCH_ATTN_FLASH_GPU_MAIN_GLSL

#include "attn/mask.glsl"
#include "attn/hook_defaults.glsl"

#ifndef GPU_SCORE_PARTS
#define GPU_SCORE_PARTS 1
#endif

#ifdef ATTN_GPU_SHARED_REDUCE
shared vec4 gpu_red[gl_WorkGroupSize.x];
// Sum over the cluster's lanes through shared memory; called in uniform
// control flow only (barriers).
vec4 gpu_reduce(vec4 x) {
  const uint lid = gl_LocalInvocationID.x;
  barrier();  // every lane has read the previous reduction
  gpu_red[lid] = x;
  barrier();
  vec4 s = vec4(0.0);
  [[unroll]] for (uint i = 0; i < LANES; ++i) s += gpu_red[lid - gpu_lane + i];
  return s;
}
#else
// Butterfly over the cluster: every lane ends with the same sum (float
// addition is commutative, so each pairwise step agrees across lanes).
vec4 gpu_reduce(vec4 x) {
  [[unroll]] for (uint o = 1; o < LANES; o *= 2) x += subgroupShuffleXor(x, o);
  return x;
}
#endif

// Part p of chunk c of a key: from the staged tile (slot) or, direct, from
// memory (kpos), transformed as the CPU kernel's.
vec4 gpu_key_k(uint kv_row0, uint kpos, uint slot, uint p, uint c) {
  if (!DIRECT) return tile_k[(slot * ATTN_PARTS + p) * D4P + c];
  const uint base = (kv_row0 + kpos) * HEAD_DIM;
#if ATTN_PARTS > 1
  if (p > 0) return ATTN_K_PART(p, base, c);
#endif
  vec4 x = ATTN_LOAD_CHUNK(k, k_c, base, c);
#ifdef GPU_K_CHUNK
  x = GPU_K_CHUNK(kpos, c, x, base);
#endif
  return x;
}
vec4 gpu_key_v(uint kv_row0, uint kpos, uint slot, uint p, uint c) {
  if (!DIRECT) return tile_v[(slot * ATTN_PARTS + p) * D4P + c];
  const uint base = (kv_row0 + kpos) * HEAD_DIM;
#if ATTN_PARTS > 1
  if (p > 0) return ATTN_V_PART(p, base, c);
#endif
  return ATTN_LOAD_CHUNK(v, v_c, base, c);
}

// Folds keys k0 .. k0 + 3 into the row; those at or past kend are masked.
// Staged: key k0 + kk is tile slot slot0 + kk (of nslot); direct: read from
// memory. Masked keys read a valid key (clamped; direct: the row's own) and
// weigh exactly 0.
void gpu_fold4(uint kv_row0, uint k0, uint kend, uint slot0, uint nslot) {
  vec4 sp[GPU_SCORE_PARTS];
  [[unroll]] for (uint i = 0; i < GPU_SCORE_PARTS; ++i) sp[i] = vec4(0.0);
  uint kread[4], slot[4];
  [[unroll]] for (uint kk = 0; kk < 4; ++kk) {
    // Direct: a key past kend reads the row's own key, which every mask
    // shows, so no key outside the split's ranges is read.
    kread[kk] = min(DIRECT && k0 + kk >= kend ? gpu_qpos : k0 + kk, pc.kv_seq - 1);
    slot[kk] = min(slot0 + kk, nslot - 1);
  }
  [[unroll]] for (uint t = 0; t < LC; ++t) {
    const uint c = gpu_chunk(t);
    if (c < D4P) {
      [[unroll]] for (uint kk = 0; kk < 4; ++kk) {
        vec4 kc[ATTN_PARTS];
        [[unroll]] for (uint p = 0; p < ATTN_PARTS; ++p) kc[p] = gpu_key_k(kv_row0, kread[kk], slot[kk], p, c);
#ifdef GPU_DOTS
        GPU_DOTS(t, kc, sp, kk);
#else
        sp[0][kk] += dot(gpu_q[t], kc[0]);
#endif
#ifdef GPU_PARTIAL
        sp[0][kk] += GPU_PARTIAL(kread[kk], t, c, kc[0]);
#endif
      }
    }
  }
  [[unroll]] for (uint i = 0; i < GPU_SCORE_PARTS; ++i) sp[i] = gpu_reduce(sp[i]);
  vec4 s;
  [[unroll]] for (uint kn = 0; kn < 4; ++kn) {
#ifdef ATTN_KEYS_LAST_TO_FIRST
    const uint kk = 3 - kn;  // the term sees the four keys from the last
#else
    const uint kk = kn;
#endif
    const uint kpos = k0 + kk;
    s[kk] = ATTN_MASKED;
    if (kpos < kend && attn_mask_visible(gpu_qpos, kpos)) {
#ifdef GPU_SCORE
      const float t = GPU_SCORE(sp, kk);
#else
      const float t = sp[0][kk];
#endif
#ifdef ATTN_SCORE_TERM
      s[kk] = ATTN_MODIFIED_SCORE(t, ATTN_SCORE_TERM(0, gpu_h, gpu_qpos, kpos));
#else
      s[kk] = attn_softcap(t);
#endif
#ifdef ATTN_CONTENT_TERM
      // CoPE's e_ij: a position term after the cap; its gate reads the
      // uncapped content score.
      s[kk] += ATTN_CONTENT_TERM(0, sp[0][kk]);
#endif
    }
  }
  // Online softmax over the four keys at once (alpha: 1 when the max does
  // not move, 0 when it was ATTN_MASKED; masked keys weigh exactly 0).
  const float m_new = max(gpu_m, max(max(s.x, s.y), max(s.z, s.w)));
  const float alpha = exp(gpu_m - m_new);
  const vec4 w = attn_weight4(s, vec4(m_new));
  gpu_l = gpu_l * alpha + (w.x + w.y) + (w.z + w.w);
  gpu_m = m_new;
  [[unroll]] for (uint t = 0; t < LC; ++t) {
    const uint c = gpu_chunk(t);
    if (c < D4P) {
      [[unroll]] for (uint p = 0; p < ATTN_PARTS; ++p) {
        vec4 a = gpu_acc[p * LC + t] * alpha;
        [[unroll]] for (uint kk = 0; kk < 4; ++kk) a += w[kk] * gpu_key_v(kv_row0, kread[kk], slot[kk], p, c);
#ifdef GPU_VALUE_TERM
        if (p == 0) {
          [[unroll]] for (uint kk = 0; kk < 4; ++kk) a += w[kk] * GPU_VALUE_TERM(kread[kk], c);
        }
#endif
        gpu_acc[p * LC + t] = a;
      }
    }
  }
}

// Stages keys [t0, t0 + n) of K and V (every part) in the tiles.
void gpu_stage(uint kv_row0, uint t0, uint n) {
  const uint wg = gl_WorkGroupSize.x;
  for (uint e = gl_LocalInvocationID.x; e < n * D4P; e += wg) {
    const uint jt = e / D4P, c = e - jt * D4P;
    const uint base = (kv_row0 + t0 + jt) * HEAD_DIM;
    vec4 kc = ATTN_LOAD_CHUNK(k, k_c, base, c);
#ifdef GPU_K_CHUNK
    kc = GPU_K_CHUNK(t0 + jt, c, kc, base);
#endif
    const uint te = jt * QW + c;
    tile_k[te] = kc;
    tile_v[te] = ATTN_LOAD_CHUNK(v, v_c, base, c);
#if ATTN_PARTS > 1
    [[unroll]] for (uint p = 1; p < ATTN_PARTS; ++p) {
      tile_k[te + p * D4P] = ATTN_K_PART(p, base, c);
      tile_v[te + p * D4P] = ATTN_V_PART(p, base, c);
    }
#endif
  }
}

// Staged: the keys [k0, k1), tile by tile (uniform over the workgroup).
void gpu_fold_staged(uint kv_row0, uint k0, uint k1) {
  for (uint t0 = k0; t0 < k1; t0 += BC) {
    const uint n = min(BC, k1 - t0);
    barrier();  // the previous tile is no longer read
    gpu_stage(kv_row0, t0, n);
    barrier();
    for (uint jt = 0; jt < n; jt += 4) gpu_fold4(kv_row0, t0 + jt, t0 + n, jt, n);
  }
}

// Loads the lane's chunks of the q row at element qbase (every part).
void gpu_load_q(uint qbase) {
  [[unroll]] for (uint t = 0; t < LC; ++t) {
    const uint c = gpu_chunk(t);
    [[unroll]] for (uint p = 0; p < ATTN_PARTS; ++p) gpu_q[p * LC + t] = vec4(0.0);
    if (c < D4P) {
      vec4 x = ATTN_LOAD_CHUNK(q, q_c, qbase, c);
#ifdef GPU_Q_CHUNK
      x = GPU_Q_CHUNK(c, x, qbase, gpu_qpos);
#endif
      gpu_q[t] = x;
#if ATTN_PARTS > 1
      [[unroll]] for (uint p = 1; p < ATTN_PARTS; ++p) gpu_q[p * LC + t] = ATTN_Q_PART(p, qbase, c);
#endif
    }
  }
}

// The row's output (one split: o = acc / l) or its partial (m, l, acc).
void gpu_store(uint qrow, uint split) {
  if (pc.splits > 1) {
    const uint prow = split * pc.total_rows + qrow;
    if (gpu_lane == 0) part_ml[ATTN_ML_OFF + prow] = vec2(gpu_m, gpu_l);
    [[unroll]] for (uint t = 0; t < LC; ++t) {
      const uint c = gpu_chunk(t);
      if (c >= D4P) continue;
      [[unroll]] for (uint p = 0; p < ATTN_PARTS; ++p) part_acc[ATTN_ACC_OFF + prow * QW + p * D4P + c] = gpu_acc[p * LC + t];
    }
    return;
  }
  const float inv_l = gpu_l > 0.0 ? 1.0 / gpu_l : 0.0;  // no visible key: zeros
  const uint obase = qrow * HEAD_DIM;
  [[unroll]] for (uint t = 0; t < LC; ++t) {
    const uint c = gpu_chunk(t);
    if (c >= D4P) continue;
    const vec4 y = gpu_acc[t] * inv_l;
    ATTN_STORE_CHUNK(o, o_c, ATTN_O_OFF + obase, c, y);
#if ATTN_PARTS > 1
    [[unroll]] for (uint p = 1; p < ATTN_PARTS; ++p) ATTN_STORE_PART(p, obase, c, gpu_acc[p * LC + t] * inv_l);
#endif
  }
}

// Key split `split`'s keys [x, y).
uvec2 gpu_split_keys(uint split) {
  const uint kb = min(pc.kv_seq, split * pc.keys_per_split);
  return uvec2(kb, min(pc.kv_seq, kb + pc.keys_per_split));
}

// Direct: the most sink keys (x) and local keys (y) the row sees in any of
// the splits first .. first + count - 1 (a workgroup's clusters').
uvec2 gpu_direct_longest(uint first, uint count) {
  uvec2 longest = uvec2(0);
  for (uint c = 0; c < count; ++c) {
    const uvec2 keys = gpu_split_keys(first + c);
    const AttnKeyRanges r = attn_key_ranges(gpu_qpos, gpu_qpos, keys.x, keys.y);
    longest = max(longest, uvec2(r.sink_end - keys.x, r.end - r.begin));
  }
  return longest;
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint rows_wg = gl_WorkGroupSize.x / LANES;
  const uint cluster = lid / LANES;
  gpu_lane = lid % LANES;
  const uint group = pc.heads / pc.kv_heads;
  const uint rows = group * pc.seq;  // query rows reading this kv head
  const uint kvh = gl_WorkGroupID.y % pc.kv_heads;
  const uint kv_row0 = gl_WorkGroupID.y * pc.kv_seq;

  const uint row = DIRECT ? gl_WorkGroupID.x : gl_WorkGroupID.x * rows_wg + cluster;
  const uint split = DIRECT ? gl_WorkGroupID.z * rows_wg + cluster : gl_WorkGroupID.z;
  const uint rr = min(row, rows - 1);  // idle clusters shadow the last row, write nothing
  const uint i = rr / group;
  gpu_h = kvh * group + rr % group;
  gpu_qpos = i + pc.kv_seq - pc.seq;  // i' = i + M - N
  const uvec2 split_keys = gpu_split_keys(split);
  const uint kb = split_keys.x, ke = split_keys.y;
  // Staged: the key ranges of the workgroup's rows (mask.glsl); the rows'
  // own tests (gpu_fold4) do the rest.
  // Direct: the row's ranges in the cluster's own split.
  const uint first_row = min(gl_WorkGroupID.x * rows_wg, rows - 1);
  const uint last_row = min(rows, (gl_WorkGroupID.x + 1) * rows_wg) - 1;
  const AttnKeyRanges kr =
      DIRECT ? attn_key_ranges(gpu_qpos, gpu_qpos, kb, ke)
             : attn_key_ranges(first_row / group + pc.kv_seq - pc.seq, last_row / group + pc.kv_seq - pc.seq, kb, ke);

  const uint qrow = attn_q_row(gpu_h, i);
  gpu_load_q(qrow * HEAD_DIM);
#ifdef ATTN_ROW_STATE
  ATTN_ROW_STATE(0, gpu_h, gpu_qpos);
#endif
  [[unroll]] for (uint t = 0; t < ATTN_PARTS * LC; ++t) {
    gpu_q[t] *= pc.scale;
    gpu_acc[t] = vec4(0.0);
  }
  // sink_logits: the first split starts at m = sinks[h], l = 1.
  const bool sink = ATTN_SINK_LOGITS && split == 0;
  gpu_m = sink ? attn_sink_logit(gpu_h) : ATTN_MASKED;
  gpu_l = sink ? 1.0 : 0.0;

#ifdef ATTN_KEYS_LAST_TO_FIRST
  // Keys from the last to the first: groups of four from the last group
  // down, tiles from the last (partial) one down.
  if (DIRECT) {
    for (uint j = (pc.keys_per_split + 3) / 4 * 4; j > 0; j -= 4) gpu_fold4(kv_row0, kb + j - 4, ke, 0, 1);
  } else {
    const uint tiles = ke > kb ? (ke - kb + BC - 1) / BC : 0;
    for (uint tix = tiles; tix > 0; --tix) {
      const uint t0 = kb + (tix - 1) * BC;
      const uint n = min(BC, ke - t0);
      barrier();  // the previous tile is no longer read
      gpu_stage(kv_row0, t0, n);
      barrier();
      for (uint jn = (n + 3) / 4 * 4; jn > 0; jn -= 4) gpu_fold4(kv_row0, t0 + jn - 4, t0 + n, jn - 4, n);
    }
  }
#else
  if (DIRECT) {
    // Only the keys of the split's ranges: run 0 the sink keys, 1 the local
    // ones (for one row they are all visible). The clusters' splits differ,
    // and the trip count must be uniform over the workgroup (the
    // reductions' barriers), so each run walks the longest of its clusters'
    // ranges (gpu_direct_longest, the same in every lane) and a cluster's
    // keys past its own range are masked.
    const uvec2 longest = gpu_direct_longest(gl_WorkGroupID.z * rows_wg, rows_wg);
    [[dont_unroll]] for (uint run = MASK_SINKS > 0 ? 0 : 1; run < 2; ++run) {
      const uint a = run == 0 ? kb : kr.begin, b = run == 0 ? kr.sink_end : kr.end;
      const uint n = run == 0 ? longest.x : longest.y;
      for (uint j = 0; j < n; j += 4) gpu_fold4(kv_row0, a + j, b, 0, 1);
    }
  } else {
    // Tiles wholly outside the ranges are skipped (sink keys first).
    // One call, so one copy of the fold: run 0 the sink keys, 1 the local.
    [[dont_unroll]] for (uint run = MASK_SINKS > 0 ? 0 : 1; run < 2; ++run) {
      gpu_fold_staged(kv_row0, run == 0 ? kb : kr.begin, run == 0 ? kr.sink_end : kr.end);
    }
  }
#endif

  if (row >= rows || (DIRECT && split >= pc.splits)) return;
  gpu_store(qrow, split);
}

#endif
