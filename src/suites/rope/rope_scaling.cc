#include "suites/rope/rope_scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/contract/errors.h"

namespace pebench {

std::vector<ParamSpec> rope_params() {
  return {
      derived_param("rotary_dim", ParamType::kInt, "dim", "rotated dims R (even, <= D); dims >= R pass through"),
      enum_param("style", "neox", {"neox", "gptj"}, "neox: pair (t, t+R/2); gptj: pair (2t, 2t+1)"),
      float_param("base", 10000.0, "th_t = base^(-2t/R)"),
      enum_param("scaling", "none", {"none", "linear", "ntk", "yarn", "llama3"}, "frequency scaling"),
      derived_param("factor", ParamType::kFloat, "llama3: 8, else 4", "scaling factor s"),
      int_param("max_pos", 2048, "ntk: trained context; base grows once L exceeds it"),
      derived_param("orig_max_pos", ParamType::kInt, "llama3: 8192, else 4096", "yarn/llama3: original context L0"),
      float_param("beta_fast", 32.0, "yarn: fast correction bound"),
      float_param("beta_slow", 1.0, "yarn: slow correction bound"),
      float_param("low_freq_factor", 1.0, "llama3: wavelen > L0/low_freq_factor is divided by factor"),
      float_param("high_freq_factor", 4.0, "llama3: wavelen < L0/high_freq_factor is kept"),
      derived_param("attention_factor", ParamType::kFloat, "yarn: 0.1 ln(factor) + 1, else 1",
                    "output scale of the rotation"),
  };
}

void resolve_rope_params(Params& p, int64_t head_dim) {
  if (!p.has("rotary_dim")) p.set("rotary_dim", head_dim);
  const int64_t r = p.i("rotary_dim");
  if (r <= 0 || r % 2 != 0) throw CaseRejected(fmt::format("rotary_dim={} must be even and positive", r));
  if (r > head_dim) throw CaseRejected(fmt::format("rotary_dim={} exceeds the head dim {}", r, head_dim));
  const std::string& scaling = p.s("scaling");
  const bool llama3 = scaling == "llama3";
  if (!p.has("factor")) p.set("factor", llama3 ? 8.0 : 4.0);
  if (!p.has("orig_max_pos")) p.set("orig_max_pos", int64_t{llama3 ? 8192 : 4096});
  if (!p.has("attention_factor")) {
    p.set("attention_factor", scaling == "yarn" ? 0.1 * std::log(p.f("factor")) + 1.0 : 1.0);
  }
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

RopeSpec rope_spec(const Params& p) {
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
  s.attention_factor = p.f("attention_factor");
  return s;
}

std::pair<double, double> yarn_correction_range(const RopeSpec& s) {
  const double R = static_cast<double>(s.rotary_dim);
  auto corr = [&](double rotations) {
    return R * std::log(static_cast<double>(s.orig_max_pos) / (2 * M_PI * rotations)) / (2 * std::log(s.base));
  };
  double low = std::max(std::floor(corr(s.beta_fast)), 0.0);
  double high = std::min(std::ceil(corr(s.beta_slow)), R - 1);
  if (low == high) high += 0.001;
  return {low, high};
}

std::vector<double> rope_inv_freq(const RopeSpec& s, int64_t seq_len) {
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
  const int64_t half = s.rotary_dim / 2;
  for (int64_t c = s.rotary_dim; c < head_dim; ++c) out[c] = x[c];
  for (int64_t t = 0; t < half; ++t) {
    const int64_t i1 = s.neox ? t : 2 * t;
    const int64_t i2 = s.neox ? t + half : 2 * t + 1;
    const double a = pos * inv_freq[static_cast<size_t>(t)];
    const double c = std::cos(a), sn = std::sin(a);
    out[i1] = (x[i1] * c - x[i2] * sn) * s.attention_factor;
    out[i2] = (x[i2] * c + x[i1] * sn) * s.attention_factor;
  }
}

}  // namespace pebench
