// Fused ("flash") attention, part 1 of 2: interface and state. A variant's
// kernel is a small .comp file:
//
//   #version 450
//   #define ATTN_EXTRA_PUSH ...          (optional, before this include)
//   #include "attn/flash_decl.glsl"
//   ... the variant's bindings (from ATTN_EXTRA_BINDING0), functions, hooks
//   #include "attn/flash_main.glsl"
//
// Hooks (all optional; docs/attention-kernels.md):
//   ATTN_EXTRA_PUSH                   push-constant members after the common ones
//   ATTN_ROW_STATE(r, h, qpos)        once per row slot: load per-row state
//   ATTN_Q_ROW_TRANSFORM(r, qpos)     the raw q row of slot r (attn_q[r * D4P + c]) once
//                                     loaded, before scaling (RoPE)
//   ATTN_K_ROW_TRANSFORM(kpos)        a k row loaded whole into attn_k[c] (direct mode)
//   ATTN_K_STAGE_TRANSFORM(kpos, c, x, base)  one k chunk as it is staged (staged mode)
//   ATTN_KEY_PREPARE(kpos)            once per key before its scores, outside any
//                                     per-row branch: per-key state the rows share
//                                     (TUPE's pk rows)
//   ATTN_SCORE_TERM(r, h, qpos, kpos) float added to scale * q.k of a visible key;
//                                     attn_q_chunk(r, c) is the scaled q row
//   ATTN_VALUE_TERM(r, h, qpos, kpos, c)  vec4 added to v's chunk c, weighted like v
// Loops marked [[unroll]] have specialization-constant trip counts and are
// unrolled by the driver's compiler (SPIR-V Unroll): hooks should use such
// loops over chunks so that row data stays in registers.
//
// Layout: one invocation owns ROWS query rows (q, scaled, and the f32
// accumulator in registers), so the online softmax needs no cross-invocation
// reductions, and each K/V element it reads serves ROWS rows. Rows of a
// workgroup are the G = H/Hkv query heads of one kv head at consecutive
// positions (row r of the group: i = r / G, h = kvh*G + r % G), so GQA and
// MQA reuse every K/V element across heads.
#ifndef PEBENCH_ATTN_FLASH_DECL_GLSL
#define PEBENCH_ATTN_FLASH_DECL_GLSL

#extension GL_EXT_control_flow_attributes : require
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
const uint D4P = (HEAD_DIM + 3) / 4;  // vec4 chunks per row
#define ATTN_ROW_SLOTS ROWS

layout(std430, binding = 0) readonly buffer Q { STORAGE_T q[]; };
layout(std430, binding = 0) readonly buffer QV { ATTN_CHUNK_T q_c[]; };
layout(std430, binding = 1) readonly buffer K { STORAGE_T k[]; };
layout(std430, binding = 1) readonly buffer KV { ATTN_CHUNK_T k_c[]; };
layout(std430, binding = 2) readonly buffer V { STORAGE_T v[]; };
layout(std430, binding = 2) readonly buffer VV { ATTN_CHUNK_T v_c[]; };
layout(std430, binding = 3) writeonly buffer O { STORAGE_T o[]; };
layout(std430, binding = 3) writeonly buffer OV { ATTN_CHUNK_T o_c[]; };
// Split-K partials (flash-decoding), [splits, B*H*N]: (m, l) and the
// unnormalised accumulator.
layout(std430, binding = 4) writeonly buffer PartML { vec2 part_ml[]; };
layout(std430, binding = 5) writeonly buffer PartAcc { vec4 part_acc[]; };
#define ATTN_EXTRA_BINDING0 6

#ifndef ATTN_EXTRA_PUSH
#define ATTN_EXTRA_PUSH
#endif

layout(push_constant) uniform Push {
  uint heads;           // H
  uint kv_heads;        // Hkv
  uint seq;             // N
  uint kv_seq;          // M
  uint causal;
  float scale;
  uint keys_per_split;  // keys of one split (all M when splits == 1)
  uint splits;          // > 1: write partials for attn_combine
  uint total_rows;      // B*H*N
  ATTN_EXTRA_PUSH
} pc;

// Staged K/V tiles (f32: the K transform's output is not rounded).
shared vec4 tile_k[DIRECT ? 1 : BC * D4P];
shared vec4 tile_v[DIRECT ? 1 : BC * D4P];

// The invocation's rows: q (scaled) and the output accumulators, slot r at
// [r * D4P, (r + 1) * D4P).
vec4 attn_q[ROWS * D4P];
vec4 attn_acc[ROWS * D4P];

// Per row slot: head, position i', running max m and sum l.
uint attn_h[ROWS], attn_qpos[ROWS];
float attn_m[ROWS], attn_l[ROWS];
// The key being folded in: its k (transformed) and v rows.
vec4 attn_k[D4P], attn_v[D4P];

vec4 attn_q_chunk(uint r, uint c) { return attn_q[r * D4P + c]; }

#endif
