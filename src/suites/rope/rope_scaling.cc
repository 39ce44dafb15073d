#include "suites/rope/rope_scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "harness/contract/errors.h"
#include "suites/common/suite_util.h"

namespace pebench {

std::vector<ParamSpec> rope_params() {
  return {
      derived_param("rotary_dim", ParamType::kInt, "dim", "rotated dims R (even, <= D); dims >= R pass through"),
      enum_param("style", "neox", {"neox", "gptj"}, "neox: pair (t, t+R/2); gptj: pair (2t, 2t+1)"),
      float_param("base", 10000.0, "th_t = base^(-2t/R)"),
      enum_param("scaling", "none", {"none", "linear", "ntk", "yarn", "llama3", "longrope"}, "frequency scaling"),
      derived_param("factor", ParamType::kFloat, "llama3: 8, longrope: 32, else 4",
                    "scaling factor s (longrope: sets only the attention factor)"),
      int_param("max_pos", 2048, "ntk: trained context; base grows once L exceeds it"),
      derived_param("orig_max_pos", ParamType::kInt, "llama3: 8192, else 4096", "yarn/llama3: original context L0"),
      float_param("beta_fast", 32.0, "yarn: fast correction bound"),
      float_param("beta_slow", 1.0, "yarn: slow correction bound"),
      float_param("low_freq_factor", 1.0, "llama3: wavelen > L0/low_freq_factor is divided by factor"),
      float_param("high_freq_factor", 4.0, "llama3: wavelen < L0/high_freq_factor is kept"),
      derived_param("attention_factor", ParamType::kFloat,
                    "yarn: g(s, mscale) / g(s, mscale_all_dim) if both set, else g(s, 1) = 0.1 ln(s) + 1; "
                    "longrope: sqrt(1 + ln s / ln orig_max_pos); else 1",
                    "output scale of the rotation"),
      float_param("mscale", 0.0, "yarn: m of g(s, m) = 0.1 m ln s + 1 (0: unset; DeepSeek-V2/V3)"),
      float_param("mscale_all_dim", 0.0, "yarn: divides g(s, mscale) by g(s, mscale_all_dim) (0: unset)"),
      bool_param("truncate", true, "yarn: round the correction range to whole pairs (gpt-oss: false)"),
      enum_param("positions", "linear", {"linear", "mrope"},
                 "linear: p = offset + n; mrope: (t, h, w) positions from pos_ids [3, N] (Qwen2-VL)"),
      derived_param("mrope_section", ParamType::kEnum, "chunked: R/8:3R/16:3R/16, interleaved: R/2-2k:k:k, k=5R/32",
                    "mrope: frequency pairs per component, s0:s1:s2 summing to R/2"),
      enum_param("mrope_layout", "chunked", {"chunked", "interleaved"},
                 "mrope: chunked (Qwen2/2.5-VL) or interleaved THW (Qwen3-VL)"),
      float_param("xpos_scale_base", 0.0, "xPos: pairs scaled by zeta_t^((p - ceil(L/2)) / this) (0: off; 512)"),
  };
}

double yarn_mscale(double s, double m) { return s <= 1 ? 1.0 : 0.1 * m * std::log(s) + 1.0; }

double default_attention_factor(const RopeSpec& s) {
  if (s.scaling == "yarn") {
    if (s.mscale != 0 && s.mscale_all_dim != 0) {
      return yarn_mscale(s.factor, s.mscale) / yarn_mscale(s.factor, s.mscale_all_dim);
    }
    return yarn_mscale(s.factor, 1.0);
  }
  if (s.scaling == "longrope") {
    return s.factor <= 1 ? 1.0
                         : std::sqrt(1.0 + std::log(s.factor) / std::log(static_cast<double>(s.orig_max_pos)));
  }
  return 1.0;
}

std::array<int64_t, 3> parse_mrope_section(const std::string& text) {
  std::array<int64_t, 3> out{};
  size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = i < 2 ? text.find(':', at) : text.size();
    const std::string part = end == std::string::npos ? std::string() : text.substr(at, end - at);
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) {
      throw CaseRejected(fmt::format("mrope_section={} must be three counts s0:s1:s2", text));
    }
    out[static_cast<size_t>(i)] = std::stoll(part);
    at = end + 1;
  }
  return out;
}

