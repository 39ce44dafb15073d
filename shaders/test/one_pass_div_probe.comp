// Test probe for one_pass_div (common/grid.glsl): out[k] = one_pass_div(a[k],
// b[k]), which tests/grid_test.cc compares with integer division. Not a
// benchmark variant.
#version 450
#include "common/grid.glsl"

layout(std430, binding = 0) readonly buffer Pairs { uvec2 pairs[]; };  // (a, b)
layout(std430, binding = 1) writeonly buffer Quotients { uint quotients[]; };

layout(push_constant) uniform Push {
  uint items;
} pc;

void main() {
  FOR_EACH_ITEM(k, pc.items) quotients[k] = one_pass_div(pairs[k].x, pairs[k].y);
}
