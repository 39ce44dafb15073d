// encodings.md "Masks and modifiers": the visibility rule of window W,
// chunk C and sink tokens S on top of the causal (or full) base, from
// specialization constants (0: off; the host's AttnMask sets them only
// where one is on, so a kernel without them compiles the plain test).
// Include after the push block (pc.causal).
#ifndef PEBENCH_ATTN_MASK_GLSL
#define PEBENCH_ATTN_MASK_GLSL

layout(constant_id = 33) const uint MASK_WINDOW = 0;
layout(constant_id = 34) const uint MASK_CHUNK = 0;
layout(constant_id = 35) const uint MASK_SINKS = 0;

// base(i', j) and (local(i', j) or j < S). Visible keys of a causal mask
// have j <= i', so |i' - j| serves both forms of the window.
bool attn_mask_visible(uint qpos, uint kpos) {
  const bool base = pc.causal == 0 || kpos <= qpos;
  const uint dist = qpos > kpos ? qpos - kpos : kpos - qpos;
  const bool local = (MASK_WINDOW == 0 || dist < MASK_WINDOW) && (MASK_CHUNK == 0 || kpos / MASK_CHUNK == qpos / MASK_CHUNK);
  return base && (local || kpos < MASK_SINKS);
}

#endif
