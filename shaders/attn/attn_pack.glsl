// Packed bindings, for devices with few storage-buffer bindings per stage
// (Android's baseline profile: 4). A kernel source with the line
// "// pebench-build: packed ATTN_PACKED" also builds as <name>_packed: there
// the kernel's output (flash: o; naive scores: the score scratch), flash's
// split-K partials and the variant's own tensors all come through one
// binding, ATTN_PACK_BINDING, each at the word offset the host passes as a
// spec constant (AttnCase::pack_constants; the harness lays the pack out,
// tensor_layout). Unpacked builds bind every tensor alone at offset 0, so
// their code is what it was.
#ifndef PEBENCH_ATTN_PACK_GLSL
#define PEBENCH_ATTN_PACK_GLSL

#ifdef ATTN_PACKED
layout(constant_id = 24) const uint ATTN_PACK_OUT = 0;  // o / scores
layout(constant_id = 25) const uint ATTN_PACK_ML = 0;   // part_ml
layout(constant_id = 26) const uint ATTN_PACK_ACC = 0;  // part_acc
// The variant's extra binding i (AttnCase::extra_bindings()[i]).
layout(constant_id = 27) const uint ATTN_PACK_X0 = 0;
layout(constant_id = 28) const uint ATTN_PACK_X1 = 0;
layout(constant_id = 29) const uint ATTN_PACK_X2 = 0;
layout(constant_id = 30) const uint ATTN_PACK_X3 = 0;
layout(constant_id = 31) const uint ATTN_PACK_X4 = 0;
// Elements of `bytes` bytes before a member (offsets are 256-byte aligned,
// so this is exact for every element and vec4 type).
#define ATTN_PACK_OFF(words, bytes) ((words) * 4u / (bytes))
#define ATTN_EXTRA_BINDING(i) ATTN_PACK_BINDING
#define ATTN_EXTRA_OFF(i, bytes) ATTN_PACK_OFF(ATTN_PACK_X##i, bytes)
#else
#define ATTN_PACK_OFF(words, bytes) 0u
#define ATTN_EXTRA_BINDING(i) (ATTN_EXTRA_BINDING0 + (i))
#define ATTN_EXTRA_OFF(i, bytes) 0u
#endif
// An extra tensor of STORAGE_T elements: its offset in elements.
#define ATTN_EXTRA_OFF_S(i) ATTN_EXTRA_OFF(i, STORAGE_BYTES)

#endif
