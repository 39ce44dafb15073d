#version 450
// abs.conv_grouped: wav2vec2's convolutional position embedding
// (encodings.md section 1): y = x + gelu(conv(x)) with
//   conv[n,o] = bias[o] + sum_c sum_t w[o,c,t] x[n + t - K/2, g*Cg + c],
// Cg = d/G input channels in output channel o's group g, zero padding.
//
// Tiling. A workgroup owns one batch entry, TN = WG*RN consecutive positions
// and TO = 4*RO4 output channels of one group. It walks the group's input
// channels in chunks of CC: each chunk stages x (TN positions plus the halo,
// zeros outside [0, N)) and w (as [c][t][o], taps padded with zeros to KP, a
// multiple of 4) in shared memory; then every invocation accumulates RN
// consecutive positions x TO channels in registers. Because its positions
// are consecutive, a register window of RN+4 inputs slides along the taps:
// 4 taps cost one vec4 read of x, 4*RO4 vec4 reads of w (the same address
// in every invocation: a broadcast on GPUs) and 16*RN*RO4 FMAs. On lavapipe
// every shared or buffer access is a loop over the SIMD lanes, so that ratio
// sets the speed: RN = 32, RO4 = 1 measured fastest there (RN = 4, 8, 16,
// 64 and RO4 = 2 were slower).
//
// RN and RO4 are compile-time constants: glslc unrolls the [[unroll]] loops
// over them, so the window and accumulators are registers (Mesa 22.3 kept
// loops bounded by specialization constants as loops: 3x slower). The host
// (src/suites/abs/abs_conv_grouped.cc, which mirrors RN and RO4) picks WG from
// the device, CC from its shared memory (16 KiB / 128 invocations suffice)
// and checks the loop iterations that remain (the chunk, staging, channel
// and 4-tap loops) against llvmpipe's limit.
#extension GL_EXT_control_flow_attributes : require
#include "common/storage.glsl"
#include "common/erf.glsl"

const uint RN = 32;   // positions per invocation (a multiple of 4)
const uint RO4 = 1;  // vec4s of output channels per invocation
const uint TO = 4 * RO4;

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const uint CC = 4;         // input channels per staged chunk
layout(constant_id = 2) const uint K = 128;        // kernel
layout(constant_id = 3) const uint TN = 1024;      // positions per workgroup = WG * RN
layout(constant_id = 4) const bool VEC4 = false;   // Cg % 4 == 0: x, bias, y as vec4 in the epilogue
layout(constant_id = 5) const bool XVEC4 = false;  // VEC4 and CC % 4 == 0: x staged as vec4
layout(constant_id = 6) const bool WVEC4 = false;  // K % 4 == 0: w staged as vec4

const uint KP = (K + 3) / 4 * 4;  // taps padded with zero weights
const uint XS_LEN = TN + KP;      // staged positions per channel: n0 - K/2 + [0, XS_LEN)

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
layout(std430, binding = 1) readonly buffer W { STORAGE_T w[]; };  // [d, Cg, K]
layout(std430, binding = 1) readonly buffer W4 { STORAGE_VEC4 w4[]; };
layout(std430, binding = 2) readonly buffer Bias { STORAGE_T bias[]; };
layout(std430, binding = 2) readonly buffer Bias4 { STORAGE_VEC4 bias4[]; };
layout(std430, binding = 3) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, binding = 3) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };

layout(push_constant) uniform Push {
  uint seq;
  uint d_model;
  uint cg;        // channels per group, d / G
  uint oc_tiles;  // ceil(cg / TO): output-channel tiles per group
} pc;

