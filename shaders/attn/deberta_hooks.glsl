// attn.deberta's hooks (encodings.md section 3, HF DisentangledSelfAttention):
// s = scale (q_i.k_j + q_i.kr[h,idx] + k_j.qr[h,idx]), idx = the exact
// DeBERTa row of delta = i' - j, read from the table deberta_idx [M+N-1] at
// j - i' + M - 1, which attn_deberta_idx.comp wrote before the kernel with
// rel_buckets.glsl's integer deberta_idx (no float log).
//
// The two position terms come either from tables that attn_deberta_rel.comp
// wrote before the kernel, c2p [B,H,N,R] = scale q.kr and p2c [B,H,M,R] =
// scale k.qr over the R rows of kr/qr in use (from idx_lo), one load per
// term and score; or, where a table would cost more than it saves (R >= M
// for c2p, R >= N for p2c: decode, short sequences), from a dot product per
// score with the kr/qr row (flash only). The host chooses
// (src/suites/attn/attn_deberta.cc); naive always uses the tables, as HF does.
// Needs ATTN_EXTRA_PUSH as in attn_flash_deberta.comp.
#ifndef PEBENCH_ATTN_DEBERTA_HOOKS_GLSL
#define PEBENCH_ATTN_DEBERTA_HOOKS_GLSL

