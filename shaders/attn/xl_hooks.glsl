// attn.xl's hooks (Transformer-XL, encodings.md section 3): with r = i' - j,
// s = scale ((q_i + u_h).k_j + (q_i + vb_h).rk[h, r + N - 1]); rk, u, vb
// are per query head. Staged, an invocation's slots share one head, so the
// flash kernel keeps q as the core loads it and adds the per-key products
// u.k and vb.rk, each one D-wide dot per key for all slots:
//   (q + u).k + (q + vb).rk = q.k + u.k + q.rk + vb.rk.
// (Adding u into the q rows instead made llvmpipe's code for the whole key
// loop about 40% slower, with the position term removed: docs/attention-
// kernels.md.) Direct (decode, slots of several heads): q + u as q loads.
// Staged mode (ATTN_SLOTS_BY_HEAD): an invocation's slots are consecutive
// positions i'_0 + r of one head, so at key j slot r needs rk row
// i'_0 + r - j, the row slot 0 needs at key j - r. The invocation therefore
// reads ONE rk row per key (distance i'_0 - j), dots it with every slot's
// q + u (and once with vb - u), and slot r keeps that product for key j + r
// in a small queue (r + 1 floats): every rk row the tile's band of
// distances needs is read once per invocation, never per pair. Before the
// first key the queue is primed with the ROWS - 1 distances above it (a
// rolled loop of ROWS - 1, flash_hook_loops). Direct mode (decode: slots
// of different heads): each slot reads its own rk row per key.
// Naive: the whole score in one loop over D (ATTN_SCORE).
#ifndef PEBENCH_ATTN_XL_HOOKS_GLSL
#define PEBENCH_ATTN_XL_HOOKS_GLSL

#ifdef ATTN_TEXEL
// The CPU kernel's texel build: every lane reads its own rk row.
layout(ATTN_TEXEL_FORMAT, binding = ATTN_EXTRA_BINDING(0)) readonly uniform imageBuffer rk_texels;  // [H, M+N-1, D]
#define XL_RK_CHUNK(base, c) ATTN_LOAD_TEXEL(rk_texels, base, c)
#else
layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer Rk { STORAGE_T rk[]; };  // [H, M+N-1, D]
layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer Rk4 { STORAGE_VEC4 rk4[]; };
#define XL_RK_CHUNK(base, c) ATTN_LOAD_CHUNK(rk, rk4, ATTN_EXTRA_OFF_S(0) + (base), c)
#endif
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer U { STORAGE_T u[]; };  // [H, D]
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer U4 { STORAGE_VEC4 u4[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(2)) readonly buffer Vb { STORAGE_T vb[]; };  // [H, D]
layout(std430, binding = ATTN_EXTRA_BINDING(2)) readonly buffer Vb4 { STORAGE_VEC4 vb4[]; };

// First element of rk's row for distance qpos - kpos (clamped into the
// table: out-of-range rows are only read for keys that are never used).
uint xl_rk_base(uint h, int dist) {
  const int rows = int(pc.kv_seq + pc.seq) - 1;
  return (h * uint(rows) + uint(clamp(dist + int(pc.seq) - 1, 0, rows - 1))) * HEAD_DIM;
}

#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL

vec4 xl_us[D4P], xl_vbs[D4P];       // staged: u and vb of the invocation's head, as loaded
vec4 xl_qv[DIRECT ? ROWS * D4P : 1];  // direct: q + vb per slot
// Staged: slot r's queue at [r (r + 1) / 2, + r]: entry e is the position
// term of key j + e, j the key being folded.
float xl_queue[ROWS * (ROWS + 1) / 2];
// Staged: the scale in two factors, one for each q chunk where it is used
// and one for the finished sums (sqrt |scale| and sign(scale) sqrt |scale|):
// llvmpipe allocates the key loop's registers far better with both
// multiplies than with either alone (measured: docs/attention-kernels.md).
float xl_scale_q, xl_scale_sum;

// Direct only: q + u as the row loads (staged adds u.k per key instead).
void xl_q_row(uint r) {
  if (!DIRECT) return;
  const uint ub = attn_h[r] * HEAD_DIM;
  [[unroll]] for (uint c = 0; c < D4P; ++c) attn_q[r * QW + c] += ATTN_LOAD_CHUNK(u, u4, ATTN_EXTRA_OFF_S(1) + ub, c);
}

void xl_rows_ready() {
  if (DIRECT) {
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
      const uint hb = attn_h[r] * HEAD_DIM;
      [[unroll]] for (uint c = 0; c < D4P; ++c) {
        xl_qv[r * D4P + c] =
            attn_q[r * QW + c] + (ATTN_LOAD_CHUNK(vb, vb4, ATTN_EXTRA_OFF_S(2) + hb, c) - ATTN_LOAD_CHUNK(u, u4, ATTN_EXTRA_OFF_S(1) + hb, c));
      }
    }
  } else {
    xl_scale_q = sqrt(abs(pc.scale));
    xl_scale_sum = pc.scale < 0.0 ? -xl_scale_q : xl_scale_q;
    const uint hb = attn_h[0] * HEAD_DIM;
    [[unroll]] for (uint c = 0; c < D4P; ++c) {
      xl_us[c] = ATTN_LOAD_CHUNK(u, u4, ATTN_EXTRA_OFF_S(1) + hb, c);
      xl_vbs[c] = ATTN_LOAD_CHUNK(vb, vb4, ATTN_EXTRA_OFF_S(2) + hb, c);
    }
  }
}