std::array<int64_t, 3> default_mrope_section(int64_t rotary_dim, bool interleaved) {
  const int64_t half = rotary_dim / 2;
  if (interleaved) {
    const int64_t k = 5 * rotary_dim / 32;
    return {half - 2 * k, k, k};
  }
  const int64_t s1 = 3 * rotary_dim / 16;
  return {half - 2 * s1, s1, s1};
}

int mrope_component(const RopeSpec& s, int64_t t) {
  const auto& sec = s.mrope_section;
  if (s.mrope_interleaved) {
    if (t % 3 == 1 && t < 3 * sec[1]) return 1;
    if (t % 3 == 2 && t < 3 * sec[2]) return 2;
    return 0;
  }
  return t < sec[0] ? 0 : t < sec[0] + sec[1] ? 1 : 2;
}

void fill_mrope_pos_ids(HostTensor& pos_ids, int64_t cols) {
  const auto g = static_cast<int64_t>(std::floor(std::sqrt(static_cast<double>(cols) / 2)));
  const int64_t a = (cols - g * g) / 2;
  for (int64_t n = 0; n < cols; ++n) {
    int64_t thw[3];
    if (n < a) {
      thw[0] = thw[1] = thw[2] = n;
    } else if (n < a + g * g) {
      thw[0] = a;
      thw[1] = a + (n - a) / g;
      thw[2] = a + (n - a) % g;
    } else {
      thw[0] = thw[1] = thw[2] = a + g + (n - a - g * g);
    }
    for (int c = 0; c < 3; ++c) pos_ids.set(c * cols + n, static_cast<double>(thw[c]));
  }
}

double xpos_zeta(int64_t rotary_dim, int64_t t) {
  const double R = static_cast<double>(rotary_dim);
  return (2.0 * static_cast<double>(t) + 0.4 * R) / (1.4 * R);
}

double xpos_factor(const RopeSpec& s, int64_t t, double pos, bool k) {
  const double e = (pos - static_cast<double>(s.xpos_centre)) / s.xpos_scale_base;
  return std::pow(xpos_zeta(s.rotary_dim, t), k ? -e : e);
}

