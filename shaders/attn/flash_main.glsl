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
// (m, l, acc) go to attn_combine. The loops that run per key or per tile are
// the only ones not unrolled: the host counts them against llvmpipe's loop
// budget (attn_common.cc, flash_loop_iterations).
#ifndef PEBENCH_ATTN_FLASH_MAIN_GLSL
#define PEBENCH_ATTN_FLASH_MAIN_GLSL

// Chunk c (4 dims, zero past HEAD_DIM) of the row starting at element `base`.
#define ATTN_LOAD_CHUNK(buf, bufc, base, c)                                             \
  (VEC4 ? ATTN_CHUNK_LOAD(bufc[(base) / 4 + (c)])                                       \
        : vec4(4 * (c) + 0 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 0]) : 0.0,         \
               4 * (c) + 1 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 1]) : 0.0,         \
               4 * (c) + 2 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 2]) : 0.0,         \
               4 * (c) + 3 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 3]) : 0.0))

// Loads key row `kpos` of this kv head into attn_k / attn_v.
void attn_load_key(uint kv_row0, uint kpos) {
  const uint base = (kv_row0 + kpos) * HEAD_DIM;
  [[unroll]] for (uint c = 0; c < D4P; ++c) {
    attn_k[c] = ATTN_LOAD_CHUNK(k, k_c, base, c);
    attn_v[c] = ATTN_LOAD_CHUNK(v, v_c, base, c);
  }
#ifdef ATTN_K_ROW_TRANSFORM
  ATTN_K_ROW_TRANSFORM(kpos);
#endif
}

// Folds key `kpos` (attn_k, attn_v) into every row slot.
void attn_fold_key(uint kpos) {
#ifdef ATTN_KEY_PREPARE
  ATTN_KEY_PREPARE(kpos);
#endif
  float dots[ROWS];
  [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] = 0.0;
  [[unroll]] for (uint c = 0; c < D4P; ++c) {
    [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] += dot(attn_q[r * D4P + c], attn_k[c]);
  }
  // Online softmax, branch-free: alpha rescales what was summed under the
  // old max (1 when the max is unchanged, 0 when it was ATTN_MASKED).
  float w[ROWS], alpha[ROWS];
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    float s = ATTN_MASKED;
    if (pc.causal == 0 || kpos <= attn_qpos[r]) {
      s = dots[r];
#ifdef ATTN_SCORE_TERM
      s += ATTN_SCORE_TERM(r, attn_h[r], attn_qpos[r], kpos);
#endif
    }
    const float m_new = max(attn_m[r], s);
    alpha[r] = exp(attn_m[r] - m_new);
    w[r] = attn_weight(s, m_new);
    attn_l[r] = attn_l[r] * alpha[r] + w[r];
    attn_m[r] = m_new;
  }
  [[unroll]] for (uint c = 0; c < D4P; ++c) {
    [[unroll]] for (uint r = 0; r < ROWS; ++r) attn_acc[r * D4P + c] = attn_acc[r * D4P + c] * alpha[r] + w[r] * attn_v[c];
  }
#ifdef ATTN_VALUE_TERM
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    if (w[r] != 0.0) {
      [[unroll]] for (uint c = 0; c < D4P; ++c) {
        attn_acc[r * D4P + c] += w[r] * ATTN_VALUE_TERM(r, attn_h[r], attn_qpos[r], kpos, c);
      }
    }
  }
