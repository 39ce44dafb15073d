// Google Benchmark output (harness/engine/gb_output.h): the flags pebench applies
// itself, the benchmark names, and runs whose aggregates are the report's
// own statistics. The end-to-end checks (stdout formats, --benchmark_out,
// listing, filtering, compare.py) run the binary.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

#include "harness/contract/errors.h"
#include "harness/contract/registry.h"
#include "harness/engine/gb_output.h"
#include "test_util.h"

namespace pebench {
namespace {

using GbRun = benchmark::BenchmarkReporter::Run;
using nlohmann::json;

TEST(GbFlags, PebenchKeepsOutputFilterAndListingAndPassesTheRest) {
  const auto f = parse_gb_flags({"--benchmark_format=csv", "--benchmark_out=x.json", "--benchmark_out_format=json",
                                 "--benchmark_filter=rope", "--benchmark_list_tests=true",
                                 "--benchmark_report_aggregates_only=true", "--benchmark_min_time=0.5",
                                 "--benchmark_repetitions=3"});
  EXPECT_EQ(f.format, "csv");
  EXPECT_EQ(f.out, "x.json");
  EXPECT_EQ(f.filter, "rope");
  EXPECT_TRUE(f.list_tests);
  EXPECT_TRUE(f.report_aggregates_only);
  EXPECT_TRUE(f.min_time_given);
  EXPECT_EQ(f.passthrough, (std::vector<std::string>{"--benchmark_min_time=0.5", "--benchmark_repetitions=3"}));
  EXPECT_FALSE(parse_gb_flags({"--benchmark_list_tests=false"}).list_tests);
}

TEST(GbFlags, BadValuesAreUsageErrors) {
  EXPECT_THROW(parse_gb_flags({"--benchmark_format=xml"}), UsageError);
  EXPECT_THROW(parse_gb_flags({"--benchmark_out_format=yaml"}), UsageError);
  EXPECT_THROW(parse_gb_flags({"--benchmark_list_tests=maybe"}), UsageError);
  EXPECT_THROW(parse_gb_flags({"--benchmark_filter=("}), UsageError);
  EXPECT_THROW(parse_gb_flags({"--benchmark_out"}), UsageError);
  EXPECT_THROW(parse_gb_flags({"--colour"}), UsageError);
}

TEST(GbFilter, FollowsGoogleBenchmarkRules) {
  EXPECT_TRUE(gb_filter_matches("", "rope.apply/default/f32"));
  EXPECT_TRUE(gb_filter_matches("all", "rope.apply/default/f32"));
  EXPECT_TRUE(gb_filter_matches("rope", "rope.apply/default/f32"));
  EXPECT_TRUE(gb_filter_matches("f32$", "rope.apply/default/f32"));
  EXPECT_FALSE(gb_filter_matches("f16", "rope.apply/default/f32"));
  EXPECT_FALSE(gb_filter_matches("-rope", "rope.apply/default/f32"));
  EXPECT_TRUE(gb_filter_matches("-rope", "abs.learned/default/f32"));
  EXPECT_TRUE(gb_filter_matches("abs|rope", "abs.learned/default/f32"));
}

std::vector<PlannedCase> plan(const std::string& variant, const std::map<std::string, std::string>& axes) {
  SweepSpec spec;
  spec.variant_globs = {variant};
  for (const auto& [k, v] : axes) spec.axes[k] = split_list(v, k);
  return expand_sweep(Registry::instance(), spec);
}

TEST(GbNames, VariantImplDtypeAndOnlyTheParametersOffTheirDefaults) {
  const auto cases = plan("abs.learned", {{"seq", "128,4096"}, {"dtype", "f32"}});
  ASSERT_EQ(cases.size(), 2u);
  const auto names = gb_names(cases, {0, 0}, false);
  // seq 128 is the default; table_len follows seq (derived), so it is not named.
  EXPECT_EQ(names[0], "abs.learned/default/f32");
  EXPECT_EQ(names[1], "abs.learned/default/f32/seq:4096");
  EXPECT_EQ(gb_names(cases, {0, 0}, true)[1], "d0/abs.learned/default/f32/seq:4096");
}

TEST(GbNames, ADerivedParameterSetOffItsDerivationIsNamed) {
  const auto cases = plan("abs.learned", {{"seq", "16"}, {"dtype", "f32"}, {"table_len", "100"}, {"heads", "2"}});
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(gb_names(cases, {0}, false)[0], "abs.learned/default/f32/seq:16/d_model:128/table_len:100");
}

TEST(GbNames, EveryCaseOfASweepHasItsOwnName) {
  const auto cases = plan("rope.apply", {{"seq", "1,64"}, {"dtype", "f32,f16"}, {"style", "neox,gptj"},
                                         {"scaling", "none,yarn"}, {"heads", "4,8"}});
  std::vector<uint32_t> devices(cases.size(), 0);
  const auto names = gb_names(cases, devices, false);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), cases.size());
}

