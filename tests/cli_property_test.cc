// The property behind issue 40: whatever the command line, pebench neither
// crashes nor hangs, exits 0, 1, 2, 130 or 143, leaves no temporary file
// and never changes a file it was given to read. 2,000 random invocations
// (PEBENCH_PROPERTY_RUNS; the seed is PEBENCH_PROPERTY_SEED, else the time,
// and printed) of options, hostile values, paths (FIFOs, a device, a
// directory, a read-only file, corrupt and valid reports and profiles).
// Most fail at parse time; a few run one tiny case. Each is bounded in time
// (a hang is a failure). Needs no GPU: with no Vulkan driver the invocations
// that get as far as a device end with exit 1, as they should.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace pebench {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code = -1;  // -1: killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string err;
};

// Runs pebench with `args`, stdout to /dev/null, stderr kept; killed after
// `limit`.
Outcome invoke(const std::vector<std::string>& args, const std::string& err_path, std::chrono::seconds limit) {
  Outcome o;
  const pid_t pid = fork();
  if (pid == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 1);
    ::dup2(err_fd, 2);
    ::dup2(in_fd, 0);
    std::vector<char*> argv{const_cast<char*>(PEBENCH_EXE)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(PEBENCH_EXE, argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      o.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  o.err = test::read_file(err_path);
  return o;
}

class Generator {
 public:
  Generator(uint64_t seed, std::string dir) : rng_(seed), dir_(std::move(dir)) {}

  std::vector<std::string> next() {
    const int kind = pick(100);
    if (kind < 60) return run();
    if (kind < 80) return compare();
    if (kind < 90) return report();
    if (kind < 96) return info();
    std::vector<std::string> garbage{any_value()};
    for (int i = pick(3); i > 0; --i) garbage.push_back(any_value());
    return garbage;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  template <typename T>
  const T& one(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(static_cast<int>(v.size())))];
  }

  std::string hostile() {
    static const std::vector<std::string> values = {
        "", "-1", "0", "nan", "inf", "-inf", "1e400", "1e-400", "99999999999999999999", "18446744073709551616",
        "abc", "1,,2", ",", "\x1b[31m", "4x", " 5", "0x10", "1.5", "-0", "2147483648", "1e300", std::string(3000, '7'),
        "a=b", "=", "*", "..", "\n"};
    return one(values);
  }
  std::string path() {
    static const std::vector<std::string> names = {"fifo", "chr", "dir", "readonly.json", "report.json", "corrupt.json",
                                                   "empty.json", "profile.json", "badprofile.json", "missing.json",
                                                   "sub/new.json"};
    if (pick(20) == 0) return "/dev/zero";
    return dir_ + "/" + one(names);
  }
  // Where a run may write: never outside the test's folder, never a file
  // the property checks is unchanged unless the run also reads it.
  std::string out_path() {
    if (pick(3) == 0) {
      return dir_ + "/" + one(std::vector<std::string>{"fifo", "chr", "dir", "readonly.json", "sub/new.json"});
    }
    return dir_ + "/out" + std::to_string(pick(4)) + ".json";
  }
  std::string any_value() { return pick(3) == 0 ? path() : hostile(); }
  std::string benign_number() { return one(std::vector<std::string>{"1", "2", "4", "8", "1,2", "4,8"}); }

  // A tiny valid run, then 1 to 4 options changed to random (mostly bad) values.
  std::vector<std::string> run() {
    std::map<std::string, std::string> opts = {
        {"--variant", "abs.learned"}, {"--seq", "4"},       {"--dim", "4"},           {"--heads", "1"},
        {"--dtype", "f32"},           {"--out", out_path()}, {"--max-cases", "16"}};
    std::set<std::string> flags = {"--quiet", "--no-peak", "--benchmark_min_time=0.001"};
    static const std::vector<std::string> keys = {
        "--variant", "--seq", "--kv-seq", "--heads", "--kv-heads", "--dim", "--batch", "--dtype", "--causal",
        "--impl", "--preset", "--device", "--timeout", "--warmup", "--seed", "--max-cases", "--emulate",
        "--tune-from", "--dump", "--out", "--memory", "--param", "--inject-slowdown"};
    static const std::vector<std::string> gb = {
        "--benchmark_min_time", "--benchmark_min_warmup_time", "--benchmark_repetitions", "--benchmark_format",
        "--benchmark_out", "--benchmark_out_format", "--benchmark_filter", "--benchmark_time_unit",
        "--benchmark_color", "--benchmark_enable_random_interleaving", "--benchmark_list_tests",
        "--benchmark_report_aggregates_only", "--benchmark_nonsense"};
    static const std::vector<std::string> toggles = {"--tune", "--compile-only", "--no-validate", "--validate"};
    const int changes = 1 + pick(4);
    for (int i = 0; i < changes; ++i) {
      const int what = pick(10);
      if (what < 6) {
        const std::string& key = one(keys);
        std::string value;
        if (key == "--variant") value = one(std::vector<std::string>{"rope.apply", "abs.sinusoidal", "nosuch", "*"});
        else if (key == "--emulate") value = pick(2) ? path() : one(std::vector<std::string>{"desktop-gpu", "x"});
        else if (key == "--tune-from" || key == "--dump") value = path();
        else if (key == "--out") value = out_path();
        else if (key == "--param") value = one(std::vector<std::string>{"offset", "table_len", "factor", "x"}) + "=" +
                                            (pick(2) ? hostile() : benign_number());
        else if (key == "--warmup" || key == "--timeout") value = pick(4) == 0 ? "0.001" : hostile();
        else value = pick(4) == 0 ? benign_number() : hostile();
        opts[key] = value;
      } else if (what < 9) {
        const std::string& flag = one(gb);
        if (flag == "--benchmark_out") flags.insert(flag + "=" + out_path());
        else if (flag.find("_time") != std::string::npos) flags.insert(flag + "=" + (pick(3) == 0 ? "0.01" : hostile()));
        else flags.insert(flag + "=" + (pick(3) == 0 ? one(std::vector<std::string>{"2", "true", "json", "csv"})
                                                     : hostile()));
      } else {
        flags.insert(one(toggles));
      }
    }
    if (pick(4) == 0) opts.erase(one(std::vector<std::string>{"--seq", "--dim", "--variant", "--heads"}));
    std::vector<std::string> args{"run"};
    for (const auto& [k, v] : opts) args.insert(args.end(), {k, v});
    args.insert(args.end(), flags.begin(), flags.end());
    return args;
  }

  std::vector<std::string> compare() {
    std::vector<std::string> args{"compare"};
    for (int i = 1 + pick(3); i > 0; --i) args.push_back(pick(3) ? dir_ + "/report.json" : path());
    static const std::vector<std::string> keys = {"--format", "--threshold", "--alpha", "--time", "--load-neighbours",
                                                  "--min-samples", "--confirm", "--cross-host", "--impl", "--over",
                                                  "--variant-threshold"};
    for (int i = pick(3); i > 0; --i) {
      const std::string& key = one(keys);
      args.insert(args.end(), {key, key == "--confirm" ? path() : pick(3) == 0 ? benign_number() : hostile()});
    }
    if (pick(2)) args.push_back("--gate");
    if (pick(3) == 0) args.push_back("--normalize");
    return args;
  }

  std::vector<std::string> report() {
    std::vector<std::string> args{"report"};
    for (int i = pick(3); i >= 0; --i) args.push_back(pick(2) ? dir_ + "/report.json" : path());
    if (pick(4)) args.insert(args.end(), {"-o", pick(2) ? dir_ + "/page.html" : out_path()});
    return args;
  }

  std::vector<std::string> info() {
    std::vector<std::string> args{one(std::vector<std::string>{"list", "devices", "peak"})};
    if (pick(2)) args.push_back("--json");
    if (args[0] == "devices" && pick(2)) args.insert(args.end(), {"--emulate", pick(2) ? path() : hostile()});
    if (args[0] == "peak") args.insert(args.end(), {"--device", hostile()});
    return args;
  }

  std::mt19937_64 rng_;
  std::string dir_;
};

std::string quoted(const std::vector<std::string>& args) {
  std::string s = "pebench";
  for (const auto& a : args) {
    std::string q;
    for (char c : a) q += (c == '\'' ? std::string("'\\''") : std::string(1, c));
    s += " '" + q + "'";
  }
  return s;
}

TEST(CliProperty, RandomInvocationsNeverCrashHangOrTouchInputs) {
  const std::string dir = test::temp_dir("property");
  const std::string data = std::string(PEBENCH_SOURCE_DIR) + "/tests/data/vendor_a.json";
  const std::string report = test::read_file(data);
  ASSERT_FALSE(report.empty());
  const std::map<std::string, std::string> inputs = {
      {"report.json", report},
      {"corrupt.json", report.substr(0, report.size() / 2)},
      {"empty.json", ""},
      {"readonly.json", report},
      {"profile.json",
       R"({"capabilities": {"c": {"properties": {"VkPhysicalDeviceProperties": {"limits": {"maxComputeSharedMemorySize": 16384}}}}}})"},
      {"badprofile.json",
       R"({"capabilities": {"c": {"properties": {"VkPhysicalDeviceProperties": {"limits": {"maxStorageBufferRange": 1e300}}}}}})"}};
  for (const auto& [name, text] : inputs) std::ofstream(dir + "/" + name) << text;
  fs::permissions(dir + "/readonly.json", fs::perms::owner_read);
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0644), 0);
  fs::create_directories(dir + "/dir");
  if (mknod((dir + "/chr").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) std::ofstream(dir + "/chr") << "";

  const char* runs_env = std::getenv("PEBENCH_PROPERTY_RUNS");
  const char* seed_env = std::getenv("PEBENCH_PROPERTY_SEED");
  const int runs = runs_env ? std::atoi(runs_env) : 2000;
  const uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 10)
                                 : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  std::printf("CliProperty: %d invocations, PEBENCH_PROPERTY_SEED=%llu\n", runs, static_cast<unsigned long long>(seed));
  Generator gen(seed, dir);
  std::map<int, int> codes;
  int failures = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < runs && failures < 10; ++i) {
    const std::vector<std::string> args = gen.next();
    const Outcome o = invoke(args, dir + "/stderr.txt", std::chrono::seconds(30));
    ++codes[o.signal ? -o.signal : o.exit_code];
    std::string why;
    if (o.timed_out) why = "hung (killed after 30 s)";
    else if (o.signal) why = "killed by signal " + std::to_string(o.signal);
    else if (!std::set<int>{0, 1, 2, 130, 143}.count(o.exit_code)) why = "exit " + std::to_string(o.exit_code);
    for (const char* bad : {"terminate called", "AddressSanitizer", "runtime error:", "LeakSanitizer", "Aborted"}) {
      if (why.empty() && o.err.find(bad) != std::string::npos) why = std::string("stderr has '") + bad + "'";
    }
    if (why.empty() && o.exit_code == 2 && o.err.find("error") == std::string::npos) why = "exit 2 without an error line";
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string f = e.path().filename().string();
      if (f.find(".tmp.") == std::string::npos && f.find(".lock") == std::string::npos) continue;
      if (why.empty() && !o.timed_out) why = "left " + f + " behind";
      fs::remove(e.path());  // one failure, not one per later invocation
    }
    if (!why.empty()) {
      ++failures;
      ADD_FAILURE() << "invocation " << i << ": " << why << "\n  " << quoted(args) << "\n" << o.err.substr(0, 2000);
    }
  }
  for (const auto& [name, text] : inputs) {
    EXPECT_EQ(test::read_file(dir + "/" + name), text) << name << " was changed";
  }
  struct stat st {};
  ASSERT_EQ(stat((dir + "/fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_TRUE(fs::is_directory(dir + "/dir"));
  std::string summary;
  for (const auto& [code, n] : codes) summary += " " + std::to_string(code) + ":" + std::to_string(n);
  std::printf("CliProperty: exit codes (code:count)%s in %.0f s\n", summary.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

}  // namespace
}  // namespace pebench
