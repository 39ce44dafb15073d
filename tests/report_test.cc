// The report and the dumps, produced by the real binary, carry exactly what
// interface.md promises.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "harness/output/npy.h"
#include "test_util.h"

namespace pebench {
namespace {

using nlohmann::json;

json load(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

void expect_keys(const json& j, std::initializer_list<const char*> keys, const std::string& where) {
  for (const char* k : keys) EXPECT_TRUE(j.contains(k)) << where << " lacks \"" << k << "\"";
}

class ReportFromRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(test::temp_dir("report"));
    // With peaks: this suite checks devices[].peak and results[].roofline.
    const auto r = test::run_pebench_with_peak({"run", "--variant", "abs.learned,rope.apply", "--seq", "16,5", "--dim", "8",
                                      "--heads", "2", "--dtype", "f32,f16", "--param", "offset=0,3",
                                      "--out", *dir_ + "/r.json", "--dump", *dir_ + "/dump",
                                      "--benchmark_min_time=0.01", "--benchmark_out=" + *dir_ + "/gb.json",
                                      "--benchmark_out_format=json", "--quiet"});
    output_ = new std::string(r.out);
    exit_code_ = r.exit_code;
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete output_;
  }
  static std::string* dir_;
  static std::string* output_;
  static int exit_code_;
};
std::string* ReportFromRun::dir_ = nullptr;
std::string* ReportFromRun::output_ = nullptr;
int ReportFromRun::exit_code_ = -1;

TEST_F(ReportFromRun, HasEveryInterfaceKey) {
  ASSERT_EQ(exit_code_, 0) << *output_;
  const json r = load(*dir_ + "/r.json");
  expect_keys(r, {"schema", "tool", "created", "command", "host", "devices", "results"}, "report");
  EXPECT_EQ(r["schema"], "pebench.report/1");
  expect_keys(r["tool"], {"version", "git_commit", "build_type", "compiler"}, "tool");
  EXPECT_TRUE(std::regex_match(r["created"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  ASSERT_TRUE(r["command"].is_array());
  EXPECT_EQ(r["command"][0], "pebench");
  EXPECT_EQ(r["command"][1], "run");
  expect_keys(r["host"], {"os", "cpu", "logical_cores"}, "host");
  ASSERT_EQ(r["devices"].size(), 1u);
  const json& d = r["devices"][0];
  expect_keys(d, {"index", "name", "vendor_id", "device_id", "device_type", "driver_id", "driver_name",
                  "driver_info", "driver_version", "api_version", "subgroup_size", "timestamp_period_ns", "limits",
                  "features"},
              "device");
  EXPECT_TRUE(d["limits"].is_object());
  EXPECT_TRUE(d["features"].is_object());
  EXPECT_TRUE(d["timestamp_period_ns"].is_number_float());
  ASSERT_TRUE(d.contains("peak"));
  expect_keys(d["peak"], {"copy_gbps", "f32_gflops", "f16_gflops"}, "peak");
  EXPECT_GT(d["peak"]["copy_gbps"].get<double>(), 0);
  EXPECT_GT(d["peak"]["f32_gflops"].get<double>(), 0);
}

TEST_F(ReportFromRun, EveryResultIsCompleteAndConsistent) {
  ASSERT_EQ(exit_code_, 0) << *output_;
  const json r = load(*dir_ + "/r.json");
  // Every declared parameter, defaults included, from `pebench list --json`.
  const auto listed = json::parse(test::run_pebench({"list", "--json"}).out);
  std::map<std::string, std::set<std::string>> declared;
  for (const auto& v : listed) {
    for (const auto& p : v["params"]) declared[v["id"]].insert(p["key"].get<std::string>());
  }
  ASSERT_EQ(r["results"].size(), 2u * 2u * 2u * 2u);  // variants x seq x dtype x offset
  for (const json& res : r["results"]) {
    SCOPED_TRACE(res.dump());
    expect_keys(res, {"device", "variant", "impl", "dtype", "params", "status", "reason", "time_ns", "timing",
                      "bytes", "flops", "gbps", "gflops", "validation"},
                "result");
    std::set<std::string> keys;
    for (const auto& [k, v] : res["params"].items()) keys.insert(k);
    EXPECT_EQ(keys, declared[res["variant"]]);
    EXPECT_EQ(res["params"]["dtype"], res["dtype"]);
    EXPECT_EQ(res["params"]["impl"], res["impl"]);
    EXPECT_EQ(res["status"], "ok");
    expect_keys(res["time_ns"], {"median", "min", "max", "mean", "stddev", "samples"}, "time_ns");
    const auto samples = res["time_ns"]["samples"].get<std::vector<double>>();
    ASSERT_FALSE(samples.empty());
    EXPECT_LE(res["time_ns"]["min"].get<double>(), res["time_ns"]["median"].get<double>());
    EXPECT_LE(res["time_ns"]["median"].get<double>(), res["time_ns"]["max"].get<double>());
    EXPECT_EQ(res["timing"], "gpu-timestamp");
    EXPECT_NEAR(res["gbps"].get<double>(), res["bytes"].get<double>() / res["time_ns"]["median"].get<double>(),
                1e-9 * res["gbps"].get<double>());
    expect_keys(res["validation"], {"nmse", "max_abs", "max_rel", "tolerance", "passed", "rows_checked"},
                "validation");
    EXPECT_TRUE(res["validation"]["passed"].get<bool>());
    EXPECT_GT(res["validation"]["rows_checked"].get<int64_t>(), 0);
    // The roofline model's time for the case's bytes and flops over its median.
    const json& peak = r["devices"][0]["peak"];
    const double memory_ns = res["bytes"].get<double>() / peak["copy_gbps"].get<double>();
    const double compute_ns = res["flops"].get<double>() / peak["f32_gflops"].get<double>();
    ASSERT_TRUE(res["roofline"].is_object());
    EXPECT_EQ(res["roofline"]["bound"], memory_ns >= compute_ns ? "memory" : "compute");
    EXPECT_NEAR(res["roofline"]["fraction"].get<double>(),
                std::max(memory_ns, compute_ns) / res["time_ns"]["median"].get<double>(),
                1e-9 * res["roofline"]["fraction"].get<double>());
  }
}

TEST_F(ReportFromRun, DumpsAreValidNpyWithTheRightShapes) {
  ASSERT_EQ(exit_code_, 0) << *output_;
  const json r = load(*dir_ + "/r.json");
  for (const json& res : r["results"]) {
    const std::string folder = *dir_ + "/dump/" + res["id"].get<std::string>();
    SCOPED_TRACE(folder);
    const json meta = load(folder + "/meta.json");
    EXPECT_EQ(meta["variant"], res["variant"]);
    EXPECT_EQ(meta["params"], res["params"]);
    std::vector<std::string> names = meta["inputs"];
    for (const auto& o : meta["outputs"]) names.push_back(o);
    EXPECT_EQ(meta["outputs"], json::array({"y"}));
    for (const auto& name : names) {
      const HostTensor t = read_npy(folder + "/" + name + ".npy", name);
      const auto shape = meta["tensors"][name]["shape"].get<std::vector<int64_t>>();
      EXPECT_EQ(t.desc().shape, shape) << name;
      EXPECT_EQ(dtype_name(t.desc().dtype), res["dtype"].get<std::string>()) << name;
    }
    // rope.apply: x and y are [B, H, N, D] = [1, 2, seq, 8].
    if (res["variant"] == "rope.apply") {
      const HostTensor y = read_npy(folder + "/y.npy");
      EXPECT_EQ(y.desc().shape, (std::vector<int64_t>{1, 2, res["params"]["seq"].get<int64_t>(), 8}));
    }
  }
}

TEST_F(ReportFromRun, GoogleBenchmarkOutputHoldsTheReportsSamples) {
  ASSERT_EQ(exit_code_, 0) << *output_;
  const json gb = load(*dir_ + "/gb.json");
  const json r = load(*dir_ + "/r.json");
  ASSERT_TRUE(gb.contains("benchmarks"));
  std::map<std::string, std::vector<double>> samples_us;  // run_name -> the per-sample runs' times
  std::map<std::string, double> median_us;
  for (const auto& b : gb["benchmarks"]) {
    if (b["run_type"] == "iteration") samples_us[b["run_name"]].push_back(b["real_time"].get<double>());
    if (b.value("aggregate_name", "") == "median") median_us[b["run_name"]] = b["real_time"].get<double>();
  }
  ASSERT_EQ(samples_us.size(), r["results"].size());
  for (const json& res : r["results"]) {
    const std::string name = res["benchmark"];
    SCOPED_TRACE(name);
    const auto samples = res["time_ns"]["samples"].get<std::vector<double>>();
    ASSERT_EQ(samples_us[name].size(), samples.size());
    for (size_t k = 0; k < samples.size(); ++k) EXPECT_NEAR(samples_us[name][k] * 1e3, samples[k], 1e-6);
    if (samples.size() > 1) {
      EXPECT_NEAR(median_us[name] * 1e3, res["time_ns"]["median"].get<double>(), 1e-6);
    }
  }
}

TEST_F(ReportFromRun, LeavesNoTemporaryFiles) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(*dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  }
}

TEST(Report, SkippedCasesCarryTheirReasonAndNoTime) {
  const std::string dir = test::temp_dir("skip");
  const auto r = test::run_pebench({"run", "--variant", "abs.learned", "--seq", "8", "--param", "offset=0,10",
                                    "--param", "table_len=12", "--out", dir + "/r.json", "--quiet",
                                    "--benchmark_min_time=0.01"});
  EXPECT_EQ(r.exit_code, 0) << r.out;  // one case ran and passed; the other is skipped
  const json rep = load(dir + "/r.json");
  ASSERT_EQ(rep["results"].size(), 2u);
  const json& skipped = rep["results"][1];
  EXPECT_EQ(skipped["status"], "skipped");
  EXPECT_NE(skipped["reason"].get<std::string>().find("offset=10 + seq=8 exceeds table_len=12"), std::string::npos);
  EXPECT_TRUE(skipped["time_ns"].is_null());
  EXPECT_TRUE(skipped["validation"].is_null());
  EXPECT_EQ(rep["results"][0]["status"], "ok");
}

}  // namespace
}  // namespace pebench