// Staged: one step of the queues at key j (negative while priming): reads
// rk's row for distance i'_0 - j. With `content`, also the scores of key j
// (attn_k_chunk) in the same pass over the q rows.
void xl_step(int j, bool content, inout float dots[ROWS]) {
  const uint base = xl_rk_base(attn_h[0], int(attn_qpos[0]) - j);
  // Chunk-outer like the core's score loop: independent sums per slot. Each
  // rk chunk is read where it is used, not into a row array first (as TUPE's
  // pk chunks; docs/attention-kernels.md, "Chunks read where they are used").
  float vd = 0.0, ud = 0.0, d[ROWS];
  [[unroll]] for (uint r = 0; r < ROWS; ++r) d[r] = 0.0;
  [[unroll]] for (uint c = 0; c < D4P; ++c) {
    const vec4 rc = XL_RK_CHUNK(base, c);
    vd += dot(xl_vbs[c], rc);
    if (content) ud += dot(xl_us[c], attn_k_chunk(c));
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
      const vec4 qc = attn_q[r * QW + c] * xl_scale_q;
      d[r] += dot(qc, rc);
      if (content) dots[r] += dot(qc, attn_k_chunk(c));
    }
  }
  vd *= xl_scale_q;
  ud *= xl_scale_q;
  // Every queue advances by one: shifting the whole concatenation left moves
  // each queue's entries forward, and the entry that crosses into queue r's
  // tail is overwritten by its new value. One constant trip count: llvmpipe
  // left the per-queue loop (trip count r) rolled, which spent the loop
  // budget (65535 iterations) per key and cut long key ranges short. It
  // also left one loop of 35 steps (8 slots) rolled, so the steps come in
  // chunks of 16, which it unrolls; CPU devices get at most
  // kFlashCpuMaxRowSlots = 8 slots (attn_common.h, which asserts that three
  // chunks cover them).
  const uint QN = ROWS * (ROWS + 1) / 2 - 1;
  [[unroll]] for (uint e = 0; e < min(QN, 16u); ++e) xl_queue[e] = xl_queue[e + 1];
  [[unroll]] for (uint e = 16; e < min(QN, 32u); ++e) xl_queue[e] = xl_queue[e + 1];
  [[unroll]] for (uint e = 32; e < QN; ++e) xl_queue[e] = xl_queue[e + 1];
  [[unroll]] for (uint r = 0; r < ROWS; ++r) xl_queue[r * (r + 1) / 2 + r] = d[r] + vd;  // for key j + r
  if (content) {
    [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] += ud;
  }
}

// Staged, before each run of consecutive keys from k0 on (ATTN_NEAR_BEGIN:
// the queues assume the keys come one after another, so a range the mask
// skips to starts them afresh): the queues' entries for the keys before k0.
void xl_queues_begin(uint k0) {
  float unused[ROWS];
  for (uint p = 1; p < ROWS; ++p) xl_step(int(k0 + p) - int(ROWS), false, unused);
}

// The scaled score of every slot for key kpos (attn_k_chunk), before the
// score term.
void xl_scores(uint kpos, out float dots[ROWS]) {
  if (DIRECT) {
    attn_qk_scores(dots);
  } else {
    [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] = 0.0;
    xl_step(int(kpos), true, dots);
    [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] = (dots[r] + xl_queue[r * (r + 1) / 2]) * xl_scale_sum;
  }
}

