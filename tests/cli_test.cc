// Bad input never crashes: one clear error naming the offending value and a
// non-zero exit (2 for a bad command line, 1 when no case could run).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "test_util.h"

namespace pebench {
namespace {

struct BadInput {
  std::string name;
  std::vector<std::string> args;
  int exit_code;
  std::string message;
};

// The row's name, not its bytes, in test listings (and CTest's test names).
void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

class CliRejects : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliRejects, WithOneClearErrorAndNonZeroExit) {
  const BadInput& c = GetParam();
  std::vector<std::string> args = c.args;
  const std::string dir = test::temp_dir("bad");
  if (args.front() == "run") {
    if (std::find(args.begin(), args.end(), "--out") == args.end()) args.insert(args.end(), {"--out", dir + "/r.json"});
    args.insert(args.end(), {"--quiet", "--benchmark_min_time=0.01"});
  }
  const auto r = test::run_pebench(args);
  EXPECT_EQ(r.exit_code, c.exit_code) << r.out;
  EXPECT_NE(r.out.find(c.message), std::string::npos) << "output lacks '" << c.message << "':\n" << r.out;
  EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << r.out;
  if (c.exit_code == 2) {
    // A command-line error is a single line.
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, CliRejects,
    ::testing::Values(
        BadInput{"UnknownVariant", {"run", "--variant", "rope.nothing"}, 2, "unknown variant 'rope.nothing'"},
        BadInput{"OddRotaryDim", {"run", "--variant", "rope.apply", "--seq", "8", "--param", "rotary_dim=63"}, 1,
                 "rotary_dim=63 must be even"},
        BadInput{"RotaryDimPastHeadDim", {"run", "--variant", "rope.apply", "--dim", "32", "--param", "rotary_dim=64"},
                 1, "rotary_dim=64 exceeds the head dim 32"},
        BadInput{"OffsetPastTable",
                 {"run", "--variant", "abs.learned", "--seq", "8", "--param", "offset=10", "--param", "table_len=12"},
                 1, "offset=10 + seq=8 exceeds table_len=12"},
        BadInput{"EmptyListItem", {"run", "--seq", "12,,4"}, 2, "malformed list for --seq: '12,,4'"},
        BadInput{"NotANumber", {"run", "--seq", "12,abc"}, 2, "invalid value 'abc' for parameter seq"},
        BadInput{"UnknownDtype", {"run", "--dtype", "f64"}, 2, "invalid value 'f64' for parameter dtype"},
        BadInput{"UnknownEnumValue", {"run", "--variant", "rope.apply", "--param", "scaling=magic"}, 2,
                 "invalid value 'magic' for parameter scaling"},
        BadInput{"UnknownParam", {"run", "--param", "colour=red"}, 2, "unknown parameter 'colour'"},
        BadInput{"ParamWithoutValue", {"run", "--param", "seq"}, 2, "malformed --param 'seq'"},
        BadInput{"UnknownPreset", {"run", "--preset", "huge"}, 2, "unknown preset 'huge'"},
        BadInput{"UnknownDevice", {"run", "--device", "no-such-gpu"}, 2, "no device matches 'no-such-gpu'"},
        BadInput{"DeviceIndexOutOfRange", {"run", "--device", "99"}, 2, "no device with index 99"},
        BadInput{"UnknownOption", {"run", "--colour"}, 2, "unknown option '--colour'"},
        BadInput{"UnknownBenchmarkFormat", {"run", "--benchmark_format=xml"}, 2,
                 "--benchmark_format=xml: expected console, json or csv"},
        BadInput{"BadBenchmarkFilter", {"run", "--benchmark_filter=(rope"}, 2, "not a regular expression"},
        BadInput{"SubmissionTimeout", {"run", "--variant", "abs.learned", "--seq", "4096,8", "--timeout", "0.000001"},
                 1, "VK_TIMEOUT: the device did not finish within 1e-06 s"},
        BadInput{"ZeroSeq", {"run", "--variant", "abs.learned", "--seq", "0"}, 2,
                 "invalid value '0' for parameter seq: must be from 1 to 2147483647"},
        BadInput{"UnknownCommand", {"frobnicate"}, 2, "unknown command 'frobnicate'"},
        BadInput{"ReportNotWritable", {"run", "--variant", "abs.learned", "--out", "/proc/no/such/dir/r.json"}, 1,
                 "/proc/no/such/dir"}),
    [](const auto& info) { return info.param.name; });

// Options rejected before any device is opened (no GPU needed): each one
// was accepted, wrapped, crashed or printed a 309-digit range before.
std::vector<BadInput> bad_options() {
  using Named = std::pair<std::string, std::string>;  // test name, value
  std::vector<BadInput> out;
  for (const auto& [name, v] : std::vector<Named>{
           {"Zero", "0"}, {"Negative", "-1"}, {"Text", "abc"}, {"Nan", "nan"}, {"PastMaximum", "1e11"}, {"Huge", "1e300"}}) {
    out.push_back({"Timeout" + name, {"run", "--timeout", v}, 2,
                   "--timeout: '" + v + "' is not a number of seconds above 0 and at most 86400"});
  }
  for (const auto& [name, v] : std::vector<Named>{
           {"Negative", "-1"}, {"Text", "abc"}, {"Nan", "nan"}, {"PastMaximum", "61"}, {"Inf", "inf"}}) {
    out.push_back({"Warmup" + name, {"run", "--warmup", v}, 2,
                   "--warmup: '" + v + "' is not a number of seconds from 0 and at most 60"});
  }
  for (const auto& [name, v] : std::vector<Named>{{"Negative", "-1"}, {"Zero", "0"}}) {
    const std::string flag = "--benchmark_repetitions=" + v;
    out.push_back({"Repetitions" + name, {"run", flag}, 2, flag + ": must be a whole number from 1 to 2147483647"});
  }
  for (const auto& [name, option] : std::vector<Named>{
           {"Variant", "--variant"}, {"Seq", "--seq"}, {"Dtype", "--dtype"}, {"Device", "--device"}, {"Out", "--out"}}) {
    out.push_back({"Empty" + name, {"run", option, ""}, 2, option + ": empty value"});
  }
  for (const auto& [name, v] : std::vector<Named>{
           {"Negative", "-1"}, {"Past64Bits", "18446744073709551616"}, {"Fraction", "1.5"}}) {
    out.push_back({"Seed" + name, {"run", "--seed", v}, 2,
                   "--seed: '" + v + "' is not a whole number from 0 to 18446744073709551615"});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(BadOptions, CliRejects, ::testing::ValuesIn(bad_options()),
                         [](const auto& info) { return info.param.name; });

TEST(Cli, LargestSeedAndTimeoutAreAccepted) {
  const std::string dir = test::temp_dir("limits");
  const auto r = test::run_pebench({"run", "--variant", "abs.learned", "--seq", "8", "--dtype", "f32", "--seed",
                                    "18446744073709551615", "--timeout", "86400", "--benchmark_min_time=0.01",
                                    "--benchmark_repetitions=1", "--quiet", "--out", dir + "/r.json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(dir + "/r.json");
  const auto rep = nlohmann::json::parse(in);
  EXPECT_EQ(rep["run"]["seed"].get<uint64_t>(), 18446744073709551615u);
}

// Interleaved repetitions switch cases every repetition: each switch runs the
// case unrecorded first (--warmup), and the samples leave those runs out.
TEST(Cli, WarmupRunsBeforeEverySwitchAndIsNotSampled) {
  const std::string dir = test::temp_dir("warmup");
  auto run = [&](const std::string& warmup) {
    const std::string out = dir + "/w" + warmup + ".json";
    const auto r = test::run_pebench({"run", "--variant", "abs.learned,rope.apply", "--seq", "8", "--dtype", "f32",
                                      "--warmup", warmup, "--benchmark_min_time=0.001", "--benchmark_repetitions=3",
                                      "--benchmark_enable_random_interleaving=true", "--no-peak", "--quiet", "--out",
                                      out});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    std::ifstream in(out);
    return nlohmann::json::parse(in);
  };
  const auto warm = run("0.002");
  EXPECT_EQ(warm["run"]["warmup_s"].get<double>(), 0.002);
  for (const auto& c : warm["results"]) {
    // Every case is switched to at least once (its first repetition; random
    // order may run two of its repetitions back to back), and 2 ms of a case
    // this small (well under 0.5 ms a run) is several runs.
    EXPECT_GE(c["warmup_runs"].get<uint64_t>(), 3u) << c["variant"];
    EXPECT_GE(c["time_ns"]["samples"].size(), 3u) << c["variant"];
  }
  const auto cold = run("0");
  EXPECT_EQ(cold["run"]["warmup_s"].get<double>(), 0.0);
  for (const auto& c : cold["results"]) EXPECT_EQ(c["warmup_runs"].get<uint64_t>(), 0u) << c["variant"];
}

// run --out onto a read-only file: refused before any case runs, the file untouched.
TEST(Cli, RunRefusesToReplaceAReadOnlyReport) {
  namespace fs = std::filesystem;
  const std::string dir = test::temp_dir("readonly");
  const std::string out = dir + "/kept.json";
  std::ofstream(out) << "{}";
  fs::permissions(out, fs::perms::owner_read);
  const auto r = test::run_pebench({"run", "--variant", "abs.learned", "--seq", "8", "--dtype", "f32", "--quiet",
                                    "--benchmark_min_time=0.01", "--out", out});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("error: " + out + " is read-only; not replacing it"), std::string::npos) << r.out;
  EXPECT_EQ(test::read_file(out), "{}");
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all, fs::perms::owner_read);
}

// A discrete GPU's memory path on the test device: every case validates
// with its operands behind staging copies, and the report says which path ran.
TEST(Cli, MemoryDiscreteValidatesAndIsRecorded) {
  const std::string dir = test::temp_dir("memory");
  for (const char* mode : {"discrete", "host"}) {
    SCOPED_TRACE(mode);
    const std::string out = dir + "/" + mode + ".json";
    const auto r = test::run_pebench({"run", "--variant", "attn.nope,attn.t5,rope.apply,abs.learned", "--seq", "33",
                                      "--kv-seq", "47", "--heads", "4", "--kv-heads", "2", "--dim", "16", "--memory",
                                      mode, "--out", out, "--quiet", "--benchmark_min_time=0.001"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto rep = nlohmann::json::parse(test::read_file(out));
    EXPECT_EQ(rep["devices"][0]["memory"], mode);
    ASSERT_FALSE(rep["results"].empty());
    for (const auto& res : rep["results"]) {
      EXPECT_EQ(res["status"], "ok") << res.dump();
      EXPECT_TRUE(res["validation"]["passed"].get<bool>()) << res.dump();
    }
  }
  const auto bad = test::run_pebench({"run", "--variant", "abs.learned", "--memory", "vram", "--out", dir + "/b.json"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("vram"), std::string::npos) << bad.out;
}

TEST(Cli, DevicesJsonListsTheTestDevice) {
  const auto r = test::run_pebench({"devices", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_FALSE(j.empty());
  for (const char* k : {"name", "driver_version", "api_version", "subgroup_size", "limits", "features"}) {
    EXPECT_TRUE(j[0].contains(k)) << k;
  }
}

TEST(Cli, ListShowsEveryVariantWithParamsAndTensors) {
  const auto r = test::run_pebench({"list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  std::set<std::string> ids;
  for (const auto& v : j) {
    ids.insert(v["id"]);
    EXPECT_FALSE(v["impls"].empty());
    EXPECT_FALSE(v["tensors"].empty()) << v["id"];
    bool has_dtype = false;
    for (const auto& p : v["params"]) has_dtype = has_dtype || p["key"] == "dtype";
    EXPECT_TRUE(has_dtype);
  }
  for (const char* id : {"abs.sinusoidal", "abs.learned", "rope.apply"}) EXPECT_TRUE(ids.count(id)) << id;
}

TEST(Cli, QuickPresetCoversEveryVariantInBothDtypes) {
  const std::string dir = test::temp_dir("quick");
  const auto r = test::run_pebench({"run", "--preset", "quick", "--out", dir + "/q.json", "--quiet",
                                    "--benchmark_min_time=0.01", "--benchmark_repetitions=1", "--no-validate"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(dir + "/q.json");
  const auto rep = nlohmann::json::parse(in);
  const auto listed = nlohmann::json::parse(test::run_pebench({"list", "--json"}).out);
  std::set<std::string> covered;
  for (const auto& res : rep["results"]) covered.insert(res["variant"].get<std::string>() + "/" + res["dtype"].get<std::string>());
  for (const auto& v : listed) {
    for (const char* dtype : {"f32", "f16"}) EXPECT_TRUE(covered.count(v["id"].get<std::string>() + "/" + dtype)) << v["id"] << " " << dtype;
  }
}

}  // namespace
}  // namespace pebench
