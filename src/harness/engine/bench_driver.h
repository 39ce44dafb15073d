// BenchDriver: runs a planned sweep through Google Benchmark.
//
// Every case is a benchmark (RegisterBenchmark + UseManualTime): its first
// invocation sets the case up (CaseRun: validation included), every
// iteration is one GPU-timed execution passed to SetIterationTime, so
// Google Benchmark's flags (--benchmark_filter, _min_time, _repetitions,
// _out, ...) keep working. Cases that cannot run are skipped with their
// reason. When Google Benchmark reports a case, the driver turns its raw
// samples into a CaseResult, adds it to the report (rewritten atomically),
// tells the progress sink and frees the case's GPU memory.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/engine/case_run.h"
#include "harness/engine/gb_output.h"
#include "harness/engine/gpu_context.h"
#include "harness/engine/progress.h"
#include "harness/engine/sweep.h"
#include "harness/output/report.h"
#include "runtime/instance.h"

namespace pebench {

struct SweepCase {
  GpuContext* gpu = nullptr;
  uint32_t device_index = 0;
  PlannedCase planned;
};

struct DriverOptions {
  RunOptions run;
  double min_time_s = 0;  // > 0: per-case Google Benchmark min time (else its flag/default)
  int repetitions = 0;    // > 0: per-case Google Benchmark repetitions (else its flag/default)
  // > 0: whenever the run switches to a case (under interleaving, every
  // repetition), the case first runs unrecorded for at least this long (at
  // least once). The first executions after another case ran can be several
  // times slower (docs/compare-and-gate.md); the samples measure the case, not
  // its neighbour.
  double warmup_s = 0;
  ProgressSink* progress = nullptr;  // told of every finished case; nullptr: quiet
  std::map<uint32_t, Roofs> roofs;  // by device index: measured peaks, for each ok result's roofline
  std::vector<std::string> names;   // each case's benchmark name (gb_names); empty: made here
  GbOutput* gb = nullptr;           // Google Benchmark output (--benchmark_format, --benchmark_out)
};

// Set from a signal handler (SIGINT, SIGTERM, SIGHUP, SIGXFSZ), or when the
// report cannot be written: remaining cases are "interrupted".
extern std::atomic<bool> g_interrupted;
// The signal that set g_interrupted; 0 when none did.
extern std::atomic<int> g_interrupt_signal;
// The exit status of a run a signal ended: 128 + the signal (SIGINT: 130).
int interrupted_exit_code();

// Short human description of a case's parameters: the shape keys, every
// parameter that was set explicitly, and every other one whose fixed
// default it does not have (derived defaults are left out).
std::string short_params(const Variant& v, const Params& p, const std::vector<std::string>& explicit_keys = {});

// The validation layer's counts at one moment: a case's messages are those
// raised between its start and its end.
struct VkSnapshot {
  uint64_t errors = 0;
  std::map<std::string, uint64_t> warnings;  // by message id
  static VkSnapshot of(const Instance& instance) {
    return {instance.validation_error_count(), instance.validation_warnings_by_id()};
  }
};

// A case's result before it runs: identity, parameters and label.
CaseResult initial_result(const SweepCase& c);

// --compile-only: plans every case and builds its pipelines (CaseRun::compile),
// executes nothing; results go to the writer in sweep order.
void compile_sweep(const Instance& instance, ReportWriter& writer, const std::vector<SweepCase>& cases,
                   ProgressSink* progress);

class BenchDriver {
 public:
  BenchDriver(const Instance& instance, ReportWriter& writer, DriverOptions options);
  ~BenchDriver();
  // Registers and runs every case; results go to the writer in sweep order.
  void run(const std::vector<SweepCase>& cases);

 private:
  class Reporter;
  // A case set up and not yet reported. Without repetitions Google Benchmark
  // reports each case before it starts the next, so one is live at a time;
  // with --benchmark_enable_random_interleaving every case stays live until
  // its last repetition, so its setup (and validation) runs once; a
  // validation-layer error is then counted against every case live when it
  // was raised.
  struct Live {
    std::unique_ptr<CaseRun> run;
    bool ready = false;
    VkSnapshot vk_before;
  };
  void body(size_t index, void* state);
  // options_.warmup_s of unrecorded executions; counted in the result.
  void warm_up(CaseRun& run, CaseResult& r);
  // Settles a case Google Benchmark has reported: its statistics, its
  // validation-layer errors, its roofline; writes what is in order; tells
  // the progress sink.
  void finish(size_t index, size_t repetitions, bool gb_error, const std::string& gb_message);
  // Frees a live case; returns the validation layer's counts when it started.
  VkSnapshot release(size_t index);
  // Adds the finished cases that are next in sweep order to the report.
  void write_finished_in_order();
  Live& start(size_t index);

  const Instance& instance_;
  ReportWriter& writer_;
  DriverOptions options_;
  std::vector<SweepCase> cases_;
  std::vector<CaseResult> results_;
  std::vector<std::string> names_;  // benchmark names, by case
  std::vector<std::vector<std::vector<CaseRun::Sample>>> invocations_;  // per case: samples of each invocation
  std::vector<bool> finished_;
  size_t written_ = 0;  // cases 0..written_-1 are in the report
  std::string stop_reason_;  // why the sweep stopped early for no signal (the report could not be written)
  std::map<size_t, Live> live_;
  std::optional<size_t> last_body_;  // the case Google Benchmark timed last
  size_t done_ = 0;
  // When the first sample began: samples' started_ns count from it.
  std::optional<std::chrono::steady_clock::time_point> first_sample_;
  double elapsed_ns();
};

}  // namespace pebench
