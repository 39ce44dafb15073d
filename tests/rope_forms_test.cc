// Issue 43: RoPE as current models run it (encodings.md sections 1-2): YaRN
// with mscale, mscale_all_dim and truncate, LongRoPE, M-RoPE, xPos, and
// fairseq's sinusoid. Each of the spec's facts as a test of the float64
// reference, then every form on the device in rope.apply, attn.rope (naive
// and flash, f32 and f16, GQA, decode; lavapipe's CPU plans and
// desktop-gpu's GPU plans) and abs.sinusoidal.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "harness/contract/errors.h"
#include "harness/engine/presets.h"
#include "harness/output/npy.h"
#include "suites/rope/rope_scaling.h"
#include "test_util.h"

namespace pebench {
namespace {

using Axes = std::map<std::string, std::string>;

// rope_params() at their defaults, then `set`, resolved at head dim `dim`.
RopeSpec spec_of(const Axes& set, int64_t dim, int64_t xpos_len = 0) {
  Params p;
  for (const auto& s : rope_params()) {
    if (s.default_value) p.set(s.key, *s.default_value);
  }
  for (const auto& s : rope_params()) {
    const auto it = set.find(s.key);
    if (it != set.end()) p.set(s.key, parse_param_value(s, it->second));
  }
  resolve_rope_params(p, dim);
  return rope_spec(p, xpos_len);
}

// ---- YaRN: mscale, mscale_all_dim, truncate ---------------------------------

TEST(RopeForms, YarnDeepSeekV3Facts) {
  const RopeSpec s = spec_of({{"scaling", "yarn"}, {"factor", "40"}, {"mscale", "1"}, {"mscale_all_dim", "1"}}, 64);
  const auto [low, high] = yarn_correction_range(s);
  EXPECT_EQ(low, 10.0);
  EXPECT_EQ(high, 23.0);
  EXPECT_DOUBLE_EQ(s.attention_factor, 1.0);
  const auto th = rope_inv_freq(s, 1);
  EXPECT_NEAR(th[12], 2.687936011143122e-02, 1e-17);
  EXPECT_NEAR(th[16], 5.5e-03, 1e-17);
}

TEST(RopeForms, YarnMscaleAttentionFactors) {
  EXPECT_NEAR(spec_of({{"scaling", "yarn"}, {"factor", "40"}, {"mscale", "1"}, {"mscale_all_dim", "0.707"}}, 64)
                  .attention_factor,
              1.08572639926, 1e-11);
  // Only one of the two set: g(s, 1).
  EXPECT_NEAR(spec_of({{"scaling", "yarn"}, {"factor", "40"}, {"mscale", "0.707"}}, 64).attention_factor,
              1.36888794541, 1e-11);
  EXPECT_NEAR(spec_of({{"scaling", "yarn"}, {"factor", "40"}, {"mscale_all_dim", "0.707"}}, 64).attention_factor,
              1.36888794541, 1e-11);
  EXPECT_EQ(yarn_mscale(1.0, 5.0), 1.0);  // s <= 1
  // A given attention_factor wins.
  EXPECT_EQ(spec_of({{"scaling", "yarn"}, {"mscale", "1"}, {"mscale_all_dim", "1"}, {"attention_factor", "0.5"}}, 64)
                .attention_factor,
            0.5);
}

TEST(RopeForms, YarnGptOssTruncateFacts) {
  const Axes oss{{"scaling", "yarn"}, {"base", "150000"}, {"factor", "32"}, {"truncate", "false"}};
  const RopeSpec s = spec_of(oss, 64);
  const auto [low, high] = yarn_correction_range(s);
  EXPECT_NEAR(low, 8.092779115512402, 1e-13);
  EXPECT_NEAR(high, 17.39802450158856, 1e-13);
  EXPECT_NEAR(s.attention_factor, 1.34657359028, 1e-11);
  EXPECT_NEAR(rope_inv_freq(s, 1)[12], 6.794959489732219e-03, 1e-17);
  Axes rounded = oss;
  rounded["truncate"] = "true";
  const RopeSpec t = spec_of(rounded, 64);
  const auto [low_t, high_t] = yarn_correction_range(t);
  EXPECT_EQ(low_t, 8.0);
  EXPECT_EQ(high_t, 18.0);
  EXPECT_NEAR(rope_inv_freq(t, 1)[12], 7.015713910504388e-03, 1e-17);
}

// ---- LongRoPE -------------------------------------------------------------

TEST(RopeForms, LongropeAttentionFactor) {
  const RopeSpec s = spec_of({{"scaling", "longrope"}}, 64);
  EXPECT_EQ(s.factor, 32.0);
  EXPECT_EQ(s.orig_max_pos, 4096);
  EXPECT_NEAR(s.attention_factor, std::sqrt(17.0 / 12), 1e-15);
  EXPECT_NEAR(s.attention_factor, 1.19023807142381, 1e-14);
  EXPECT_EQ(spec_of({{"scaling", "longrope"}, {"factor", "1"}}, 64).attention_factor, 1.0);
}

const std::vector<double> kShort{1, 1.5, 2, 4}, kLong{1, 2, 4, 8};
const std::vector<double> kAtL0{1, 0.0666666666666667, 5e-3, 2.5e-4}, kAtL0Plus1{1, 0.05, 2.5e-3, 1.25e-4};

TEST(RopeForms, LongropeSwitchesFactorsAfterTheOriginalContext) {
  const RopeSpec s = spec_of({{"scaling", "longrope"}}, 8);
  EXPECT_FALSE(longrope_long(s, 4096));  // L = L0 takes short
  EXPECT_TRUE(longrope_long(s, 4097));
  const auto at_l0 = rope_inv_freq(s, 4096, &kShort);
  const auto past = rope_inv_freq(s, 4097, &kLong);
  for (size_t t = 0; t < 4; ++t) {
    EXPECT_NEAR(at_l0[t], kAtL0[t], 1e-15) << t;
    EXPECT_NEAR(past[t], kAtL0Plus1[t], 1e-15) << t;
  }
  EXPECT_THROW(rope_inv_freq(s, 4096), std::logic_error);  // no factors
}

// The same through rope.apply's reference, from the inputs short_factor and
// long_factor: L = offset + N = 4096 reads short, 4097 long. x's pair t is
// (1, 0), so y = f (cos p th'_t, sin p th'_t) at p = offset.
TEST(RopeForms, LongropeCaseReadsItsFactorInputsByLength) {
  for (const int64_t offset : {4095, 4096}) {
    SCOPED_TRACE(offset);
    auto c = test::build_case("rope.apply", {{"seq", "1"}, {"heads", "1"}, {"dim", "8"}, {"scaling", "longrope"},
                                             {"offset", std::to_string(offset)}});
    HostTensor& x = c.tensors.at("x");
    for (int i = 0; i < 8; ++i) x.set(i, i < 4 ? 1.0 : 0.0);
    for (int t = 0; t < 4; ++t) {
      c.tensors.at("short_factor").set(t, kShort[t]);
      c.tensors.at("long_factor").set(t, kLong[t]);
    }
    const auto& th = offset == 4095 ? kAtL0 : kAtL0Plus1;
    const Reference ref = c.reference();
    const auto& y = ref.outputs().at(0).rows.at(0);
    const double f = std::sqrt(17.0 / 12), p = static_cast<double>(offset);
    for (int t = 0; t < 4; ++t) {
      EXPECT_NEAR(y[t], f * std::cos(p * th[t]), 1e-9) << t;
      EXPECT_NEAR(y[t + 4], f * std::sin(p * th[t]), 1e-9) << t;
    }
  }
}

// The suite fills the factor lists with values in [1, s].
TEST(RopeForms, LongropeFactorsAreFilledInOneToS) {
  auto c = test::build_case("rope.apply", {{"dim", "64"}, {"scaling", "longrope"}, {"factor", "8"}});
  for (const char* name : {"short_factor", "long_factor"}) {
    const HostTensor& f = c.tensors.at(name);
    ASSERT_EQ(f.numel(), 32);
    EXPECT_EQ(f.desc().dtype, DType::kF32);
    for (int64_t i = 0; i < f.numel(); ++i) {
      EXPECT_GE(f.get(i), 1.0);
      EXPECT_LE(f.get(i), 8.0);
    }
  }
}

// ---- M-RoPE -------------------------------------------------------------------

TEST(RopeForms, MropeDefaultSections) {
  EXPECT_EQ(default_mrope_section(128, false), (std::array<int64_t, 3>{16, 24, 24}));
  EXPECT_EQ(default_mrope_section(128, true), (std::array<int64_t, 3>{24, 20, 20}));
  EXPECT_EQ(default_mrope_section(12, false), (std::array<int64_t, 3>{2, 2, 2}));  // 1.5 : 2.25 : 2.25, rest to s0
  EXPECT_EQ(spec_of({{"positions", "mrope"}}, 128).mrope_section, (std::array<int64_t, 3>{16, 24, 24}));
  EXPECT_EQ(spec_of({{"positions", "mrope"}, {"mrope_layout", "interleaved"}}, 128).mrope_section,
            (std::array<int64_t, 3>{24, 20, 20}));
}

TEST(RopeForms, MropeComponents) {
  const RopeSpec chunked = spec_of({{"positions", "mrope"}}, 128);
  for (int t = 0; t < 64; ++t) EXPECT_EQ(mrope_component(chunked, t), t < 16 ? 0 : t < 40 ? 1 : 2) << t;
  // 24:20:20 interleaved: THW repeated to t = 59, then TTTT.
  const RopeSpec inter = spec_of({{"positions", "mrope"}, {"mrope_layout", "interleaved"}}, 128);
  for (int t = 0; t < 64; ++t) EXPECT_EQ(mrope_component(inter, t), t < 60 ? t % 3 : 0) << t;
}

TEST(RopeForms, MropeRejectsSectionsThatDoNotFit) {
  auto rejected = [](const Axes& a) {
    try {
      spec_of(a, 128);
    } catch (const CaseRejected&) {
      return true;
    }
    return false;
  };
  EXPECT_TRUE(rejected({{"positions", "mrope"}, {"mrope_section", "16:24:20"}}));  // sums to 60
  EXPECT_TRUE(rejected({{"positions", "mrope"}, {"mrope_section", "16:24"}}));
  EXPECT_TRUE(rejected({{"positions", "mrope"}, {"mrope_section", "a:b:c"}}));
  // Interleaved: 3 s1 - 2 < R/2 and 3 s2 - 1 < R/2.
  EXPECT_TRUE(rejected({{"positions", "mrope"}, {"mrope_layout", "interleaved"}, {"mrope_section", "0:22:42"}}));
  EXPECT_FALSE(rejected({{"positions", "mrope"}, {"mrope_layout", "interleaved"}, {"mrope_section", "24:20:20"}}));
  EXPECT_FALSE(rejected({{"positions", "mrope"}, {"mrope_section", "0:32:32"}}));
}

// The spec's two vectors: R = D = 12, base 1e4, neox, one token at (t, h, w)
// = (5, 2, 3), x = [1..12], 2:2:2.
TEST(RopeForms, MropeFactsChunkedAndInterleaved) {
  const std::vector<double> chunked{6.996132108105, -6.097581357257, 2.152796165363, 3.799213359733,
                                    4.928799714843, 5.983284468626, 1.026711023579, 5.551531463626,
                                    9.239343519450, 10.077994733439, 11.032086537504, 12.008343223255};
  const std::vector<double> interleaved{6.996132108105, -1.524223369723, 1.721779187687, 3.495209348873,
                                        4.952556167669, 5.983284468626, 1.026711023579, 8.104118898387,
                                        9.329280595461, 10.187419281032, 11.021442165437, 12.008343223255};
  for (const char* layout : {"chunked", "interleaved"}) {
    SCOPED_TRACE(layout);
    auto c = test::build_case("rope.apply", {{"seq", "1"}, {"heads", "1"}, {"dim", "12"}, {"positions", "mrope"},
                                             {"mrope_layout", layout}, {"mrope_section", "2:2:2"}});
    test::set_all(c.tensors.at("x"), [](int64_t i) { return static_cast<double>(i + 1); });
    HostTensor& pos = c.tensors.at("pos_ids");
    pos.set(0, 5);
    pos.set(1, 2);
    pos.set(2, 3);
    const Reference ref = c.reference();
    const auto& y = ref.outputs().at(0).rows.at(0);
    const auto& want = std::string(layout) == "chunked" ? chunked : interleaved;
    for (int i = 0; i < 12; ++i) EXPECT_NEAR(y[i], want[i], 1e-11) << i;
  }
}

// With the three rows equal, both layouts are plain RoPE at that position.
TEST(RopeForms, MropeWithEqualRowsIsPlainRope) {
  for (const char* layout : {"chunked", "interleaved"}) {
    for (const char* style : {"neox", "gptj"}) {
      SCOPED_TRACE(std::string(layout) + " " + style);
      const RopeSpec m = spec_of({{"positions", "mrope"}, {"mrope_layout", layout}, {"style", style}}, 64);
      const RopeSpec plain = spec_of({{"style", style}}, 64);
      const auto th = rope_inv_freq(plain, 1);
      std::vector<double> x(64), a(64), b(64);
      for (int i = 0; i < 64; ++i) x[i] = std::sin(i + 0.5);
      rope_rotate(x.data(), a.data(), 64, m, th, {777, 777, 777}, false);
      rope_rotate(x.data(), b.data(), 64, plain, th, 777.0);
      for (int i = 0; i < 64; ++i) EXPECT_DOUBLE_EQ(a[i], b[i]) << i;
      // And unequal rows are not.
      rope_rotate(x.data(), a.data(), 64, m, th, {777, 700, 777}, false);
      double diff = 0;
      for (int i = 0; i < 64; ++i) diff += std::fabs(a[i] - b[i]);
      EXPECT_GT(diff, 1e-3);
    }
  }
}

// Qwen2-VL's get_rope_index for text, a gh x gw image, text: N 16 gives gh
// = gw = 2, a = 6.
TEST(RopeForms, MropePosIdsFollowTheImageGridPattern) {
  auto c = test::build_case("rope.apply", {{"seq", "16"}, {"dim", "64"}, {"positions", "mrope"}});
  const HostTensor& pos = c.tensors.at("pos_ids");
  ASSERT_EQ(pos.desc().shape, (std::vector<int64_t>{3, 16}));
  auto at = [&](int64_t n) {
    return std::array<double, 3>{pos.get(n), pos.get(16 + n), pos.get(32 + n)};
  };
  for (int n = 0; n < 6; ++n) EXPECT_EQ(at(n), (std::array<double, 3>{1.0 * n, 1.0 * n, 1.0 * n})) << n;
  EXPECT_EQ(at(6), (std::array<double, 3>{6, 6, 6}));
  EXPECT_EQ(at(7), (std::array<double, 3>{6, 6, 7}));
  EXPECT_EQ(at(8), (std::array<double, 3>{6, 7, 6}));
  EXPECT_EQ(at(9), (std::array<double, 3>{6, 7, 7}));
  for (int n = 10; n < 16; ++n) {
    const double p = 8 + (n - 10);  // a + max(gh, gw) on
    EXPECT_EQ(at(n), (std::array<double, 3>{p, p, p})) << n;
  }
}

// ---- xPos ---------------------------------------------------------------------

TEST(RopeForms, XposZetaAndCentre) {
  const std::vector<double> zeta{0.285714285714286, 0.464285714285714, 0.642857142857143, 0.821428571428571};
  for (int t = 0; t < 4; ++t) EXPECT_NEAR(xpos_zeta(8, t), zeta[t], 1e-15) << t;
  const std::vector<std::pair<int64_t, int64_t>> centres{{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {8, 4}};
  for (const auto& [len, c] : centres) EXPECT_EQ(xpos_centre(len), c) << len;
}

// D 8, scale_base 512, N 4, offset 0: q's factor at t = 0 for p = 0..3,
// read from rope.apply's reference (x's pair 0 is (1, 0): |y pair| = factor);
// k's is its inverse.
TEST(RopeForms, XposFactorsThroughTheCase) {
  const std::vector<double> q_factor{1.004905598587742, 1.002449798537434, 1, 0.997556188308873};
  for (const char* tensor : {"q", "k"}) {
    SCOPED_TRACE(tensor);
    auto c = test::build_case("rope.apply", {{"seq", "4"}, {"heads", "1"}, {"dim", "8"}, {"style", "gptj"},
                                             {"xpos_scale_base", "512"}, {"tensor", tensor}});
    test::set_all(c.tensors.at("x"), [](int64_t i) { return i % 8 == 0 ? 1.0 : 0.0; });
    const Reference ref = c.reference();
    for (int p = 0; p < 4; ++p) {
      const auto& y = ref.outputs().at(0).rows.at(p);
      const double g = std::hypot(y[0], y[1]);
      EXPECT_NEAR(g, std::string(tensor) == "q" ? q_factor[p] : 1 / q_factor[p], 1e-14) << p;
      EXPECT_NEAR(std::atan2(y[1], y[0]), p, 1e-14) << p;  // angle p th_0, th_0 = 1: not centred
    }
  }
}

// k's factor at t = 0 passes f16's maximum once |p - c| > 4532 (b 512).
TEST(RopeForms, XposKFactorPassesF16MaxAt4533) {
  const double zeta0 = xpos_zeta(64, 0);
  EXPECT_LT(std::pow(zeta0, -4532.0 / 512), 65504.0);
  EXPECT_GT(std::pow(zeta0, -4533.0 / 512), 65504.0);
}

// A score carries zeta_t^((i' - j) / b): q(i') . k(j) is unchanged when both
// positions shift by the same amount, whatever the centre.
TEST(RopeForms, XposScoresDependOnlyOnTheDistance) {
  const RopeSpec s = spec_of({{"style", "gptj"}, {"xpos_scale_base", "512"}}, 64, 1000);
  const auto th = rope_inv_freq(s, 1);
  std::vector<double> q(64), k(64), qr(64), kr(64);
  for (int i = 0; i < 64; ++i) {
    q[i] = std::sin(0.7 * i + 0.1);
    k[i] = std::cos(1.3 * i - 0.2);
  }
  auto score = [&](double m, double n) {
    rope_rotate(q.data(), qr.data(), 64, s, th, {m, m, m}, false);
    rope_rotate(k.data(), kr.data(), 64, s, th, {n, n, n}, true);
    double d = 0;
    for (int i = 0; i < 64; ++i) d += qr[i] * kr[i];
    return d;
  };
  EXPECT_NEAR(score(10, 3), score(900, 893), 1e-10);
  EXPECT_NEAR(score(3, 10), score(893, 900), 1e-10);
}

TEST(RopeForms, XposRefusesScalingsAndMrope) {
  auto reason = [](const Axes& a) {
    try {
      spec_of(a, 64);
    } catch (const CaseRejected& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(reason({{"xpos_scale_base", "512"}, {"scaling", "yarn"}}).find("xPos"), std::string::npos);
  EXPECT_NE(reason({{"xpos_scale_base", "512"}, {"positions", "mrope"}}).find("xPos"), std::string::npos);
  EXPECT_EQ(reason({{"xpos_scale_base", "512"}, {"style", "neox"}}), "");
  EXPECT_NE(reason({{"xpos_scale_base", "-1"}}), "");
}

// f16 sweeps stay below f16's maximum: rope.apply skips a case whose
// largest output could pass it (sqrt(2) g > 65504), f32 runs it.
TEST(RopeForms, XposF16CasesPastTheRangeAreSkipped) {
  const Axes far{{"seq", "10000"}, {"heads", "1"}, {"dim", "8"}, {"xpos_scale_base", "512"}, {"dtype", "f16"}};
  EXPECT_FALSE(test::plan_one("rope.apply", far).rejected.empty());
  Axes f32 = far;
  f32["dtype"] = "f32";
  EXPECT_TRUE(test::plan_one("rope.apply", f32).rejected.empty());
  Axes near = far;
  near["seq"] = "8000";  // |p - c| <= 4000
  EXPECT_TRUE(test::plan_one("rope.apply", near).rejected.empty());
}

// ---- fairseq's sinusoid ----------------------------------------------------

// h = floor(d/2), w_t = base^(-t/(h-1)) (w_0 = 1, w_{h-1} = 1/base), row
// p + padding_idx + 1 (the first token reads row 2), pe[t] = sin(r w_t),
// pe[h+t] = cos(r w_t), a last column of 0 for odd d.
TEST(RopeForms, FairseqSinusoidFacts) {
  for (const int d : {8, 9}) {
    SCOPED_TRACE(d);
    auto c = test::build_case("abs.sinusoidal",
                              {{"seq", "3"}, {"d_model", std::to_string(d)}, {"layout", "fairseq"}});
    test::set_all(c.tensors.at("x"), [](int64_t) { return 0.0; });
    const Reference ref = c.reference();
    const int h = d / 2;
    for (int n = 0; n < 3; ++n) {
      const auto& y = ref.outputs().at(0).rows.at(n);
      const double r = n + 2;  // padding_idx 1
      EXPECT_DOUBLE_EQ(y[0], std::sin(r));  // w_0 = 1
      EXPECT_DOUBLE_EQ(y[h], std::cos(r));
      EXPECT_NEAR(y[h - 1], std::sin(r / 1e4), 1e-18);  // w_{h-1} = 1/base
      EXPECT_NEAR(y[2 * h - 1], std::cos(r / 1e4), 1e-15);
      EXPECT_NEAR(y[1], std::sin(r * std::pow(1e4, -1.0 / (h - 1))), 1e-15);
      if (d % 2 == 1) {
        EXPECT_EQ(y[d - 1], 0.0);
      }
    }
  }
  // padding_idx 0: row p + 1.
  auto c = test::build_case("abs.sinusoidal",
                            {{"seq", "1"}, {"d_model", "8"}, {"layout", "fairseq"}, {"padding_idx", "0"}});
  test::set_all(c.tensors.at("x"), [](int64_t) { return 0.0; });
  const Reference ref = c.reference();
  EXPECT_DOUBLE_EQ(ref.outputs().at(0).rows.at(0)[0], std::sin(1.0));
}

TEST(RopeForms, FairseqSinusoidValidatesOnTheDevice) {
  // Odd d (scalar path, the copied last column), d % 8 == 0 (vec4), and a
  // shape where a CPU device steps 8 positions an item.
  test::expect_all_validate("abs.sinusoidal",
                            {{"layout", "fairseq"}, {"d_model", "9,64"}, {"seq", "33"}, {"dtype", "f32,f16"},
                             {"offset", "0,5000"}},
                            8);
  test::expect_all_validate("abs.sinusoidal",
                            {{"layout", "fairseq"}, {"d_model", "256"}, {"seq", "1024"}, {"dtype", "f32,f16"}}, 2);
  EXPECT_FALSE(test::plan_one("abs.sinusoidal", {{"layout", "fairseq"}, {"d_model", "3"}}).rejected.empty());
  EXPECT_FALSE(test::plan_one("abs.sinusoidal", {{"layout", "concat"}, {"d_model", "9"}}).rejected.empty());
}

// ---- presets ------------------------------------------------------------------

// The form of a planned rope case: its scaling, positions and layout, xPos.
std::string form_of(const PlannedCase& pc) {
  const Params& p = pc.params;
  std::string f = p.s("scaling");
  if (p.s("scaling") == "yarn" && (p.f("mscale") > 0 || !p.b("truncate"))) f += "+mscale/truncate";
  if (p.s("positions") == "mrope") f += "+mrope-" + p.s("mrope_layout");
  if (p.f("xpos_scale_base") > 0) f += "+xpos";
  return f;
}

// quick covers each new form at least once in rope.apply and attn.rope
// (flash, decode and prefill, both dtypes), and fairseq's sinusoid.
TEST(RopeForms, QuickPresetCoversEveryNewForm) {
  const auto cases = expand_preset_sweep(SweepSpec{}, find_preset("quick"));
  std::set<std::string> seen;
  bool fairseq = false;
  for (const auto& pc : cases) {
    const std::string id = pc.variant->id();
    if (id == "abs.sinusoidal" && pc.params.s("layout") == "fairseq") fairseq = true;
    if (id != "rope.apply" && id != "attn.rope") continue;
    if (id == "attn.rope" && pc.params.impl() != "flash") continue;
    std::string key = id + " " + form_of(pc) + " " + dtype_name(pc.params.dtype());
    if (id == "attn.rope") key += pc.params.i("seq") == 1 ? " decode" : " prefill";
    seen.insert(key);
  }
  EXPECT_TRUE(fairseq);
  for (const char* form : {"yarn+mscale/truncate", "longrope", "none+mrope-chunked", "none+mrope-interleaved",
                           "none+xpos"}) {
    for (const char* dtype : {"f32", "f16"}) {
      EXPECT_TRUE(seen.count(std::string("rope.apply ") + form + " " + dtype)) << form << " " << dtype;
      for (const char* mode : {"decode", "prefill"}) {
        EXPECT_TRUE(seen.count(std::string("attn.rope ") + form + " " + dtype + " " + mode)) << form << " " << mode;
      }
    }
  }
}

// llm gains the models' configurations as cases of their own.
TEST(RopeForms, LlmPresetHasTheModelConfigurations) {
  const auto cases = expand_preset_sweep(SweepSpec{}, find_preset("llm"));
  auto count = [&](const std::string& variant, auto pred) {
    size_t n = 0;
    for (const auto& pc : cases) n += pc.variant->id() == variant && pc.rejected.empty() && pred(pc.params);
    return n;
  };
  for (const char* variant : {"rope.apply", "attn.rope"}) {
    SCOPED_TRACE(variant);
    const size_t per_model = std::string(variant) == "rope.apply" ? 1 : 2;  // attn.rope: decode and prefill
    EXPECT_EQ(count(variant, [](const Params& p) {
                return p.s("scaling") == "yarn" && p.i("rotary_dim") == 64 && p.f("factor") == 40 &&
                       p.f("mscale") == 1 && p.f("mscale_all_dim") == 1;
              }),
              per_model);  // DeepSeek-V3
    EXPECT_EQ(count(variant, [](const Params& p) {
                return p.s("scaling") == "yarn" && p.f("base") == 150000 && p.f("factor") == 32 && !p.b("truncate");
              }),
              per_model);  // gpt-oss
    EXPECT_EQ(count(variant, [](const Params& p) {
                return p.s("scaling") == "longrope" && p.i("rotary_dim") == 96 && p.f("factor") == 32;
              }),
              per_model);  // Phi-3-mini-128k
    EXPECT_EQ(count(variant, [](const Params& p) {
                return p.s("positions") == "mrope" && p.s("mrope_layout") == "chunked" &&
                       p.s("mrope_section") == "16:24:24" && p.i("rotary_dim") == 128;
              }),
              per_model);  // Qwen2-VL
    EXPECT_EQ(count(variant, [](const Params& p) {
                return p.s("positions") == "mrope" && p.s("mrope_layout") == "interleaved" &&
                       p.s("mrope_section") == "24:20:20" && p.f("base") == 5e6;
              }),
              per_model);  // Qwen3-VL
  }
}

// kernels (the spill gate's sweep) holds the forms whose pipelines differ
// from plain RoPE's: M-RoPE in both layouts and xPos, in rope.apply and
// attn.rope (naive and flash, decode and prefill), at D 64, 128 and 256 in
// both dtypes, so that the navi21 baseline covers them.
TEST(RopeForms, KernelsPresetHasTheNewFormsPipelines) {
  const auto cases = expand_preset_sweep(SweepSpec{}, find_preset("kernels"));
  std::set<std::string> seen;
  for (const auto& pc : cases) {
    const std::string id = pc.variant->id();
    if (id != "rope.apply" && id != "attn.rope") continue;
    std::string key = id + " " + form_of(pc) + " " + dtype_name(pc.params.dtype()) + " " +
                      std::to_string(pc.params.i("dim"));
    if (id == "attn.rope") key += " " + pc.params.impl() + (pc.params.i("seq") == 1 ? " decode" : " prefill");
    seen.insert(key);
  }
  for (const char* form : {"none+mrope-chunked", "none+mrope-interleaved", "none+xpos"}) {
    for (const char* dtype : {"f32", "f16"}) {
      for (const char* dim : {"64", "128", "256"}) {
        const std::string tail = std::string(form) + " " + dtype + " " + dim;
        EXPECT_TRUE(seen.count("rope.apply " + tail)) << tail;
        for (const char* mode : {"naive decode", "naive prefill", "flash decode", "flash prefill"}) {
          EXPECT_TRUE(seen.count("attn.rope " + tail + " " + mode)) << tail << " " << mode;
        }
      }
    }
  }
}

// ---- on the device: rope.apply ---------------------------------------------

struct Form {
  const char* name;
  Axes axes;
};
std::vector<Form> forms() {
  return {
      {"yarn-deepseek", {{"scaling", "yarn"}, {"factor", "40"}, {"mscale", "1"}, {"mscale_all_dim", "0.707"}}},
      {"yarn-gpt-oss", {{"scaling", "yarn"}, {"base", "150000"}, {"factor", "32"}, {"truncate", "false"}}},
      {"longrope", {{"scaling", "longrope"}}},
      {"mrope-chunked", {{"positions", "mrope"}}},
      {"mrope-interleaved", {{"positions", "mrope"}, {"mrope_layout", "interleaved"}, {"base", "5000000"}}},
      {"xpos", {{"xpos_scale_base", "512"}, {"style", "gptj"}}},
  };
}

TEST(RopeFormsGpu, RopeApplyValidatesEveryForm) {
  for (const Form& f : forms()) {
    SCOPED_TRACE(f.name);
    Axes axes = f.axes;
    axes.insert({{"dtype", "f32,f16"}, {"heads", "3"}, {"seq", "37"}, {"dim", "64"}, {"rotary_dim", "48,64"}});
    if (!axes.count("style")) axes["style"] = "neox,gptj";
    test::expect_all_validate("rope.apply", axes, axes["style"] == "gptj" ? 4 : 8);
  }
  // xPos on k, at a length where the factors reach 3.5^4 either way.
  test::expect_all_validate("rope.apply",
                            {{"xpos_scale_base", "512"}, {"tensor", "q,k"}, {"dtype", "f32,f16"}, {"heads", "2"},
                             {"seq", "4096"}, {"dim", "64"}},
                            4);
}

// LongRoPE at L = L0 and L0 + 1 (the spec's sweep points), on the device.
TEST(RopeFormsGpu, LongropeAtTheOriginalContextAndOnePast) {
  test::expect_all_validate("rope.apply",
                            {{"scaling", "longrope"}, {"offset", "4000,4001"}, {"seq", "96"}, {"heads", "2"},
                             {"dim", "96"}, {"dtype", "f32,f16"}},
                            4);
}

// Validation compares with the reference, which could share a bug with the
// kernel; here the device's M-RoPE output (from its dump) is checked against
// plain RoPE rotations of the same x: text tokens (n < a) equal plain RoPE
// at n, image tokens differ from plain RoPE at their t position (the
// interleaved layout gives h and w high frequencies, so even a difference
// of one position shows).
TEST(RopeFormsGpu, MropeTextTokensArePlainRopeAndImageTokensAreNot) {
  RunOptions options;
  options.dump_dir = test::temp_dir("mrope");
  const CaseResult r =
      test::run_case("rope.apply", {{"seq", "32"}, {"heads", "1"}, {"dim", "64"}, {"positions", "mrope"}, {"mrope_layout", "interleaved"}},
                     options);
  ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
  const HostTensor x = read_npy(options.dump_dir + "/" + r.id + "/x.npy");
  const HostTensor y = read_npy(options.dump_dir + "/" + r.id + "/y.npy");
  const HostTensor pos = read_npy(options.dump_dir + "/" + r.id + "/pos_ids.npy");
  ASSERT_EQ(pos.numel(), 3 * 32);
  const RopeSpec plain = spec_of({}, 64);
  const auto th = rope_inv_freq(plain, 32);
  std::vector<double> in(64), out(64);
  auto plain_diff = [&](int n, double p) {
    for (int c = 0; c < 64; ++c) in[c] = x.get(n * 64 + c);
    rope_rotate(in.data(), out.data(), 64, plain, th, p);
    double d = 0;
    for (int c = 0; c < 64; ++c) d = std::max(d, std::fabs(y.get(n * 64 + c) - out[c]));
    return d;
  };
  // N 32: gh = gw = 4, a = 8; text 0..7 at (n, n, n).
  for (int n = 0; n < 8; ++n) EXPECT_LT(plain_diff(n, n), 1e-5) << n;
  // Image tokens 9..23 (token 8 is at (8, 8, 8)) at t = 8 with h or w > 8.
  for (int n = 9; n < 24; ++n) EXPECT_GT(plain_diff(n, pos.get(n)), 1e-2) << n;
}

// New inputs are dumped like every other tensor.
TEST(RopeFormsGpu, NewInputsAreDumped) {
  RunOptions options;
  options.dump_dir = test::temp_dir("ropeforms");
  const CaseResult lr = test::run_case("rope.apply", {{"scaling", "longrope"}, {"seq", "8"}, {"dim", "16"}}, options);
  ASSERT_EQ(lr.status, CaseStatus::kOk) << lr.reason;
  EXPECT_EQ(read_npy(options.dump_dir + "/" + lr.id + "/short_factor.npy").numel(), 8);
  EXPECT_EQ(read_npy(options.dump_dir + "/" + lr.id + "/long_factor.npy").numel(), 8);
  const CaseResult ar = test::run_case(
      "attn.rope", {{"impl", "naive"}, {"positions", "mrope"}, {"seq", "4"}, {"kv_seq", "9"}, {"dim", "16"}}, options);
  ASSERT_EQ(ar.status, CaseStatus::kOk) << ar.reason;
  EXPECT_EQ(read_npy(options.dump_dir + "/" + ar.id + "/pos_ids.npy").desc().shape, (std::vector<int64_t>{3, 9}));
}

// ---- on the device: attn.rope, fused -----------------------------------------

// Every form, naive and flash, f32 and f16, GQA, prefill and decode, on the
// test device (CPU plans: staged copies, direct fused) and as desktop-gpu
// (the GPU kernel).
TEST(RopeFormsGpu, AttnRopeValidatesEveryForm) {
  for (const bool gpu_plan : {false, true}) {
    for (const Form& f : forms()) {
      SCOPED_TRACE(std::string(f.name) + (gpu_plan ? " desktop-gpu" : " test device"));
      Axes axes = f.axes;
      axes.insert({{"impl", "naive,flash"}, {"dtype", "f32,f16"}, {"heads", "4"}, {"kv_heads", "2"},
                   {"seq", "1,40"}, {"kv_seq", "200"}, {"dim", "32"}, {"causal", "1"}});
      test::expect_all_validate("attn.rope", axes, 8, {}, gpu_plan ? &test::gpu_as("desktop-gpu") : nullptr);
    }
  }
}

// xPos without causality (keys after the query grow), and LongRoPE at M = L0
// and L0 + 1 in decode.
TEST(RopeFormsGpu, AttnRopeXposBidirectionalAndLongropeAtTheSwitch) {
  for (const bool gpu_plan : {false, true}) {
    SCOPED_TRACE(gpu_plan ? "desktop-gpu" : "test device");
    GpuContext* ctx = gpu_plan ? &test::gpu_as("desktop-gpu") : nullptr;
    test::expect_all_validate("attn.rope",
                              {{"xpos_scale_base", "512"}, {"style", "gptj"}, {"impl", "naive,flash"},
                               {"dtype", "f32,f16"}, {"heads", "2"}, {"seq", "24"}, {"kv_seq", "64"}, {"dim", "32"},
                               {"causal", "0"}},
                              4, {}, ctx);
    test::expect_all_validate("attn.rope",
                              {{"scaling", "longrope"}, {"impl", "flash"}, {"dtype", "f32"}, {"heads", "2"},
                               {"seq", "1"}, {"kv_seq", "4096,4097"}, {"dim", "32"}},
                              2, {}, ctx);
  }
}

}  // namespace
}  // namespace pebench
