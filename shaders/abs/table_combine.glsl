// abs.learned / abs.multiplicative: y = TABLE_COMBINE(x, table[offset + n])
// (encodings.md section 1). Define TABLE_COMBINE(x, t) (float or vec4)
// before including. One item per (position n, channel group), looping over
// the batch so each table element is read once. With VEC4 (d % 4 == 0) an
// item is 4 channels through vec4 views of the same buffers: on lavapipe one
// vec4 access costs about what one scalar access does.
#include "common/storage.glsl"
#include "common/grid.glsl"

#ifndef TABLE_COMBINE
#error "define TABLE_COMBINE(x, t) before including abs/table_combine.glsl"
#endif

layout(constant_id = 1) const bool VEC4 = false;

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
layout(std430, binding = 1) readonly buffer Table { STORAGE_T table[]; };
layout(std430, binding = 1) readonly buffer Table4 { STORAGE_VEC4 table4[]; };
layout(std430, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, binding = 2) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };

layout(push_constant) uniform Push {
  uint batch;
  uint seq;
  uint d_model;
  uint offset;
} pc;

void main() {
  const uint width = VEC4 ? 4 : 1;
  const uint items = pc.seq * pc.d_model / width;
  const uint table_base = pc.offset * pc.d_model / width;
  FOR_EACH_ITEM(i, items) {
    if (VEC4) {
      const vec4 t = vec4(table4[table_base + i]);
      for (uint b = 0, j = i; b < pc.batch; ++b, j += items) y4[j] = STORAGE_VEC4(TABLE_COMBINE(vec4(x4[j]), t));
    } else {
      const float t = float(table[table_base + i]);
      for (uint b = 0, j = i; b < pc.batch; ++b, j += items) y[j] = STORAGE_T(TABLE_COMBINE(float(x[j]), t));
    }
  }
}
