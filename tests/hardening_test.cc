// Issue 40 (Hardening II), one test per class of problem: where pebench may
// write (io/output_file.h), what it reads (io/input_file.h), sweeps counted
// before they are built, checked numbers, signals, device profiles that may
// only tighten the device. HostHardening never opens a Vulkan device (every
// input is refused before one opens); Hardening runs cases on the test device.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/format_units.h"
#include "analysis/printable.h"
#include "harness/engine/device_profile.h"
#include "harness/contract/errors.h"
#include "io/checked_number.h"
#include "io/input_file.h"
#include "io/output_file.h"
#include "test_util.h"

namespace pebench {
namespace {

namespace fs = std::filesystem;

// `args` under `timeout 60`: a hang is exit 124, not a stuck test.
test::ProcessResult bounded(const std::vector<std::string>& args) {
  std::vector<std::string> all{"-s", "KILL", "60", PEBENCH_EXE};
  all.insert(all.end(), args.begin(), args.end());
  return test::run_program("timeout", all);
}

void expect_one_line_error(const test::ProcessResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(message), std::string::npos) << "output lacks '" << message << "':\n" << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

std::string profile_json(const std::string& limits) {
  return R"({"capabilities": {"c": {"properties": {"VkPhysicalDeviceProperties": {"limits": {)" + limits + "}}}}}}";
}

// Nothing pebench writes may be a device, a FIFO or a directory: it was
// replaced by a regular file before (as root, --out /dev/null would replace
// the system's), and /dev/full took a report without an error.
TEST(HostHardening, OutputsMustBeRegularFiles) {
  const std::string dir = test::temp_dir("out");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const std::string report = dir + "/r.json";
  std::ofstream(report) << test::read_file(std::string(PEBENCH_SOURCE_DIR) + "/tests/data/vendor_a.json");
  for (const std::string& target : {fifo, std::string("/dev/full"), dir}) {
    expect_one_line_error(bounded({"run", "--variant", "abs.learned", "--out", target}),
                          "--out " + target + ": is ");
    expect_one_line_error(bounded({"run", "--variant", "abs.learned", "--out", dir + "/ok.json",
                                   "--benchmark_out=" + target}),
                          "--benchmark_out " + target + ": is ");
    expect_one_line_error(bounded({"report", report, "-o", target}), "-o " + target + ": is ");
  }
  struct stat st {};
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // A character device made here, where the test may make one (root).
  const std::string chr = dir + "/null";
  if (mknod(chr.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    expect_one_line_error(bounded({"run", "--variant", "abs.learned", "--out", chr}),
                          "--out " + chr + ": is a character device, not a regular file");
    ASSERT_EQ(stat(chr.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
  }
  EXPECT_THROW(write_file_atomic(fifo, "x"), OutputPathError);
}

// An output may not be a file the run reads, nor another output of it.
TEST(HostHardening, OutputsNeverReplaceInputsOrEachOther) {
  const std::string dir = test::temp_dir("inputs");
  const std::string profile = dir + "/phone.json";
  const std::string text = profile_json(R"("maxComputeSharedMemorySize": 16384)");
  std::ofstream(profile) << text;
  expect_one_line_error(bounded({"run", "--variant", "abs.learned", "--emulate", profile, "--out", profile}),
                        "--out " + profile + ": the same file as " + profile + ", an input of this run");
  expect_one_line_error(bounded({"run", "--variant", "abs.learned", "--emulate", profile, "--out", dir + "/r.json",
                                 "--benchmark_out=" + profile}),
                        "--benchmark_out " + profile + ": the same file as");
  EXPECT_EQ(test::read_file(profile), text);
  expect_one_line_error(bounded({"run", "--variant", "abs.learned", "--out", dir + "/r.json",
                                 "--benchmark_out=" + dir + "/./r.json"}),
                        "another output of this run writes the same file");
}

// Two runs to one path: the second is refused with the holder, not merged.
TEST(HostHardening, ASecondWriterOfOnePathIsRefused) {
  const std::string dir = test::temp_dir("lock");
  const std::string out = dir + "/r.json";
  const int fd = ::open((out + ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  ASSERT_EQ(::write(fd, "4242\n", 5), 5);
  expect_one_line_error(bounded({"run", "--variant", "abs.learned", "--out", out}),
                        "--out " + out + ": another pebench (pid 4242) is writing it");
  ::close(fd);
  EXPECT_FALSE(fs::exists(out));
}

// Inputs: regular files only, opened without blocking, read up to a cap.
TEST(HostHardening, InputsAreRegularFilesReadToACap) {
  const std::string dir = test::temp_dir("reads");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  expect_one_line_error(bounded({"run", "--emulate", fifo}), "--emulate " + fifo + ": is a FIFO, not a device profile file");
  expect_one_line_error(bounded({"run", "--emulate", "/dev/zero"}), "is a character device, not a device profile file");
  expect_one_line_error(bounded({"compare", fifo, fifo}), fifo + ": is a FIFO, not a report file");
  expect_one_line_error(bounded({"run", "--tune-from", "/dev/zero"}), "/dev/zero: is a character device");
  // A regular file past the cap: refused by its size, before it is read.
  const std::string big = dir + "/big.json";
  { std::ofstream(big) << std::string(100, ' '); }
  fs::resize_file(big, (uint64_t(16) << 20) + 1);
  expect_one_line_error(bounded({"run", "--emulate", big}), "larger than 16777216 bytes, not a device profile");
  EXPECT_THROW(read_input_file(big, 1000, "report"), InputFileError);
}

// Sweeps are counted before they are built: long lists are refused at once
// with the count (they took 6 GB in 19 s before), --max-cases raises the cap.
TEST(HostHardening, SweepsAreCountedBeforeTheyAreBuilt) {
  std::string many;
  for (int i = 1; i <= 10000; ++i) many += (i > 1 ? "," : "") + std::to_string(i);
  const auto r = bounded({"run", "--seq", many, "--heads", many});
  expect_one_line_error(r, "over the limit of 100000; narrow it, or raise the limit with --max-cases");
  EXPECT_NE(r.out.find("the sweep has up to "), std::string::npos) << r.out;
  expect_one_line_error(bounded({"run", "--variant", "abs.learned", "--seq", "1,2,3", "--max-cases", "2"}),
                        "the sweep has at least 3 cases");
  for (const std::string v : {"0", "-5", "2147483648"}) {
    expect_one_line_error(bounded({"run", "--variant", "abs.learned", "--seq", v}),
                          "invalid value '" + v + "' for parameter seq: must be from 1 to 2147483647");
  }
  expect_one_line_error(bounded({"run", "--max-cases", "0"}), "--max-cases: '0' is not a whole number");
}

// One checked parser for every number: ours and Google Benchmark's. Each
// of these hung, wrapped, printed usage with exit 0 or was accepted before.
TEST(HostHardening, EveryNumberAndFlagValueIsChecked) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "--benchmark_min_time=nan"}, "--benchmark_min_time=nan: expected seconds"},
      {{"run", "--benchmark_min_time=inf"}, "--benchmark_min_time=inf: expected seconds"},
      {{"run", "--benchmark_min_time=1e400"}, "--benchmark_min_time=1e400: expected seconds"},
      {{"run", "--benchmark_min_time=-1"}, "--benchmark_min_time=-1: expected seconds"},
      {{"run", "--benchmark_min_time=5x"}, "--benchmark_min_time=5x: expected seconds"},
      {{"run", "--benchmark_min_warmup_time=1e400"}, "--benchmark_min_warmup_time=1e400: expected seconds"},
      {{"run", "--benchmark_time_unit=bogus"}, "--benchmark_time_unit=bogus: expected ns, us, ms or s"},
      {{"run", "--benchmark_enable_random_interleaving=maybe"}, "expected true or false"},
      {{"run", "--benchmark_color=purple"}, "--benchmark_color=purple: expected auto, true or false"},
      {{"run", "--benchmark_nonsense=1"}, "unknown option '--benchmark_nonsense=1'"},
      {{"compare", "--min-samples=-1", "a", "b"}, "--min-samples: '-1' is not a whole number from 0"},
      {{"compare", "--load-neighbours=-1", "a", "b"}, "--load-neighbours: '-1' is not a whole number from 0"},
      {{"compare", "--alpha=nan", "a", "b"}, "--alpha: 'nan' is not a finite number"},
      {{"compare", "--threshold=inf", "a", "b"}, "--threshold: 'inf' is not a finite number"},
      {{"run", "--param", "factor=1e400"}, "invalid value '1e400' for parameter factor"},
  };
  for (const auto& [args, message] : cases) expect_one_line_error(bounded(args), message);
  EXPECT_FALSE(parse_real("nan", 0, 1));
  EXPECT_FALSE(parse_real(" 1", 0, 1));
  EXPECT_FALSE(parse_real("0x10", 0, 100));  // strtod's hexadecimal: found by CliProperty
  EXPECT_FALSE(parse_real("1e-400", 0, 1));
  EXPECT_FALSE(parse_whole("99999999999999999999", 0, INT64_MAX));
  EXPECT_EQ(parse_whole("-3", -5, 5), -3);
  EXPECT_THROW(checked_real("--x", "1e400", 0, 1), BadValueError);
}

// Output to a full stdout is an error, not a silent exit 0.
TEST(HostHardening, AFullStdoutIsAnError) {
  for (const std::string cmd : {"list --json", "compare --format json DATA/vendor_a.json DATA/vendor_b.json"}) {
    std::string line = cmd;
    const std::string data = std::string(PEBENCH_SOURCE_DIR) + "/tests/data";
    for (size_t at; (at = line.find("DATA")) != std::string::npos;) line.replace(at, 4, data);
    const auto r = test::run_program("sh", {"-c", std::string(PEBENCH_EXE) + " " + line + " > /dev/full"});
    EXPECT_EQ(r.exit_code, 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("cannot write stdout"), std::string::npos) << cmd << ": " << r.out;
  }
}

// --dump onto a file or a folder it cannot write: refused before any case.
TEST(HostHardening, DumpFolderIsCheckedUpFront) {
  const std::string dir = test::temp_dir("dump");
  const std::string file = dir + "/file";
  std::ofstream(file) << "x";
  expect_one_line_error(bounded({"run", "--variant", "abs.learned", "--out", dir + "/r.json", "--dump", file}),
                        "--dump " + file + ": is a regular file, not a directory");
  EXPECT_EQ(test::read_file(file), "x");
}

// Profile limits are read as their Vulkan type and may only tighten.
TEST(HostHardening, ProfileLimitsAreCheckedAgainstTheirVulkanType) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"("minStorageBufferOffsetAlignment": 1e300)", "not a whole number from 0 to 18446744073709551615 (VkDeviceSize)"},
      {R"("maxBoundDescriptorSets": 0)", "not a whole number from 1 to 4294967295 (uint32_t)"},
      {R"("maxMemoryAllocationSize": 0)", "not a whole number from 1 to"},
      {R"("maxStorageBufferRange": 4294967296)", "not a whole number from 1 to 4294967295"},
      {R"("maxStorageBufferRange": "1 GiB")", "limit maxStorageBufferRange = \"1 GiB\": not a number"},
      {R"("maxComputeWorkGroupSize": [64, -1, 1])", "limit maxComputeWorkGroupSize"},
  };
  for (const auto& [limits, message] : bad) {
    try {
      parse_profile_json(profile_json(limits), "p.json");
      ADD_FAILURE() << limits << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  // The largest VkDeviceSize is a valid alignment; the device keeps the
  // stricter value, with no wrap to 0.
  const DeviceProfile p = parse_profile_json(
      profile_json(R"("minStorageBufferOffsetAlignment": 18446744073709551615, "maxStorageBufferRange": 1024)"), "p");
  PhysicalDeviceInfo real;
  real.type = VK_PHYSICAL_DEVICE_TYPE_CPU;
  real.limits.min_storage_buffer_offset_alignment = 16;
  real.limits.max_storage_buffer_range = 1u << 30;
  const PhysicalDeviceInfo e = apply_profile(real, p);
  EXPECT_EQ(e.limits.min_storage_buffer_offset_alignment, UINT64_MAX);
  EXPECT_EQ(e.limits.max_storage_buffer_range, 1024u);
  // No deviceType: the device keeps its own.
  EXPECT_EQ(e.type, VK_PHYSICAL_DEVICE_TYPE_CPU);
}

// A report's strings and a command line's values reach a terminal escaped:
// no escape sequence, no forged line.
TEST(HostHardening, ControlCharactersAreEscapedInText) {
  const std::string dir = test::temp_dir("escape");
  auto rep = nlohmann::json::parse(test::read_file(std::string(PEBENCH_SOURCE_DIR) + "/tests/data/vendor_a.json"));
  for (auto& d : rep["devices"]) d["name"] = "GPU \x1b[2J\x1b]0;owned\x07\nFAKE LINE \u009b";
  const std::string base = dir + "/base.json";
  std::ofstream(base) << rep.dump();
  for (const std::string format : {"text", "md"}) {
    const auto r = bounded({"compare", "--format", format, base, base});
    EXPECT_NE(r.out.find("GPU \\x1b[2J"), std::string::npos) << r.out;  // the name is shown, escaped
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("\nFAKE LINE"), std::string::npos) << r.out;
  }
  const auto bad = bounded({"run", "--variant", "\x1b[31mred"});
  expect_one_line_error(bad, "unknown variant '\\x1b[31mred'");
  EXPECT_EQ(printable("a\tb\x7f\xc2\x85\xc3\xa9"), "a\\x09b\\x7f\\u0085\xc3\xa9");
}

// A driver variable naming garbage, a missing file or a manifest whose
// library is gone gave a bare VkResult (VK_ERROR_OUT_OF_HOST_MEMORY for
// garbage): now one line naming the variable and the file, exit 2.
TEST(HostHardening, ABadDriverManifestIsNamed) {
  const std::string dir = test::temp_dir("icd");
  const std::string garbage = dir + "/garbage.json", no_lib = dir + "/no_lib.json", missing = dir + "/missing.json";
  std::ofstream(garbage) << "garbage\n";
  std::ofstream(no_lib) << R"({"file_format_version": "1.0.0", "ICD": {"library_path": ")" << dir
                        << R"(/libnone.so", "api_version": "1.3.0"}})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {garbage, garbage + ": not JSON, so not a Vulkan driver manifest"},
      {missing, missing + ": No such file or directory"},
      {no_lib, no_lib + ": its library " + dir + "/libnone.so does not exist"},
  };
  for (const auto& [file, message] : cases) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"devices"}, {"run", "--variant", "abs.learned", "--out", dir + "/r.json"}}) {
      SCOPED_TRACE(file + " " + args[0]);
      const auto r = test::run_pebench(args, {"VK_DRIVER_FILES=" + file});
      expect_one_line_error(r, "error: no usable Vulkan driver (vkCreateInstance: VK_ERROR_");
      EXPECT_NE(r.out.find("VK_DRIVER_FILES " + message + "; point VK_DRIVER_FILES at a driver manifest"),
                std::string::npos)
          << r.out;
    }
  }
  EXPECT_FALSE(fs::exists(dir + "/r.json"));
}

