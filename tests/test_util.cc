#include "test_util.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "harness/registry.h"
#include "harness/sweep.h"

namespace pebench::test {
namespace {

struct Shared {
  std::unique_ptr<Instance> instance;
  std::unique_ptr<GpuContext> gpu;
};

Shared& shared() {
  static Shared s;
  return s;
}

class GpuEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    Shared& s = shared();
    if (!s.instance) return;
    s.gpu.reset();  // destruction is validated too
    const uint64_t errors = s.instance->validation_error_count();
    const auto messages = s.instance->validation_messages();
    EXPECT_EQ(errors, 0u) << "Vulkan validation errors during the tests; first: "
                          << (messages.empty() ? "" : messages.front());
    s.instance.reset();
  }
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new GpuEnvironment);

void ensure_open() {
  Shared& s = shared();
  if (s.instance) return;
  InstanceOptions options;
  options.validation = true;
  s.instance = Instance::Create(options).value();
  auto devices = s.instance->physical_devices().value();
  if (devices.empty()) throw std::runtime_error("no Vulkan device (set VK_DRIVER_FILES to lavapipe's ICD)");
  uint32_t index = 0;
  if (const char* e = std::getenv("PEBENCH_TEST_DEVICE")) index = static_cast<uint32_t>(std::atoi(e));
  auto info = query_physical_device(devices.at(index), index).value();
  s.gpu = GpuContext::Create(*s.instance, info).value();
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Instance& instance() {
  ensure_open();
  return *shared().instance;
}

GpuContext& gpu() {
  ensure_open();
  return *shared().gpu;
}

void expect_no_validation_errors(uint64_t before) {
  const uint64_t now = instance().validation_error_count();
  const auto messages = instance().validation_messages();
  EXPECT_EQ(now, before) << "Vulkan validation errors; first: " << (messages.empty() ? "" : messages.front());
}

std::vector<CaseResult> run_cases(const std::string& variant, const std::map<std::string, std::string>& axes,
                                  RunOptions options) {
  SweepSpec spec;
  spec.variant_globs = {variant};
  for (const auto& [k, v] : axes) spec.axes[k] = split_list(v, k);
  std::vector<CaseResult> results;
  GpuContext& ctx = gpu();
  for (const auto& pc : expand_sweep(Registry::instance(), spec)) {
    CaseResult r;
    r.variant = pc.variant->id();
    r.params = pc.params;
    r.impl = r.params.impl();
    r.dtype = r.params.s("dtype");
    r.id = case_id(ctx.info().index, *pc.variant, r.params);
    r.label = r.params.canonical();
    if (!pc.rejected.empty()) {
      r.status = CaseStatus::kSkipped;
      r.reason = pc.rejected;
    } else {
      const uint64_t before = instance().validation_error_count();
      {
        CaseRun run(ctx, *pc.variant, options, r);
        if (run.setup()) {
          std::vector<double> samples;
          for (int i = 0; i < 3; ++i) samples.push_back(run.time_once());
          r.time = time_stats(samples);
        }
      }
      r.vk_validation_errors = instance().validation_error_count() - before;
    }
    results.push_back(std::move(r));
  }
  return results;
}

CaseResult run_case(const std::string& variant, const std::map<std::string, std::string>& axes, RunOptions options) {
  auto results = run_cases(variant, axes, options);
  EXPECT_EQ(results.size(), 1u) << "the axes select " << results.size() << " cases";
  return results.empty() ? CaseResult{} : results.front();
}

BuiltCase build_case(const std::string& variant, const std::map<std::string, std::string>& axes, uint64_t seed) {
  SweepSpec spec;
  spec.variant_globs = {variant};
  for (const auto& [k, v] : axes) spec.axes[k] = split_list(v, k);
  auto planned = expand_sweep(Registry::instance(), spec);
  if (planned.size() != 1) throw std::runtime_error(fmt::format("{} cases, expected one", planned.size()));
  if (!planned[0].rejected.empty()) throw std::runtime_error("rejected: " + planned[0].rejected);
  BuiltCase b;
  b.variant = planned[0].variant;
  b.params = planned[0].params;
  b.impl = b.variant->make(b.params);
  for (const auto& t : b.impl->tensors()) {
    if (t.role != TensorRole::kScratch) b.tensors.emplace(t.name, HostTensor(t));
  }
  Rng rng(seed);
  b.impl->fill_inputs(b.tensors, rng);
  return b;
}

Reference BuiltCase::reference() const {
  const auto descs = impl->tensors();
  Reference ref(descs);
  std::vector<int64_t> rows(static_cast<size_t>(impl->reference_rows()));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
  impl->reference(tensors, rows, ref);
  return ref;
}

ProcessResult run_pebench(const std::vector<std::string>& args) {
  std::string cmd = shell_quote(PEBENCH_EXE);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " 2>&1";
  ProcessResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string temp_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "global";
  auto dir = std::filesystem::temp_directory_path() / fmt::format("pebench-test-{}", getpid()) / test / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace pebench::test