shared vec4 xs[CC * XS_LEN / 4];  // [c][position], 4 positions a vec4
shared vec4 ws[CC * KP * RO4];    // [c][t][output channel / 4]

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint wg = gl_WorkGroupSize.x;
  const uint b = gl_WorkGroupID.z;
  const uint g = gl_WorkGroupID.y / pc.oc_tiles;
  const uint o_tile = (gl_WorkGroupID.y % pc.oc_tiles) * TO;  // first output channel, within the group
  const uint n0 = gl_WorkGroupID.x * TN;
  const uint cin0 = g * pc.cg;  // the group's first input (and output) channel
  const int halo = int(K / 2);
  const uint batch_row = b * pc.seq;

  // Staged positions the active invocations read: a short sequence (or the
  // last tile) leaves the rest of the tile unstaged.
  const uint xs_used = min(TN, (pc.seq - n0 + RN - 1) / RN * RN) + KP;

  vec4 acc[RN][RO4];
  [[unroll]] for (uint r = 0; r < RN; ++r) {
    [[unroll]] for (uint j = 0; j < RO4; ++j) acc[r][j] = vec4(0.0);
  }

  for (uint c0 = 0; c0 < pc.cg; c0 += CC) {
    const uint cn = min(CC, pc.cg - c0);
    barrier();  // the previous chunk's reads are done
    // Staging. Divisors are specialization constants (no per-lane integer
    // division); channels past the chunk's cn, output channels past the
    // group's end and taps past K are staged as zeros.
    if (XVEC4) {
      // A unit is 4 positions x 4 channels: 4 vec4 reads along channels,
      // transposed into 4 vec4 writes along positions.
      const uint units = xs_used / 4 * (CC / 4);
      for (uint i = lid; i < units; i += wg) {
        const uint c4 = i % (CC / 4), pos = 4 * (i / (CC / 4));
        vec4 v[4];
        [[unroll]] for (uint q = 0; q < 4; ++q) {
          const int n = int(n0 + pos + q) - halo;
          v[q] = vec4(0.0);
          if (4 * c4 < cn && n >= 0 && n < int(pc.seq)) {
            v[q] = vec4(x4[((batch_row + uint(n)) * pc.d_model + cin0 + c0) / 4 + c4]);
          }
        }
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          xs[((4 * c4 + j) * XS_LEN + pos) / 4] = vec4(v[0][j], v[1][j], v[2][j], v[3][j]);
        }
      }
    } else {
      for (uint i = lid; i < xs_used * CC; i += wg) {
        const uint c = i % CC, pos = i / CC;
        const int n = int(n0 + pos) - halo;
        float v = 0.0;
        if (c < cn && n >= 0 && n < int(pc.seq)) v = float(x[(batch_row + uint(n)) * pc.d_model + cin0 + c0 + c]);
        const uint at = c * XS_LEN + pos;
        xs[at / 4][at % 4] = v;
      }
    }
    if (WVEC4) {
      // A unit is 4 output channels x 4 taps of one input channel: 4 vec4
      // reads along taps, transposed into 4 vec4 writes along channels.
      const uint units = RO4 * CC * (KP / 4);
      for (uint i = lid; i < units; i += wg) {
        const uint t4 = i % (KP / 4), rest = i / (KP / 4);
        const uint c = rest % CC, o4 = rest / CC;
        vec4 v[4];
        [[unroll]] for (uint q = 0; q < 4; ++q) {
          const uint o = o_tile + 4 * o4 + q;  // within the group
          v[q] = vec4(0.0);
          if (c < cn && o < pc.cg) v[q] = vec4(w4[((cin0 + o) * pc.cg + c0 + c) * (K / 4) + t4]);
        }
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          ws[(c * KP + 4 * t4 + j) * RO4 + o4] = vec4(v[0][j], v[1][j], v[2][j], v[3][j]);
        }
      }
    } else {
      // A unit is 4 output channels of one (input channel, tap).
      const uint units = RO4 * CC * KP;
      for (uint i = lid; i < units; i += wg) {
        const uint t = i % KP, rest = i / KP;
        const uint c = rest % CC, o4 = rest / CC;
        vec4 v = vec4(0.0);
        [[unroll]] for (uint q = 0; q < 4; ++q) {
          const uint o = o_tile + 4 * o4 + q;
          if (c < cn && o < pc.cg && t < K) v[q] = float(w[((cin0 + o) * pc.cg + c0 + c) * K + t]);
        }
        ws[(c * KP + t) * RO4 + o4] = v;
      }
    }
    barrier();

    // Invocations whose positions all lie past the sequence end skip the
    // work (whole SIMD groups / warps of them at once).
    const uint my_cn = n0 + lid * RN < pc.seq ? cn : 0;
    for (uint c = 0; c < my_cn; ++c) {
      const uint xb = (c * XS_LEN + lid * RN) / 4;  // this invocation's first position, in vec4s
      const uint wb = c * KP * RO4;
      // win[i] = x at position (this invocation's first) + t + i.
      float win[RN + 4];
      [[unroll]] for (uint i = 0; i < RN / 4; ++i) {
        const vec4 v = xs[xb + i];
        [[unroll]] for (uint q = 0; q < 4; ++q) win[4 * i + q] = v[q];
      }
      for (uint t = 0; t < KP; t += 4) {
        const vec4 next = xs[xb + (t + RN) / 4];
        [[unroll]] for (uint q = 0; q < 4; ++q) win[RN + q] = next[q];
        [[unroll]] for (uint u = 0; u < 4; ++u) {
          [[unroll]] for (uint j = 0; j < RO4; ++j) {
            const vec4 wv = ws[wb + (t + u) * RO4 + j];
            [[unroll]] for (uint r = 0; r < RN; ++r) acc[r][j] = fma(vec4(win[r + u]), wv, acc[r][j]);
          }
        }
        [[unroll]] for (uint i = 0; i < RN; ++i) win[i] = win[i + 4];
      }
    }
  }

  // Invocations past the sequence end and channels past the group's end
  // only helped staging.
  [[unroll]] for (uint j = 0; j < RO4; ++j) {
    const uint o = o_tile + 4 * j;  // within the group
    if (o < pc.cg) {
      const uint lanes = min(4u, pc.cg - o);
      vec4 bv = vec4(0.0);
      if (VEC4) {
        bv = vec4(bias4[(cin0 + o) / 4]);
      } else {
        [[unroll]] for (uint i = 0; i < 4; ++i) {
          if (i < lanes) bv[i] = float(bias[cin0 + o + i]);
        }
      }
      [[unroll]] for (uint r = 0; r < RN; ++r) {
        const uint n = n0 + lid * RN + r;
        if (n < pc.seq) {
          const uint base = (batch_row + n) * pc.d_model + cin0 + o;
          const vec4 g_out = gelu_erf(acc[r][j] + bv);
          if (VEC4) {
            y4[base / 4] = STORAGE_VEC4(vec4(x4[base / 4]) + g_out);
          } else {
            [[unroll]] for (uint i = 0; i < 4; ++i) {
              if (i < lanes) y[base + i] = STORAGE_T(float(x[base + i]) + g_out[i]);
            }
          }
        }
      }
    }
  }
}
