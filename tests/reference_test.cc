// The float64 references against the spec's known-answer facts
// (encodings.md sections 1-2), and the GPU against the same facts.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/output/npy.h"
#include "suites/common/phase.h"
#include "suites/rope/rope_scaling.h"
#include "test_util.h"

namespace pebench {
namespace {

// pe(0): sin(0) = 0 and cos(0) = 1 in the positions the layout says.
TEST(SinusoidalReference, PositionZeroIsZerosAndOnesInEachLayout) {
  for (const char* layout : {"interleaved", "concat"}) {
    SCOPED_TRACE(layout);
    auto c = test::build_case("abs.sinusoidal", {{"seq", "3"}, {"d_model", "8"}, {"layout", layout}});
    HostTensor& x = c.tensors.at("x");
    for (int64_t i = 0; i < x.numel(); ++i) x.set(i, 0.0);
    const Reference ref = c.reference();
    const auto& y = ref.outputs().at(0).rows.at(0);  // position 0
    for (int t = 0; t < 4; ++t) {
      const bool concat = std::string(layout) == "concat";
      EXPECT_EQ(y[concat ? t : 2 * t], 0.0);
      EXPECT_EQ(y[concat ? 4 + t : 2 * t + 1], 1.0);
    }
    // Position 1, frequency 0 (w_0 = 1): sin(1), cos(1).
    const auto& y1 = ref.outputs().at(0).rows.at(1);
    EXPECT_DOUBLE_EQ(y1[0], std::sin(1.0));
    EXPECT_DOUBLE_EQ(y1[std::string(layout) == "concat" ? 4 : 1], std::cos(1.0));
  }
}

// On the device, position 0 adds exactly 0 to the sin channels and exactly 1
// (then the storage rounding) to the cos channels.
TEST(SinusoidalGpu, PositionZeroOnTheDevice) {
  for (const char* dtype : {"f32", "f16"}) {
    for (const char* layout : {"interleaved", "concat"}) {
      SCOPED_TRACE(std::string(dtype) + " " + layout);
      RunOptions options;
      options.dump_dir = test::temp_dir("sin");
      auto r = test::run_case("abs.sinusoidal",
                              {{"seq", "5"}, {"d_model", "16"}, {"dtype", dtype}, {"layout", layout}}, options);
      ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
      const HostTensor x = read_npy(options.dump_dir + "/" + r.id + "/x.npy");
      const HostTensor y = read_npy(options.dump_dir + "/" + r.id + "/y.npy");
      const bool concat = std::string(layout) == "concat";
      const DType t = std::string(dtype) == "f16" ? DType::kF16 : DType::kF32;
      for (int i = 0; i < 8; ++i) {
        const int s_idx = concat ? i : 2 * i, c_idx = concat ? 8 + i : 2 * i + 1;
        EXPECT_EQ(y.get(s_idx), x.get(s_idx)) << "sin channel " << s_idx;
        EXPECT_EQ(y.get(c_idx), round_to(t, x.get(c_idx) + 1.0)) << "cos channel " << c_idx;
      }
    }
  }
}

// On a CPU device an item steps through 8 positions by rotation (BLOCK):
// at a shape with enough items the case must choose 8 and still validate in
// both layouts and dtypes (the rotation's error grows with the steps).
TEST(SinusoidalGpu, ItemsOfEightPositionsValidate) {
  for (const char* dtype : {"f32", "f16"}) {
    for (const char* layout : {"interleaved", "concat"}) {
      SCOPED_TRACE(std::string(dtype) + " " + layout);
      const auto r = test::run_case("abs.sinusoidal",
                                    {{"seq", "1024"}, {"d_model", "256"}, {"dtype", dtype}, {"layout", layout},
                                     {"offset", "100000"}});
      ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
      ASSERT_FALSE(r.pipelines.empty());
      EXPECT_EQ(test::spec_constant(r.pipelines.front(), "BLOCK"), 8u);
    }
  }
}

// Elementwise kernels launch one invocation per item (or per UNROLL items)
// and run no loop where the device takes that many groups (ONE_PASS); past
// its group limit, the grid-stride loop. A CPU-type profile with 4 groups at
// most forces the loop on lavapipe. Both must validate.
void expect_one_pass_and_grid_stride(const std::string& variant, const std::vector<std::string>& params,
                                     size_t cases, uint32_t block) {
  const std::string dir = test::temp_dir("grid");
  std::ofstream(dir + "/cpu4.json") << R"({
    "capabilities": { "c": { "properties": { "VkPhysicalDeviceProperties": {
      "deviceType": "VK_PHYSICAL_DEVICE_TYPE_CPU",
      "limits": { "maxComputeWorkGroupCount": [4, 65535, 65535] } } } } },
    "profiles": { "cpu-4-groups": { "capabilities": ["c"] } } })";
  for (const bool limited : {false, true}) {
    SCOPED_TRACE(variant + (limited ? ", 4 groups" : ", lavapipe"));
    std::vector<std::string> args{"run", "--variant", variant, "--benchmark_min_time=0.001", "--out", dir + "/r.json"};
    args.insert(args.end(), params.begin(), params.end());
    if (limited) args.insert(args.end(), {"--emulate", dir + "/cpu4.json"});
    const auto r = test::run_pebench(args);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto rep = nlohmann::json::parse(std::ifstream(dir + "/r.json"));
    ASSERT_EQ(rep["results"].size(), cases);
    for (const auto& c : rep["results"]) {
      EXPECT_EQ(c["status"], "ok") << c.dump();
      const auto& p = c["pipelines"][0];
      EXPECT_EQ(p["spec_constants"]["ONE_PASS"], limited ? 0 : 1) << p.dump();
      if (block) {
        EXPECT_EQ(p["spec_constants"]["BLOCK"], block) << p.dump();
      }
      if (limited) {
        EXPECT_LE(p["groups"][0].get<int>(), 4);
      }
    }
  }
}

