// attn.tupe's hooks (encodings.md section 3): s = scale (q.k + pq[h,i'].pk[h,j])
// + bias_table[bucket(j - i'), h]. The untied positional term is a second
// dot product per pair, over rows of pq/pk [H,M,D] indexed by absolute
// position; the T5 bias comes from t5_hooks.glsl (rel_bias, binding
// ATTN_EXTRA_BINDING(0)). Flash keeps each row slot's scaled pq row in
// registers next to its q row; the naive score pass reads both rows.
#ifndef PEBENCH_ATTN_TUPE_HOOKS_GLSL
#define PEBENCH_ATTN_TUPE_HOOKS_GLSL

#extension GL_EXT_control_flow_attributes : require

#define T5_BIAS_ONLY
#include "attn/t5_hooks.glsl"

layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer Pq { STORAGE_T pq[]; };  // [H, M, D]
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer PqV { STORAGE_VEC4 pq_c[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(2)) readonly buffer Pk { STORAGE_T pk[]; };  // [H, M, D]
layout(std430, binding = ATTN_EXTRA_BINDING(2)) readonly buffer PkV { STORAGE_VEC4 pk_c[]; };

const uint TUPE_D4 = (HEAD_DIM + 3) / 4;

uint tupe_row(uint h, uint pos) { return (h * pc.kv_seq + pos) * HEAD_DIM; }

#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
// Each row slot's pq[h, i'] row as loaded (the core scales the score).
vec4 tupe_pq[ATTN_ROW_SLOTS * TUPE_D4];

// Staged MHA: every invocation of the workgroup reads the same pk row per key
// (head kvh), so the host has it staged with K and V (STAGED_CHUNKS =
// TUPE_D4: UntiedPositions::flash_cpu_staged_chunks) and it is read like
// them (flash_decl.glsl). GQA reads each slot's head's row from memory.
const bool TUPE_STAGE_PK = !DIRECT && STAGED_CHUNKS > 0;

void tupe_stage(uint jt, uint c, uint kpos) {
  if (TUPE_STAGE_PK) attn_tile[attn_staged_at(jt) + c] = ATTN_LOAD_CHUNK(pk, pk_c, ATTN_EXTRA_OFF_S(2) + tupe_row(gl_WorkGroupID.y % pc.kv_heads, kpos), c);
}
#define ATTN_STAGE_CHUNK(jt, c, kpos, far) tupe_stage(jt, c, kpos)

void tupe_row_state(uint r, uint h, uint qpos) {
  t5_row_state(r, h, qpos);
  const uint base = tupe_row(h, qpos);
  [[unroll]] for (uint c = 0; c < TUPE_D4; ++c) tupe_pq[r * TUPE_D4 + c] = ATTN_LOAD_CHUNK(pq, pq_c, ATTN_EXTRA_OFF_S(1) + base, c);
}

// The scores of key kpos (attn_k_chunk) with the untied term in the same pass over
// the chunks: q.k + pq.pk (the core scales it), pk read once per chunk for every slot.
void tupe_scores(uint kpos, out float dots[ROWS]) {
  [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] = 0.0;
  // attn_tile_at is the key's tile index times QW = TUPE_D4 (one part).
  const uint pk_at = attn_staged_at(attn_tile_at / TUPE_D4);
  vec4 pkg[TILE_GROUPS];
  if (TUPE_STAGE_PK && TILE_SHUFFLE > 0) {
    [[unroll]] for (uint g = 0; g < TILE_GROUPS; ++g) pkg[g] = attn_tile_group(pk_at, TUPE_D4, g);
  }
  [[unroll]] for (uint c = 0; c < TUPE_D4; ++c) {
    vec4 pkc[ATTN_SLOT_HEADS];
    [[unroll]] for (uint e = 0; e < ATTN_SLOT_HEADS; ++e) {
      pkc[e] = TUPE_STAGE_PK ? ATTN_TILE_CHUNK(pkg, pk_at, c)
                             : ATTN_LOAD_CHUNK(pk, pk_c, ATTN_EXTRA_OFF_S(2) + tupe_row(attn_h[e], kpos), c);
    }
    const vec4 kc = attn_k_chunk(c);
    [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] += dot(attn_q[r * QW + c], kc) + dot(tupe_pq[r * TUPE_D4 + c], pkc[r % ATTN_SLOT_HEADS]);
  }
  [[unroll]] for (uint r = 0; r < ROWS; ++r) dots[r] *= pc.scale;
}

float tupe_term(uint r, uint h, uint qpos, uint kpos) { return near_entry(r, kpos); }
#define ATTN_SCORES(kpos, dots) tupe_scores(kpos, dots)
#define ATTN_FAR_BEGIN(side) t5_far_begin(side)
#define ATTN_FAR_SCORE_TERM(r, kpos) t5_far[r]

#elif defined(PEBENCH_ATTN_FLASH_GPU_GLSL)
// This lane's chunks of its row's pq[h, i'] row, times scale; the untied
// term is added to the lane's partial dot, so it needs no reduction of its own.
vec4 tupe_pq[LC];

void tupe_row_state(uint r, uint h, uint qpos) {
  t5_row_state(r, h, qpos);
  const uint base = tupe_row(h, qpos);
  [[unroll]] for (uint t = 0; t < LC; ++t) {
    const uint c = gpu_chunk(t);
    tupe_pq[t] = c < D4P ? ATTN_LOAD_CHUNK(pq, pq_c, ATTN_EXTRA_OFF_S(1) + base, c) * pc.scale : vec4(0.0);
  }
}
float tupe_partial(uint kpos, uint t, uint c) {
  return dot(tupe_pq[t], ATTN_LOAD_CHUNK(pk, pk_c, ATTN_EXTRA_OFF_S(2) + tupe_row(gpu_h, kpos), c));
}
float tupe_term(uint r, uint h, uint qpos, uint kpos) { return t5_bias(r, kpos); }
#define GPU_PARTIAL(kpos, t, c, kc) tupe_partial(kpos, t, c)
#else
void tupe_row_state(uint r, uint h, uint qpos) { t5_row_state(r, h, qpos); }

// Naive: the untied term is part of the content score (capped by softcap
// with q.k: ATTN_CONTENT_TERM), the table's bias the position-only term.
float tupe_untied(uint h, uint qpos, uint kpos) {
  const uint qbase = tupe_row(h, qpos), kbase = tupe_row(h, kpos);
  float acc = 0.0;
  [[unroll]] for (uint c = 0; c < TUPE_D4; ++c) acc += dot(ATTN_LOAD_CHUNK(pq, pq_c, ATTN_EXTRA_OFF_S(1) + qbase, c), ATTN_LOAD_CHUNK(pk, pk_c, ATTN_EXTRA_OFF_S(2) + kbase, c));
  return pc.scale * acc;
}
float tupe_term(uint r, uint h, uint qpos, uint kpos) { return t5_bias(r, kpos); }
#define ATTN_CONTENT_TERM(r, h, qpos, kpos) tupe_untied(h, qpos, kpos)
#endif

#define ATTN_ROW_STATE(r, h, qpos) tupe_row_state(r, h, qpos)
#define ATTN_SCORE_TERM(r, h, qpos, kpos) tupe_term(r, h, qpos, kpos)

#endif
