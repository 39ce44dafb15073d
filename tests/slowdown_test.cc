// --inject-slowdown (harness/engine/slowdown.h): parsing and its bad input, the
// factor as passes/divisor, what is recorded, and what the report says. No
// test asserts a time: the injection's effect on time is measured with
// pebench itself (docs/compare-and-gate.md).
#include "harness/engine/slowdown.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness/contract/errors.h"
#include "harness/contract/registry.h"
#include "test_util.h"

namespace pebench {
namespace {

TEST(Slowdown, ParsesVariantImplAndFactor) {
  const auto s = parse_slowdown("abs.learned=1.5", Registry::instance());
  EXPECT_EQ(s.variant, "abs.learned");
  EXPECT_EQ(s.impl, "");
  EXPECT_EQ(s.factor, 1.5);
  const auto f = parse_slowdown("attn.nope/flash=3", Registry::instance());
  EXPECT_EQ(f.variant, "attn.nope");
  EXPECT_EQ(f.impl, "flash");
  EXPECT_EQ(f.factor, 3);
}

TEST(Slowdown, BadSpecsNameTheText) {
  struct Bad {
    const char* text;
    const char* message;
  };
  for (const Bad& b : std::vector<Bad>{
           {"abs.learned", "expected VARIANT[/IMPL]=FACTOR"},
           {"=2", "expected VARIANT[/IMPL]=FACTOR"},
           {"abs.learned=", "expected VARIANT[/IMPL]=FACTOR"},
           {"abs.nothing=2", "unknown variant 'abs.nothing'"},
           {"abs.learned/flash=2", "abs.learned has no impl 'flash' (default)"},
           {"abs.learned=1", "FACTOR '1' must be a number above 1 and at most 100"},
           {"abs.learned=0.5", "FACTOR '0.5' must be a number above 1"},
           {"abs.learned=1.5x", "FACTOR '1.5x' must be a number"},
           {"abs.learned=nan", "FACTOR 'nan' must be a number"},
           {"abs.learned=101", "FACTOR '101' must be a number above 1 and at most 100"},
       }) {
    SCOPED_TRACE(b.text);
    try {
      parse_slowdown(b.text, Registry::instance());
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--inject-slowdown '") + b.text + "': " + b.message),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Slowdown, FactorIsTheNearestFractionOfPasses) {
  struct Want {
    double factor;
    int passes, divisor;
  };
  for (const Want& w : std::vector<Want>{{1.5, 3, 2},
                                         {3, 3, 1},
                                         {2, 2, 1},
                                         {1.25, 5, 4},
                                         {1.1, 11, 10},
                                         {2.7, 27, 10},
                                         {1.33, 4, 3},
                                         {100, 100, 1}}) {
    SCOPED_TRACE(w.factor);
    const SlowdownPasses p = slowdown_passes(w.factor);
    EXPECT_EQ(p.passes, w.passes);
    EXPECT_EQ(p.divisor, w.divisor);
  }
}

TEST(Slowdown, FactorAppliesToItsVariantAndImplOnly) {
  const std::vector<InjectedSlowdown> specs = {{"attn.nope", "flash", 1.5}, {"abs.learned", "", 2}};
  EXPECT_EQ(slowdown_factor(specs, "attn.nope", "flash"), 1.5);
  EXPECT_EQ(slowdown_factor(specs, "attn.nope", "naive"), 1);
  EXPECT_EQ(slowdown_factor(specs, "abs.learned", "default"), 2);
  EXPECT_EQ(slowdown_factor(specs, "abs.multiplicative", "default"), 1);
  EXPECT_EQ(slowdown_factor({{"abs.learned", "", 2}, {"abs.learned", "", 3}}, "abs.learned", "default"), 3);
}

// Counts what a case records.
class CountingRecorder : public Recorder {
 public:
  const DeviceLimits& limits() const override { return test::gpu().info().limits; }
  const SubgroupInfo& subgroup() const override { return test::gpu().info().subgroup; }
  const DeviceFeatures& enabled() const override { return test::gpu().device().enabled(); }
  const LaunchPlanner& launch() const override { return test::gpu().launch(); }
  void dispatch(const Dispatch& d) override { shaders.push_back(d.shader); }
  void barrier() override { shaders.push_back("|"); }
  std::vector<std::string> shaders;  // "|" for a barrier
};

TEST(Slowdown, PassesAreTheCaseRecordedAgainWithBarriersBetween) {
  const auto c = test::make_case("attn.nope", {{"impl", "flash"}, {"seq", "16"}, {"heads", "1"}, {"dim", "16"}});
  CountingRecorder one, three;
  record_passes(*c, one, 1);
  record_passes(*c, three, 3);
  ASSERT_FALSE(one.shaders.empty());
  std::vector<std::string> want = one.shaders;
  for (int i = 0; i < 2; ++i) {
    want.push_back("|");
    want.insert(want.end(), one.shaders.begin(), one.shaders.end());
  }
  EXPECT_EQ(three.shaders, want);
}

TEST(Slowdown, ReportRecordsTheInjectionAndValidationStillPasses) {
  const std::string dir = test::temp_dir("inject");
  const std::string out = dir + "/r.json";
  const auto r = test::run_pebench({"run", "--variant", "attn.nope", "--impl", "naive,flash", "--seq", "16", "--heads",
                                    "1", "--dim", "16", "--dtype", "f32", "--inject-slowdown", "attn.nope/flash=1.5",
                                    "--benchmark_min_time=0.002", "--quiet", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j;
  std::ifstream(out) >> j;
  ASSERT_EQ(j["run"]["inject_slowdown"].size(), 1u);
  EXPECT_EQ(j["run"]["inject_slowdown"][0]["variant"], "attn.nope");
  EXPECT_EQ(j["run"]["inject_slowdown"][0]["impl"], "flash");
  EXPECT_EQ(j["run"]["inject_slowdown"][0]["factor"], 1.5);
  ASSERT_EQ(j["results"].size(), 2u);
  for (const auto& res : j["results"]) {
    SCOPED_TRACE(res["impl"].get<std::string>());
    EXPECT_EQ(res["status"], "ok");
    EXPECT_EQ(res["validation"]["passed"], true);
    // Every sample has its CPU time beside it.
    EXPECT_EQ(res["cpu_ns"]["samples"].size(), res["time_ns"]["samples"].size());
    if (res["impl"] == "flash") {
      const auto& inj = res["inject_slowdown"];
      EXPECT_EQ(inj["factor"], 1.5);
      EXPECT_EQ(inj["passes"], 3);
      EXPECT_EQ(inj["divisor"], 2);
      // The fixed cost a divisor leaves alone: an empty submission's, measured.
      EXPECT_GT(inj["fixed_ns"].get<double>(), 0);
      EXPECT_GT(inj["fixed_cpu_ns"].get<double>(), 0);
    } else {
      EXPECT_FALSE(res.contains("inject_slowdown"));
    }
  }
  // Such a report can never be a baseline.
  const auto as_base = test::run_pebench({"compare", out, out, "--gate"});
  EXPECT_EQ(as_base.exit_code, 2) << as_base.out;
  EXPECT_NE(as_base.out.find(out + ": made with --inject-slowdown attn.nope/flash=1.5"), std::string::npos)
      << as_base.out;
}

TEST(Slowdown, BadSpecOnTheCommandLineIsOneLineAndExitTwo) {
  const std::string dir = test::temp_dir("bad");
  const auto r = test::run_pebench(
      {"run", "--variant", "abs.learned", "--inject-slowdown", "abs.learned=0.9", "--out", dir + "/r.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--inject-slowdown 'abs.learned=0.9': FACTOR '0.9' must be a number above 1"), std::string::npos)
      << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

}  // namespace
}  // namespace pebench