#extension GL_EXT_control_flow_attributes : require

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer Idx { int deberta_idx[]; };  // [M+N-1]
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer Kr { STORAGE_T kr[]; };  // [H, 2S, D]
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer KrV { STORAGE_VEC4 kr_c[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(2)) readonly buffer Qr { STORAGE_T qr[]; };  // [H, 2S, D]
layout(std430, binding = ATTN_EXTRA_BINDING(2)) readonly buffer QrV { STORAGE_VEC4 qr_c[]; };
#ifdef ATTN_TEXEL
// The CPU kernel's texel build: every lane reads its own table entries
// (float tables in either dtype).
layout(r32f, binding = ATTN_EXTRA_BINDING(3)) readonly uniform imageBuffer c2p_texels;  // [B, H, N, R]
layout(r32f, binding = ATTN_EXTRA_BINDING(4)) readonly uniform imageBuffer p2c_texels;  // [B, H, M, R]
#define DEB_C2P(i) imageLoad(c2p_texels, int(i)).x
#define DEB_P2C(i) imageLoad(p2c_texels, int(i)).x
#else
layout(std430, binding = ATTN_EXTRA_BINDING(3)) readonly buffer C2p { float c2p[]; };  // [B, H, N, R]
layout(std430, binding = ATTN_EXTRA_BINDING(4)) readonly buffer P2c { float p2c[]; };  // [B, H, M, R]
#define DEB_C2P(i) c2p[i]
#define DEB_P2C(i) p2c[i]
#endif

#if defined(PEBENCH_ATTN_FLASH_DECL_GLSL) || defined(PEBENCH_ATTN_FLASH_GPU_GLSL)
layout(constant_id = 6) const bool DEB_C2P_TABLE = true;
layout(constant_id = 7) const bool DEB_P2C_TABLE = true;
// The flash grid's y is batch * kv head (flash_main.glsl).
uint deberta_batch() { return gl_WorkGroupID.y / pc.kv_heads; }
uint deberta_q_row(uint r, uint h, uint qpos) { return attn_q_row_at(h, qpos); }
#else
const bool DEB_C2P_TABLE = true;
const bool DEB_P2C_TABLE = true;
// Naive: the current q row is at attn_q_base (scores_decl.glsl).
uint deberta_batch() { return attn_q_base / HEAD_DIM / (pc.heads * pc.seq); }
uint deberta_q_row(uint r, uint h, uint qpos) { return attn_q_base / HEAD_DIM; }
#endif

// Per row slot, so that a score needs no division: the deberta_idx entry
// of key 0 (near_window.glsl's near_base: the CPU kernel's band reads idx
// once a key for all slots), the c2p entry of kr row 0 and the p2c entry of
// key 0, kr row 0 (the last two wrap below zero for idx_lo > 0; adding idx
// >= idx_lo wraps back).
#define NEAR_TABLE(i) float(deberta_idx[ATTN_EXTRA_OFF(0, 4u) + (i)])
#include "attn/near_window.glsl"
uint deb_c2p_base[ATTN_ROW_SLOTS], deb_p2c_base[ATTN_ROW_SLOTS];

void deberta_row_state(uint r, uint h, uint qpos) {
  near_base[r] = (pc.kv_seq - 1) - qpos;
  deb_c2p_base[r] = deberta_q_row(r, h, qpos) * pc.rel_width - pc.idx_lo;
  deb_p2c_base[r] = (deberta_batch() * pc.heads + h) * pc.kv_seq * pc.rel_width - pc.idx_lo;
}

float deberta_term(uint r, uint h, uint kpos) {
  const uint idx = uint(near_entry(r, kpos));
  float c2p_term = 0.0, p2c_term = 0.0;
  if (DEB_C2P_TABLE) {
    c2p_term = DEB_C2P(ATTN_EXTRA_OFF(3, 4u) + deb_c2p_base[r] + idx);
  } else {
#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
    const uint base = (h * pc.two_s + idx) * HEAD_DIM;
    float acc = 0.0;
    [[unroll]] for (uint c = 0; c < D4P; ++c) acc += dot(attn_q_chunk(r, c), ATTN_LOAD_CHUNK(kr, kr_c, ATTN_EXTRA_OFF_S(1) + base, c));
    c2p_term = pc.scale * acc;
#endif
  }
  if (DEB_P2C_TABLE) {
    p2c_term = DEB_P2C(ATTN_EXTRA_OFF(4, 4u) + deb_p2c_base[r] + kpos * pc.rel_width + idx);
  } else {
#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
    // The key being folded in (flash_decl.glsl; _at: inside the causal branch).
    const uint base = (h * pc.two_s + idx) * HEAD_DIM;
    float acc = 0.0;
    [[unroll]] for (uint c = 0; c < D4P; ++c) acc += dot(attn_k_chunk_at(c), ATTN_LOAD_CHUNK(qr, qr_c, ATTN_EXTRA_OFF_S(2) + base, c));
    p2c_term = pc.scale * acc;
#endif
  }
  return c2p_term + p2c_term;
}

#ifdef PEBENCH_ATTN_FLASH_GPU_GLSL
// GPU kernel: the terms without a table are D-wide dots like q.k, so each
// lane adds its chunks' share to its partial dot (one reduction for all
// three); deberta_term then adds only the table terms.
float deberta_partial(uint kpos, uint t, uint c, vec4 kc) {
  if (DEB_C2P_TABLE && DEB_P2C_TABLE) return 0.0;
  const uint idx = uint(near_read(0, kpos));
  const uint base = (gpu_h * pc.two_s + idx) * HEAD_DIM;
  float acc = 0.0;
  if (!DEB_C2P_TABLE) acc += dot(gpu_q[t], ATTN_LOAD_CHUNK(kr, kr_c, ATTN_EXTRA_OFF_S(1) + base, c));  // gpu_q is scaled
  if (!DEB_P2C_TABLE) acc += pc.scale * dot(kc, ATTN_LOAD_CHUNK(qr, qr_c, ATTN_EXTRA_OFF_S(2) + base, c));
  return acc;
}
#define GPU_PARTIAL(kpos, t, c, kc) deberta_partial(kpos, t, c, kc)
#endif

#define ATTN_ROW_STATE(r, h, qpos) deberta_row_state(r, h, qpos)
#define ATTN_SCORE_TERM(r, h, qpos, kpos) deberta_term(r, h, kpos)

#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
// CPU kernel, both tables (DisentangledTerms::flash_cpu_far): from FAR_LEFT
// before the row and FAR_RIGHT after it on, idx is one value per side (the
// table's entry at that distance, clamped into the case's distances), so a
// far range reads one c2p entry per row slot and, per score, only p2c.
uint deb_far_idx;
float deb_far_c2p[ROWS];
void deberta_far_begin(uint side) {
  const int rp = side == 0 ? -int(FAR_LEFT) : int(FAR_RIGHT);  // j - i'
  deb_far_idx = uint(deberta_idx[ATTN_EXTRA_OFF(0, 4u) + uint(clamp(rp + int(pc.kv_seq) - 1, 0, int(pc.kv_seq + pc.seq) - 2))]);
  [[unroll]] for (uint r = 0; r < ROWS; ++r) deb_far_c2p[r] = DEB_C2P(ATTN_EXTRA_OFF(3, 4u) + deb_c2p_base[r] + deb_far_idx);
}
// The p2c entry is one per key and head: slots of one head share its read
// (ATTN_SLOT_HEADS; the fold of a far key has no mask to tell them apart):
// 7% faster at N = M = 2048 MHA. Staged MHA (every slot of the workgroup
// has its head): staged with K and V (STAGED_CHUNKS = 1,
// DisentangledTerms::flash_cpu_staged_chunks) and read from the tile: with
// the texel read in the fold, llvmpipe's code for it moved 1994 vectors a
// key to and from memory against 1334 (nope: 1317; docs/attention-kernels.md).
const bool DEB_STAGE_P2C = !DIRECT && STAGED_CHUNKS > 0;
float deberta_far_p2c(uint slot, uint kpos) {
  return DEB_P2C(ATTN_EXTRA_OFF(4, 4u) + deb_p2c_base[slot] + kpos * pc.rel_width + deb_far_idx);
}
void deberta_stage(uint jt, uint c, uint kpos, const bool far) {
  if (DEB_STAGE_P2C && far && c == 0) attn_tile[attn_staged_at(jt)] = vec4(deberta_far_p2c(0, kpos), 0.0, 0.0, 0.0);
}
float deberta_far_term(uint r, uint kpos) {
  // attn_tile_at is the key's tile index times QW.
  return deb_far_c2p[r] + (DEB_STAGE_P2C ? attn_tile[attn_staged_at(attn_tile_at / QW)].x : deberta_far_p2c(r % ATTN_SLOT_HEADS, kpos));
}
#define ATTN_STAGE_CHUNK(jt, c, kpos, far) deberta_stage(jt, c, kpos, far)
#define ATTN_FAR_BEGIN(side) deberta_far_begin(side)
#define ATTN_FAR_SCORE_TERM(r, kpos) deberta_far_term(r, kpos)
#endif

#endif