// --- on the test device --------------------------------------------------------

std::string run_args(const std::string& out) {
  return "run --variant abs.learned,rope.apply,abs.sinusoidal --seq 8,16,32,64 --dtype f32,f16 --no-peak --quiet "
         "--benchmark_min_time=0.2 --out " + out;
}

// SIGTERM and SIGHUP end a run as SIGINT does: finished cases kept, the rest
// interrupted, no temporary or lock file left, exit 128 + the signal.
TEST(Hardening, TermAndHupEndARunLikeInt) {
  const std::string dir = test::temp_dir("signals");
  for (const auto& [name, code] : std::vector<std::pair<std::string, int>>{{"TERM", 143}, {"HUP", 129}}) {
    const std::string out = dir + "/" + name + ".json";
    // Wait for the first report, then signal.
    const std::string script = std::string(PEBENCH_EXE) + " " + run_args(out) + " & p=$!; i=0; while [ ! -s " + out +
                               " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; sleep 0.5; kill -" + name +
                               " $p; wait $p; echo rc=$?";
    const auto r = test::run_program("sh", {"-c", script});
    EXPECT_NE(r.out.find("rc=" + std::to_string(code)), std::string::npos) << name << ": " << r.out;
    std::ifstream in(out);
    const auto rep = nlohmann::json::parse(in);
    size_t interrupted = 0;
    for (const auto& c : rep["results"]) interrupted += c["status"] == "interrupted";
    EXPECT_GT(interrupted, 0u) << name;
    EXPECT_EQ(rep["results"].size(), rep["run"]["cases"].get<size_t>()) << name;
  }
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    EXPECT_EQ(f.find(".tmp."), std::string::npos) << f;
    EXPECT_EQ(f.find(".lock"), std::string::npos) << f;
  }
}