#endif
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint wg = gl_WorkGroupSize.x;
  const uint group = pc.heads / pc.kv_heads;
  const uint rows = group * pc.seq;  // query rows reading this kv head
  const uint b = gl_WorkGroupID.y / pc.kv_heads;
  const uint kvh = gl_WorkGroupID.y % pc.kv_heads;
  const uint kv_row0 = gl_WorkGroupID.y * pc.kv_seq;  // row of key 0 in k and v

  // Slot r holds row row0 + r * row_step of this kv head's rows.
  const uint row0 = DIRECT ? gl_WorkGroupID.x * ROWS : gl_WorkGroupID.x * wg * ROWS + lid;
  const uint row_step = DIRECT ? 1 : wg;
  const uint split = DIRECT ? gl_WorkGroupID.z * wg + lid : gl_WorkGroupID.z;
  // Keys of this split, cut after the last row's position when causal.
  const uint kb = min(pc.kv_seq, split * pc.keys_per_split);
  uint ke = min(pc.kv_seq, kb + pc.keys_per_split);
  if (pc.causal != 0) {
    const uint last_row = min(rows, DIRECT ? row0 + ROWS : gl_WorkGroupID.x * wg * ROWS + wg * ROWS) - 1;
    ke = min(ke, last_row / group + pc.kv_seq - pc.seq + 1);
  }

  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    const uint rr = min(row0 + r * row_step, rows - 1);  // idle slots shadow the last row, write nothing
    const uint i = rr / group;
    attn_h[r] = kvh * group + rr % group;
    attn_qpos[r] = i + pc.kv_seq - pc.seq;  // i' = i + M - N
    const uint qbase = ((b * pc.heads + attn_h[r]) * pc.seq + i) * HEAD_DIM;
    [[unroll]] for (uint c = 0; c < D4P; ++c) attn_q[r * D4P + c] = ATTN_LOAD_CHUNK(q, q_c, qbase, c);
#ifdef ATTN_Q_ROW_TRANSFORM
    ATTN_Q_ROW_TRANSFORM(r, attn_qpos[r]);
#endif
#ifdef ATTN_ROW_STATE
    ATTN_ROW_STATE(r, attn_h[r], attn_qpos[r]);
#endif
    [[unroll]] for (uint c = 0; c < D4P; ++c) {
      attn_q[r * D4P + c] *= pc.scale;
      attn_acc[r * D4P + c] = vec4(0.0);
    }
    attn_m[r] = ATTN_MASKED;
    attn_l[r] = 0.0;
  }

  if (DIRECT) {
    for (uint kpos = kb; kpos < ke; ++kpos) {
      attn_load_key(kv_row0, kpos);
      attn_fold_key(kpos);
    }
  } else {
    for (uint t0 = kb; t0 < ke; t0 += BC) {
      const uint n = min(BC, ke - t0);
      barrier();  // the previous tile is no longer read
      for (uint e = lid; e < n * D4P; e += wg) {
        const uint jt = e / D4P, c = e - jt * D4P;
        const uint base = (kv_row0 + t0 + jt) * HEAD_DIM;
        vec4 kc = ATTN_LOAD_CHUNK(k, k_c, base, c);
#ifdef ATTN_K_STAGE_TRANSFORM
        kc = ATTN_K_STAGE_TRANSFORM(t0 + jt, c, kc, base);
#endif
        tile_k[e] = kc;
        tile_v[e] = ATTN_LOAD_CHUNK(v, v_c, base, c);
      }
      barrier();
      for (uint jt = 0; jt < n; ++jt) {
        [[unroll]] for (uint c = 0; c < D4P; ++c) {
          attn_k[c] = tile_k[jt * D4P + c];
          attn_v[c] = tile_v[jt * D4P + c];
        }
        attn_fold_key(t0 + jt);
      }
    }
  }

  if (DIRECT && split >= pc.splits) return;
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    const uint row = row0 + r * row_step;
    if (row >= rows) break;
    const uint qrow = (b * pc.heads + attn_h[r]) * pc.seq + row / group;
    if (pc.splits > 1) {
      const uint prow = split * pc.total_rows + qrow;
      part_ml[prow] = vec2(attn_m[r], attn_l[r]);
      [[unroll]] for (uint c = 0; c < D4P; ++c) part_acc[prow * D4P + c] = attn_acc[r * D4P + c];
    } else {
      const float inv_l = attn_l[r] > 0.0 ? 1.0 / attn_l[r] : 0.0;  // no visible key: zeros
      const uint obase = qrow * HEAD_DIM;
      [[unroll]] for (uint c = 0; c < D4P; ++c) {
        const vec4 y = attn_acc[r * D4P + c] * inv_l;
        if (VEC4) {
          o_c[obase / 4 + c] = ATTN_CHUNK_STORE(y);
        } else {
          [[unroll]] for (uint u = 0; u < 4; ++u) {
            if (4 * c + u < HEAD_DIM) o[obase + 4 * c + u] = STORAGE_T(y[u]);
          }
        }
      }
    }
  }
}

#endif
