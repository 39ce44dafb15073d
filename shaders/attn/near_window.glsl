// A per-distance table read in the CPU kernel's band (the keys outside far
// ranges), shared by T5's bias (t5_hooks.glsl) and DeBERTa's idx
// (deberta_hooks.glsl): entry base[r] + kpos of a table indexed by j - i'.
//
// Staged MHA with full subgroups (TILE_SHUFFLE): lane l of a subgroup holds
// position p0 + l in every slot, so at key j it needs the entry lane l - 1
// needed at key j - 1. The near keys come in order, so each slot keeps the
// current key's entry in near_win and a key moves it up one lane; lane 0's
// comes from one read a key for all slots (lane r reads slot r's:
// near_fresh_base). One storage-buffer read a key instead of one a slot,
// which llvmpipe runs lane by lane (docs/lavapipe.md). Lane r reads slot
// r's, so the subgroup needs a lane per slot (arm64's 128-bit llvmpipe has
// 4 lanes for 8 slots: reads as before).
//
// The includer defines NEAR_TABLE(i), entry i as a float (exact: T5's bias,
// or an index below 2^24), and keeps near_base[r], slot r's index of key 0.
#ifndef PEBENCH_ATTN_NEAR_WINDOW_GLSL
#define PEBENCH_ATTN_NEAR_WINDOW_GLSL

uint near_base[ATTN_ROW_SLOTS];

// The slot's entry at key kpos, read from the table (outside the band, or
// where the window does not apply).
float near_read(uint r, uint kpos) { return NEAR_TABLE(near_base[r] + kpos); }

#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
const bool NEAR_WINDOW = !DIRECT && TILE_SHUFFLE >= ROWS && GROUP == 1;
float near_win[ROWS];
uint near_fresh_base;

// Before the near keys [k0, ...): the window at key k0 - 1 (an index below
// the table only in an idle slot, clamped to stay in the buffer).
void near_window_begin(uint k0) {
  if (!NEAR_WINDOW) return;
  const uint lane = gl_SubgroupInvocationID;
  near_fresh_base = 0;
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    const uint b0 = subgroupShuffle(near_base[r], 0);
    if (r == 0 || lane == r) near_fresh_base = b0;
    near_win[r] = NEAR_TABLE(uint(max(int(near_base[r] + k0) - 1, 0)));
  }
}

void near_window_key(uint kpos) {
  if (!NEAR_WINDOW) return;
  const uint lane = gl_SubgroupInvocationID;
  const float fresh = NEAR_TABLE(near_fresh_base + kpos);
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    const float up = subgroupShuffle(near_win[r], max(lane, 1u) - 1u);
    const float f0 = subgroupShuffle(fresh, r);
    near_win[r] = lane == 0 ? f0 : up;
  }
}

// The slot's entry at key kpos of the band.
float near_entry(uint r, uint kpos) { return NEAR_WINDOW ? near_win[r] : near_read(r, kpos); }

#define ATTN_NEAR_BEGIN(k0) near_window_begin(k0)
#define ATTN_NEAR_KEY(kpos) near_window_key(kpos)
#else
float near_entry(uint r, uint kpos) { return near_read(r, kpos); }
#endif

#endif
