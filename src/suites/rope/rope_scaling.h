// RoPE frequencies and their scalings (encodings.md section 2; names follow
// HF modeling_rope_utils), shared by rope.apply and attn.rope: parameters,
// their derived defaults and checks, th'_t in float64, and the float64
// rotation the references use.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/contract/params.h"
#include "harness/contract/tensor.h"

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
  // yarn (HF _compute_yarn_parameters): 0 = unset; truncate rounds the
  // correction range to whole pairs.
  double mscale = 0, mscale_all_dim = 0;
  bool truncate = true;
  // positions=mrope: each frequency index takes one of the three position
  // components (t, h, w) of pos_ids; section counts pairs per component.
  bool mrope = false;
  bool mrope_interleaved = false;
  std::array<int64_t, 3> mrope_section{0, 0, 0};
  // xPos (0: off): a pair is scaled by zeta_t^((p - xpos_centre) /
  // xpos_scale_base) for q, the inverse for k (xpos_k).
  double xpos_scale_base = 0;
  int64_t xpos_centre = 0;
  bool xpos_k = false;
};

// rotary_dim, style, base, scaling, factor, max_pos, orig_max_pos,
// beta_fast, beta_slow, low_freq_factor, high_freq_factor, attention_factor,
// mscale, mscale_all_dim, truncate, positions, mrope_section, mrope_layout,
// xpos_scale_base (rope.apply adds `tensor`).
std::vector<ParamSpec> rope_params();

// Fills rotary_dim (= head_dim), factor (llama3: 8, longrope: 32, else 4),
// orig_max_pos (llama3: 8192, else 4096), attention_factor (yarn: from
// mscale and mscale_all_dim, longrope: sqrt(1 + ln s / ln L0), else 1) and,
// with positions=mrope, mrope_section (the layout's default) when absent;
// throws CaseRejected for an odd or too large rotary_dim, out-of-range
// scaling parameters, a section that does not fit R and xPos with a scaling
// or M-RoPE.
void resolve_rope_params(Params& p, int64_t head_dim);

// `xpos_len` is xPos's L (rope.apply: offset + N; attn.rope: M): the centre
// is ceil(L / 2).
RopeSpec rope_spec(const Params& p, int64_t xpos_len = 0);

// HF's get_mscale: 1 for s <= 1, else 0.1 m ln s + 1.
double yarn_mscale(double s, double m);
// The attention factor a scaling gives when none is set (encodings.md 2).
double default_attention_factor(const RopeSpec& s);

// "s0:s1:s2" -> the three counts; throws CaseRejected on anything else.
std::array<int64_t, 3> parse_mrope_section(const std::string& text);
// The default section of a layout at rotary_dim R: chunked R/8 : 3R/16 :
// 3R/16 rounded down, the remainder to s0; interleaved R/2 - 2k : k : k,
// k = floor(5R/32).
std::array<int64_t, 3> default_mrope_section(int64_t rotary_dim, bool interleaved);
// The position component (0 t, 1 h, 2 w) frequency index t reads.
int mrope_component(const RopeSpec& s, int64_t t);

// xPos: zeta_t = (2t + 0.4 R) / (1.4 R), the centre ceil(L / 2), and the
// factor of pair t at position p (q; k takes its inverse).
double xpos_zeta(int64_t rotary_dim, int64_t t);
inline int64_t xpos_centre(int64_t len) { return (len + 1) / 2; }
double xpos_factor(const RopeSpec& s, int64_t t, double pos, bool k);

// pos_ids [3, cols] as Qwen2-VL's get_rope_index gives them for text, one
// image of gh x gw patches (gh = gw = floor(sqrt(cols / 2))), then text:
// text n < a at (n, n, n), image token a + r gw + c at (a, a + r, a + c),
// text after it from a + max(gh, gw) on; a = floor((cols - gh gw) / 2).
void fill_mrope_pos_ids(HostTensor& pos_ids, int64_t cols);
// LongRoPE's two factor tensors, short_factor and long_factor [R/2] (f32
// inputs); `length` names the length that picks one ("L" in rope.apply,
// "M" in attn.rope).
void add_longrope_factor_tensors(std::vector<TensorDesc>& out, int64_t rotary_dim, const char* length);

// LongRoPE: whether L takes long_factor (L > L0; L = L0 takes short).
inline bool longrope_long(const RopeSpec& s, int64_t seq_len) { return seq_len > s.orig_max_pos; }

// YaRN's correction range (low, high) in pair indices, after clamping to
// [0, R-1] and separating equal bounds by 0.001.
std::pair<double, double> yarn_correction_range(const RopeSpec& s);

// th'_t for t in [0, R/2). `seq_len` is the L of dynamic NTK. longrope
// divides by `ext` (R/2 factors: long_factor where longrope_long, else
// short_factor), which it needs.
std::vector<double> rope_inv_freq(const RopeSpec& s, int64_t seq_len, const std::vector<double>* ext = nullptr);

// out = x rotated at position `pos` (D values; dims >= R copied), with
// xPos's factor for q (for k where s.xpos_k).
void rope_rotate(const double* x, double* out, int64_t head_dim, const RopeSpec& s, const std::vector<double>& inv_freq,
                 double pos);
// The same at the M-RoPE position (t, h, w) (linear positions: all three
// equal), xPos's factor inverted where `xpos_k`.
void rope_rotate(const double* x, double* out, int64_t head_dim, const RopeSpec& s, const std::vector<double>& inv_freq,
                 const std::array<double, 3>& thw, bool xpos_k);

}  // namespace pebench
