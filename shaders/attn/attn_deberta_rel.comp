#version 450
// pebench-build: shuffle REL_SHUFFLE
// attn.deberta pre-pass: one of DeBERTa's position tables, as HF computes
// them with a matmul before gathering (encodings.md section 3):
//   c2p[b,h,i,w] = scale q[b,h,i] . kr[h, idx_lo + w]      (x = q, rel = kr)
//   p2c[b,h,j,w] = scale k[b,h/G,j] . qr[h, idx_lo + w]    (x = k, rel = qr)
// for the R = width rows idx_lo .. idx_lo + R - 1 of kr/qr that the case's
// distances use. Grid: x = tiles of ROWS * wg rows, y = b * H + h, z =
// column chunks. An invocation keeps ROWS rows of x in registers (row
// tile0 + r * wg + lid, as the flash kernel lays out its row slots) and
// walks the columns: every kr/qr chunk it loads serves ROWS rows (on CPU
// devices, where each load inside a loop is a per-lane gather, that is what
// keeps this pass small next to the attention). On a GPU a long row held in
// registers spills (D 256: 64 vec4 = every VGPR), so there X_IN_REGS = false
// reads the row's chunks as the columns need them: one row per invocation,
// re-read from the cache for every column. CPU devices take the shuffle
// build where the width allows four columns at a time (REL_SHUFFLE, below).
#extension GL_EXT_control_flow_attributes : require
#ifdef REL_SHUFFLE
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#include "common/storage.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const uint HEAD_DIM = 64;
layout(constant_id = 2) const bool VEC4 = true;  // HEAD_DIM % 4 == 0
layout(constant_id = 3) const uint ROWS = 1;     // rows of x per invocation
layout(constant_id = 4) const bool X_IN_REGS = true;  // hold the rows of x in registers (else: ROWS == 1)
// The host's promise that the width and every z group's columns are
// multiples of 4: then each row's results go out four columns to a vec4
// store. On CPU devices a store whose address differs between invocations
// is a loop over the lanes: attn.deberta 1-3% faster at N = M = 2048
// (docs/attention-kernels.md, "DeBERTa's tables").
layout(constant_id = 5) const bool COLS4 = false;
const uint D4 = (HEAD_DIM + 3) / 4;
#ifdef REL_SHUFFLE
// The shuffle build (CPU devices, COLS4, full subgroups): the subgroup size.
// Lane l reads chunks g * SHUFFLE + l of each of the four rel rows, and
// subgroupShuffle hands every lane the chunk it needs. Inside the column
// loop llvmpipe reads a buffer one lane at a time, so reading every chunk
// in every lane cost 16 accesses a row against 2 (D 64): attn.deberta
// 307-312 against 327-330 ms at N = M = 2048 (docs/attention-kernels.md,
// "DeBERTa's tables").
layout(constant_id = 6) const uint SHUFFLE = 8;
const uint REL_GROUPS = (D4 + SHUFFLE - 1) / SHUFFLE;
#define REL_CHUNK(q, c) subgroupShuffle(rg[(q) * REL_GROUPS + (c) / SHUFFLE], (c) % SHUFFLE)
#else
const uint REL_GROUPS = 1;
#define REL_CHUNK(q, c) CHUNK(rel, rel_c, rbase + (q) * HEAD_DIM, c)
#endif

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };  // q [B,H,N,D] or k [B,Hkv,M,D]
layout(std430, binding = 0) readonly buffer XV { STORAGE_VEC4 x_c[]; };
layout(std430, binding = 1) readonly buffer Rel { STORAGE_T rel[]; };  // kr or qr [H, 2S, D]
layout(std430, binding = 1) readonly buffer RelV { STORAGE_VEC4 rel_c[]; };
layout(std430, binding = 2) writeonly buffer Table { float table[]; };  // [B, H, rows, width]
layout(std430, binding = 2) writeonly buffer Table4 { vec4 table4[]; };

layout(push_constant) uniform Push {
  uint heads;     // H
  uint x_heads;   // heads of x: H (q) or Hkv (k)
  uint rows;      // rows of x per head: N or M
  uint two_s;     // rows of kr/qr per head: 2S
  uint idx_lo;    // first kr/qr row in use
  uint width;     // R: kr/qr rows in use
  uint columns;   // columns per z group
  float scale;
} pc;

