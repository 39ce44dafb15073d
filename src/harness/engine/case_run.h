// CaseRun: one case on one device, from parameters to a timeable state.
//
// setup() builds the case, checks it against the device (fp16 storage,
// maxStorageBufferRange, allocation and heap sizes), allocates and uploads,
// records the dispatches once between two GPU timestamps, runs them on
// outputs pre-filled with NaN, reads back, validates against the float64
// reference (all rows, or a deterministic sample when that would be too
// slow), dumps if asked, and warms up. It sets the result's status and
// reason; time_once() then gives one GPU-timed execution in nanoseconds
// (wall-clock around submit+wait where the queue has no timestamps, recorded
// as such in result.timing), and time_sample() that time with the process
// CPU time the execution took.
//
// With RunOptions::tune, setup() first times each of the case's tuning
// choices (one execution each that compiles, then kTuningSamples rounds of
// one execution each) and keeps the fastest by median, the planner's own
// unless another is kTuningMargin faster; only that plan is validated,
// recorded in result.pipelines and timed. A choice the device cannot run is
// noted and skipped. With RunOptions::tune_from, a case the earlier report
// tuned takes that report's choice and times no candidate.
//
// compile() instead stops after planning: it builds the case, checks it
// against the device and creates every pipeline the case would dispatch
// (same planner, spec constants, workgroup sizes, layouts), records them in
// result.pipelines and executes nothing (status `compiled`). It works on a
// device that cannot execute.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/contract/variant.h"
#include "harness/engine/gpu_context.h"
#include "harness/engine/slowdown.h"
#include "harness/engine/tuning_presets.h"
#include "harness/output/result.h"
#include "runtime/buffer.h"
#include "runtime/command_buffer.h"
#include "runtime/pipeline.h"
#include "runtime/timestamp_query_pool.h"

namespace pebench {

struct RunOptions {
  bool validate = true;
  std::string dump_dir;              // empty: no dumps
  uint64_t seed = 0;                 // mixed with the case's parameters
  double reference_budget = 4e8;     // float64 operations allowed for one case's reference
  double warmup_s = 0.02;            // warm-up time after the validation run
  std::vector<InjectedSlowdown> inject_slowdown;  // test-only fault injection (slowdown.h)
  // --tune: time each of the case's tuning choices (Case::tuning_choices)
  // and run it with the fastest (result.tuning).
  bool tune = false;
  // --tune-from: cases this report tuned take its choice instead (when the
  // case still offers it); the others are timed as with `tune`.
  TuningPresets tune_from;
};

class CaseRun {
 public:
  CaseRun(GpuContext& ctx, const Variant& variant, const RunOptions& options, CaseResult& result)
      : ctx_(ctx), variant_(variant), options_(options), result_(result) {}
  ~CaseRun();

  // True when the case can be timed (status ok or failed).
  bool setup();
  // Plans and builds the case's pipelines only; true when status is compiled.
  bool compile();
  struct Sample {
    double ns = 0;      // GPU time (or wall-clock, see above)
    // Process CPU time during submit and wait, all threads. On a CPU device
    // (lavapipe) this is the device's own work, which other processes' load
    // delays but does not lengthen; on a GPU, the driver's host overhead.
    double cpu_ns = 0;
    // When it began: set by whoever schedules the samples (BenchDriver, ns
    // since the run's first timed sample); 0 otherwise.
    double started_ns = 0;
  };
  // One timed execution. Throws StatusError on a device failure.
  Sample time_sample();
  double time_once() { return time_sample().ns; }

  // --tune: rounds of one execution per choice, and how much faster than
  // the planner's a choice must be to replace it.
  static constexpr int kTuningSamples = 3;
  static constexpr double kTuningMargin = 0.03;

 private:
  template <typename Steps>
  bool guarded(Steps steps);
  void build_and_check();
  void allocate_and_upload();
  // Fills every output with NaN, so that a kernel that misses an element
  // cannot pass validation by luck.
  void fill_outputs_with_nan();
  // --tune: selects the fastest of the case's tuning choices (see above).
  void tune();
  // --tune-from: the earlier report's choice for this case, when it is one of
  // `choices`.
  std::optional<TuningChoice> preset_choice(const std::vector<TuningChoice>& choices) const;
  // Selects `choice`; a choice that would change the case's tensors is a
  // logic error (they are allocated once, before tuning).
  void select_and_check(const TuningChoice& choice);
  // Records the timed command buffer: the case's dispatches, `passes` times
  // over (--inject-slowdown, slowdown.h; 0: none), between the two timestamps.
  void record(int passes = 1);
  // --inject-slowdown: measures the fixed cost a divisor must leave alone,
  // then records the passes.
  void inject(double slowdown);
  // One execution as measured; time_sample() applies the injection's divisor.
  Sample raw_sample();
  void validate_and_dump();

  GpuContext& ctx_;
  const Variant& variant_;
  const RunOptions& options_;
  CaseResult& result_;

  std::unique_ptr<Case> case_;
  std::vector<TensorDesc> descs_;
  TensorLayout layout_;  // where descs_ live on the device
  TensorMap host_;
  std::map<std::string, std::unique_ptr<Buffer>> buffers_;  // by TensorPlacement::buffer
  std::vector<std::unique_ptr<DescriptorPool>> pools_;
  std::unique_ptr<TimestampQueryPool> timestamps_;
  std::unique_ptr<CommandBuffer> cmd_;
  // --inject-slowdown: a sample is fixed_cost_ + (measured - fixed_cost_) / divisor_.
  static constexpr int kFixedCostSamples = 31;
  int divisor_ = 1;
  Sample fixed_cost_;  // an empty timed submission's medians
};

}  // namespace pebench
