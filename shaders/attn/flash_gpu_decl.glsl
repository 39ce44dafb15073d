// Fused ("flash") attention for GPUs, part 1 of 2: interface and state.
// The CPU kernel (flash_decl.glsl / flash_main.glsl) gives each invocation
// several whole query rows, which suits llvmpipe (loads are per-lane gathers,
// registers are cheap) but needs 2 D floats of registers per row: on a GPU
// that spills from D = 64 on. Here a query row is owned by LANES consecutive
// invocations (a cluster inside one subgroup), each holding LC = D4P / LANES
// vec4 chunks of q and of the accumulator (chunk c = t LANES + lane, so a
// cluster's loads are contiguous); a score is the sum of the lanes' partial
// dots (subgroupShuffleXor, or shared memory where the device has no
// shuffles: ATTN_GPU_SHARED_REDUCE, a separate build because the shuffle
// capability may not even be declared there). ROWS_WG = wg / LANES query rows
// of a workgroup share every K/V tile staged in shared memory.
//
//   #version 450
//   [#define ATTN_GPU_SHARED_REDUCE]   (attn_flash_gpusm_<v>.comp)
//   [#define ATTN_EXTRA_PUSH ...] [#define ATTN_PARTS 2]
//   #include "attn/flash_gpu_decl.glsl"
//   #include "attn/<v>_hooks.glsl"     (its PEBENCH_ATTN_FLASH_GPU_GLSL branch)
//   #include "attn/flash_gpu_main.glsl"
//
// Hooks (all optional; a row is one slot, r = 0):
//   ATTN_ROW_STATE(r, h, qpos)         once per row: per-row scalars (ALiBi's slope, T5's base)
//   ATTN_SCORE_TERM(r, h, qpos, kpos)  float added to a visible key's reduced score
//   ATTN_CONTENT_TERM(r, content)      as flash_decl.glsl's (after the reduction, each group
//                                      of four keys in the kernel's key order)
//   ATTN_KEYS_LAST_TO_FIRST            as flash_decl.glsl's (groups of four and tiles from
//                                      the last down)
//   GPU_Q_CHUNK(c, x, base, qpos)      q chunk c (row at element base) as it is loaded,
//                                      before scaling (RoPE, XL's q + u)
//   GPU_K_CHUNK(kpos, c, x, base)      k chunk c as it is staged or loaded (RoPE)
//   GPU_PARTIAL(kpos, t, c, kc)        float added to the lane's partial dot for local
//                                      chunk t (global c) of key kpos (its k chunk kc,
//                                      transformed), before the reduction:
//                                      extra D-wide dots cost no extra reduction (TUPE,
//                                      DeBERTa, Shaw, XL)
//   GPU_VALUE_TERM(kpos, c)            vec4 weighted like v's chunk c (Shaw's rel_v)
//   ATTN_PARTS, ATTN_{Q,K,V}_PART, ATTN_STORE_PART  as in flash_decl.glsl (complex)
//   GPU_SCORE_PARTS / GPU_DOTS(t, kc, sp) / GPU_SCORE(sp)  a non-additive score: GPU_DOTS
//                                      adds local chunk t's dots of the key's parts kc[]
//                                      into sp[GPU_SCORE_PARTS] (reduced each), GPU_SCORE
//                                      makes the score from them (complex's |re + i im|)
#ifndef PEBENCH_ATTN_FLASH_GPU_GLSL
#define PEBENCH_ATTN_FLASH_GPU_GLSL

#extension GL_EXT_control_flow_attributes : require
#ifndef ATTN_GPU_SHARED_REDUCE
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#include "common/storage.glsl"
#include "attn/attn_util.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const uint HEAD_DIM = 64;
layout(constant_id = 2) const uint BC = 32;      // keys per staged tile (a multiple of 4)
layout(constant_id = 3) const bool VEC4 = true;  // HEAD_DIM % 4 == 0: chunked loads and stores
// Invocations per query row: a power of two, at most the subgroup size
// (shuffle reduction), dividing the workgroup size.
layout(constant_id = 4) const uint LANES = 8;
// false: staged K/V tiles shared by the workgroup's rows; true (decode):
// every cluster of LANES invocations is its own key split, reading K/V
// straight from memory.
layout(constant_id = 5) const bool DIRECT = false;
const uint D4P = (HEAD_DIM + 3) / 4;          // vec4 chunks per row
const uint LC = (D4P + LANES - 1) / LANES;   // chunks per lane
#define ATTN_ROW_SLOTS 1
#ifndef ATTN_PARTS
#define ATTN_PARTS 1
#endif
const uint QW = ATTN_PARTS * D4P;  // partials' chunks per row (attn_combine)

#include "attn/flash_io.glsl"

// Staged K/V tiles, key j's part p at (j ATTN_PARTS + p) D4P (f32: the K
// transform's output is not rounded).
shared vec4 tile_k[DIRECT ? 1 : BC * QW];
shared vec4 tile_v[DIRECT ? 1 : BC * QW];

// This lane's share of its row: q (scaled) and the accumulators, local chunk
// t of part p at p LC + t; the row's head, position i', running max and sum
// (the same in every lane of the cluster).
vec4 gpu_q[ATTN_PARTS * LC];
vec4 gpu_acc[ATTN_PARTS * LC];
uint gpu_h, gpu_qpos, gpu_lane;
float gpu_m, gpu_l;

// Global chunk of local chunk t (may be >= D4P: a padding chunk, zeros).
uint gpu_chunk(uint t) { return t * LANES + gpu_lane; }

#endif