#define CHUNK(buf, bufc, base, c)                                                     \
  (VEC4 ? vec4(bufc[(base) / 4 + (c)])                                                \
        : vec4(4 * (c) + 0 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 0]) : 0.0,       \
               4 * (c) + 1 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 1]) : 0.0,       \
               4 * (c) + 2 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 2]) : 0.0,       \
               4 * (c) + 3 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 3]) : 0.0))

void main() {
  const uint wg = gl_WorkGroupSize.x;
  const uint row0 = gl_WorkGroupID.x * wg * ROWS + gl_LocalInvocationID.x;
  const uint b = gl_WorkGroupID.y / pc.heads, h = gl_WorkGroupID.y % pc.heads;
  const uint xh = h / (pc.heads / pc.x_heads);
  vec4 xr[ROWS * D4];
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    const uint i = min(row0 + r * wg, pc.rows - 1);  // idle slots shadow the last row, store nothing
    const uint xbase = ((b * pc.x_heads + xh) * pc.rows + i) * HEAD_DIM;
    if (X_IN_REGS) {
      [[unroll]] for (uint c = 0; c < D4; ++c) xr[r * D4 + c] = CHUNK(x, x_c, xbase, c) * pc.scale;
    }
  }
  const uint xbase0 = ((b * pc.x_heads + xh) * pc.rows + min(row0, pc.rows - 1)) * HEAD_DIM;

  const uint w0 = gl_WorkGroupID.z * pc.columns;
  const uint w1 = min(pc.width, w0 + pc.columns);
  const uint out0 = (gl_WorkGroupID.y * pc.rows + row0) * pc.width;
  if (COLS4 && X_IN_REGS) {
    for (uint w = w0; w < w1; w += 4) {
      const uint rbase = (h * pc.two_s + pc.idx_lo + w) * HEAD_DIM;
      vec4 acc[ROWS];
      [[unroll]] for (uint r = 0; r < ROWS; ++r) acc[r] = vec4(0.0);
#ifdef REL_SHUFFLE
      vec4 rg[4 * REL_GROUPS];
      [[unroll]] for (uint q = 0; q < 4; ++q) {
        [[unroll]] for (uint g = 0; g < REL_GROUPS; ++g) {
          rg[q * REL_GROUPS + g] = CHUNK(rel, rel_c, rbase + q * HEAD_DIM, min(g * SHUFFLE + gl_SubgroupInvocationID, D4 - 1));
        }
      }
#endif
      [[unroll]] for (uint c = 0; c < D4; ++c) {
        const vec4 r0 = REL_CHUNK(0, c), r1 = REL_CHUNK(1, c), r2 = REL_CHUNK(2, c), r3 = REL_CHUNK(3, c);
        [[unroll]] for (uint r = 0; r < ROWS; ++r) {
          const vec4 xc = xr[r * D4 + c];
          acc[r] += vec4(dot(xc, r0), dot(xc, r1), dot(xc, r2), dot(xc, r3));
        }
      }
      [[unroll]] for (uint r = 0; r < ROWS; ++r) {
        if (row0 + r * wg < pc.rows) table4[(out0 + r * wg * pc.width + w) / 4] = acc[r];
      }
    }
    return;
  }
  for (uint w = w0; w < w1; ++w) {
    const uint rbase = (h * pc.two_s + pc.idx_lo + w) * HEAD_DIM;
    float acc[ROWS];
    [[unroll]] for (uint r = 0; r < ROWS; ++r) acc[r] = 0.0;
    if (X_IN_REGS) {
      [[unroll]] for (uint c = 0; c < D4; ++c) {
        const vec4 rc = CHUNK(rel, rel_c, rbase, c);
        [[unroll]] for (uint r = 0; r < ROWS; ++r) acc[r] += dot(xr[r * D4 + c], rc);
      }
    } else {
      [[unroll]] for (uint c = 0; c < D4; ++c) acc[0] += dot(CHUNK(x, x_c, xbase0, c), CHUNK(rel, rel_c, rbase, c));
      acc[0] *= pc.scale;
    }
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
      if (row0 + r * wg < pc.rows) table[out0 + r * wg * pc.width + w] = acc[r];
    }
  }
}
