#version 450
// abs.floater, step 1 of 3, once per layer m (0, 1): the ODE's weights in
// the layout the integrator reads. w_m [d, d+1] rows are d+1 long, so the
// P-block w_m[:, :d] is copied to rows padded to a multiple of 4 (zeros)
// for vec4 dot products, and the t column and bias go to a table; all
// converted to f32 once. The matrices are stored by vec4 column block, then
// row, so that the integrator's invocations (one row each) read neighbouring
// vec4s. Both layers' results share one buffer, `weights` (the integrator
// then binds 4 storage buffers, the Android baseline's limit):
//   weights[0, 2 dp d)     wp   [2, dp/4, d, 4]: wp[m, i, j, :] = w_m[j, 4i:4i+4] (zeros past d)
//   weights[2 dp d, +4 d)  vecs [4, d]:          w1[:, d], b1, w2[:, d], b2
// dp = d rounded up to 4.
#include "common/storage.glsl"
#include "common/grid.glsl"

layout(std430, binding = 0) readonly buffer W { STORAGE_T w[]; };
layout(std430, binding = 1) readonly buffer B { STORAGE_T b[]; };
layout(std430, binding = 2) writeonly buffer Weights { float weights[]; };

layout(push_constant) uniform Push {
  uint d;
  uint dp;
  uint m;  // the layer
} pc;

void main() {
  const uint d = pc.d, dp = pc.dp;
  const uint matrix_items = d * dp;
  FOR_EACH_ITEM(i, matrix_items + d) {
    if (i < matrix_items) {
      const uint j = (i / 4) % d;
      const uint k = i / (4 * d) * 4 + i % 4;
      weights[pc.m * matrix_items + i] = k >= d ? 0.0 : float(w[j * (d + 1) + k]);
    } else {
      const uint j = i - matrix_items;
      const uint vecs = 2 * matrix_items + 2 * pc.m * d;
      weights[vecs + j] = float(w[j * (d + 1) + d]);
      weights[vecs + d + j] = float(b[j]);
    }
  }
}
