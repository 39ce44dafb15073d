// Workgroup size and the grid-stride loop shared by pebench kernels.
//
// The host picks the workgroup size (specialization constant 0) from the
// device's limits and launches only as many groups as fill the device
// (harness/launch.h); each invocation then loops over items. On lavapipe
// every workgroup costs tens of microseconds, so few groups with many items
// each are much faster than one group per row.
#ifndef PEBENCH_GRID_GLSL
#define PEBENCH_GRID_GLSL

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

#define GRID_STRIDE (gl_NumWorkGroups.x * gl_WorkGroupSize.x)
#define FOR_EACH_ITEM(i, n) for (uint i = gl_GlobalInvocationID.x; i < (n); i += GRID_STRIDE)

// a / b (b > 0) where a < 2^24, as the items of a one-pass launch are
// (LaunchPlanner::one_pass_groups): a float estimate, within one of the
// quotient for b >= 2 (exact for b = 1), then corrected. On lavapipe an
// integer division is a scalar division per lane; this is a few vector
// operations (abs.sinusoidal: about 5% of its time, docs/lavapipe.md).
uint one_pass_div(uint a, uint b) {
  uint q = uint(float(a) * (1.0 / float(b)));
  if (q * b > a) q -= 1u;
  if ((q + 1u) * b <= a) q += 1u;
  return q;
}

#endif