CaseResult ok_case(std::vector<double> samples_ns) {
  CaseResult r;
  r.status = CaseStatus::kOk;
  r.time = time_stats(std::move(samples_ns));
  r.cost = {1e6, 2e6};
  return r;
}

TEST(GbRuns, OneRunPerSampleAndAggregatesThatAreTheReportsStatistics) {
  // One outlier: GB's mean of a repetition would carry it; the median must not.
  const CaseResult r = ok_case({50e3, 52e3, 51e3, 400e3, 53e3});
  const auto runs = gb_runs("x/default/f32", 3, r, 2e-6, false);
  ASSERT_EQ(runs.size(), 5u + 4u);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(runs[k].run_type, GbRun::RT_Iteration);
    EXPECT_EQ(runs[k].iterations, 1);
    EXPECT_EQ(runs[k].repetition_index, static_cast<int64_t>(k));
    EXPECT_NEAR(runs[k].GetAdjustedRealTime(), r.time->samples[k] / 1e3, 1e-9);  // microseconds
    EXPECT_NEAR(runs[k].GetAdjustedCPUTime(), 2.0, 1e-9);
  }
  std::map<std::string, const GbRun*> agg;
  for (const auto& run : runs) {
    if (run.run_type == GbRun::RT_Aggregate) agg[run.aggregate_name] = &run;
  }
  ASSERT_EQ(agg.size(), 4u);
  EXPECT_NEAR(agg["median"]->GetAdjustedRealTime(), r.time->median / 1e3, 1e-9);
  EXPECT_NEAR(agg["mean"]->GetAdjustedRealTime(), r.time->mean / 1e3, 1e-9);
  EXPECT_NEAR(agg["stddev"]->GetAdjustedRealTime(), r.time->stddev / 1e3, 1e-9);
  EXPECT_NEAR(agg["cv"]->real_accumulated_time, r.time->stddev / r.time->mean, 1e-12);
  EXPECT_EQ(agg["cv"]->aggregate_unit, benchmark::kPercentage);
  EXPECT_NEAR(static_cast<double>(agg["median"]->counters.at("bytes_per_second")), 1e6 / 52e-6, 1);
}

TEST(GbRuns, AggregatesOnlyLeavesTheSamplesOut) {
  const auto runs = gb_runs("x", 0, ok_case({1e3, 2e3, 3e3}), 0, true);
  ASSERT_EQ(runs.size(), 4u);
  for (const auto& run : runs) EXPECT_EQ(run.run_type, GbRun::RT_Aggregate);
}

TEST(GbRuns, ACaseThatDidNotRunIsOneErroredRunWithItsReason) {
  CaseResult r;
  r.status = CaseStatus::kSkipped;
  r.reason = "offset=10 + seq=8 exceeds table_len=12";
  const auto runs = gb_runs("x", 0, r, 0, false);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].error_occurred);
  EXPECT_EQ(runs[0].error_message, "skipped: offset=10 + seq=8 exceeds table_len=12");
}

// --- the binary -----------------------------------------------------------

json parse(const std::string& text) { return json::parse(text); }

