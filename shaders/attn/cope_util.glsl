// CoPE's per-key step, shared by the naive row pass and the flash kernels
// (encodings.md section 3): keys are visited from the row's last to its
// first; a key's gate sigmoid(scale q.k) joins the row's suffix sum, and the
// position p = min(sum, npos - 1) interpolates q.pos_emb between rows
// floor(p) and min(floor(p) + 1, npos - 1), read from the pre-pass's
// q.pos_emb entries (attn_cope_qpe.comp). The kernel defines COPE_QPE(idx):
// entry idx of cope_qpe [B*H*N, npos].
#ifndef PEBENCH_ATTN_COPE_UTIL_GLSL
#define PEBENCH_ATTN_COPE_UTIL_GLSL

float cope_gate(float content) { return 1.0 / (1.0 + exp(-content)); }

// result = e at position p in [0, npos - 1] of the row whose entries start at base.
#define COPE_E(base, p, npos, result)                                                   \
  {                                                                                     \
    const float cope_f_ = floor(p);                                                     \
    const uint cope_lo_ = uint(cope_f_);                                                \
    const uint cope_hi_ = min(cope_lo_ + 1u, (npos) - 1u);                              \
    result = mix(COPE_QPE((base) + cope_lo_), COPE_QPE((base) + cope_hi_), (p) - cope_f_); \
  }

#endif