void resolve_rope_params(Params& p, int64_t head_dim) {
  if (!p.has("rotary_dim")) p.set("rotary_dim", head_dim);
  const int64_t r = p.i("rotary_dim");
  if (r <= 0 || r % 2 != 0) throw CaseRejected(fmt::format("rotary_dim={} must be even and positive", r));
  if (r > head_dim) throw CaseRejected(fmt::format("rotary_dim={} exceeds the head dim {}", r, head_dim));
  const std::string& scaling = p.s("scaling");
  const bool llama3 = scaling == "llama3";
  if (!p.has("factor")) p.set("factor", llama3 ? 8.0 : scaling == "longrope" ? 32.0 : 4.0);
  if (!p.has("orig_max_pos")) p.set("orig_max_pos", int64_t{llama3 ? 8192 : 4096});
  if (p.f("mscale") < 0 || p.f("mscale_all_dim") < 0) {
    throw CaseRejected(fmt::format("mscale={} and mscale_all_dim={} must not be negative", p.f("mscale"),
                                   p.f("mscale_all_dim")));
  }
  const bool mrope = p.s("positions") == "mrope";
  const bool interleaved = p.s("mrope_layout") == "interleaved";
  if (!p.has("mrope_section")) {  // the layout's default, recorded (read only with positions=mrope)
    const auto d = default_mrope_section(r, interleaved);
    p.set("mrope_section", fmt::format("{}:{}:{}", d[0], d[1], d[2]));
  }
  if (mrope) {
    const auto sec = parse_mrope_section(p.s("mrope_section"));
    if (sec[0] + sec[1] + sec[2] != r / 2) {
      throw CaseRejected(fmt::format("mrope_section={} must sum to rotary_dim/2 = {}", p.s("mrope_section"), r / 2));
    }
    if (interleaved && !(3 * sec[1] - 2 < r / 2 && 3 * sec[2] - 1 < r / 2)) {
      throw CaseRejected(fmt::format("interleaved mrope_section={} needs 3 s1 - 2 < R/2 and 3 s2 - 1 < R/2 = {}",
                                     p.s("mrope_section"), r / 2));
    }
  }
  const double xpos = p.f("xpos_scale_base");
  if (xpos < 0) throw CaseRejected(fmt::format("xpos_scale_base={} must not be negative", xpos));
  if (xpos > 0 && (scaling != "none" || mrope)) {
    throw CaseRejected(fmt::format("xPos takes scaling=none and positions=linear (got scaling={}, positions={})",
                                   scaling, p.s("positions")));
  }
  if (!p.has("attention_factor")) p.set("attention_factor", default_attention_factor(rope_spec(p)));
  if (!(p.f("base") > 1.0)) throw CaseRejected(fmt::format("base={} must be greater than 1", p.f("base")));
  if (scaling != "none" && !(p.f("factor") >= 1.0)) {
    throw CaseRejected(fmt::format("factor={} must be at least 1", p.f("factor")));
  }
  if (p.i("max_pos") < 1) throw CaseRejected(fmt::format("max_pos={} must be positive", p.i("max_pos")));
  if (p.i("orig_max_pos") < 1) throw CaseRejected(fmt::format("orig_max_pos={} must be positive", p.i("orig_max_pos")));
  if (scaling == "ntk" && r <= 2) throw CaseRejected(fmt::format("ntk scaling needs rotary_dim > 2, got {}", r));
  if (llama3 && !(p.f("high_freq_factor") > p.f("low_freq_factor"))) {
    throw CaseRejected(fmt::format("high_freq_factor={} must exceed low_freq_factor={}", p.f("high_freq_factor"),
                                   p.f("low_freq_factor")));
  }
  if (scaling == "yarn" && !(p.f("beta_fast") > 0 && p.f("beta_slow") > 0)) {
    throw CaseRejected("beta_fast and beta_slow must be positive");
  }
}

RopeSpec rope_spec(const Params& p, int64_t xpos_len) {
  RopeSpec s;
  s.rotary_dim = p.i("rotary_dim");
  s.neox = p.s("style") == "neox";
  s.scaling = p.s("scaling");
  s.base = p.f("base");
  s.factor = p.f("factor");
  s.max_pos = p.i("max_pos");
  s.orig_max_pos = p.i("orig_max_pos");
  s.beta_fast = p.f("beta_fast");
  s.beta_slow = p.f("beta_slow");
  s.low_freq_factor = p.f("low_freq_factor");
  s.high_freq_factor = p.f("high_freq_factor");
  s.attention_factor = p.has("attention_factor") ? p.f("attention_factor") : 1.0;
  s.mscale = p.f("mscale");
  s.mscale_all_dim = p.f("mscale_all_dim");
  s.truncate = p.b("truncate");
  s.mrope = p.s("positions") == "mrope";
  s.mrope_interleaved = p.s("mrope_layout") == "interleaved";
  if (s.mrope) s.mrope_section = parse_mrope_section(p.s("mrope_section"));
  s.xpos_scale_base = p.f("xpos_scale_base");
  s.xpos_centre = xpos_centre(xpos_len);
  s.xpos_k = p.has("tensor") && p.s("tensor") == "k";
  return s;
}

std::pair<double, double> yarn_correction_range(const RopeSpec& s) {
  const double R = static_cast<double>(s.rotary_dim);
  auto corr = [&](double rotations) {
    return R * std::log(static_cast<double>(s.orig_max_pos) / (2 * M_PI * rotations)) / (2 * std::log(s.base));
  };
  double low = corr(s.beta_fast), high = corr(s.beta_slow);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, R - 1);
  if (low == high) high += 0.001;
  return {low, high};
}

