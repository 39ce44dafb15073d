#version 450
// attn.shaw, naive pass 3: o_i = sum_j p_ij (v_j + rel_v[idx]), the value
// term in pv.glsl's second loop over the keys.
#extension GL_EXT_control_flow_attributes : require
vec4 shaw_value(uint qpos, uint kpos, uint c);
#define ATTN_VALUE_TERM(h, qpos, kpos, c) shaw_value(qpos, kpos, c)
#include "attn/pv.glsl"

layout(constant_id = 6) const uint SHAW_K = 16;  // max_rel (variant constants from id 6)

layout(std430, binding = ATTN_PV_EXTRA_BINDING0) readonly buffer RelV { STORAGE_T rel_v[]; };
layout(std430, binding = ATTN_PV_EXTRA_BINDING0) readonly buffer RelV4 { STORAGE_VEC4 rel_v4[]; };

// rel_v[clip(kpos - qpos, -K, K) + K], chunk c (VEC4) or element c.
vec4 shaw_value(uint qpos, uint kpos, uint c) {
  const uint idx = uint(clamp(int(kpos) - int(qpos), -int(SHAW_K), int(SHAW_K)) + int(SHAW_K));
  return VEC4 ? vec4(rel_v4[idx * (HEAD_DIM / 4) + c]) : vec4(float(rel_v[idx * HEAD_DIM + c]), 0.0, 0.0, 0.0);
}
