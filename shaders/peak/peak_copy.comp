#version 450
// `pebench peak`: read+write bandwidth, dst = src through vec4 views (on
// lavapipe one vec4 access costs about what one scalar access does, so vec4
// is the device's widest cheap access). A grid-stride loop whose body copies
// UNROLL vec4s one grid stride apart, so neighbouring invocations touch
// neighbouring addresses (what a GPU wants) and each loop iteration (which
// llvmpipe charges for) moves UNROLL x 16 bytes per invocation.
#extension GL_EXT_control_flow_attributes : require
#include "common/grid.glsl"

layout(constant_id = 1) const uint UNROLL = 1;
// The grid covers the copy in one pass (UNROLL vec4s per invocation): no
// loop. On lavapipe a loop around memory accesses costs: the same copy with
// the loop (one iteration) ran up to 10% slower (docs/lavapipe.md).
layout(constant_id = 2) const bool ONE_PASS = false;

layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { vec4 dst[]; };

layout(push_constant) uniform Push {
  uint n;  // vec4 elements
} pc;

void main() {
  const uint stride = GRID_STRIDE;
  if (ONE_PASS) {
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
      const uint j = gl_GlobalInvocationID.x + u * stride;
      if (j < pc.n) dst[j] = src[j];
    }
    return;
  }
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride * UNROLL) {
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
      const uint j = i + u * stride;
      if (j < pc.n) dst[j] = src[j];
    }
  }
}