// Direct: slot r's own rk row.
float xl_direct_term(uint r, uint h, uint qpos, uint kpos) {
  const uint base = xl_rk_base(h, int(qpos) - int(kpos));
  float d = 0.0;
  [[unroll]] for (uint c = 0; c < D4P; ++c) d += dot(xl_qv[r * D4P + c], XL_RK_CHUNK(base, c));
  return pc.scale * d;
}

#define ATTN_ROW_STATE(r, h, qpos) xl_q_row(r)
// Once per invocation, every slot loaded: the slots' q + vb (direct) or the
// head's u and vb (staged).
#define ATTN_KEYS_BEGIN(kb, ke) xl_rows_ready()
#define ATTN_NEAR_BEGIN(k0) xl_queues_begin(k0)
#define ATTN_SCORES(kpos, dots) xl_scores(kpos, dots)
#define ATTN_SCORE_TERM(r, h, qpos, kpos) (DIRECT ? xl_direct_term(r, h, qpos, kpos) : 0.0)

#elif defined(PEBENCH_ATTN_FLASH_GPU_GLSL)

// GPU kernel: q + u as q loads (the content term is the plain score); the
// position term (q + vb).rk[h, i' - j + N - 1] joins each lane's partial dot
// from its chunks of (q + vb) scale, one rk row per (row, key) from memory.
vec4 xl_qv[LC];

vec4 xl_q_chunk(uint c, vec4 x) { return x + ATTN_LOAD_CHUNK(u, u4, ATTN_EXTRA_OFF_S(1) + gpu_h * HEAD_DIM, c); }
// Before scaling: gpu_q holds q + u.
void xl_row_state() {
  const uint hb = gpu_h * HEAD_DIM;
  [[unroll]] for (uint t = 0; t < LC; ++t) {
    const uint c = gpu_chunk(t);
    xl_qv[t] = c < D4P ? (gpu_q[t] + ATTN_LOAD_CHUNK(vb, vb4, ATTN_EXTRA_OFF_S(2) + hb, c) - ATTN_LOAD_CHUNK(u, u4, ATTN_EXTRA_OFF_S(1) + hb, c)) * pc.scale
                       : vec4(0.0);
  }
}
float xl_partial(uint kpos, uint t, uint c) {
  return dot(xl_qv[t], XL_RK_CHUNK(xl_rk_base(gpu_h, int(gpu_qpos) - int(kpos)), c));
}
#define GPU_Q_CHUNK(c, x, base, qpos) xl_q_chunk(c, x)
#define ATTN_ROW_STATE(r, h, qpos) xl_row_state()
#define GPU_PARTIAL(kpos, t, c, kc) xl_partial(kpos, t, c)

#else  // naive score pass

// scale ((q + u).k + (q + vb).rk[h, i' - j + N - 1]), one loop over D.
float xl_score(uint h, uint qpos, uint kpos, uint q_base, uint k_base) {
  const uint r_base = xl_rk_base(h, int(qpos) - int(kpos));
  const uint hb = h * HEAD_DIM;
  float acc = 0.0;
  if (VEC4) {
    for (uint c = 0; c < HEAD_DIM / 4; ++c) {
      const vec4 qc = vec4(q4[q_base / 4 + c]);
      acc += dot(qc + vec4(u4[(ATTN_EXTRA_OFF_S(1) + hb) / 4 + c]), vec4(k4[k_base / 4 + c])) +
             dot(qc + vec4(vb4[(ATTN_EXTRA_OFF_S(2) + hb) / 4 + c]), vec4(rk4[(ATTN_EXTRA_OFF_S(0) + r_base) / 4 + c]));
    }
  } else {
    for (uint d = 0; d < HEAD_DIM; ++d) {
      const float qd = float(q[q_base + d]);
      acc += (qd + float(u[ATTN_EXTRA_OFF_S(1) + hb + d])) * float(k[k_base + d]) + (qd + float(vb[ATTN_EXTRA_OFF_S(2) + hb + d])) * float(rk[ATTN_EXTRA_OFF_S(0) + r_base + d]);
    }
  }
  return pc.scale * acc;
}

#define ATTN_SCORE(h, qpos, kpos, q_base, k_base) xl_score(h, qpos, kpos, q_base, k_base)

#endif

#endif
