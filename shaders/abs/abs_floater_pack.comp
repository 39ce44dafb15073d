#version 450
// abs.floater, step 1 of 3: the ODE's weights in the layout the integrator
// reads. w1, w2 [d, d+1] rows are d+1 long, so their P-blocks w[:, :d] are
// copied to rows padded to a multiple of 4 (zeros) for vec4 dot products,
// and the t columns and biases go to one table; all converted to f32 once.
// The matrices are stored by vec4 column block, then row, so that the
// integrator's invocations (one row each) read neighbouring vec4s.
//   wp   [2, dp/4, d, 4]: wp[m, i, j, :] = w_m[j, 4i:4i+4] (zeros past d), dp = d rounded up to 4
//   vecs [4, d]:     w1[:, d], b1, w2[:, d], b2
#include "common/storage.glsl"
#include "common/grid.glsl"

layout(std430, binding = 0) readonly buffer W1 { STORAGE_T w1[]; };
layout(std430, binding = 1) readonly buffer B1 { STORAGE_T b1[]; };
layout(std430, binding = 2) readonly buffer W2 { STORAGE_T w2[]; };
layout(std430, binding = 3) readonly buffer B2 { STORAGE_T b2[]; };
layout(std430, binding = 4) writeonly buffer Wp { float wp[]; };
layout(std430, binding = 5) writeonly buffer Vecs { float vecs[]; };

layout(push_constant) uniform Push {
  uint d;
  uint dp;
} pc;

void main() {
  const uint d = pc.d, dp = pc.dp;
  const uint matrix_items = 2 * d * dp;
  FOR_EACH_ITEM(i, matrix_items + d) {
    if (i < matrix_items) {
      const uint m = i / (d * dp);
      const uint j = (i / 4) % d;
      const uint k = (i % (d * dp)) / (4 * d) * 4 + i % 4;
      const uint src = j * (d + 1) + k;
      wp[i] = k >= d ? 0.0 : float(m == 0 ? w1[src] : w2[src]);
    } else {
      const uint j = i - matrix_items;
      vecs[j] = float(w1[j * (d + 1) + d]);
      vecs[d + j] = float(b1[j]);
      vecs[2 * d + j] = float(w2[j * (d + 1) + d]);
      vecs[3 * d + j] = float(b2[j]);
    }
  }
}
