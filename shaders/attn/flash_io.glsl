// The flash kernels' tensors and push constants, shared by the CPU build
// (flash_decl.glsl) and the GPU build (flash_gpu_decl.glsl): q, k, v and o
// as scalars and as ATTN_CHUNK_T chunks, the split-K partials, the first
// binding a variant's own tensors take, and the push block. Include after
// STORAGE_T, ATTN_CHUNK_T and ATTN_PUSH_SHAPE are defined.
#ifndef ATTN_FLASH_IO_GLSL
#define ATTN_FLASH_IO_GLSL

layout(std430, binding = 0) readonly buffer Q { STORAGE_T q[]; };
layout(std430, binding = 0) readonly buffer QV { ATTN_CHUNK_T q_c[]; };
#ifdef ATTN_TEXEL
// The CPU kernel's texel build: k and v as storage texel buffers of vec4
// texels in the storage dtype (attn_util.glsl, ATTN_TEXEL; the host's
// AttnCase::texel_build_fits): llvmpipe fetches a texel for all lanes at
// once, where a storage-buffer read at a different address in each lane is
// a loop over the lanes (docs/lavapipe.md).
layout(ATTN_TEXEL_FORMAT, binding = 1) readonly uniform imageBuffer k_texels;
layout(ATTN_TEXEL_FORMAT, binding = 2) readonly uniform imageBuffer v_texels;
#define ATTN_K_CHUNK(base, c) ATTN_LOAD_TEXEL(k_texels, base, c)
#define ATTN_V_CHUNK(base, c) ATTN_LOAD_TEXEL(v_texels, base, c)
#else
layout(std430, binding = 1) readonly buffer K { STORAGE_T k[]; };
layout(std430, binding = 1) readonly buffer KV { ATTN_CHUNK_T k_c[]; };
layout(std430, binding = 2) readonly buffer V { STORAGE_T v[]; };
layout(std430, binding = 2) readonly buffer VV { ATTN_CHUNK_T v_c[]; };
#define ATTN_K_CHUNK(base, c) ATTN_LOAD_CHUNK(k, k_c, base, c)
#define ATTN_V_CHUNK(base, c) ATTN_LOAD_CHUNK(v, v_c, base, c)
#endif
#include "attn/attn_pack.glsl"
#ifdef ATTN_PACKED
#define ATTN_PACK_BINDING 3
#define ATTN_ML_BINDING 3
#define ATTN_ACC_BINDING 3
#else
#define ATTN_ML_BINDING 4
#define ATTN_ACC_BINDING 5
#define ATTN_EXTRA_BINDING0 6
#endif
layout(std430, binding = 3) writeonly buffer O { STORAGE_T o[]; };
layout(std430, binding = 3) writeonly buffer OV { ATTN_CHUNK_T o_c[]; };
// Split-K partials (flash-decoding), [splits, B*H*N]: (m, l) and the
// unnormalised accumulator (QW chunks a row).
layout(std430, binding = ATTN_ML_BINDING) writeonly buffer PartML { vec2 part_ml[]; };
layout(std430, binding = ATTN_ACC_BINDING) writeonly buffer PartAcc { vec4 part_acc[]; };
// Where o and the partials start (elements; 0 unless packed).
#define ATTN_O_OFF ATTN_PACK_OFF(ATTN_PACK_OUT, STORAGE_BYTES)
#define ATTN_ML_OFF ATTN_PACK_OFF(ATTN_PACK_ML, 8u)
#define ATTN_ACC_OFF ATTN_PACK_OFF(ATTN_PACK_ACC, 16u)

#ifndef ATTN_EXTRA_PUSH
#define ATTN_EXTRA_PUSH
#endif

layout(push_constant) uniform Push {
  ATTN_PUSH_SHAPE
  uint keys_per_split;  // keys of one split (all M when splits == 1)
  uint splits;          // > 1: write partials for attn_combine
  uint total_rows;      // B*H*N
  ATTN_EXTRA_PUSH
} pc;

// The row of q and o (B*H*N rows) of query head h at query index i (i' = i +
// M - N) in this workgroup's batch: the flash grid's y is batch * kv head.
uint attn_q_row(uint h, uint i) { return ((gl_WorkGroupID.y / pc.kv_heads) * pc.heads + h) * pc.seq + i; }
// The same row by query position qpos = i'.
uint attn_q_row_at(uint h, uint qpos) { return attn_q_row(h, qpos - (pc.kv_seq - pc.seq)); }

#endif
