// Shared test plumbing: one validated Vulkan device for the whole test run
// (any validation-layer error fails the run), running a case through the
// real sweep and CaseRun path, and running the pebench binary.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/contract/variant.h"
#include "harness/engine/case_run.h"
#include "harness/engine/device_profile.h"
#include "harness/engine/gpu_context.h"
#include "harness/engine/sweep.h"
#include "harness/output/result.h"
#include "runtime/instance.h"

namespace pebench::test {

// The instance (validation layer on) and device every GPU test shares:
// device index $PEBENCH_TEST_DEVICE, default 0. Its teardown (a gtest
// Environment) fails the run if the validation layer reported any error.
Instance& instance();
GpuContext& gpu();
// The pipeline of a test probe shader (shaders/test/, f32 build) on gpu():
// `buffers` storage buffers, `push_bytes` of push constants and the
// workgroup size `wg` as spec constant 0.
const ComputePipeline& probe_pipeline(const std::string& name, uint32_t buffers, uint32_t push_bytes, uint32_t wg);
// The test device as a device profile shows it (--emulate PROFILE): the
// planner takes that profile's branches while the test device validates.
GpuContext& gpu_as(const std::string& profile);
// The same for a profile built in the test (one context per profile name).
GpuContext& gpu_as(const DeviceProfile& profile);

// The value of the spec constant `name` in `p` (names as the shader declares
// them), or nothing where the pipeline has no constant of that name.
std::optional<uint32_t> spec_constant(const PipelineRecord& p, const std::string& name);

// Fails the current test if validation errors were reported since `before`.
void expect_no_validation_errors(uint64_t before);

// Every case of `variant` for the given axes (KEY -> comma list, as on the
// command line), through expand_sweep. Rejected combinations come back with
// status skipped.
// `ctx`: the device to run on (default: gpu()).
std::vector<CaseResult> run_cases(const std::string& variant, const std::map<std::string, std::string>& axes,
                                  RunOptions options = {}, GpuContext* ctx = nullptr);
// Exactly one case; fails the test if the axes give more or fewer.
CaseResult run_case(const std::string& variant, const std::map<std::string, std::string>& axes,
                    RunOptions options = {});

// The one case `variant` and the axes select (KEY -> comma list), through
// expand_sweep; throws unless there is exactly one. plan_one may return a
// rejected case (`rejected` holds the reason); plan_accepted throws then.
PlannedCase plan_one(const std::string& variant, const std::map<std::string, std::string>& axes);
PlannedCase plan_accepted(const std::string& variant, const std::map<std::string, std::string>& axes);
// The Case of plan_accepted, without host tensors (plans, tensors, cost).
std::unique_ptr<Case> make_case(const std::string& variant, const std::map<std::string, std::string>& axes);

// A case built without the GPU: its parameters (resolved), the Case, and
// host tensors with inputs filled by the case's own generator, for
// reference-level tests. Throws if the axes give more or fewer than one case
// or the case is rejected.
struct BuiltCase {
  const Variant* variant = nullptr;
  Params params;
  std::unique_ptr<Case> impl;
  TensorMap tensors;
  // The float64 reference for every row.
  Reference reference() const;
};
BuiltCase build_case(const std::string& variant, const std::map<std::string, std::string>& axes, uint64_t seed = 1);

// Sets every element of `t` to f(flat index).
template <typename F>
void set_all(HostTensor& t, F f) {
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, f(i));
}

// Runs a built case's dispatches once on the test device with its host
// inputs (so two cases can be fed the same tensors) and returns `output`, or
// by default every output concatenated in tensor order (o, then oi); `on`:
// another context (gpu_as: a profile's plan), else gpu().
std::vector<double> run_on_gpu(const BuiltCase& c, const std::string& output = "", GpuContext* on = nullptr);

// sum (a - b)^2 / sum b^2 over two finite vectors of one size (fails the test
// otherwise, or when b is all zero).
double nmse(const std::vector<double>& a, const std::vector<double>& b);

// Every case of the axes ran, validated and raised no validation-layer error;
// there are `expected_cases` of them.
void expect_all_validate(const std::string& variant, const std::map<std::string, std::string>& axes,
                         size_t expected_cases, RunOptions options = {}, GpuContext* ctx = nullptr);

// `text` (a table, a page) shows numbers only as numbers: no inf or nan token
// and no figure of more than 20 digits (1e308 printed in fixed notation).
void expect_plain_numbers(const std::string& text);

struct ProcessResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};
// Runs the built pebench binary with `args` (shell-quoted here), with the
// environment variables `env` ("NAME=value") set for it. `run` gets
// --no-peak: measuring the roofs takes a second or more per run and only the
// tests of the roofs need them (run_pebench_with_peak: `args` as given).
ProcessResult run_pebench(const std::vector<std::string>& args, const std::vector<std::string>& env = {});
ProcessResult run_pebench_with_peak(const std::vector<std::string>& args, const std::vector<std::string>& env = {});
// Runs `program` with `args` (shell-quoted here) and `env` (NAME=value, set
// for it alone).
ProcessResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::vector<std::string>& env = {});

// A fresh empty directory under the test temp dir.
std::string temp_dir(const std::string& name);

// The whole content of a file ("" when it cannot be read).
std::string read_file(const std::string& path);

}  // namespace pebench::test
