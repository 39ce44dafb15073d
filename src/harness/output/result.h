// CaseResult: everything the report says about one case (interface.md,
// "results"), with a status and a reason, never a silent zero.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/contract/params.h"
#include "harness/contract/variant.h"
#include "harness/output/roofline.h"

namespace pebench {

// kSkipped: the variant rejects these parameters; kInterrupted: the sweep
// was stopped (Ctrl-C) before the case ran, so nothing is known about it;
// kCompiled: --compile-only planned the case and built its pipelines, and
// ran nothing.
enum class CaseStatus { kOk, kFailed, kSkipped, kUnsupported, kError, kInterrupted, kCompiled };
const char* status_name(CaseStatus s);

// What checking a case's outputs against its float64 reference found
// (harness/engine/validate.h compare_outputs; encodings.md section 0).
struct ValidationResult {
  bool ran = false;
  double nmse = 0;
  double max_abs = 0;
  double max_rel = 0;
  Tolerance tolerance;
  bool passed = false;
  int64_t rows_checked = 0;
  int64_t rows_total = 0;
  int64_t elements_checked = 0;
  std::string detail;  // why it failed (NaN, worst element), empty when passed
};

struct TimeStats {
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
  std::vector<double> samples;  // ns, in measurement order
  // The process CPU time of each sample (CaseRun::Sample), same order; may be empty.
  std::vector<double> cpu_samples;
  double cpu_median = 0;
  // When each sample began (ns since the run's first timed sample), same
  // order; may be empty. Lets a reader pair samples taken close in time.
  std::vector<double> started_ns;
};
// Statistics of `samples` (must be non-empty) and the CPU times and start
// times beside them.
TimeStats time_stats(std::vector<double> samples, std::vector<double> cpu_samples = {},
                     std::vector<double> started_ns = {});

// One pipeline a case dispatched, as interface.md "pipelines" describes it.
struct PipelineRecord {
  std::string shader;   // file stem, e.g. "attn_flash_nope"
  std::string storage;  // the shader build: "f32" or "f16"
  std::vector<std::pair<std::string, uint32_t>> spec_constants;  // named, in constant_id order
  std::array<uint32_t, 3> local_size{1, 1, 1};
  std::array<uint32_t, 3> groups{1, 1, 1};
  std::vector<std::pair<std::string, double>> stats;  // the driver's own names; empty without the extension
  bool operator==(const PipelineRecord& o) const {
    return shader == o.shader && storage == o.storage && spec_constants == o.spec_constants &&
           local_size == o.local_size && groups == o.groups;
  }
};

// The Khronos validation layer's messages during one case (run --validate):
// errors (they fail the case) and warnings counted by message id: those
// outside pebench's allow-list (runtime/validation_allowlist.h) and those in it.
struct VkValidationCounts {
  uint64_t errors = 0;
  std::map<std::string, uint64_t> warnings;  // outside the allow-list
  std::map<std::string, uint64_t> allowed;   // in it, each with a reason there
};

struct CaseResult {
  uint32_t device = 0;
  std::string id;
  std::string variant;
  std::string impl;
  std::string dtype;
  Params params;
  std::string label;  // short human description of the parameters (shape, non-defaults)
  std::string benchmark;  // its Google Benchmark name (harness/engine/gb_output.h)
  CaseStatus status = CaseStatus::kError;
  std::string reason;
  std::optional<TimeStats> time;
  std::string timing;  // "gpu-timestamp" or "wall-clock"
  Cost cost;
  ValidationResult validation;
  uint64_t vk_validation_errors = 0;
  std::optional<VkValidationCounts> vk_validation;  // only when the case ran under the layer
  std::optional<Roofline> roofline;  // ok and timed, on a device whose peak was measured
  std::vector<PipelineRecord> pipelines;  // each distinct dispatch once, in recording order
  uint64_t warmup_runs = 0;  // unrecorded executions before samples (DriverOptions::warmup_s)
  // --inject-slowdown (slowdown.h): the factor asked for, the passes
  // recorded, the divisor applied to every sample and the fixed cost the
  // divisor left alone (an empty submission's GPU and CPU time); absent for
  // an honest measurement.
  struct Slowdown {
    double factor = 1;
    int passes = 1, divisor = 1;
    double fixed_ns = 0, fixed_cpu_ns = 0;
  };
  std::optional<Slowdown> injected_slowdown;
  // --tune (Case::tuning_choices): each setting's time and the one the case
  // then ran with; absent where the case had nothing to tune or was not tuned.
  struct TuningCandidate {
    int64_t value = 0;
    CaseStatus status = CaseStatus::kOk;  // ok, or unsupported / error with the reason
    std::string reason;
    double median_ns = 0;  // of kTuningSamples executions, when ok
  };
  struct Tuning {
    std::string knob;
    int64_t planned = 0, chosen = 0;
    std::vector<TuningCandidate> candidates;  // in the order timed, the planner's first
    // --tune-from: the report whose case chose `chosen` (no candidate timed);
    // empty when this run measured the candidates.
    std::string from;
  };
  std::optional<Tuning> tuning;
};

nlohmann::json params_to_json(const Params& p);
nlohmann::json result_to_json(const CaseResult& r);
nlohmann::json pipeline_to_json(const PipelineRecord& p);

}  // namespace pebench
