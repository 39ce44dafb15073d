#version 450
// abs.learned: y = x + table[offset + n] (encodings.md section 1).
#define TABLE_COMBINE(x, t) ((x) + (t))
#include "abs/table_combine.glsl"