// A file size limit (SIGXFSZ) or a full disk mid-sweep: the old report stays
// whole, no temporary file is left, and the exit says why.
TEST(Hardening, AFileSizeLimitLeavesTheLastWholeReport) {
  const std::string dir = test::temp_dir("xfsz");
  const std::string out = dir + "/r.json";
  const std::string old = "{\"old\": true}\n";
  std::ofstream(out) << old;
  const auto r = test::run_program("sh", {"-c", "ulimit -f 4; " + std::string(PEBENCH_EXE) + " " + run_args(out) +
                                                   "; echo rc=$?"});
  EXPECT_NE(r.out.find("rc=153"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("File too large"), std::string::npos) << r.out;
  EXPECT_EQ(test::read_file(out), old);
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename().string(), "r.json");
}

// --benchmark_out is written whole at the end: an interrupted run keeps the
// old file, a finished one replaces it.
TEST(Hardening, BenchmarkOutIsReplacedAtomically) {
  const std::string dir = test::temp_dir("gbout");
  const std::string gb = dir + "/gb.json";
  const auto r = bounded({"run", "--variant", "abs.learned", "--seq", "8", "--dtype", "f32", "--no-peak", "--quiet",
                          "--benchmark_min_time=0.01", "--out", dir + "/r.json", "--benchmark_out=" + gb});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(test::read_file(gb));
  EXPECT_FALSE(j["benchmarks"].empty());
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().find(".lock"), std::string::npos) << e.path();
  }
}

