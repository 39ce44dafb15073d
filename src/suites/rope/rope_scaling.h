// RoPE frequencies and their scalings (encodings.md section 2; names follow
// HF modeling_rope_utils), shared by rope.apply and attn.rope: parameters,
// their derived defaults and checks, th'_t in float64, and the float64
// rotation the references use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/contract/params.h"

namespace pebench {

struct RopeSpec {
  int64_t rotary_dim = 0;  // R: dims [0, R) rotate, [R, D) pass through
  bool neox = true;        // neox: pair (t, t + R/2); gptj: pair (2t, 2t + 1)
  std::string scaling = "none";
  double base = 10000;
  double factor = 4;
  int64_t max_pos = 2048;       // ntk
  int64_t orig_max_pos = 4096;  // yarn, llama3
  double beta_fast = 32, beta_slow = 1;
  double low_freq_factor = 1, high_freq_factor = 4;
  double attention_factor = 1;
};

// rotary_dim, style, base, scaling, factor, max_pos, orig_max_pos,
// beta_fast, beta_slow, low_freq_factor, high_freq_factor, attention_factor.
std::vector<ParamSpec> rope_params();

// Fills rotary_dim (= head_dim), factor (llama3: 8, else 4), orig_max_pos
// (llama3: 8192, else 4096) and attention_factor (yarn: 0.1 ln(factor) + 1,
// else 1) when absent; throws CaseRejected for an odd or too large
// rotary_dim and out-of-range scaling parameters.
void resolve_rope_params(Params& p, int64_t head_dim);

RopeSpec rope_spec(const Params& p);

// YaRN's correction range (low, high) in pair indices, after clamping to
// [0, R-1] and separating equal bounds by 0.001.
std::pair<double, double> yarn_correction_range(const RopeSpec& s);

// th'_t for t in [0, R/2). `seq_len` is the L of dynamic NTK.
std::vector<double> rope_inv_freq(const RopeSpec& s, int64_t seq_len);

// out = x rotated at position `pos` (D values; dims >= R copied).
void rope_rotate(const double* x, double* out, int64_t head_dim, const RopeSpec& s, const std::vector<double>& inv_freq,
                 double pos);

}  // namespace pebench