std::vector<double> rope_inv_freq(const RopeSpec& s, int64_t seq_len, const std::vector<double>* ext) {
  const int64_t half = s.rotary_dim / 2;
  const double R = static_cast<double>(s.rotary_dim);
  double base = s.base;
  if (s.scaling == "ntk" && seq_len > s.max_pos) {
    const double L = static_cast<double>(seq_len);
    base = s.base * std::pow(s.factor * L / static_cast<double>(s.max_pos) - (s.factor - 1), R / (R - 2));
  }
  std::vector<double> th(static_cast<size_t>(half));
  for (int64_t t = 0; t < half; ++t) th[static_cast<size_t>(t)] = std::pow(base, -2.0 * static_cast<double>(t) / R);
  if (s.scaling == "linear") {
    for (auto& x : th) x /= s.factor;
  } else if (s.scaling == "longrope") {
    if (ext == nullptr || static_cast<int64_t>(ext->size()) != half) {
      throw std::logic_error("longrope's frequencies need R/2 factors");
    }
    for (int64_t t = 0; t < half; ++t) th[static_cast<size_t>(t)] /= (*ext)[static_cast<size_t>(t)];
  } else if (s.scaling == "yarn") {
    const auto [low, high] = yarn_correction_range(s);
    for (int64_t t = 0; t < half; ++t) {
      const double ramp = std::clamp((static_cast<double>(t) - low) / (high - low), 0.0, 1.0);
      double& x = th[static_cast<size_t>(t)];
      x = x / s.factor * ramp + x * (1 - ramp);
    }
  } else if (s.scaling == "llama3") {
    const double L0 = static_cast<double>(s.orig_max_pos);
    const double low_wavelen = L0 / s.low_freq_factor;
    const double high_wavelen = L0 / s.high_freq_factor;
    for (auto& x : th) {
      const double wavelen = 2 * M_PI / x;
      if (wavelen < high_wavelen) continue;
      if (wavelen > low_wavelen) {
        x /= s.factor;
      } else {
        const double smooth = (L0 / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        x = (1 - smooth) * x / s.factor + smooth * x;
      }
    }
  }
  return th;
}

void rope_rotate(const double* x, double* out, int64_t head_dim, const RopeSpec& s, const std::vector<double>& inv_freq,
                 double pos) {
  rope_rotate(x, out, head_dim, s, inv_freq, {pos, pos, pos}, s.xpos_k);
}

void rope_rotate(const double* x, double* out, int64_t head_dim, const RopeSpec& s, const std::vector<double>& inv_freq,
                 const std::array<double, 3>& thw, bool xpos_k) {
  const int64_t half = s.rotary_dim / 2;
  for (int64_t c = s.rotary_dim; c < head_dim; ++c) out[c] = x[c];
  for (int64_t t = 0; t < half; ++t) {
    const int64_t i1 = s.neox ? t : 2 * t;
    const int64_t i2 = s.neox ? t + half : 2 * t + 1;
    const double pos = thw[static_cast<size_t>(s.mrope ? mrope_component(s, t) : 0)];
    const double a = pos * inv_freq[static_cast<size_t>(t)];
    const double c = std::cos(a), sn = std::sin(a);
    const double f = s.attention_factor * (s.xpos_scale_base > 0 ? xpos_factor(s, t, thw[0], xpos_k) : 1.0);
    const double x1 = x[i1], x2 = x[i2];  // out may alias x
    out[i1] = (x1 * c - x2 * sn) * f;
    out[i2] = (x2 * c + x1 * sn) * f;
  }
}

void add_longrope_factor_tensors(std::vector<TensorDesc>& out, int64_t rotary_dim, const char* length) {
  for (const auto& [name, which] : {std::pair{"short_factor", "<="}, std::pair{"long_factor", ">"}}) {
    out.push_back(tensor(name, TensorRole::kInput, DType::kF32, {rotary_dim / 2},
                         fmt::format("[R/2]: LongRoPE's factors for {} {} orig_max_pos", length, which)));
  }
}

}  // namespace pebench