// A case past --timeout errors, and the device stays usable: the cases after
// it run (before, every later case errored "the device is unusable").
TEST(Hardening, ATimeoutLeavesTheDeviceUsable) {
  const std::string dir = test::temp_dir("timeout");
  const std::string out = dir + "/r.json";
  const auto r = bounded({"run", "--variant", "abs.learned,rope.apply", "--seq", "4096", "--dtype", "f32", "--no-peak",
                          "--quiet", "--benchmark_min_time=0.01", "--inject-slowdown", "abs.learned=100",
                          "--timeout", "0.3", "--out", out});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto rep = nlohmann::json::parse(test::read_file(out));
  ASSERT_EQ(rep["results"].size(), 2u);
  for (const auto& c : rep["results"]) {
    if (c["variant"] == "abs.learned") {
      EXPECT_EQ(c["status"], "error");
      EXPECT_NE(c["reason"].get<std::string>().find("VK_TIMEOUT"), std::string::npos) << c["reason"];
      EXPECT_NE(c["reason"].get<std::string>().find("stays usable"), std::string::npos) << c["reason"];
    } else {
      EXPECT_EQ(c["status"], "ok") << c["reason"];
    }
  }
}

// A value the dtype cannot represent is skipped with the reason, not failed
// (which says the kernel is wrong): a parameter past f32 (the kernels take
// parameters as f32), or an exact output past the output dtype's range.
TEST(Hardening, UnrepresentableCasesAreSkipped) {
  const std::string dir = test::temp_dir("unrepresentable");
  struct Probe {
    std::vector<std::string> args;
    std::string status, reason;
  };
  const std::vector<Probe> probes = {
      {{"--variant", "rope.apply", "--param", "attention_factor=1e300", "--dtype", "f32"},
       "skipped",
       "attention_factor=1e+300 cannot be represented in f32, the type the kernels take it in"},
      {{"--variant", "abs.hierarchical", "--param", "alpha=1e300", "--dtype", "f32"},
       "skipped",
       "alpha=1e+300 cannot be represented in f32"},
      {{"--variant", "rope.apply", "--param", "attention_factor=1e30", "--dtype", "f16"},
       "skipped",
       "is past f16's largest finite value (65504): the dtype cannot represent this case"},
      {{"--variant", "rope.apply", "--param", "attention_factor=3e38", "--dtype", "f32"},
       "skipped",
       "is past f32's largest finite value (3.40282e+38): the dtype cannot represent this case"},
      // Within range: validated as before.
      {{"--variant", "rope.apply", "--param", "attention_factor=1e30", "--dtype", "f32"}, "ok", ""},
  };
  for (const Probe& p : probes) {
    SCOPED_TRACE(p.args[1] + " " + p.args[3] + " " + p.args[5]);
    const std::string out = dir + "/r.json";
    std::vector<std::string> args = {"run", "--seq", "8", "--no-peak", "--quiet", "--benchmark_min_time=0.001",
                                     "--out", out};
    args.insert(args.end(), p.args.begin(), p.args.end());
    const auto r = bounded(args);
    const auto rep = nlohmann::json::parse(test::read_file(out));
    ASSERT_EQ(rep["results"].size(), 1u) << r.out;
    const auto& c = rep["results"][0];
    EXPECT_EQ(c["status"], p.status) << c.dump();
    EXPECT_NE(c.value("reason", "").find(p.reason), std::string::npos) << c.dump();
    if (p.status == "skipped") {
      EXPECT_TRUE(c["validation"].is_null()) << c.dump();
    }
  }
}