TEST(SinusoidalGpu, OnePassAndGridStrideBothValidate) {
  expect_one_pass_and_grid_stride(
      "abs.sinusoidal",
      {"--seq", "1024", "--param", "d_model=256", "--param", "layout=interleaved,concat", "--param", "batch=1,2"}, 4,
      8);
}

TEST(TableGpu, OnePassAndGridStrideBothValidate) {
  // Scalar (d 6) and vec4 (d 64), one and three batch rows; items not a
  // multiple of UNROLL, and more than 4 groups take.
  for (const char* variant : {"abs.learned", "abs.multiplicative"}) {
    expect_one_pass_and_grid_stride(variant,
                                    {"--seq", "1001", "--param", "d_model=6,64", "--param", "batch=1,3", "--param",
                                     "offset=5"},
                                    4, 0);
  }
}

// rope.apply does the same on a CPU device (its BLOCK) where a subgroup's
// items cover a whole position: both styles, both dtypes, a partial rotary
// dim (pass-through items step too), far from position 0, and a scaling
// whose angles are not the base's. Where a position has more items than a
// subgroup (D 128) it does not step.
TEST(RopeGpu, ItemsOfEightPositionsValidate) {
  const auto block_of = [](const char* dim, const char* dtype, const char* style, const char* rotary) {
    const auto r = test::run_case("rope.apply", {{"seq", "4096"},
                                                 {"heads", "16"},
                                                 {"dim", dim},
                                                 {"dtype", dtype},
                                                 {"style", style},
                                                 {"rotary_dim", rotary},
                                                 {"scaling", "yarn"},
                                                 {"offset", "100000"}});
    EXPECT_EQ(r.status, CaseStatus::kOk) << r.reason;
    return r.pipelines.empty() ? 0u : test::spec_constant(r.pipelines.front(), "BLOCK").value_or(0);
  };
  for (const char* dtype : {"f32", "f16"}) {
    for (const char* style : {"neox", "gptj"}) {
      for (const char* rotary : {"32", "16"}) {
        SCOPED_TRACE(std::string(dtype) + " " + style + " rotary_dim=" + rotary);
        EXPECT_EQ(block_of("32", dtype, style, rotary), 8u);
      }
    }
  }
  EXPECT_EQ(block_of("128", "f32", "neox", "128"), 1u);
}

RopeSpec yarn_example() {
  Params p;
  for (const auto& s : rope_params()) {
    if (s.default_value) p.set(s.key, *s.default_value);
  }
  p.set("rotary_dim", int64_t{128});
  p.set("style", std::string("neox"));
  p.set("base", 10000.0);
  p.set("scaling", std::string("yarn"));
  p.set("factor", 4.0);
  p.set("max_pos", int64_t{2048});
  p.set("orig_max_pos", int64_t{4096});
  p.set("beta_fast", 32.0);
  p.set("beta_slow", 1.0);
  p.set("low_freq_factor", 1.0);
  p.set("high_freq_factor", 4.0);
  resolve_rope_params(p, 128);
  return rope_spec(p);
}

