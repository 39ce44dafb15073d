// attn.fire (encodings.md section 3): known answers computed in float64 by
// tests/data/fire_facts.py from the spec alone (rows below and above fire_L,
// every hidden unit's kink crossed), the per-distance table path and the
// per-score path, and validation in both impls and dtypes, MHA/GQA, N != M
// and decode, on the CPU plan (lavapipe) and the GPU plan (desktop-gpu).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attn_test_util.h"
#include "harness/engine/presets.h"
#include "suites/attn/attn_common.h"
#include "test_util.h"

namespace pebench::fire_test {  // names of its own: the unity build compiles test files together
namespace {

using Axes = std::map<std::string, std::string>;

// tests/data/fire_facts.py's case.
const std::vector<double> kW1{1.0, -0.5, 0.25}, kB1{0.0, 0.5, -0.125}, kW2{0.5, -1.0, 2.0, -0.25, 0.75, 1.0},
    kB2{0.125, -0.5};
// Printed by `python3 tests/data/fire_facts.py`.
const std::vector<double> kO{0.42908112317601294,  1.1932049266022122,   0.34334208473699152,  0.79460693806420912,
                             0.33968124717661319,  -0.038440039106474921, 0.097519083429617778, 0.74096629618260723,
                             1.1037494726720845,   -0.13552889001712723, 0.11201813256563105,  -0.50063157800085845};

test::BuiltCase facts_case(const std::string& impl, const std::string& dtype = "f32") {
  auto c = test::build_case("attn.fire", {{"impl", impl},
                                          {"dtype", dtype},
                                          {"heads", "2"},
                                          {"kv_heads", "1"},
                                          {"seq", "3"},
                                          {"kv_seq", "5"},
                                          {"dim", "2"},
                                          {"mlp_width", "3"},
                                          {"fire_c", "0.5"},
                                          {"fire_L", "3"}});
  auto set = [&](const char* name, const std::vector<double>& v) {
    for (size_t e = 0; e < v.size(); ++e) c.tensors.at(name).set(static_cast<int64_t>(e), v[e]);
  };
  set("w1", kW1);
  set("b1", kB1);
  set("w2", kW2);
  set("b2", kB2);
  test::fill_facts_qkv(c);
  return c;
}

TEST(FireReference, MatchesTheFloat64KnownAnswers) {
  const auto c = facts_case("naive");
  EXPECT_TRUE(c.params.b("causal"));
  const Reference ref = c.reference();
  for (int64_t row = 0; row < 6; ++row) {
    for (int64_t d = 0; d < 2; ++d) {
      EXPECT_NEAR(ref.outputs().at(0).rows.at(row)[d], kO[static_cast<size_t>(row * 2 + d)], 1e-14)
          << "row " << row << " c " << d;
    }
  }
}

TEST(FireGpu, BothImplsMatchTheKnownAnswers) {
  // Row i' = 2 reads the per-distance table, rows 3 and 4 run the MLP per score.
  const uint64_t before = test::instance().validation_error_count();
  for (const char* impl : {"naive", "flash"}) {
    for (const char* dtype : {"f32", "f16"}) {
      SCOPED_TRACE(std::string(impl) + " " + dtype);
      const std::vector<double> o = test::run_on_gpu(facts_case(impl, dtype), "o");
      ASSERT_EQ(o.size(), kO.size());
      const double tol = std::string(dtype) == "f16" ? 2e-3 : 2e-6;
      for (size_t e = 0; e < o.size(); ++e) EXPECT_NEAR(o[e], kO[e], tol) << "element " << e;
    }
  }
  test::expect_no_validation_errors(before);
}

TEST(FireParams, DefaultsCausalOnlyAndBadValuesSkippedWithTheirValue) {
  const auto c = test::build_case("attn.fire", {{"impl", "flash"}, {"seq", "4"}, {"dim", "16"}});
  EXPECT_TRUE(c.params.b("causal"));
  EXPECT_EQ(c.params.i("mlp_width"), 32);
  EXPECT_DOUBLE_EQ(c.params.f("fire_c"), 0.1);
  EXPECT_EQ(c.params.i("fire_L"), 512);
  EXPECT_DOUBLE_EQ(c.params.f("eps"), 1e-6);
  EXPECT_EQ(test::tensor_shape(*c.impl, "w2"), (std::vector<int64_t>{8, 32}));
  // nn.Linear's initialisation: w1, b1 in [-1, 1]; w2, b2 within 1/sqrt(W).
  for (int64_t e = 0; e < 8 * 32; ++e) EXPECT_LE(std::fabs(c.tensors.at("w2").get(e)), 1 / std::sqrt(32.0));
  const std::vector<std::pair<Axes, std::string>> bad{{{{"causal", "0"}}, "causal only"},
                                                      {{{"mlp_width", "0"}}, "mlp_width=0"},
                                                      {{{"mlp_width", "257"}}, "mlp_width=257"},
                                                      {{{"fire_c", "-1"}}, "fire_c=-1"},
                                                      {{{"eps", "0"}}, "eps=0"},
                                                      {{{"fire_L", "-2"}}, "fire_L=-2"}};
  for (const auto& [axes, reason] : bad) {
    Axes a = axes;
    a["seq"] = "8";
    const auto results = test::run_cases("attn.fire", a);
    ASSERT_EQ(results.size(), 2u) << reason;
    for (const CaseResult& r : results) {
      EXPECT_EQ(r.status, CaseStatus::kSkipped) << reason;
      EXPECT_NE(r.reason.find(reason), std::string::npos) << r.reason;
    }
  }
}

TEST(FireFlashPlan, StaysUnderLlvmpipesLoopBudget) {
  const FlashDevice lavapipe{32768, 1024, 8, true};
  for (const char* dim : {"64", "128", "256"}) {
    for (const Axes& shape : {Axes{{"seq", "4096"}}, Axes{{"seq", "1"}, {"kv_seq", "16384"}}}) {
      Axes axes = shape;
      axes["impl"] = "flash";
      axes["dim"] = dim;
      const auto c = test::make_case("attn.fire", axes);
      const auto& a = dynamic_cast<const AttnCase&>(*c);
      const FlashTiles t = flash_tiles(a.shape(), a.flash_plan(), lavapipe);
      EXPECT_LE(flash_loop_iterations(a.flash_plan(), t, a.hook_loops()), kFlashLoopBudget) << dim;
    }
  }
}

const Axes kMatrix{{"impl", "naive,flash"}, {"dtype", "f32,f16"}, {"heads", "8"}};

TEST(FireGpu, ValidatesPrefillDecodeAndNNotM) {
  // fire_L 20: 37 x 50 (i' 13..49: rows on both sides of L, GQA) and
  // decode 1 x 700 (every row past L); N = M = 300 in f32 (workgroups
  // straddling L 100, MHA). llvmpipe compiles the CPU kernel's unrolled MLP
  // per row slot slowly (about half a minute a pipeline on the 2-core VM),
  // hence the small matrix; EveryVariant runs the table path (L 512). The
  // MHA shape has a sink logit: without one, a bias constant for the head
  // (b2, or the CPU kernel's folded gamma) cancels in the softmax, and no
  // output would show it wrong.
  for (const Axes& shape : {Axes{{"seq", "37"}, {"kv_seq", "50"}, {"kv_heads", "2"}, {"fire_L", "20"}},
                            Axes{{"seq", "1"}, {"kv_seq", "700"}, {"kv_heads", "2"}, {"fire_L", "20"}},
                            Axes{{"seq", "300"}, {"kv_heads", "8"}, {"dim", "32"}, {"fire_L", "100"}, {"dtype", "f32"}, {"sink_logits", "true"}}}) {
    Axes axes = kMatrix;
    for (const auto& [k, v] : shape) axes[k] = v;
    test::expect_all_validate("attn.fire", axes, shape.count("dtype") ? 2 : 4);
  }
}

TEST(FireGpu, GpuPlanValidatesUnderDesktopGpu) {
  for (const Axes& shape : {Axes{{"seq", "37"}, {"kv_seq", "50"}}, Axes{{"seq", "1"}, {"kv_seq", "300"}}}) {
    Axes axes = kMatrix;
    axes["impl"] = "flash";
    axes["kv_heads"] = "2";
    axes["fire_L"] = "40";
    axes.insert(shape.begin(), shape.end());
    test::expect_all_validate("attn.fire", axes, 2, {}, &test::gpu_as("desktop-gpu"));
  }
}

// The CPU flash kernel runs the MLP per score and never reads fire_table, so
// its plan records the pack and the sorted ramps (its segments) without the
// table pass (in decode that pass cost as much as the kernel's own MLPs);
// naive and the GPU kernel read the table for rows below L. The shapes are the two tests' above (their pipelines).
TEST(FireFlashPlan, OnlyKernelsThatReadTheTableGetItsPass) {
  const auto shaders = [](const CaseResult& r) {
    std::set<std::string> s;
    for (const PipelineRecord& p : r.pipelines) s.insert(p.shader);
    return s;
  };
  const auto lavapipe = test::run_cases("attn.fire", {{"impl", "naive,flash"}, {"dtype", "f32"}, {"heads", "8"},
                                                      {"kv_heads", "2"}, {"seq", "1"}, {"kv_seq", "700"},
                                                      {"fire_L", "20"}});
  ASSERT_EQ(lavapipe.size(), 2u);
  for (const CaseResult& r : lavapipe) {
    ASSERT_EQ(r.status, CaseStatus::kOk) << r.impl << ": " << r.reason;
    EXPECT_EQ(shaders(r).count("attn_fire_pack"), 1u) << r.impl;
    EXPECT_EQ(shaders(r).count("attn_fire_table"), r.impl == "flash" ? 0u : 1u) << r.impl;
    EXPECT_EQ(shaders(r).count("attn_fire_sort"), r.impl == "flash" ? 1u : 0u) << r.impl;  // the segments' ramps
  }
  const auto desktop = test::run_cases("attn.fire", {{"impl", "flash"}, {"dtype", "f32"}, {"heads", "8"},
                                                     {"kv_heads", "2"}, {"seq", "1"}, {"kv_seq", "300"},
                                                     {"fire_L", "40"}},
                                       {}, &test::gpu_as("desktop-gpu"));
  ASSERT_EQ(desktop.size(), 1u);
  ASSERT_EQ(desktop[0].status, CaseStatus::kOk) << desktop[0].reason;
  EXPECT_EQ(shaders(desktop[0]).count("attn_fire_table"), 1u);
  EXPECT_EQ(shaders(desktop[0]).count("attn_flash_gpu_fire"), 1u);
  EXPECT_EQ(shaders(desktop[0]).count("attn_fire_sort"), 0u);
}

TEST(FireGpu, NaiveAndFlashAgreeOnTheSameInputs) {
  const uint64_t before = test::instance().validation_error_count();
  Axes axes{{"heads", "4"}, {"kv_heads", "2"}, {"dim", "64"}, {"seq", "45"}, {"kv_seq", "130"}, {"fire_L", "100"}};
  axes["impl"] = "naive";
  const auto naive = test::build_case("attn.fire", axes);
  axes["impl"] = "flash";
  const auto flash = test::build_case("attn.fire", axes);
  EXPECT_LE(test::nmse(test::run_on_gpu(flash), test::run_on_gpu(naive)), 4 * naive.impl->tolerance().nmse);
  test::expect_no_validation_errors(before);
}

// The CPU flash kernel folds the keys every row of a workgroup sees in
// segments over which the MLP is linear but for FIRE_WINDOW ramps
// (fire_hooks.glsl, "Segments"), and one tile at a time the full way where a
// key's range of u holds more. Exact whatever the weights: hidden units
// whose ramps start spread over [0, 1] (many segments), packed closer than
// a key's range of u (the full fold), all below 0 or above 1 (one segment),
// and the suite's own; MHA (one slot head) and GQA 3:1 (a head per slot).
// N = M = 640, fire_L 64: 5 workgroups of 128 rows, most keys untested. A
// sink logit, so that a bias constant over a row would show.
TEST(FireFlashSegments, ExactWhereverTheRampsStart) {
  const uint64_t before = test::instance().validation_error_count();
  const int64_t W = 32;
  // beta_k of unit k; w1 alternates in sign and size (its sign decides the
  // unit's linear part), b1 = -beta w1.
  const std::map<std::string, std::function<double(int64_t)>> sets{
      {"spread", [](int64_t k) { return (static_cast<double>(k) + 0.5) / 32; }},
      {"packed", [](int64_t k) { return 0.61 + 1e-4 * static_cast<double>(k); }},
      {"outside", [](int64_t k) { return k % 2 ? -0.5 - static_cast<double>(k) : 1.5 + static_cast<double>(k); }},
      {"suite's", nullptr}};
  for (const Axes& heads : {Axes{{"heads", "2"}, {"kv_heads", "2"}}, Axes{{"heads", "3"}, {"kv_heads", "1"}}}) {
    for (const auto& [name, beta] : sets) {
      SCOPED_TRACE(name + " H" + heads.at("heads") + ":" + heads.at("kv_heads"));
      Axes axes{{"impl", "flash"}, {"dtype", "f32"}, {"seq", "640"}, {"dim", "32"}, {"fire_L", "64"},
                {"sink_logits", "true"}};
      axes.insert(heads.begin(), heads.end());
      auto c = test::build_case("attn.fire", axes);
      if (beta) {
        for (int64_t k = 0; k < W; ++k) {
          const double w1 = (k % 2 ? -1.0 : 1.0) * (0.5 + static_cast<double>(k % 5) / 8);
          c.tensors.at("w1").set(k, w1);
          c.tensors.at("b1").set(k, -beta(k) * w1);
        }
      }
      const Reference ref = c.reference();
      std::vector<double> want;
      const auto& rows = ref.outputs().at(0).rows;  // unordered: by index
      for (int64_t r = 0; r < static_cast<int64_t>(rows.size()); ++r) {
        want.insert(want.end(), rows.at(r).begin(), rows.at(r).end());
      }
      const std::vector<double> got = test::run_on_gpu(c, "o");
      ASSERT_EQ(got.size(), want.size());
      // The error model's bound (3e-8 here) is f32's worst case; the kernel
      // computes the full MLP's function, so it lands at f32's rounding
      // (6e-14 to 2e-13 measured), and one ramp taken as on 9 keys too far
      // into a segment already gave 3e-9 to 8e-7.
      const double nmse = test::nmse(got, want);
      EXPECT_LE(nmse, c.impl->tolerance().nmse);
      EXPECT_LE(nmse, 1e-10);
    }
  }
  test::expect_no_validation_errors(before);
}

// quick holds issue 47's variants in f32 at GQA 4:2 against 512 keys: FIRE
// in decode and prefill with rows on both sides of fire_L, KERPLE's log in
// prefill and power in decode, naive and flash; and f16 prefill in naive
// (Cli.QuickPresetCoversEveryVariantInBothDtypes). No more: each flash shape
// and dtype is a pipeline that takes seconds to compile on llvmpipe (FIRE's
// unrolled MLP most; 148 s of the quick run with "*"'s shapes and both
// dtypes against 44 s, docs/measurements/issue-47-overheads.md).
TEST(FireQuick, QuickCoversKerpleAndFireInFourFlashShapes) {
  const auto cases = expand_preset_sweep(SweepSpec{}, find_preset("quick"));
  std::set<std::string> seen;
  for (const auto& pc : cases) {
    const std::string id = pc.variant->id();
    if (id != "attn.fire" && id != "attn.kerple") continue;
    const Params& p = pc.params;
    std::string key = id + " " + p.impl() + " " + dtype_name(p.dtype()) + " H" + std::to_string(p.i("heads")) + ":" +
                      std::to_string(p.i("kv_heads")) + " N" + std::to_string(p.i("seq")) + " M" +
                      std::to_string(p.i("kv_seq"));
    if (id == "attn.kerple") key += " " + p.s("kind");
    if (id == "attn.fire") key += p.i("fire_L") < p.i("kv_seq") ? " rows past L" : " table only";
    seen.insert(key);
  }
  const std::set<std::string> want{
      "attn.fire naive f32 H4:2 N1 M512 rows past L",     "attn.fire flash f32 H4:2 N1 M512 rows past L",
      "attn.fire naive f32 H4:2 N128 M512 rows past L",   "attn.fire flash f32 H4:2 N128 M512 rows past L",
      "attn.kerple naive f32 H4:2 N128 M512 log",         "attn.kerple flash f32 H4:2 N128 M512 log",
      "attn.kerple naive f32 H4:2 N1 M512 power",         "attn.kerple flash f32 H4:2 N1 M512 power",
      "attn.fire naive f16 H4:2 N128 M512 rows past L",   "attn.kerple naive f16 H4:2 N128 M512 log"};
  EXPECT_EQ(seen, want);
}

}  // namespace
}  // namespace pebench::fire_test
