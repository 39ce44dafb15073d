#version 450
// attn.fire pre-pass 3, for the CPU flash kernel (fire_hooks.glsl, "Segments"):
// the MLP of one scalar u as a sum of ramps sorted by where they start.
// Each hidden unit is a ramp c max(u - beta, 0) plus a linear part
// (fire_hooks.glsl), so for head h
//   bias(u) = alpha u + gamma + sum_k c_k max(u - beta_k, 0).
// With the units sorted by beta, and p of them known to be on (u >= beta)
// over a run of keys, bias(u) = A[p] u + G[p] + the rest's ramps, where
//   A[p] = alpha + sum_{k<p} c_k,   G[p] = gamma - sum_{k<p} c_k beta_k.
// Writes into fire_mlp after [w1 W | b1 W | w2 H W | b2 H]:
//   beta sorted [W + FIRE_WINDOW] (padded with ramps that never start),
//   per head h: c in beta's order [W + FIRE_WINDOW] (padded with 0),
//   A [W + 1], G [W + 1].
// One invocation a head; each sorts the W breakpoints itself (W <= 256).
#extension GL_EXT_control_flow_attributes : require
#include "common/grid.glsl"

layout(std430, binding = 0) buffer Mlp { float mlp[]; };
layout(constant_id = 1) const uint FIRE_WIDTH = 32;
const uint FIRE_WINDOW = 4;  // fire_hooks.glsl's FIRE_WINDOW, attn_fire.cc's kFireWindow

layout(push_constant) uniform Push {
  uint heads;  // H
} pc;

// W a function, not a const: a const of the spec constant takes over its
// name in the SPIR-V.
uint fire_width() { return FIRE_WIDTH; }
#define W fire_width()

// As fire_hooks.glsl: a unit whose |w1| is at most 1e-30 |b1| is a constant.
bool fire_flat(float w1, float b1) { return abs(w1) * 1e30 <= abs(b1); }

void main() {
  const uint H = pc.heads;
  const uint sorted = 2u * W + H * W + H;  // beta sorted
  FOR_EACH_ITEM(h, H) {
    float beta[FIRE_WIDTH];
    uint order[FIRE_WIDTH];
    for (uint k = 0; k < W; ++k) {
      const float w1 = mlp[k], b1 = mlp[W + k];
      const float b = fire_flat(w1, b1) ? 0.0 : -b1 / w1;
      // Insertion sort, stable: the units in beta's order.
      uint at = k;
      for (; at > 0 && beta[at - 1] > b; --at) {
        beta[at] = beta[at - 1];
        order[at] = order[at - 1];
      }
      beta[at] = b;
      order[at] = k;
    }
    float alpha = 0.0, gamma = mlp[2u * W + H * W + h];
    const uint head = sorted + W + FIRE_WINDOW + h * (3u * W + FIRE_WINDOW + 2u);
    for (uint k = 0; k < W; ++k) {
      const float w1 = mlp[k], b1 = mlp[W + k], w2 = mlp[2u * W + h * W + k];
      const bool constant = fire_flat(w1, b1);
      gamma += constant ? w2 * max(b1, 0.0) : (w1 < 0.0 ? w2 * b1 : 0.0);
      alpha -= (constant || w1 >= 0.0) ? 0.0 : w2 * abs(w1);
    }
    float a = alpha, g = gamma;  // A[p], G[p]
    for (uint p = 0; p < W; ++p) {
      const uint k = order[p];
      const float w1 = mlp[k], b1 = mlp[W + k], w2 = mlp[2u * W + h * W + k];
      const float c = fire_flat(w1, b1) ? 0.0 : w2 * abs(w1);
      if (h == 0) mlp[sorted + p] = beta[p];
      mlp[head + p] = c;
      mlp[head + W + FIRE_WINDOW + p] = a;
      mlp[head + 2u * W + FIRE_WINDOW + 1u + p] = g;
      a += c;
      g -= c * beta[p];
    }
    mlp[head + 2u * W + FIRE_WINDOW] = a;
    mlp[head + 3u * W + FIRE_WINDOW + 1u] = g;
    for (uint q = 0; q < FIRE_WINDOW; ++q) {
      if (h == 0) mlp[sorted + W + q] = 3.0e38;  // starts past every u (0 <= u <= 1)
      mlp[head + W + q] = 0.0;
    }
  }
}
