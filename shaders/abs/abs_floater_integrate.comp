#version 450
// abs.floater, step 2 of 3: the FLOATER neural ODE dP/dt = h(t, P),
//   h = w2 [relu(w1 [P; t] + b1); t] + b2,  P(0) = p0,
// integrated with classic RK4 in equal steps of `step` = dt / substeps
// (encodings.md section 1), and pos[q - offset] = P(q dt) for q >= offset.
//
// The steps are sequential and each stage needs the whole state, so one
// workgroup integrates the trajectory: the stage input Q and the hidden
// layer H live in shared memory (vec4-padded, zeros past d), each invocation
// owns ROWS channels (j = lane + r * WG), keeps their P and RK4
// accumulator in registers and reads each shared vec4 once for all its
// rows. Per stage: hidden rows (read Q, write H), barrier, output rows
// (read H, write the next Q), barrier. The host splits
// the steps into several dispatches (llvmpipe's loop limit, watchdogs);
// P is carried between them in `state`, in f32.
#include "common/storage.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const uint ROWS = 1;  // channels per invocation
layout(constant_id = 2) const uint DP4 = 1;   // d rounded up to 4, over 4

layout(std430, binding = 0) readonly buffer P0 { STORAGE_T p0[]; };
// `weights` (abs_floater_pack.comp) holds wp [2, DP4, d] vec4s (w1[:, :d],
// w2[:, :d] by vec4 block), then vecs [4, d] (w1[:, d], b1, w2[:, d], b2):
// one binding, so the kernel needs 4 storage buffers (the Android baseline).
layout(std430, binding = 1) readonly buffer Wp { vec4 wp[]; };
layout(std430, binding = 1) readonly buffer Vecs { float vecs_at[]; };
layout(std430, binding = 2) buffer State { float state[]; };  // P at step_begin in, at step_end out
layout(std430, binding = 3) writeonly buffer Pos { STORAGE_T pos[]; };

layout(push_constant) uniform Push {
  uint d;
  uint offset;
  uint substeps;
  uint step_begin;
  uint step_end;
  float step;  // dt / substeps
} pc;

// vecs[i]: the table after both matrices.
#define vecs(i) vecs_at[2 * DP4 * 4 * pc.d + (i)]

shared vec4 q_sh[DP4];
shared vec4 h_sh[DP4];

// This invocation's rows of w1[:, :d] Q (m = 0) or w2[:, :d] H (m = 1):
// each vec4 block of the shared vector is read once for all ROWS rows.
// Rows past d read row d-1 and are discarded.
void rows_dot(uint m, out float s[ROWS]) {
  for (uint r = 0; r < ROWS; ++r) s[r] = 0.0;
  for (uint i = 0; i < DP4; ++i) {
    const vec4 v = m == 0 ? q_sh[i] : h_sh[i];
    for (uint r = 0; r < ROWS; ++r) {
      const uint j = min(gl_LocalInvocationID.x + r * gl_WorkGroupSize.x, pc.d - 1);
      s[r] += dot(wp[m * DP4 * pc.d + i * pc.d + j], v);
    }
  }
}

void write_pos(uint k, float p[ROWS]) {
  const uint q = k / pc.substeps;  // P(q dt) after k steps
  if (k % pc.substeps != 0 || q < pc.offset) return;
  for (uint r = 0; r < ROWS; ++r) {
    const uint j = gl_LocalInvocationID.x + r * gl_WorkGroupSize.x;
    if (j < pc.d) pos[(q - pc.offset) * pc.d + j] = STORAGE_T(p[r]);
  }
}

void main() {
  const uint d = pc.d;
  const float h = pc.step;
  float p[ROWS], acc[ROWS];
  for (uint r = 0; r < ROWS; ++r) {
    const uint j = gl_LocalInvocationID.x + r * gl_WorkGroupSize.x;
    p[r] = j >= d ? 0.0 : pc.step_begin == 0 ? float(p0[j]) : state[j];
    if (j < 4 * DP4) {  // padding lanes keep zeros in both arrays
      q_sh[j / 4][j % 4] = p[r];
      h_sh[j / 4][j % 4] = 0.0;
    }
  }
  barrier();
  if (pc.step_begin == 0) write_pos(0, p);

  for (uint k = pc.step_begin; k < pc.step_end; ++k) {
    const float t = float(k) * h;
    for (uint r = 0; r < ROWS; ++r) acc[r] = 0.0;
    for (uint s = 0; s < 4; ++s) {
      const float ts = s == 0 ? t : s == 3 ? t + h : t + 0.5 * h;
      float dots[ROWS];
      rows_dot(0, dots);
      for (uint r = 0; r < ROWS; ++r) {
        const uint j = gl_LocalInvocationID.x + r * gl_WorkGroupSize.x;
        if (j < d) h_sh[j / 4][j % 4] = max(dots[r] + vecs(j) * ts + vecs(d + j), 0.0);
      }
      barrier();
      rows_dot(1, dots);
      for (uint r = 0; r < ROWS; ++r) {
        const uint j = gl_LocalInvocationID.x + r * gl_WorkGroupSize.x;
        if (j >= d) continue;
        const float slope = dots[r] + vecs(2 * d + j) * ts + vecs(3 * d + j);
        acc[r] += s == 0 || s == 3 ? slope : 2.0 * slope;
        float q;
        if (s == 3) {
          p[r] += h / 6.0 * acc[r];
          q = p[r];
        } else {
          q = p[r] + (s == 2 ? h : 0.5 * h) * slope;
        }
        q_sh[j / 4][j % 4] = q;
      }
      barrier();
    }
    write_pos(k + 1, p);
  }

  for (uint r = 0; r < ROWS; ++r) {
    const uint j = gl_LocalInvocationID.x + r * gl_WorkGroupSize.x;
    if (j < d) state[j] = p[r];
  }
}
