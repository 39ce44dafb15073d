// The report file (interface.md, schema pebench.report/1): header facts
// (tool, host, devices, command) and the results, rewritten atomically after
// every case so an interrupted sweep keeps what it measured.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "analysis/report_schema.h"
#include "harness/output/result.h"
#include "io/output_file.h"  // write_file_atomic
#include "runtime/physical_device.h"

namespace pebench {

nlohmann::json tool_json();
nlohmann::json host_json();
nlohmann::json device_json(const PhysicalDeviceInfo& info);
std::string iso8601_now();

class ReportWriter {
 public:
  // `header` holds every top-level key but "results".
  ReportWriter(std::string path, nlohmann::json header);
  void add(const CaseResult& result);
  // Writes the report with the results so far.
  void flush() const;
  const std::string& path() const { return path_; }
  const std::vector<CaseResult>& results() const { return results_; }

 private:
  std::string path_;
  nlohmann::json header_;
  std::vector<CaseResult> results_;
  nlohmann::json results_json_ = nlohmann::json::array();
};

}  // namespace pebench
