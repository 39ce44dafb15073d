// ReportFile: a pebench report (interface.md, schema pebench.report/1) read
// back from disk and checked, for the tools that work on saved reports
// (compare, report). Anything malformed is a ReportError naming the file and
// the offending field, never a crash or a silent default.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/report_schema.h"

namespace pebench {

struct ReportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The device's measured roofs (`pebench peak`), when the run measured them.
struct PeakRecord {
  double copy_gbps = 0, f32_gflops = 0;
  std::optional<double> f16_gflops;
};

struct DeviceRecord {
  int64_t index = 0;
  std::string name;
  // The name as used in case keys: `name`, made unique inside the report
  // (" #2" for a second identical GPU) so two identical devices stay apart.
  std::string key_name;
  std::string device_type, driver_name, driver_info, driver_version, api_version;
  int64_t vendor_id = 0;
  std::optional<PeakRecord> peak;
};

struct TimeRecord {
  double median = 0, min = 0, max = 0;
  std::vector<double> samples;  // ns; may be empty when a report was trimmed
  std::string timing;           // "gpu-timestamp" | "wall-clock" | ""
  // "cpu_ns": the process CPU time of each sample; absent (empty, 0) in
  // reports from before pebench recorded it.
  std::vector<double> cpu_samples;
  double cpu_median = 0;
  // "time_ns.started_ns": when each sample began (ns since the run's first
  // sample), as "samples"; empty in reports from before pebench recorded it.
  std::vector<double> started_ns;
};

struct ValidationRecord {
  bool passed = false;
  std::optional<double> nmse, max_abs, max_rel;  // null in the file: non-finite
  std::optional<double> tol_nmse, tol_max_rel;
  std::string tol_model, detail;
  int64_t rows_checked = 0, rows_total = 0;
};

struct RooflineRecord {
  std::string bound;  // "memory" | "compute"
  double fraction = 0;
};

// results[].tuning (run --tune): the knob the case's tuning measured, the
// planner's value, the value the case then ran, and every candidate's median
// over its tuning executions (absent where the candidate did not run).
struct TuningRecord {
  struct Candidate {
    int64_t value = 0;
    std::string status, reason;
    std::optional<double> median_ns;
  };
  std::string knob;
  int64_t planned = 0, chosen = 0;
  std::vector<Candidate> candidates;  // the planner's first
  std::string from;  // --tune-from: the report whose choice the case took (no candidate timed)
  bool moved() const { return chosen != planned; }
};

// One entry of a result's "pipelines": what compare and the HTML report read.
struct PipelineRecordView {
  std::string shader, storage;
  std::vector<uint32_t> local_size;                    // 3 values
  std::vector<std::pair<std::string, double>> stats;   // the driver's names, file order; null values left out
  std::string spec;                                    // the spec constants, "NAME=V ...", for display
};

struct CaseRecord {
  size_t ordinal = 0;  // position in the file's results
  std::string id, variant, impl, dtype, label, status, reason;
  int64_t device = 0;
  const DeviceRecord* device_info = nullptr;  // points into ReportFile::devices
  nlohmann::json params;                      // object, as written
  std::optional<TimeRecord> time;
  std::optional<ValidationRecord> validation;
  uint64_t vk_validation_errors = 0;
  // run --validate: the layer's warnings by message id; absent when the case
  // did not run under the layer.
  std::optional<std::map<std::string, uint64_t>> vk_warnings;
  std::optional<RooflineRecord> roofline;
  double bytes = 0, flops = 0;  // the cost model's, 0 when absent
  std::vector<PipelineRecordView> pipelines;
  std::optional<TuningRecord> tuning;
  std::string key;  // case_key(): variant, impl, dtype, params (device excluded)

  bool ok() const { return status == "ok"; }
  bool timed() const { return time.has_value() && time->median > 0; }
  std::string family() const { return variant.substr(0, variant.find('.')); }
  // "abs.learned default f32 batch=1 seq=128", the case for a human.
  std::string display() const;
};

struct ReportFile {
  std::string path;
  std::string created;
  nlohmann::json tool = nlohmann::json::object();
  nlohmann::json host = nlohmann::json::object();
  nlohmann::json command = nlohmann::json::array();
  // run.inject_slowdown: the faults injected into this run (null: none). Such
  // a report tests a gate and can never be its BASE.
  nlohmann::json injected;
  // run.tune: cases may run the plan their tuning chose (results[].tuning)
  // rather than their planner's.
  bool tuned = false;
  std::vector<DeviceRecord> devices;
  std::vector<CaseRecord> cases;

  ReportFile() = default;
  // Cases point into `devices`: copies re-point them.
  ReportFile(const ReportFile& other) { *this = other; }
  ReportFile& operator=(const ReportFile& other);
  ReportFile(ReportFile&& other) noexcept { *this = std::move(other); }
  ReportFile& operator=(ReportFile&& other) noexcept;

  // Device key names that occur in results, in device order.
  std::vector<std::string> result_devices() const;
  // The device with this key name; null when there is none.
  const DeviceRecord* device(const std::string& key_name) const;
  // The host's CPU as one string: host.cpu, host.cpu_id (reports since
  // 2026-11-26) and host.logical_cores, e.g. "Intel(R) Xeon(R) Processor
  // (GenuineIntel family 6 model 167), 2 logical cores". A CPU device
  // (lavapipe) is this CPU, so its times compare only on the same one.
  std::string host_cpu() const;
  // Same CPU model and core count as `other`'s host; host.cpu_id counts
  // only when both reports have it.
  bool same_host_cpu(const ReportFile& other) const;
  // "pebench 0.1.0 (94667b3)"; a peer's report names its tool ("torch 2.11.0").
  std::string tool_string() const;

 private:
  void relink();
};

// Reads and checks `path`. Throws ReportError("PATH: problem").
ReportFile load_report(const std::string& path);
// load_report of each path, in order; the first bad file throws.
std::vector<ReportFile> load_reports(const std::vector<std::string>& paths);
// Checks an already-parsed report; `path` is only for messages.
ReportFile parse_report(const nlohmann::json& doc, const std::string& path);

}  // namespace pebench
