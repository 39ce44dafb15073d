#include "test_util.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

#include "harness/contract/registry.h"
#include "harness/engine/device_profile.h"
#include "harness/engine/sweep.h"
#include "runtime/buffer.h"
#include "runtime/command_buffer.h"
#include "runtime/pipeline.h"

namespace pebench::test {
namespace {

struct Shared {
  std::unique_ptr<Instance> instance;
  std::unique_ptr<GpuContext> gpu;
  std::map<std::string, std::unique_ptr<GpuContext>> emulated;  // by profile
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
    s.emulated.clear();
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

const ComputePipeline& probe_pipeline(const std::string& name, uint32_t buffers, uint32_t push_bytes, uint32_t wg) {
  PipelineDesc desc;
  desc.name = name;
  desc.buffer_count = buffers;
  desc.push_constant_bytes = push_bytes;
  desc.spec_constants = {wg};
  return gpu().pipeline(name, DType::kF32, desc);
}

std::optional<uint32_t> spec_constant(const PipelineRecord& p, const std::string& name) {
  for (const auto& [n, v] : p.spec_constants) {
    if (n == name) return v;
  }
  return std::nullopt;
}

// The emulated context cached under `key`, made from `profile()` the first time.
static GpuContext& emulated_context(const std::string& key, const std::function<DeviceProfile()>& profile) {
  ensure_open();
  auto& slot = shared().emulated[key];
  if (!slot) slot = GpuContext::Create(*shared().instance, apply_profile(gpu().info(), profile())).value();
  return *slot;
}

GpuContext& gpu_as(const std::string& profile) {
  return emulated_context(profile, [&] { return load_profile(profile); });
}

GpuContext& gpu_as(const DeviceProfile& profile) {
  return emulated_context("built in a test: " + profile.name, [&] { return profile; });
}

void expect_no_validation_errors(uint64_t before) {
  const uint64_t now = instance().validation_error_count();
  const auto messages = instance().validation_messages();
  EXPECT_EQ(now, before) << "Vulkan validation errors; first: " << (messages.empty() ? "" : messages.front());
}

std::vector<CaseResult> run_cases(const std::string& variant, const std::map<std::string, std::string>& axes,
                                  RunOptions options, GpuContext* on) {
  SweepSpec spec;
  spec.variant_globs = {variant};
  for (const auto& [k, v] : axes) spec.axes[k] = split_list(v, k);
  std::vector<CaseResult> results;
  GpuContext& ctx = on ? *on : gpu();
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

PlannedCase plan_one(const std::string& variant, const std::map<std::string, std::string>& axes) {
  SweepSpec spec;
  spec.variant_globs = {variant};
  for (const auto& [k, v] : axes) spec.axes[k] = split_list(v, k);
  auto planned = expand_sweep(Registry::instance(), spec);
  if (planned.size() != 1) throw std::runtime_error(fmt::format("{} cases, expected one", planned.size()));
  return planned[0];
}

PlannedCase plan_accepted(const std::string& variant, const std::map<std::string, std::string>& axes) {
  PlannedCase pc = plan_one(variant, axes);
  if (!pc.rejected.empty()) throw std::runtime_error("rejected: " + pc.rejected);
  return pc;
}

std::unique_ptr<Case> make_case(const std::string& variant, const std::map<std::string, std::string>& axes) {
  const PlannedCase pc = plan_accepted(variant, axes);
  return pc.variant->make(pc.params);
}

BuiltCase build_case(const std::string& variant, const std::map<std::string, std::string>& axes, uint64_t seed) {
  const PlannedCase planned = plan_accepted(variant, axes);
  BuiltCase b;
  b.variant = planned.variant;
  b.params = planned.params;
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

void expect_plain_numbers(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  auto is_word = [&](size_t i) { return i < lower.size() && (std::isalpha(static_cast<unsigned char>(lower[i])) || lower[i] == '_'); };
  for (const std::string word : {"inf", "infinity", "nan"}) {
    for (size_t p = lower.find(word); p != std::string::npos; p = lower.find(word, p + 1)) {
      const bool token = (p == 0 || !is_word(p - 1)) && !is_word(p + word.size());
      EXPECT_FALSE(token) << "'" << text.substr(p > 20 ? p - 20 : 0, 50) << "' shows a non-finite number";
    }
  }
  size_t run = 0, longest = 0;
  for (char ch : text) longest = std::max(longest, run = std::isdigit(static_cast<unsigned char>(ch)) ? run + 1 : 0);
  EXPECT_LE(longest, 20u) << "a number printed with " << longest << " digits in:\n" << text.substr(0, 4000);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

ProcessResult run_pebench(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> with = args;
  if (!with.empty() && with[0] == "run") with.insert(with.begin() + 1, "--no-peak");
  return run_program(PEBENCH_EXE, with, env);
}

ProcessResult run_pebench_with_peak(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return run_program(PEBENCH_EXE, args, env);
}

ProcessResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::vector<std::string>& env) {
  std::string cmd;
  for (const auto& e : env) cmd += shell_quote(e) + " ";
  if (!env.empty()) cmd = "env " + cmd;
  cmd += shell_quote(program);
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

namespace {

// Records a case's dispatches into one command buffer on the test device.
class TestRecorder : public Recorder {
 public:
  TestRecorder(GpuContext& ctx, CommandBuffer& cmd, DType storage,
               const std::map<std::string, std::unique_ptr<Buffer>>& buffers)
      : ctx_(ctx), cmd_(cmd), storage_(storage), buffers_(buffers) {}
  const DeviceLimits& limits() const override { return ctx_.info().limits; }
  const SubgroupInfo& subgroup() const override { return ctx_.info().subgroup; }
  const DeviceFeatures& enabled() const override { return ctx_.device().enabled(); }
  const LaunchPlanner& launch() const override { return ctx_.launch(); }
  void dispatch(const Dispatch& d) override {
    PipelineDesc desc;
    desc.buffer_count = static_cast<uint32_t>(d.buffers.size());
    desc.push_constant_bytes = static_cast<uint32_t>(d.push.words().size() * 4);
    desc.spec_constants = d.spec_constants;
    const ComputePipeline& pipeline = ctx_.pipeline(d.shader, d.storage.value_or(storage_), desc);
    std::vector<const Buffer*> bound;
    for (const auto& name : d.buffers) bound.push_back(buffers_.at(name).get());
    pools_.push_back(DescriptorPool::Create(ctx_.device(), 1, 16).value());
    cmd_.bind(pipeline, pools_.back()->allocate(pipeline, bound).value());
    cmd_.push_constants(pipeline, d.push.words().data(), desc.push_constant_bytes);
    cmd_.dispatch(d.groups[0], d.groups[1], d.groups[2]);
  }
  void barrier() override { cmd_.compute_barrier(); }

 private:
  GpuContext& ctx_;
  CommandBuffer& cmd_;
  DType storage_;
  const std::map<std::string, std::unique_ptr<Buffer>>& buffers_;
  std::vector<std::unique_ptr<DescriptorPool>> pools_;
};

}  // namespace

std::vector<double> run_on_gpu(const BuiltCase& c, const std::string& output, GpuContext* on) {
  GpuContext& ctx = on ? *on : gpu();
  Device& dev = ctx.device();
  std::map<std::string, std::unique_ptr<Buffer>> buffers;
  for (const auto& t : c.impl->tensors()) {
    buffers[t.name] = Buffer::Create(dev, t.bytes(), MemoryUse::kDevice).value();
    if (t.role == TensorRole::kInput || t.role == TensorRole::kConstant) {
      const HostTensor& h = c.tensors.at(t.name);
      EXPECT_TRUE(upload(dev, *buffers[t.name], h.data(), h.bytes()).ok());
    }
  }
  auto cmd = CommandBuffer::Create(dev).value();
  EXPECT_TRUE(cmd->begin().ok());
  TestRecorder rec(ctx, *cmd, c.params.dtype(), buffers);
  c.impl->record(rec);
  EXPECT_TRUE(cmd->end().ok());
  EXPECT_TRUE(cmd->submit_and_wait().ok());
  std::vector<double> out;
  for (const auto& t : c.impl->tensors()) {
    if (t.role != TensorRole::kOutput || (!output.empty() && t.name != output)) continue;
    HostTensor h = c.tensors.at(t.name);
    EXPECT_TRUE(download(dev, *buffers.at(t.name), h.data(), h.bytes()).ok());
    const std::vector<double> v = h.to_f64();
    out.insert(out.end(), v.begin(), v.end());
  }
  EXPECT_FALSE(out.empty()) << "no output named '" << output << "'";
  return out;
}

double nmse(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double err2 = 0, ref2 = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    EXPECT_TRUE(std::isfinite(a[i]) && std::isfinite(b[i])) << i;
    err2 += (a[i] - b[i]) * (a[i] - b[i]);
    ref2 += b[i] * b[i];
  }
  EXPECT_GT(ref2, 0.0);
  return ref2 > 0 ? err2 / ref2 : INFINITY;
}

void expect_all_validate(const std::string& variant, const std::map<std::string, std::string>& axes,
                         size_t expected_cases, RunOptions options, GpuContext* ctx) {
  const auto results = run_cases(variant, axes, options, ctx);
  EXPECT_EQ(results.size(), expected_cases);
  for (const auto& r : results) {
    SCOPED_TRACE(r.id + " " + r.label);
    EXPECT_EQ(r.status, CaseStatus::kOk) << status_name(r.status) << ": " << r.reason;
    EXPECT_TRUE(r.validation.ran);
    EXPECT_TRUE(r.validation.passed) << r.validation.detail;
    EXPECT_EQ(r.vk_validation_errors, 0u);
  }
}

}  // namespace pebench::test
