// attn.kerple (encodings.md section 3): known answers computed in float64 by
// tests/data/kerple_facts.py from the spec alone, the spec's constraints
// (0^r2 = 0, causal only, power with r2 = 1 is ALiBi), and the kernels'
// validation in both impls and dtypes, MHA/GQA, N != M and decode, on the
// CPU plan (lavapipe) and the GPU plan (--emulate desktop-gpu).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "attn_test_util.h"
#include "suites/attn/attn_common.h"
#include "test_util.h"

namespace pebench::kerple_test {  // names of its own: the unity build compiles test files together
namespace {

using Axes = std::map<std::string, std::string>;

// tests/data/kerple_facts.py's case: H 2 on Hkv 1, N 3, M 5, D 2, causal.
struct Facts {
  std::vector<double> r1, r2, o;  // o [h][i][c]
};
// Printed by `python3 tests/data/kerple_facts.py`.
const std::map<std::string, Facts> kFacts{
    {"log",
     {{0.5, 1.75},
      {0.25, 0.0625},
      {0.22409355673931164, 0.60923171639631868, 0.61134922659175528, 0.39079700081560137, 0.40334648617118157,
       -0.47165690207791505, 0.10661347725038982, 0.8330185221060521, 0.9846348041585985, -0.18963119193084227,
       0.13908317520051658, -0.46110338924559596}}},
    {"power",
     {{0.5, 0.125},
      {1.5, 0.0625},
      {-0.010342271111286324, -0.15956913612508852, 1.2280450193097348, -0.024019706792935133, 0.48957932123729175,
       -0.88273722988995384, 0.1460776676699562, 0.87662107344764673, 0.9661284031539068, -0.1202796065096733,
       0.12621228075605526, -0.36969690584290571}}},
};

test::BuiltCase facts_case(const std::string& kind, const std::string& impl, const std::string& dtype = "f32") {
  auto c = test::build_case("attn.kerple", {{"impl", impl},
                                            {"kind", kind},
                                            {"dtype", dtype},
                                            {"heads", "2"},
                                            {"kv_heads", "1"},
                                            {"seq", "3"},
                                            {"kv_seq", "5"},
                                            {"dim", "2"}});
  const Facts& f = kFacts.at(kind);
  for (int64_t h = 0; h < 2; ++h) {
    c.tensors.at("r1").set(h, f.r1[static_cast<size_t>(h)]);
    c.tensors.at("r2").set(h, f.r2[static_cast<size_t>(h)]);
  }
  test::fill_facts_qkv(c);
  return c;
}

TEST(KerpleReference, MatchesTheFloat64KnownAnswers) {
  for (const char* kind : {"log", "power"}) {
    SCOPED_TRACE(kind);
    const auto c = facts_case(kind, "naive");
    EXPECT_TRUE(c.params.b("causal"));  // the variant's default
    const Reference ref = c.reference();
    const std::vector<double>& o = kFacts.at(kind).o;
    for (int64_t row = 0; row < 6; ++row) {
      for (int64_t d = 0; d < 2; ++d) {
        EXPECT_NEAR(ref.outputs().at(0).rows.at(row)[d], o[static_cast<size_t>(row * 2 + d)], 1e-14)
            << "row " << row << " c " << d;
      }
    }
  }
}

TEST(KerpleGpu, BothImplsMatchTheKnownAnswers) {
  // Every row sees its own key (d = 0: power's 0^r2 must be 0, not NaN) and
  // the GQA pair reads one kv head; f16 stores q, k, v exactly here.
  const uint64_t before = test::instance().validation_error_count();
  for (const char* kind : {"log", "power"}) {
    for (const char* impl : {"naive", "flash"}) {
      for (const char* dtype : {"f32", "f16"}) {
        SCOPED_TRACE(std::string(kind) + " " + impl + " " + dtype);
        const auto c = facts_case(kind, impl, dtype);
        const std::vector<double> o = test::run_on_gpu(c, "o");
        const std::vector<double>& want = kFacts.at(kind).o;
        ASSERT_EQ(o.size(), want.size());
        const double tol = std::string(dtype) == "f16" ? 2e-3 : 2e-6;
        for (size_t e = 0; e < o.size(); ++e) EXPECT_NEAR(o[e], want[e], tol) << "element " << e;
      }
    }
  }
  test::expect_no_validation_errors(before);
}

TEST(KerpleReference, PowerWithR2OneIsAlibiWithSlopeR1) {
  // encodings.md: power with r2 = 1 is ALiBi with slope r1[h]. r1 = ALiBi's
  // slopes for H 4; the same q, k, v through attn.alibi (causal).
  const Axes axes{{"impl", "naive"}, {"heads", "4"}, {"kv_heads", "2"}, {"seq", "7"},
                  {"kv_seq", "19"},  {"dim", "16"},  {"causal", "1"}};
  Axes kerple_axes = axes;
  kerple_axes["kind"] = "power";
  auto kerple = test::build_case("attn.kerple", kerple_axes, 3);
  auto alibi = test::build_case("attn.alibi", axes, 3);
  const std::vector<double> slopes = alibi_slopes(4);
  for (int64_t h = 0; h < 4; ++h) {
    kerple.tensors.at("r1").set(h, slopes[static_cast<size_t>(h)]);
    kerple.tensors.at("r2").set(h, 1.0);
  }
  for (const char* name : {"q", "k", "v"}) alibi.tensors.at(name) = kerple.tensors.at(name);
  const Reference a = kerple.reference(), b = alibi.reference();
  for (size_t row = 0; row < a.outputs().at(0).rows.size(); ++row) {
    for (size_t d = 0; d < 16; ++d) EXPECT_NEAR(a.outputs().at(0).rows.at(row)[d], b.outputs().at(0).rows.at(row)[d], 1e-13);
  }
  // And on the device, flash against ALiBi's flash.
  kerple_axes["impl"] = "flash";
  Axes alibi_axes = axes;
  alibi_axes["impl"] = "flash";
  auto kf = test::build_case("attn.kerple", kerple_axes, 3);
  auto af = test::build_case("attn.alibi", alibi_axes, 3);
  for (const char* name : {"q", "k", "v", "r1", "r2"}) kf.tensors.at(name) = kerple.tensors.at(name);
  for (const char* name : {"q", "k", "v"}) af.tensors.at(name) = kerple.tensors.at(name);
  EXPECT_LE(test::nmse(test::run_on_gpu(kf, "o"), test::run_on_gpu(af, "o")), 1e-10);
}

TEST(KerpleParams, CausalByDefaultAndNonCausalSkippedWithTheReason) {
  const auto c = test::build_case("attn.kerple", {{"impl", "flash"}, {"seq", "4"}, {"dim", "16"}});
  EXPECT_TRUE(c.params.b("causal"));
  EXPECT_EQ(c.params.s("kind"), "log");
  EXPECT_DOUBLE_EQ(c.params.f("scale"), 0.25);
  // r1, r2 drawn in the reference code's ranges (floored at 0.01).
  for (const char* kind : {"log", "power"}) {
    const auto k = test::build_case("attn.kerple", {{"impl", "naive"}, {"kind", kind}, {"heads", "64"}, {"dim", "8"}});
    const double r1_max = std::string(kind) == "log" ? 2.0 : 1.0, r2_max = std::string(kind) == "log" ? 1.0 : 2.0;
    for (int64_t h = 0; h < 64; ++h) {
      EXPECT_GE(k.tensors.at("r1").get(h), 0.01);
      EXPECT_LE(k.tensors.at("r1").get(h), r1_max);
      EXPECT_GE(k.tensors.at("r2").get(h), 0.01);
      EXPECT_LE(k.tensors.at("r2").get(h), r2_max);
    }
  }
  const auto results = test::run_cases("attn.kerple", {{"impl", "naive,flash"}, {"causal", "0"}, {"seq", "8"}});
  ASSERT_EQ(results.size(), 2u);
  for (const CaseResult& r : results) {
    EXPECT_EQ(r.status, CaseStatus::kSkipped);
    EXPECT_NE(r.reason.find("causal only"), std::string::npos) << r.reason;
  }
}

TEST(KerpleCli, BadKindIsOneClearLineAndExit2) {
  const auto out = test::run_pebench({"run", "--variant", "attn.kerple", "--param", "kind=cubic", "--seq", "8"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.out.find("cubic"), std::string::npos) << out.out;
}

TEST(KerpleFlashPlan, StaysUnderLlvmpipesLoopBudget) {
  const FlashDevice lavapipe{32768, 1024, 8, true};
  for (const char* dim : {"64", "128", "256"}) {
    for (const Axes& shape : {Axes{{"seq", "4096"}}, Axes{{"seq", "1"}, {"kv_seq", "16384"}}}) {
      Axes axes = shape;
      axes["impl"] = "flash";
      axes["dim"] = dim;
      const auto c = test::make_case("attn.kerple", axes);
      const auto& a = dynamic_cast<const AttnCase&>(*c);
      SCOPED_TRACE(std::string("dim=") + dim);
      const FlashTiles t = flash_tiles(a.shape(), a.flash_plan(), lavapipe);
      EXPECT_LE(flash_loop_iterations(a.flash_plan(), t, a.hook_loops()), kFlashLoopBudget);
    }
  }
}

// Both impls, both dtypes, both kinds, GQA (8 heads on 2) and MHA.
const Axes kMatrix{{"impl", "naive,flash"}, {"dtype", "f32,f16"}, {"kind", "log,power"}, {"heads", "8"}};

TEST(KerpleGpu, ValidatesPrefillDecodeAndNNotM) {
  // 37 x 50 (N != M), decode 1 x 700 (direct splits + combine), N = M = 300
  // (the causal cut inside staged tiles); GQA and MHA.
  for (const Axes& shape : {Axes{{"seq", "37"}, {"kv_seq", "50"}, {"kv_heads", "2"}},
                            Axes{{"seq", "1"}, {"kv_seq", "700"}, {"kv_heads", "2"}},
                            Axes{{"seq", "300"}, {"kv_heads", "8"}, {"dim", "32"}}}) {
    Axes axes = kMatrix;
    axes.insert(shape.begin(), shape.end());
    test::expect_all_validate("attn.kerple", axes, 2 * 2 * 2);
  }
}

TEST(KerpleGpu, GpuPlanValidatesUnderDesktopGpu) {
  // The GPU kernel (flash_gpu_main.glsl) as lavapipe runs it under
  // --emulate desktop-gpu: prefill and decode, GQA, both kinds and dtypes.
  for (const Axes& shape : {Axes{{"seq", "37"}, {"kv_seq", "50"}}, Axes{{"seq", "1"}, {"kv_seq", "300"}}}) {
    Axes axes = kMatrix;
    axes["impl"] = "flash";
    axes["kv_heads"] = "2";
    axes.insert(shape.begin(), shape.end());
    test::expect_all_validate("attn.kerple", axes, 2 * 2, {}, &test::gpu_as("desktop-gpu"));
  }
}

TEST(KerpleGpu, NaiveAndFlashAgreeOnTheSameInputs) {
  for (const char* kind : {"log", "power"}) {
    SCOPED_TRACE(kind);
    const uint64_t before = test::instance().validation_error_count();
    Axes axes{{"heads", "4"}, {"kv_heads", "2"}, {"dim", "64"}, {"seq", "45"}, {"kv_seq", "130"}, {"kind", kind}};
    axes["impl"] = "naive";
    const auto naive = test::build_case("attn.kerple", axes);
    axes["impl"] = "flash";
    const auto flash = test::build_case("attn.kerple", axes);
    EXPECT_LE(test::nmse(test::run_on_gpu(flash), test::run_on_gpu(naive)), 4 * naive.impl->tolerance().nmse);
    test::expect_no_validation_errors(before);
  }
}

}  // namespace
}  // namespace pebench::kerple_test
