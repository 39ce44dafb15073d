// The report file's schema (interface.md, pebench.report/1) in one place:
// its version string, the case status names and the field keys. The writer
// (harness/output/result.cc result_to_json, cli/cmd_run.cc's header) and the reader
// (analysis/report_file.cc parse_report) both spell the file through these
// names, so the two cannot drift apart. A leaf: it includes nothing of
// pebench and nothing of a JSON library.
#pragma once

#include <array>

namespace pebench {

inline constexpr const char* kReportSchema = "pebench.report/1";

// The "status" values, in the order of harness/output/result.h's CaseStatus.
inline constexpr std::array<const char*, 7> kStatusNames = {"ok",    "failed",      "skipped", "unsupported",
                                                            "error", "interrupted", "compiled"};

// The keys of the file, by the object they stand in.
namespace report_key {

// the top level
inline constexpr const char* kSchema = "schema";
inline constexpr const char* kCreated = "created";
inline constexpr const char* kTool = "tool";
inline constexpr const char* kHost = "host";
inline constexpr const char* kCommand = "command";
inline constexpr const char* kRun = "run";
inline constexpr const char* kTune = "tune";  // in "run": the run was --tune
inline constexpr const char* kTuneFrom = "tune_from";  // in "run": --tune-from REPORT (null: none)
inline constexpr const char* kDevices = "devices";
inline constexpr const char* kResults = "results";

// one result
inline constexpr const char* kId = "id";
inline constexpr const char* kDevice = "device";
inline constexpr const char* kVariant = "variant";
inline constexpr const char* kImpl = "impl";
inline constexpr const char* kDtype = "dtype";
inline constexpr const char* kParams = "params";
inline constexpr const char* kLabel = "label";
inline constexpr const char* kBenchmark = "benchmark";
inline constexpr const char* kStatus = "status";
inline constexpr const char* kReason = "reason";
inline constexpr const char* kTimeNs = "time_ns";
inline constexpr const char* kTiming = "timing";
inline constexpr const char* kCpuNs = "cpu_ns";
inline constexpr const char* kBytes = "bytes";
inline constexpr const char* kFlops = "flops";
inline constexpr const char* kGbps = "gbps";
inline constexpr const char* kGflops = "gflops";
inline constexpr const char* kValidation = "validation";
inline constexpr const char* kVkValidationErrors = "vk_validation_errors";
inline constexpr const char* kVkValidation = "vk_validation";  // {errors, warnings: {MESSAGE_ID: n}}
inline constexpr const char* kErrors = "errors";
inline constexpr const char* kWarnings = "warnings";
inline constexpr const char* kAllowed = "allowed";  // vk_validation: warnings in the allow-list
inline constexpr const char* kRoofline = "roofline";
inline constexpr const char* kPipelines = "pipelines";
inline constexpr const char* kInjectSlowdown = "inject_slowdown";
inline constexpr const char* kWarmupRuns = "warmup_runs";
inline constexpr const char* kTuning = "tuning";  // run --tune: knob, planned, chosen, candidates

// "time_ns" and "cpu_ns"
inline constexpr const char* kMedian = "median";
inline constexpr const char* kMin = "min";
inline constexpr const char* kMax = "max";
inline constexpr const char* kMean = "mean";
inline constexpr const char* kStddev = "stddev";
inline constexpr const char* kSamples = "samples";
// time_ns only: when each sample began, ns since the run's first timed
// sample began, same order as "samples" (absent before pebench recorded it).
inline constexpr const char* kStartedNs = "started_ns";

// "validation" and its "tolerance"
inline constexpr const char* kNmse = "nmse";
inline constexpr const char* kMaxAbs = "max_abs";
inline constexpr const char* kMaxRel = "max_rel";
inline constexpr const char* kTolerance = "tolerance";
inline constexpr const char* kModel = "model";
inline constexpr const char* kPassed = "passed";
inline constexpr const char* kRowsChecked = "rows_checked";
inline constexpr const char* kRowsTotal = "rows_total";
inline constexpr const char* kDetail = "detail";

// "tuning" and one of its "candidates" (which also has "status" and, where
// it did not run, "reason")
inline constexpr const char* kKnob = "knob";
inline constexpr const char* kPlanned = "planned";
inline constexpr const char* kChosen = "chosen";
inline constexpr const char* kCandidates = "candidates";
inline constexpr const char* kValue = "value";
inline constexpr const char* kMedianNs = "median_ns";
inline constexpr const char* kFrom = "from";  // --tune-from: the report that chose; no candidate timed

// one entry of "pipelines"
inline constexpr const char* kShader = "shader";
inline constexpr const char* kStorage = "storage";
inline constexpr const char* kSpecConstants = "spec_constants";
inline constexpr const char* kLocalSize = "local_size";
inline constexpr const char* kGroups = "groups";
inline constexpr const char* kStats = "stats";

// "roofline"
inline constexpr const char* kBound = "bound";
inline constexpr const char* kFraction = "fraction";

}  // namespace report_key

}  // namespace pebench
