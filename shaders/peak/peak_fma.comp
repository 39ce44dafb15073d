#version 450
// `pebench peak`: FMA throughput. Every invocation runs CHAINS independent
// vec4 multiply-add chains (independent so that the latency of one FMA hides
// behind the others; vec4 so that a CPU device's SIMD width counts), STEPS
// unrolled FMAs per chain per loop iteration, `iters` iterations, and writes
// the sum so that nothing is dead code. The f32 build computes in float, the
// f16 build (STORAGE_F16) in float16_t. b and c come from push constants so
// the compiler cannot fold the chains; with b < 1 a chain converges to
// c / (1 - b) and never overflows or goes denormal. CHAINS and STEPS are
// mirrored in harness/peak.h (the flop count); tests/peak_test.cc checks the
// results against the closed form, so the two cannot drift apart.
#extension GL_EXT_control_flow_attributes : require
#ifdef STORAGE_F16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define FMA_VEC4 f16vec4
#else
#define FMA_VEC4 vec4
#endif
#include "common/grid.glsl"

#define CHAINS 8
#define STEPS 16

layout(std430, binding = 0) writeonly buffer Result { vec4 result[]; };

layout(push_constant) uniform Push {
  uint iters;
  float b;
  float c;
} pc;

void main() {
  const FMA_VEC4 b = FMA_VEC4(pc.b), c = FMA_VEC4(pc.c);
  FMA_VEC4 a[CHAINS];
  [[unroll]] for (uint k = 0; k < CHAINS; ++k) a[k] = FMA_VEC4(float((gl_GlobalInvocationID.x + k) & 255u) / 256.0);
  for (uint i = 0; i < pc.iters; ++i) {
    [[unroll]] for (uint s = 0; s < STEPS; ++s) {
      [[unroll]] for (uint k = 0; k < CHAINS; ++k) a[k] = fma(a[k], b, c);
    }
  }
  FMA_VEC4 sum = a[0];
  [[unroll]] for (uint k = 1; k < CHAINS; ++k) sum += a[k];
  result[gl_GlobalInvocationID.x] = vec4(sum);
}
