#include "harness/engine/tuning_presets.h"

namespace pebench {

TuningPresets::TuningPresets(const ReportFile& report) : source_(report.path) {
  for (const CaseRecord& c : report.cases) {
    // The device's own name, not the report's " #2" key: another run may
    // number identical devices differently, and they tune alike.
    if (c.tuning) choices_.emplace(std::pair{c.device_info->name, c.key}, TuningChoice{c.tuning->knob, c.tuning->chosen});
  }
}

std::optional<TuningChoice> TuningPresets::find(const std::string& device_name, const std::string& key) const {
  const auto it = choices_.find({device_name, key});
  if (it == choices_.end()) return std::nullopt;
  return it->second;
}

}  // namespace pebench
