#version 450
// abs.conv: depthwise convolution with zero padding plus the residual
// (encodings.md section 1):
//   y[n,c] = x[n,c] + bias[c] + sum_t w[c,t] x[n + t - (K-1)/2, c].
// An item is (batch b, block of P consecutive positions, 4 channels). Its P
// outputs stay in registers while the loop walks the K taps; a register
// window of P inputs slides one position per tap, so a tap costs one x
// access and the 4 channels' weights, and each output one y access
// (lavapipe pays per access: docs/lavapipe.md). With VEC4 (d % 4 == 0) x and
// y are accessed as vec4; otherwise the item's up to 4 channels one by one.
// P is a compile-time constant so the loops over it unroll into registers;
// the tap loop (K iterations per item) and the grid-stride loop are what
// the host counts against llvmpipe's loop limit.
#extension GL_EXT_control_flow_attributes : require
#include "common/storage.glsl"
#include "common/grid.glsl"

const uint P = 16;  // positions per item; keep in sync with src/suites/abs/abs_conv.cc

layout(constant_id = 1) const bool VEC4 = false;

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
layout(std430, binding = 1) readonly buffer W { STORAGE_T w[]; };  // [d, K]
layout(std430, binding = 2) readonly buffer Bias { STORAGE_T bias[]; };
layout(std430, binding = 3) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, binding = 3) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };

layout(push_constant) uniform Push {
  uint batch;
  uint seq;
  uint d_model;
  uint kernel;    // K, odd
  uint blocks;    // ceil(seq / P)
  uint channel4;  // ceil(d_model / 4)
} pc;

// Channels [c, c + lanes) at position n of the batch entry starting at row
// batch_row; zero outside [0, seq).
vec4 load_x(uint batch_row, int n, uint c, uint lanes) {
  if (n < 0 || n >= int(pc.seq)) return vec4(0.0);
  const uint base = (batch_row + uint(n)) * pc.d_model + c;
  if (VEC4) return vec4(x4[base / 4]);
  vec4 v = vec4(0.0);
  [[unroll]] for (uint i = 0; i < 4; ++i) {
    if (i < lanes) v[i] = float(x[base + i]);
  }
  return v;
}

void main() {
  const uint half_k = (pc.kernel - 1) / 2;
  FOR_EACH_ITEM(item, pc.batch * pc.blocks * pc.channel4) {
    const uint c = 4 * (item % pc.channel4);
    const uint rest = item / pc.channel4;
    const int n0 = int((rest % pc.blocks) * P);
    const uint batch_row = (rest / pc.blocks) * pc.seq;
    const uint lanes = min(4u, pc.d_model - c);

    vec4 acc[P];
    {
      vec4 b4 = vec4(0.0);
      [[unroll]] for (uint i = 0; i < 4; ++i) {
        if (i < lanes) b4[i] = float(bias[c + i]);
      }
      [[unroll]] for (uint p = 0; p < P; ++p) acc[p] = b4;
    }
    // At tap t, win[p] = x at position n0 + p + t - half_k, output p's input.
    vec4 win[P];
    [[unroll]] for (uint p = 0; p + 1 < P; ++p) win[p] = load_x(batch_row, n0 + int(p) - int(half_k), c, lanes);
    for (uint t = 0; t < pc.kernel; ++t) {
      win[P - 1] = load_x(batch_row, n0 + int(P - 1 + t) - int(half_k), c, lanes);
      vec4 wt = vec4(0.0);
      [[unroll]] for (uint i = 0; i < 4; ++i) {
        if (i < lanes) wt[i] = float(w[(c + i) * pc.kernel + t]);
      }
      [[unroll]] for (uint p = 0; p < P; ++p) acc[p] = fma(wt, win[p], acc[p]);
      if (t == half_k) {  // the centre tap's inputs are the residual
        [[unroll]] for (uint p = 0; p < P; ++p) acc[p] += win[p];
      }
      [[unroll]] for (uint p = 0; p + 1 < P; ++p) win[p] = win[p + 1];
    }

    [[unroll]] for (uint p = 0; p < P; ++p) {
      const int n = n0 + int(p);
      if (n < int(pc.seq)) {
        const uint base = (batch_row + uint(n)) * pc.d_model + c;
        if (VEC4) {
          y4[base / 4] = STORAGE_VEC4(acc[p]);
        } else {
          [[unroll]] for (uint i = 0; i < 4; ++i) {
            if (i < lanes) y[base + i] = STORAGE_T(acc[p][i]);
          }
        }
      }
    }
  }
}
