// encodings.md "Masks and modifiers", the shader side of attn_mask.h: the
// visibility rule of window W, chunk C and sink tokens S on top of the
// causal (or full) base, the key ranges a tile of rows must fold (flash
// skips the rest), and the score modifier softcap, all from specialization
// constants (0: off; the host's AttnCase::add_mask_constants). A kernel
// without them compiles what it did before: every range function folds to
// the causal cut, and the test to kpos <= qpos.
// Include after the push block (pc.causal, pc.kv_seq).
#ifndef PEBENCH_ATTN_MASK_GLSL
#define PEBENCH_ATTN_MASK_GLSL

layout(constant_id = 33) const uint MASK_WINDOW = 0;
layout(constant_id = 34) const uint MASK_CHUNK = 0;
layout(constant_id = 35) const uint MASK_SINKS = 0;
// softcap c > 0: the content score t becomes c tanh(t / c).
layout(constant_id = 36) const float MASK_SOFTCAP = 0.0;
// window or chunk: keys before the causal cut may be hidden.
const bool MASK_LOCAL = MASK_WINDOW > 0 || MASK_CHUNK > 0;
const bool MASK_ON = MASK_LOCAL || MASK_SINKS > 0;

// base(i', j) and (local(i', j) or j < S). Visible keys of a causal mask
// have j <= i', so |i' - j| serves both forms of the window.
bool attn_mask_visible(uint qpos, uint kpos) {
  const bool base = pc.causal == 0 || kpos <= qpos;
  const uint dist = qpos > kpos ? qpos - kpos : kpos - qpos;
  const bool local = (MASK_WINDOW == 0 || dist < MASK_WINDOW) && (MASK_CHUNK == 0 || kpos / MASK_CHUNK == qpos / MASK_CHUNK);
  return base && (local || kpos < MASK_SINKS);
}

// The test of a key in a range that straddles a boundary of the mask: the
// causal cut alone where no mask is on (only causal cases have such ranges).
bool attn_key_visible(uint qpos, uint kpos) { return MASK_ON ? attn_mask_visible(qpos, kpos) : kpos <= qpos; }

// AttnMask::local_begin / local_end / sink_end (attn_mask.cc), keys of M.
uint attn_local_begin(uint qpos) {
  uint lo = 0;
  if (MASK_WINDOW > 0) lo = max(lo, qpos + 1 > MASK_WINDOW ? qpos + 1 - MASK_WINDOW : 0u);
  if (MASK_CHUNK > 0) lo = max(lo, qpos / MASK_CHUNK * MASK_CHUNK);
  return min(lo, pc.kv_seq);
}
uint attn_local_end(uint qpos) {
  uint hi = pc.causal != 0 ? qpos + 1 : pc.kv_seq;
  if (MASK_WINDOW > 0 && pc.causal == 0) hi = min(hi, qpos + MASK_WINDOW);
  if (MASK_CHUNK > 0) hi = min(hi, qpos / MASK_CHUNK * MASK_CHUNK + MASK_CHUNK);
  return min(hi, pc.kv_seq);
}
uint attn_sink_end(uint qpos) { return min(MASK_SINKS, pc.causal != 0 ? qpos + 1 : pc.kv_seq); }

// AttnMask::tile_ranges for the rows at positions [p0, p1], cut to the keys
// [kb, ke) of a split: the sink keys [kb, sink_end) and the local keys
// [begin, end), of which every row sees [all_begin, all_end); only the rest
// needs the per-element test (attn_key_visible), and no other key is read.
struct AttnKeyRanges {
  uint sink_end, begin, all_begin, all_end, end;
};
AttnKeyRanges attn_key_ranges(uint p0, uint p1, uint kb, uint ke) {
  AttnKeyRanges r;
  const uint begin = attn_local_begin(p0);
  uint end = max(begin, attn_local_end(p1));
  const uint all_begin = clamp(attn_local_begin(p1), begin, end);
  const uint all_end = clamp(attn_local_end(p0), all_begin, end);
  const uint se = attn_sink_end(p1);
  end = max(end, se);
  r.sink_end = clamp(min(se, begin), kb, ke);
  r.begin = clamp(begin, kb, ke);
  r.end = clamp(end, r.begin, ke);
  r.all_begin = clamp(all_begin, r.begin, r.end);
  r.all_end = clamp(all_end, r.all_begin, r.end);
  return r;
}

// softcap on the content score t (before the position-only bias).
// (tanh's argument clamped: tanh(15) is 1 in f32, and a tanh built from
// exponentials would give inf / inf past that.)
float attn_softcap(float t) { return MASK_SOFTCAP > 0.0 ? MASK_SOFTCAP * tanh(clamp(t / MASK_SOFTCAP, -15.0, 15.0)) : t; }
// The score of a visible key from its content score t and the variant's
// term b: the term is a position-only bias (ATTN_TERM_IS_BIAS: ALiBi, T5,
// TUPE's table) added after the cap, else part of the content score.
#define ATTN_MODIFIED_SCORE(t, b) (ATTN_TERM_IS_BIAS ? attn_softcap(t) + (b) : attn_softcap((t) + (b)))

// sink_logits: MASK_SINK_LOGITS (the host sets it where the case has the
// input sinks [H]) reads sinks in the storage dtype at binding
// ATTN_SINK_BINDING, after every variant's own (the host pads the bindings
// between, and binds v there when the case has no sinks: one build serves
// both). A row starts its online softmax at m = sinks[h], l = 1 (the spec's
// flash start). The packed and texel builds leave the binding out (a device
// that needs packing reports sink_logits as unsupported).
#define ATTN_SINK_BINDING 11
layout(constant_id = 37) const bool MASK_SINK_LOGITS = false;
#if !defined(ATTN_PACKED) && !defined(ATTN_TEXEL)
layout(std430, binding = ATTN_SINK_BINDING) readonly buffer Sinks { STORAGE_T attn_sinks[]; };
#define ATTN_SINK_LOGITS MASK_SINK_LOGITS
float attn_sink_logit(uint h) { return float(attn_sinks[h]); }
#else
#define ATTN_SINK_LOGITS false
float attn_sink_logit(uint h) { return 0.0; }
#endif

#endif