TEST(RopeScaling, YarnExampleFromTheSpec) {
  const RopeSpec s = yarn_example();
  const auto [low, high] = yarn_correction_range(s);
  EXPECT_EQ(low, 20.0);
  EXPECT_EQ(high, 46.0);
  EXPECT_NEAR(s.attention_factor, 1.1386, 5e-5);
  const auto th = rope_inv_freq(s, 1);
  for (int t = 0; t < 64; ++t) {
    const double plain = std::pow(1e4, -2.0 * t / 128);
    if (t <= 20) {
      EXPECT_DOUBLE_EQ(th[t], plain) << t;  // ramp 0: extrapolation
    } else if (t >= 46) {
      EXPECT_DOUBLE_EQ(th[t], plain / 4) << t;  // ramp 1: interpolation
    } else {
      const double ramp = (t - 20.0) / 26.0;
      EXPECT_DOUBLE_EQ(th[t], plain / 4 * ramp + plain * (1 - ramp)) << t;
    }
  }
}

TEST(RopeScaling, Llama3KeepsHighFrequenciesAndDividesLowOnes) {
  Params p;
  for (const auto& s : rope_params()) {
    if (s.default_value) p.set(s.key, *s.default_value);
  }
  p.set("scaling", std::string("llama3"));
  p.set("base", 500000.0);
  resolve_rope_params(p, 128);
  const RopeSpec s = rope_spec(p);
  EXPECT_EQ(s.factor, 8.0);
  EXPECT_EQ(s.orig_max_pos, 8192);
  const auto th = rope_inv_freq(s, 1);
  int kept = 0, divided = 0, smoothed = 0;
  for (int t = 0; t < 64; ++t) {
    const double plain = std::pow(500000.0, -2.0 * t / 128);
    const double wavelen = 2 * M_PI / plain;
    if (wavelen < 8192.0 / 4) {
      EXPECT_DOUBLE_EQ(th[t], plain);
      ++kept;
    } else if (wavelen > 8192.0) {
      EXPECT_DOUBLE_EQ(th[t], plain / 8);
      ++divided;
    } else {
      const double sm = (8192.0 / wavelen - 1) / 3;
      EXPECT_DOUBLE_EQ(th[t], (1 - sm) * plain / 8 + sm * plain);
      ++smoothed;
    }
  }
  // Llama 3's own table at these settings has all three regimes.
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(smoothed, 0);
}

