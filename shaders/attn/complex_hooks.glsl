// attn.complex's hooks (complex-order attention, encodings.md section 3):
// q, k, v are the real parts and qi, ki, vi the imaginary ones;
// re = q.k - qi.ki, im = q.ki + qi.k (no conjugate), s = scale sqrt(re^2 +
// im^2), o = p.v and oi = p.vi. The score is not additive, so it replaces
// the core's (ATTN_SCORES / ATTN_SCORE), and every row has two parts
// (ATTN_PARTS 2, defined by the flash .comp before flash_decl.glsl): the
// flash kernel keeps q|qi and the accumulators of o|oi side by side in
// registers and stages k|ki and v|vi together, so each key is folded into
// both outputs with one online softmax. Naive: the score in one loop over D;
// the P.V pass runs once per output (AttnCase::part_tensors).
#ifndef PEBENCH_ATTN_COMPLEX_HOOKS_GLSL
#define PEBENCH_ATTN_COMPLEX_HOOKS_GLSL

#extension GL_EXT_control_flow_attributes : require

#if defined(PEBENCH_ATTN_FLASH_DECL_GLSL) || defined(PEBENCH_ATTN_FLASH_GPU_GLSL)

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer Qi { STORAGE_T qi[]; };  // [B,H,N,D]
layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer QiV { ATTN_CHUNK_T qi_c[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer Ki { STORAGE_T ki[]; };  // [B,Hkv,M,D]
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer KiV { ATTN_CHUNK_T ki_c[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(2)) readonly buffer Vi { STORAGE_T vi[]; };  // [B,Hkv,M,D]
layout(std430, binding = ATTN_EXTRA_BINDING(2)) readonly buffer ViV { ATTN_CHUNK_T vi_c[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(3)) writeonly buffer Oi { STORAGE_T oi[]; };  // [B,H,N,D]
layout(std430, binding = ATTN_EXTRA_BINDING(3)) writeonly buffer OiV { ATTN_CHUNK_T oi_c[]; };

#ifdef PEBENCH_ATTN_FLASH_GPU_GLSL
// GPU kernel: gpu_q holds the lane's chunks of scale q | scale qi; each lane
// sums its share of scale re (sp[0]) and scale im (sp[1]) for key kk of
// four, both reduced; the norm is |scale| |z|, the sign restores scale's.
#define GPU_SCORE_PARTS 2
#define GPU_DOTS(t, kc, sp, kk)                                              \
  {                                                                          \
    sp[0][kk] += dot(gpu_q[t], kc[0]) - dot(gpu_q[LC + (t)], kc[1]);         \
    sp[1][kk] += dot(gpu_q[t], kc[1]) + dot(gpu_q[LC + (t)], kc[0]);         \
  }
#define GPU_SCORE(sp, kk) \
  ((pc.scale < 0.0 ? -1.0 : 1.0) * sqrt(sp[0][kk] * sp[0][kk] + sp[1][kk] * sp[1][kk]))
#else
// attn_q holds q | qi, attn_k_chunk k | ki: the dots give re and im, and
// the core scales their norm |z|.
void complex_scores(out float dots[ROWS]) {
  float re[ROWS], im[ROWS];
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    re[r] = 0.0;
    im[r] = 0.0;
  }
  [[unroll]] for (uint c = 0; c < D4P; ++c) {
    const vec4 kr = attn_k_chunk(c), kim = attn_k_chunk(D4P + c);
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
      const vec4 qr = attn_q[r * QW + c], qim = attn_q[r * QW + D4P + c];
      re[r] += dot(qr, kr) - dot(qim, kim);
      im[r] += dot(qr, kim) + dot(qim, kr);
    }
  }
  [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] = pc.scale * sqrt(re[r] * re[r] + im[r] * im[r]);
}
#define ATTN_SCORES(kpos, dots) complex_scores(dots)
#endif

void complex_store_oi(uint base, uint c, vec4 y) { ATTN_STORE_CHUNK(oi, oi_c, ATTN_EXTRA_OFF_S(3) + base, c, y); }

#define ATTN_Q_PART(p, base, c) ATTN_LOAD_CHUNK(qi, qi_c, ATTN_EXTRA_OFF_S(0) + base, c)
#define ATTN_K_PART(p, base, c) ATTN_LOAD_CHUNK(ki, ki_c, ATTN_EXTRA_OFF_S(1) + base, c)
#define ATTN_V_PART(p, base, c) ATTN_LOAD_CHUNK(vi, vi_c, ATTN_EXTRA_OFF_S(2) + base, c)
#define ATTN_STORE_PART(p, base, c, y) complex_store_oi(base, c, y)

#else  // naive score pass

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer Qi { STORAGE_T qi[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer Qi4 { STORAGE_VEC4 qi4[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer Ki { STORAGE_T ki[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer Ki4 { STORAGE_VEC4 ki4[]; };

// scale sqrt(re^2 + im^2), one loop over D.
float complex_score(uint q_base, uint k_base) {
  float re = 0.0, im = 0.0;
  if (VEC4) {
    for (uint c = 0; c < HEAD_DIM / 4; ++c) {
      const vec4 qr = vec4(q4[q_base / 4 + c]), qim = vec4(qi4[(ATTN_EXTRA_OFF_S(0) + q_base) / 4 + c]);
      const vec4 kr = vec4(k4[k_base / 4 + c]), kim = vec4(ki4[(ATTN_EXTRA_OFF_S(1) + k_base) / 4 + c]);
      re += dot(qr, kr) - dot(qim, kim);
      im += dot(qr, kim) + dot(qim, kr);
    }
  } else {
    for (uint d = 0; d < HEAD_DIM; ++d) {
      const float qr = float(q[q_base + d]), qim = float(qi[ATTN_EXTRA_OFF_S(0) + q_base + d]);
      const float kr = float(k[k_base + d]), kim = float(ki[ATTN_EXTRA_OFF_S(1) + k_base + d]);
      re += qr * kr - qim * kim;
      im += qr * kim + qim * kr;
    }
  }
  return pc.scale * sqrt(re * re + im * im);
}

#define ATTN_SCORE(h, qpos, kpos, q_base, k_base) complex_score(q_base, k_base)

#endif

#endif
