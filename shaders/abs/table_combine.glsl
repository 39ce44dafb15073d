// abs.learned / abs.multiplicative: y = TABLE_COMBINE(x, table[offset + n])
// (encodings.md section 1). Define TABLE_COMBINE(x, t) (float or vec4)
// before including. One item per (position n, channel group), looping over
// the batch so each table element is read once (or, ONE_PASS, one per
// batch row too). With VEC4 (d % 4 == 0) an
// item is 4 channels through vec4 views of the same buffers: on lavapipe one
// vec4 access costs about what one scalar access does.
#extension GL_EXT_control_flow_attributes : require
#include "common/storage.glsl"
#include "common/grid.glsl"

#ifndef TABLE_COMBINE
#error "define TABLE_COMBINE(x, t) before including abs/table_combine.glsl"
#endif

layout(constant_id = 1) const bool VEC4 = false;
// ONE_PASS: the host launched one invocation per UNROLL items (batch rows
// included), so there is no loop: an invocation takes items a grid apart,
// as `pebench peak`'s copy does. On lavapipe a loop around the accesses
// costs (docs/lavapipe.md); the table is then read once per batch row.
layout(constant_id = 2) const bool ONE_PASS = false;
layout(constant_id = 3) const uint UNROLL = 1;

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

// Item j of batch row b at element (or vec4) b * items + i, table entry t.
void combine(uint j, uint t) {
  if (VEC4) {
    y4[j] = STORAGE_VEC4(TABLE_COMBINE(vec4(x4[j]), vec4(table4[t])));
  } else {
    y[j] = STORAGE_T(TABLE_COMBINE(float(x[j]), float(table[t])));
  }
}

void main() {
  const uint width = VEC4 ? 4 : 1;
  const uint items = pc.seq * pc.d_model / width;
  const uint table_base = pc.offset * pc.d_model / width;
  if (ONE_PASS) {
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
      const uint j = gl_GlobalInvocationID.x + u * GRID_STRIDE;
      if (j < pc.batch * items) combine(j, table_base + j % items);
    }
    return;
  }
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