TEST(RopeScaling, LinearAndNtkFollowTheirFormulas) {
  Params p;
  for (const auto& s : rope_params()) {
    if (s.default_value) p.set(s.key, *s.default_value);
  }
  p.set("scaling", std::string("ntk"));
  p.set("max_pos", int64_t{100});
  resolve_rope_params(p, 64);
  const RopeSpec s = rope_spec(p);
  // Within max_pos the base is unchanged.
  EXPECT_DOUBLE_EQ(rope_inv_freq(s, 100)[1], std::pow(1e4, -2.0 / 64));
  // Beyond it: base' = base * (s L / max_pos - (s - 1))^(R / (R - 2)).
  const double base2 = 1e4 * std::pow(4.0 * 400 / 100 - 3, 64.0 / 62);
  EXPECT_NEAR(rope_inv_freq(s, 400)[5], std::pow(base2, -10.0 / 64), 1e-15);
  RopeSpec lin = s;
  lin.scaling = "linear";
  EXPECT_DOUBLE_EQ(rope_inv_freq(lin, 400)[3], std::pow(1e4, -6.0 / 64) / 4);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// RoPE's point: q(m) . k(n) depends only on m - n.
TEST(RopeReference, ScoresDependOnlyOnThePositionDifference) {
  for (const char* style : {"neox", "gptj"}) {
    for (const char* scaling : {"none", "yarn", "llama3"}) {
      SCOPED_TRACE(std::string(style) + " " + scaling);
      Params p;
      for (const auto& s : rope_params()) {
        if (s.default_value) p.set(s.key, *s.default_value);
      }
      p.set("style", std::string(style));
      p.set("scaling", std::string(scaling));
      resolve_rope_params(p, 64);
      const RopeSpec s = rope_spec(p);
      const auto th = rope_inv_freq(s, 1);
      Rng rng(7);
      std::vector<double> q(64), k(64), qr(64), kr(64);
      for (auto& v : q) v = rng.uniform(-1, 1);
      for (auto& v : k) v = rng.uniform(-1, 1);
      auto score = [&](double m, double n) {
        rope_rotate(q.data(), qr.data(), 64, s, th, m);
        rope_rotate(k.data(), kr.data(), 64, s, th, n);
        return dot(qr, kr);
      };
      const double base = score(10, 3);
      EXPECT_NEAR(score(17, 10), base, 1e-9);
      EXPECT_NEAR(score(1007, 1000), base, 1e-9);
      EXPECT_NEAR(score(7, 0), base, 1e-9);
      EXPECT_GT(std::fabs(score(11, 3) - base), 1e-6);  // a different distance gives a different score
    }
  }
}

// The same property on the GPU's output, read back from a dump: for rows at
// positions m and n, y_m . y_n = x_m . R(n - m) x_n, whatever m is.
TEST(RopeGpu, RotatedDotProductsDependOnlyOnThePositionDifference) {
  RunOptions options;
  options.dump_dir = test::temp_dir("rope");
  const int64_t dim = 64, offset = 1000000;
  auto r = test::run_case("rope.apply", {{"batch", "1"}, {"heads", "1"}, {"seq", "8"}, {"dim", "64"},
                                         {"offset", std::to_string(offset)}, {"style", "neox"}},
                          options);
  ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
  const std::string dir = options.dump_dir + "/" + r.id;
  const HostTensor x = read_npy(dir + "/x.npy"), y = read_npy(dir + "/y.npy");
  const RopeSpec s = rope_spec(r.params);
  const auto th = rope_inv_freq(s, offset + 8);
  auto row = [&](const HostTensor& t, int64_t n) {
    std::vector<double> v(dim);
    for (int64_t c = 0; c < dim; ++c) v[c] = t.get(n * dim + c);
    return v;
  };
  for (int64_t m = 0; m < 8; ++m) {
    for (int64_t n = 0; n < 8; ++n) {
      std::vector<double> rel(dim);
      const auto xn = row(x, n);
      rope_rotate(xn.data(), rel.data(), dim, s, th, static_cast<double>(n - m));
      EXPECT_NEAR(dot(row(y, m), row(y, n)), dot(row(x, m), rel), 2e-5) << "m=" << m << " n=" << n;
    }
  }
}

// Angles come from an exact fixed-point phase, so accuracy must not decay
// with position (a float32 angle would lose ~p * 2^-24 radians).
TEST(RopeGpu, ErrorDoesNotGrowWithPosition) {
  auto near = test::run_case("rope.apply", {{"seq", "64"}, {"dim", "64"}, {"heads", "2"}});
  auto far = test::run_case("rope.apply", {{"seq", "64"}, {"dim", "64"}, {"heads", "2"}, {"offset", "16000000"}});
  ASSERT_EQ(near.status, CaseStatus::kOk) << near.reason;
  ASSERT_EQ(far.status, CaseStatus::kOk) << far.reason;
  // A float32 angle at p = 1.6e7 would be off by up to ~1 rad (nmse ~ 0.1).
  EXPECT_LT(far.validation.nmse, 1e-9);
  EXPECT_LT(far.validation.max_abs, 1e-5);
  EXPECT_LT(far.validation.nmse, 100 * near.validation.nmse + 1e-12);
}

// p * w mod one turn, from the 64-bit fraction exactly as the shader forms
// it, agrees with long double arithmetic for positions up to 2^32.
TEST(Phase, FixedPointPhaseMatchesLongDoubleReduction) {
  for (double w : {1.0, 0.0123, 1e-4, 2.5, 7.0}) {
    const auto [lo, hi] = turn_fraction_q64(w);
    const uint64_t q = (uint64_t{hi} << 32) | lo;
    for (uint64_t p : {1ull, 3ull, 1000ull, 123457ull, 1000000ull, 4000000000ull}) {
      const long double exact = std::fmod(static_cast<long double>(p) * w / (2.0L * M_PIl), 1.0L);
      const long double fixed = std::ldexp(static_cast<long double>(p * q), -64);  // wraps mod 1 turn
      long double diff = std::fabs(exact - fixed);
      diff = std::min(diff, 1.0L - diff);  // distance on the circle
      EXPECT_LT(static_cast<double>(diff), 1e-9) << "w=" << w << " p=" << p;
    }
  }
}

}  // namespace
}  // namespace pebench
