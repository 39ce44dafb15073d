#version 450
// abs.recurrent, impl=sequential: the linear recurrence P[k+1] = R P[k],
// P[0] = (0, 1) per pair, stepped position by position as the survey
// describes it (encodings.md section 1): on pair t,
//   (s, c) -> (s cos th_t + c sin th_t, c cos th_t - s sin th_t),
// with (sin th_t, cos th_t) rounded to f32 on the host and an f32 state.
// Each invocation owns one pair (VEC4: two adjacent pairs, one vec4 of pos)
// and steps k in [k_begin, k_end); positions k >= offset are written:
// pos[k - offset] = P[k] and y[b, k - offset] = x[b, k - offset] + P[k].
// The steps before the offset have a loop of their own: on llvmpipe a loop
// inside a branch no lane takes still costs its exit test every step.
// The host splits long runs over several dispatches (llvmpipe stops loops
// after 65535 iterations per invocation); the f32 state is carried between
// them in `state`, so the arithmetic is the same unbroken recurrence.
#include "common/storage.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const bool VEC4 = false;

layout(std430, binding = 0) readonly buffer X2 { STORAGE_VEC2 x2[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
// rot_state: per pair (sin th_t, cos th_t), then the state after them (at
// pair group pc.groups), both f32: one binding, so that the kernel binds 4
// storage buffers (the Android baseline).
layout(std430, binding = 1) readonly buffer Rot { vec4 rot4[]; };
layout(std430, binding = 1) readonly buffer Rot2 { vec2 rot2[]; };
layout(std430, binding = 1) buffer State { vec4 state4_at[]; };  // P[k_begin] in, P[k_end] out
layout(std430, binding = 1) buffer State2 { vec2 state2_at[]; };
layout(std430, binding = 2) writeonly buffer Pos2 { STORAGE_VEC2 pos2[]; };
layout(std430, binding = 2) writeonly buffer Pos4 { STORAGE_VEC4 pos4[]; };
layout(std430, binding = 3) writeonly buffer Y2 { STORAGE_VEC2 y2[]; };
layout(std430, binding = 3) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };

layout(push_constant) uniform Push {
  uint batch;
  uint seq;
  uint groups;  // pair groups per position: d/4 (VEC4) or d/2
  uint offset;
  uint k_begin;
  uint k_end;
} pc;

#define state4 (state4_at[pc.groups + g])
#define state2 (state2_at[pc.groups + g])

// One step on a pair, in the order of the definition.
vec2 step_pair(vec2 sc, vec2 r) {
  return vec2(sc.x * r.y + sc.y * r.x, sc.y * r.y - sc.x * r.x);
}

void main() {
  const uint g = gl_GlobalInvocationID.x;
  if (g >= pc.groups) return;
  const uint batch_stride = pc.seq * pc.groups;
  if (VEC4) {
    const vec4 r = rot4[g];
    vec4 p = pc.k_begin == 0 ? vec4(0, 1, 0, 1) : state4;
    for (uint k = pc.k_begin; k < min(pc.k_end, pc.offset); ++k) {
      p = vec4(step_pair(p.xy, r.xy), step_pair(p.zw, r.zw));
    }
    for (uint k = max(pc.k_begin, pc.offset); k < pc.k_end; ++k) {
      const uint i = (k - pc.offset) * pc.groups + g;
      pos4[i] = STORAGE_VEC4(p);
      for (uint b = 0, j = i; b < pc.batch; ++b, j += batch_stride) y4[j] = STORAGE_VEC4(vec4(x4[j]) + p);
      p = vec4(step_pair(p.xy, r.xy), step_pair(p.zw, r.zw));
    }
    state4 = p;
  } else {
    const vec2 r = rot2[g];
    vec2 p = pc.k_begin == 0 ? vec2(0, 1) : state2;
    for (uint k = pc.k_begin; k < min(pc.k_end, pc.offset); ++k) p = step_pair(p, r);
    for (uint k = max(pc.k_begin, pc.offset); k < pc.k_end; ++k) {
      const uint i = (k - pc.offset) * pc.groups + g;
      pos2[i] = STORAGE_VEC2(p);
      for (uint b = 0, j = i; b < pc.batch; ++b, j += batch_stride) y2[j] = STORAGE_VEC2(vec2(x2[j]) + p);
      p = step_pair(p, r);
    }
    state2 = p;
  }
}
