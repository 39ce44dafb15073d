// Google Benchmark output users can trust (`run --benchmark_format`,
// `--benchmark_out`): what compare.py and other GB tools read, made from
// pebench's own samples so that the two never disagree.
//
// Each case is one benchmark with a short, stable name (variant, impl,
// dtype and the parameters that differ from their defaults). Each timing
// sample is one repetition of one iteration, so GB's mean, median, stddev
// and cv aggregates are the statistics of exactly the samples the report
// holds (GB's own repetitions average many iterations, and one slow
// iteration inflates a repetition's mean). A case that did not run or did
// not validate is one errored run with its reason. pebench applies
// --benchmark_filter itself, to these names, before the sweep starts (so
// progress and run.cases count only what runs), and answers
// --benchmark_list_tests with the names. The context names every device and
// driver and says which build type produced the times.
#pragma once

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include "harness/engine/sweep.h"
#include "harness/output/result.h"

namespace pebench {

struct GbFlags {
  std::string format;            // "" (not given: pebench's table), "console", "json" or "csv"
  std::string out;               // --benchmark_out file, "" for none
  std::string out_format = "json";
  bool report_aggregates_only = false;   // both outputs: aggregates only
  bool display_aggregates_only = false;  // stdout only
  bool list_tests = false;
  std::string filter;            // "" or "all": every case; "-REGEX": all but
  bool min_time_given = false, repetitions_given = false;
  std::vector<std::string> passthrough;  // for benchmark::Initialize (min_time, repetitions, ...)
};

// Splits run's --benchmark_* arguments into what pebench handles and what
// Google Benchmark does. Throws UsageError for an unknown option or a bad
// value (format, boolean, regular expression).
GbFlags parse_gb_flags(const std::vector<std::string>& args);

// Does `name` pass `filter` (Google Benchmark's rules: a POSIX extended
// regular expression searched in the name, "all" or empty for all, a
// leading '-' to negate)?
bool gb_filter_matches(const std::string& filter, const std::string& name);

// The benchmark name of each case: "[dI/]variant/impl/dtype[/key:value...]"
// with every parameter that differs from what it is with every parameter at
// its default (derived ones from this case's own values), in declaration
// order; the device prefix only when several devices run. Names that would
// collide get every parameter.
std::vector<std::string> gb_names(const std::vector<PlannedCase>& cases, const std::vector<uint32_t>& devices,
                                  bool device_prefix);

// The cases planned for each device (device index, case), in order, whose
// names pass `filter`, with their names.
struct FilteredCases {
  std::vector<std::pair<uint32_t, PlannedCase>> cases;  // (device index, case)
  std::vector<std::string> names;
};
FilteredCases filter_cases(const std::vector<std::pair<uint32_t, PlannedCase>>& planned, const std::string& filter);

// Google Benchmark context entries (every format prints them) for one
// device of the report (device_json): its name and driver; with several
// devices the keys carry the device index ("device_d1").
void gb_add_device_context(const nlohmann::json& device, bool several_devices);

// The runs of one finished case: one per sample (iterations 1, real time
// the sample, cpu time the submitting thread's CPU time per iteration),
// then mean, median, stddev and cv over the samples, or one errored run.
std::vector<benchmark::BenchmarkReporter::Run> gb_runs(const std::string& name, int64_t family, const CaseResult& r,
                                                      double cpu_s_per_iteration, bool aggregates_only);

// The display (stdout) and file reporters the flags ask for, fed case by case.
class GbOutput {
 public:
  explicit GbOutput(const GbFlags& flags);  // throws OutputPathError if --benchmark_out may not be written
  ~GbOutput();
  bool active() const { return display_ || file_; }
  void context(const benchmark::BenchmarkReporter::Context& context);
  void report(const std::string& name, int64_t family, const CaseResult& r, double cpu_s_per_iteration);
  // Ends both outputs; writes the --benchmark_out file (throws std::runtime_error when that fails).
  void finalize();

 private:
  GbFlags flags_;
  std::unique_ptr<benchmark::BenchmarkReporter> display_, file_;
  std::ostringstream out_;  // the --benchmark_out file, written by finalize()
  bool started_ = false, finalized_ = false;
};

}  // namespace pebench
