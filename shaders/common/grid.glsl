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

#endif