// Host memory exhausted inside a case (std::bad_alloc) ends it `unsupported`
// as the README promises for memory, not `error: std::bad_alloc`. Which
// address-space limit makes the host tensors fail rather than lavapipe's
// device allocation (VK_ERROR_OUT_OF_DEVICE_MEMORY, unsupported already) or
// start-up depends on the machine, so the test walks a range of limits
// (on the 2-core VM, 1.1 to 1.2 GB gave std::bad_alloc before the fix).
TEST(Hardening, HostMemoryExhaustionIsUnsupported) {
  const std::string dir = test::temp_dir("oom");
  bool seen = false;
  for (int kb = 900000; kb <= 1500000; kb += 50000) {
    const std::string out = dir + "/r" + std::to_string(kb) + ".json";
    test::run_program("sh", {"-c", "ulimit -v " + std::to_string(kb) + "; timeout -s KILL 120 " +
                                       std::string(PEBENCH_EXE) +
                                       " run --variant abs.learned --seq 8,65536 --heads 4 --dim 64 --dtype f32 "
                                       "--no-peak --quiet --benchmark_min_time=0.001 --out " + out});
    if (!fs::exists(out)) continue;  // too little to start
    const auto rep = nlohmann::json::parse(test::read_file(out));
    for (const auto& c : rep["results"]) {
      const std::string reason = c.value("reason", "");
      EXPECT_EQ(reason.find("bad_alloc") != std::string::npos && c["status"] != "unsupported", false)
          << kb << ": " << c.dump();
      if (c["status"] == "unsupported" && reason.find("the host could not allocate") != std::string::npos) seen = true;
    }
  }
  if (!seen) GTEST_SKIP() << "no limit made a case's host allocation fail on this machine";
}

