#version 450
// attn.fire pre-pass 1: copies two of the MLP's inputs into fire_mlp
// [w1 W | b1 W | w2 H W | b2 H] at `offset` (run twice: w1 and b1, then w2
// and b2), so that the table pass and the kernels bind one buffer for the
// whole MLP (phones allow 4 storage buffers a stage).
#include "common/grid.glsl"

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Mlp { float mlp[]; };

layout(push_constant) uniform Push {
  uint na;      // elements of a
  uint nb;      // elements of b
  uint offset;  // where a goes in mlp; b follows it
} pc;

void main() {
  FOR_EACH_ITEM(i, pc.na + pc.nb) mlp[pc.offset + i] = i < pc.na ? a[i] : b[i - pc.na];
}
