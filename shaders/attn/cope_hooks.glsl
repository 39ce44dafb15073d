// attn.cope's hooks, shared by the flash kernels (CPU and GPU plans): the
// kernels visit a row's keys from the last to the first
// (ATTN_KEYS_LAST_TO_FIRST: tiles in reverse, keys in reverse within a
// tile, one key split), so a row's running sum of gates is, at each key,
// CoPE's suffix sum from that key to the row's last (encodings.md section
// 3). ATTN_CONTENT_TERM gets the key's content score scale q.k (the gate's
// argument) and returns e, read from the pre-pass's q.pos_emb entries
// (cope_util.glsl). Extra binding 0: cope_qpe [B*H*N, npos]; push: npos,
// cope_nodiv.
#ifndef PEBENCH_ATTN_COPE_HOOKS_GLSL
#define PEBENCH_ATTN_COPE_HOOKS_GLSL

#ifndef ATTN_KEYS_LAST_TO_FIRST
#error "cope_hooks.glsl: define ATTN_KEYS_LAST_TO_FIRST before the kernel's decl include"
#endif

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer CopeQpe { float cope_qpe[]; };  // [B*H*N, npos]
#define COPE_QPE(idx) cope_qpe[ATTN_EXTRA_OFF(0, 4u) + (idx)]
#include "attn/cope_util.glsl"

float cope_sum[ATTN_ROW_SLOTS];   // the row's gates from its last key down to the current one
uint cope_base[ATTN_ROW_SLOTS];   // the row's first cope_qpe entry

void cope_row_state(uint r, uint h, uint qpos) {
  cope_sum[r] = 0.0;
  cope_base[r] = attn_q_row_at(h, qpos) * pc.npos;
}

float cope_term(uint r, float content) {
  cope_sum[r] += cope_gate(content);
  float e;
  COPE_E(cope_base[r], min(cope_sum[r], float(pc.npos - 1u)), pc.npos, e);
  return pc.cope_nodiv != 0u ? e : pc.scale * e;
}

#define ATTN_ROW_STATE(r, h, qpos) cope_row_state(r, h, qpos)
#define ATTN_CONTENT_TERM(r, content) cope_term(r, content)

#endif