// A profile's small limits print exactly: maxStorageBufferRange 1 printed
// "0.0 MiB" in a case's reason and "0 MiB" in `devices`.
TEST(Hardening, SmallLimitsPrintInBytes) {
  const std::string dir = test::temp_dir("small");
  const std::string profile = dir + "/p.json";
  std::ofstream(profile) << profile_json(R"("maxStorageBufferRange": 1)");
  const auto devices = bounded({"devices", "--emulate", profile});
  EXPECT_EQ(devices.exit_code, 0) << devices.out;
  EXPECT_NE(devices.out.find("max storage buffer 1 byte\n"), std::string::npos) << devices.out;
  const std::string out = dir + "/r.json";
  bounded({"run", "--variant", "abs.learned", "--seq", "4", "--dim", "8", "--heads", "1", "--dtype", "f32",
           "--no-peak", "--quiet", "--emulate", profile, "--out", out});
  const auto rep = nlohmann::json::parse(test::read_file(out));
  ASSERT_EQ(rep["results"].size(), 1u);
  EXPECT_EQ(rep["results"][0]["status"], "unsupported");
  const std::string reason = rep["results"][0]["reason"];
  EXPECT_NE(reason.find(" bytes, more than maxStorageBufferRange (1 byte)"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("MiB"), std::string::npos) << reason;
  // Near a mebibyte, where one decimal would print both alike, exact bytes.
  EXPECT_EQ(format_bytes(1048575), "1048575 bytes");
  EXPECT_EQ(format_bytes(128.0 * 1048576), "128.0 MiB");
  EXPECT_EQ(format_bytes_pair(1048600, 1048577), std::make_pair(std::string("1048600 bytes"),
                                                                 std::string("1048577 bytes")));
}

}  // namespace
}  // namespace pebench
