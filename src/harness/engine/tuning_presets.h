// run --tune-from REPORT: the tuning choices an earlier report's cases ran
// (results[].tuning.chosen), so that a run takes them without timing its
// candidates again: a gate's runs then run the same plans, and the run
// saves the candidates' compiles and rounds. Cases are matched by device
// name and case key (analysis/case_key.h), the way compare matches them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "analysis/report_file.h"
#include "harness/contract/variant.h"

namespace pebench {

class TuningPresets {
 public:
  TuningPresets() = default;
  // Every tuned case of `report`; `source` names it in each result it decides.
  explicit TuningPresets(const ReportFile& report);

  bool empty() const { return choices_.empty(); }
  size_t size() const { return choices_.size(); }
  const std::string& source() const { return source_; }
  // The choice the report's case with this key ran on a device of this
  // name; nullopt where the report has none.
  std::optional<TuningChoice> find(const std::string& device_name, const std::string& key) const;

 private:
  std::string source_;
  std::map<std::pair<std::string, std::string>, TuningChoice> choices_;  // (device name, case key)
};

}  // namespace pebench
