// The optional hooks of the attention kernels (flash_decl.glsl and
// flash_gpu_decl.glsl list them), defaulted where a variant leaves them out
// so that the kernels call every hook site unconditionally: an empty
// statement, the identity or the core's own computation. Include after the
// variant's hooks, before the kernel's main part. Hooks that change which
// code is compiled (ATTN_FAR_SCORE_TERM, ATTN_VALUE_TERM, ATTN_PARTS, ...)
// are not defaulted.
#ifndef PEBENCH_ATTN_HOOK_DEFAULTS_GLSL
#define PEBENCH_ATTN_HOOK_DEFAULTS_GLSL

// Whether ATTN_SCORE_TERM (and ATTN_FAR_SCORE_TERM) is a position-only
// bias, added after softcap (mask.glsl, ATTN_MODIFIED_SCORE).
#ifndef ATTN_TERM_IS_BIAS
#define ATTN_TERM_IS_BIAS false
#endif
#ifndef ATTN_ROW_STATE
#define ATTN_ROW_STATE(r, h, qpos)
#endif
#ifndef ATTN_KEYS_BEGIN
#define ATTN_KEYS_BEGIN(kb, ke)
#endif
#ifndef ATTN_ROWS_FINISH
#define ATTN_ROWS_FINISH()
#endif
#ifndef ATTN_K_ROW_TRANSFORM
#define ATTN_K_ROW_TRANSFORM(kpos)
#endif
#ifndef ATTN_K_STAGE_TRANSFORM
#define ATTN_K_STAGE_TRANSFORM(kpos, c, x, base) (x)
#endif
#ifndef ATTN_STAGE_CHUNK
#define ATTN_STAGE_CHUNK(jt, c, kpos, far)
#endif
#ifndef ATTN_NEAR_BEGIN
#define ATTN_NEAR_BEGIN(k0)
#endif
#ifndef ATTN_NEAR_KEY
#define ATTN_NEAR_KEY(kpos)
#endif
// Staged: whether a key's v chunks are read before its softmax step rather
// than after (flash_main.glsl's attn_fold_key).
#ifndef ATTN_VALUES_EARLY
#define ATTN_VALUES_EARLY false
#endif
// Whether far keys move the near window too (FIRE's segments read it).
#ifndef ATTN_NEAR_KEY_FAR
#define ATTN_NEAR_KEY_FAR false
#endif
#ifndef ATTN_KEY_FOLDED
#define ATTN_KEY_FOLDED(r, kpos, s, w, alpha, far)
#endif
#ifndef ATTN_FAR_END
#define ATTN_FAR_END(side)
#endif
#ifndef ATTN_SCORES
#define ATTN_SCORES(kpos, dots) attn_qk_scores(dots)
#endif
// The variant's term of a visible key (0 without one); far: a far range's
// key (ATTN_FAR_SCORE_TERM), a constant after inlining.
#if defined(ATTN_FAR_SCORE_TERM)
#define ATTN_TERM_AT(r, kpos, far) \
  ((far) ? ATTN_FAR_SCORE_TERM(r, kpos) : ATTN_SCORE_TERM(r, attn_h[r], attn_qpos[r], kpos))
#elif defined(ATTN_SCORE_TERM)
#define ATTN_TERM_AT(r, kpos, far) ATTN_SCORE_TERM(r, attn_h[r], attn_qpos[r], kpos)
#else
#define ATTN_TERM_AT(r, kpos, far) 0.0
#endif

#endif