TEST(GbCli, ListTestsPrintsTheFilteredNamesAndExitsZeroWithoutAReport) {
  const std::string dir = test::temp_dir("list");
  const auto r = test::run_pebench({"run", "--variant", "abs.learned,rope.apply", "--seq", "64,128", "--dtype", "f32",
                                    "--benchmark_list_tests=true", "--benchmark_filter=seq:64", "--out",
                                    dir + "/r.json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "abs.learned/default/f32/seq:64\nrope.apply/default/f32/seq:64\n");
  EXPECT_FALSE(std::ifstream(dir + "/r.json").good()) << "listing wrote a report";
}

TEST(GbCli, FilteredOutCasesAreNotCountedOrRun) {
  const std::string dir = test::temp_dir("filter");
  const auto r = test::run_pebench({"run", "--variant", "abs.learned,rope.apply", "--seq", "16,32", "--dtype", "f32",
                                    "--benchmark_filter=rope", "--benchmark_min_time=0.001", "--out",
                                    dir + "/r.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("[2/2]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("abs.learned"), std::string::npos) << r.out;
  std::ifstream in(dir + "/r.json");
  const json report = json::parse(in);
  EXPECT_EQ(report["run"]["cases"], 2);
  EXPECT_EQ(report["run"]["benchmark_filter"], "rope");
  EXPECT_EQ(report["results"].size(), 2u);
}

TEST(GbCli, AFilterThatMatchesNothingIsBadInput) {
  const auto r = test::run_pebench({"run", "--variant", "abs.learned", "--seq", "16", "--benchmark_filter=nothing"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--benchmark_filter=nothing matches no case"), std::string::npos) << r.out;
}

// stdout alone (run_pebench merges stderr in): the format's output and nothing else.
std::string stdout_of(const std::vector<std::string>& args, int* exit_code) {
  std::string cmd = PEBENCH_EXE;
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " 2>/dev/null";
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(GbCli, JsonFormatOnStdoutAgreesWithTheReportAndNamesTheDevice) {
  const std::string dir = test::temp_dir("json");
  int code = -1;
  const std::string out = stdout_of({"run", "--no-peak", "--variant", "rope.apply", "--seq", "16", "--dtype", "f32",
                                     "--benchmark_min_time=0.02", "--benchmark_format=json", "--out",
                                     dir + "/r.json"},
                                    &code);
  ASSERT_EQ(code, 0) << out;
  const json gb = parse(out);  // stdout is the JSON alone: pebench's table went to stderr
  std::ifstream in(dir + "/r.json");
  const json report = json::parse(in);
  const json& res = report["results"][0];
  const auto& ctx = gb["context"];
  EXPECT_EQ(ctx["executable"], "pebench");  // argv[0] outlives Initialize (it once pointed at freed memory)
  EXPECT_EQ(ctx["device"], report["devices"][0]["name"]);
  EXPECT_NE(ctx["driver"].get<std::string>().find(report["devices"][0]["driver_name"].get<std::string>()),
            std::string::npos);
  EXPECT_EQ(ctx["library_build_type"], "release");  // the tests build Release (scripts/build.sh)
  size_t samples = 0;
  for (const auto& b : gb["benchmarks"]) {
    ASSERT_EQ(b["run_name"], res["benchmark"]);
    if (b["run_type"] == "iteration") ++samples;
    if (b.value("aggregate_name", "") == "median") {
      EXPECT_NEAR(b["real_time"].get<double>() * 1e3, res["time_ns"]["median"].get<double>(), 1e-6);
    }
  }
  EXPECT_EQ(samples, res["time_ns"]["samples"].size());
}

TEST(GbCli, CsvAndConsoleFormatsGoToStdout) {
  for (const std::string format : {"csv", "console"}) {
    int code = -1;
    const std::string dir = test::temp_dir(format);
    const std::string out = stdout_of({"run", "--no-peak", "--variant", "abs.learned", "--seq", "16", "--dtype", "f32",
                                       "--benchmark_min_time=0.005", "--benchmark_format=" + format, "--out",
                                       dir + "/r.json"},
                                      &code);
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("abs.learned/default/f32/seq:16_median"), std::string::npos) << format << ":\n" << out;
    EXPECT_EQ(out.find("report:"), std::string::npos) << format << ": pebench's table on stdout:\n" << out;
    if (format == "csv") {
      EXPECT_EQ(out.rfind("name,iterations,real_time", 0), 0u) << out;
    }
  }
}

}  // namespace
}  // namespace pebench
