#version 450
// abs.floater, step 3 of 3: y[b, n] = x[b, n] + pos[n] for every batch row,
// one vec4 (or, for d % 4 != 0, one element) of a position per item.
#include "common/storage.glsl"
#include "common/grid.glsl"

layout(constant_id = 1) const bool VEC4 = false;

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
layout(std430, binding = 1) readonly buffer Pos { STORAGE_T pos[]; };
layout(std430, binding = 1) readonly buffer Pos4 { STORAGE_VEC4 pos4[]; };
layout(std430, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, binding = 2) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };

layout(push_constant) uniform Push {
  uint batch;
  uint items;  // elements (or vec4s) of pos
} pc;

void main() {
  FOR_EACH_ITEM(i, pc.items) {
    if (VEC4) {
      const vec4 p = vec4(pos4[i]);
      for (uint b = 0, j = i; b < pc.batch; ++b, j += pc.items) y4[j] = STORAGE_VEC4(vec4(x4[j]) + p);
    } else {
      const float p = float(pos[i]);
      for (uint b = 0, j = i; b < pc.batch; ++b, j += pc.items) y[j] = STORAGE_T(float(x[j]) + p);
    }
  }
}
