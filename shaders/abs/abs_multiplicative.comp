#version 450
// abs.multiplicative: y = x * table[offset + n], element-wise (encodings.md
// section 1).
#define TABLE_COMBINE(x, t) ((x) * (t))
#include "abs/table_combine.glsl"
