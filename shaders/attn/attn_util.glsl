// Small definitions every attention kernel shares.
#ifndef PEBENCH_ATTN_UTIL_GLSL
#define PEBENCH_ATTN_UTIL_GLSL

#include "common/storage.glsl"

// The score of a masked key and the start of a running max: the spec's
// -inf, kept finite so that no step can form inf - inf. Real scores are far
// above ATTN_VISIBLE; exp(ATTN_MASKED - m) underflows to 0 like exp(-inf).
const float ATTN_MASKED = -1.0e30;
const float ATTN_VISIBLE = -1.0e29;  // s > ATTN_VISIBLE: the key is visible
const float ATTN_WEIGHT_UNDERFLOW = -64.0;  // exp(s - m) of s - m below this is 0 (attn_weight)

// The push constants every attention kernel starts with, in the order
// AttnShape::push (attn_common.cc) packs them.
#define ATTN_PUSH_SHAPE \
  uint heads;    /* H */   \
  uint kv_heads; /* Hkv */ \
  uint seq;      /* N */   \
  uint kv_seq;   /* M */   \
  uint causal;             \
  float scale;

// exp(s - m) for a visible score, exactly 0 for a masked one (lavapipe's exp
// clamps its argument, so exp(-1e30) alone would be 2^-127, not 0), and 0
// where s - m < -64: such a weight is below 2^-92 of the running max's, so
// the flush moves no result by more than M 2^-92 of it, far below f32
// rounding. At -64, not at -87 where e^(s - m) turns denormal, w v stays a
// normal float for |v| >= 2^-34 (every f16 v): llvmpipe does not flush
// denormals, the CPU takes a slow path on each, and ALiBi's distant keys
// made w v denormal often enough to cost attn.alibi 7% (N = M = 2048 D 64).
// Written as a select, llvmpipe also compiles the CPU flash kernel's fold
// 16-25% faster (attn.nope; docs/attention-kernels.md, "The weight's
// underflow"). A select still computes exp in every lane, so its argument is
// clamped at -64 too: llvmpipe's exp of s - m below about -87 (most of
// ALiBi's distant keys, and every masked one) builds a denormal result that
// an Intel CPU makes with a microcode assist in each lane; unclamped,
// attn.alibi flash ran 21-40% over attn.nope on an Intel Xeon VM, clamped 1-5%.
float attn_weight(float s, float m) {
  const float d = s - m;
  return s > ATTN_VISIBLE && d > ATTN_WEIGHT_UNDERFLOW ? exp(max(d, ATTN_WEIGHT_UNDERFLOW)) : 0.0;
}
vec4 attn_weight4(vec4 s, vec4 m) {
  return vec4(attn_weight(s.x, m.x), attn_weight(s.y, m.y), attn_weight(s.z, m.z), attn_weight(s.w, m.w));
}

// Four consecutive stored elements as one access.
#define ATTN_CHUNK_T STORAGE_VEC4
#define ATTN_CHUNK_LOAD(x4) vec4(x4)
#define ATTN_CHUNK_STORE(val) STORAGE_VEC4(val)

// Chunk c (4 dims, zero past HEAD_DIM) of the row starting at element `base`
// of a storage buffer seen as scalars (`buf`) and as vec4s (`bufc`). VEC4
// and HEAD_DIM come from the kernel that expands it.
#define ATTN_LOAD_CHUNK(buf, bufc, base, c)                                             \
  (VEC4 ? ATTN_CHUNK_LOAD(bufc[(base) / 4 + (c)])                                       \
        : vec4(4 * (c) + 0 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 0]) : 0.0,         \
               4 * (c) + 1 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 1]) : 0.0,         \
               4 * (c) + 2 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 2]) : 0.0,         \
               4 * (c) + 3 < HEAD_DIM ? float(buf[(base) + 4 * (c) + 3]) : 0.0))

// Texel builds (`// pebench-build: texel ATTN_TEXEL`, chosen by the host:
// AttnTerm::flash_cpu_texel_tensors) read some tensors as storage texel
// buffers of vec4 texels in the storage dtype: llvmpipe fetches a texel for
// all lanes at once, where a storage-buffer read at a different address in
// each lane is a loop over the lanes (docs/lavapipe.md). The chunk c of the
// row starting at element `base` (a multiple of 4: VEC4 only).
#ifdef ATTN_TEXEL
#ifdef ATTN_PACKED
#error "texel builds bind their tensors unpacked"
#endif
#ifdef STORAGE_F16
#define ATTN_TEXEL_FORMAT rgba16f
#else
#define ATTN_TEXEL_FORMAT rgba32f
#endif
#define ATTN_LOAD_TEXEL(img, base, c) imageLoad(img, int((base) / 4 + (c)))
#endif

// The inverse, a statement: stores vec4 `y` as chunk c of the row starting at
// element `base`, dropping what lies past HEAD_DIM.
#define ATTN_STORE_CHUNK(buf, bufc, base, c, y)                                          \
  {                                                                                      \
    if (VEC4) {                                                                          \
      bufc[(base) / 4 + (c)] = ATTN_CHUNK_STORE(y);                                      \
    } else {                                                                             \
      [[unroll]] for (uint u = 0; u < 4; ++u) {                                          \
        if (4 * (c) + u < HEAD_DIM) buf[(base) + 4 * (c) + u] = STORAGE_T((y)[u]);       \
      }                                                                                  \
    }                                                                                    \
  }

#endif
