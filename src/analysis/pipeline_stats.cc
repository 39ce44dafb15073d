#include "analysis/pipeline_stats.h"

namespace pebench {
namespace {

// RADV (Mesa's AMD driver) and ANV (Mesa's Intel driver) names, as their
// VK_KHR_pipeline_executable_properties report them.
const StatColumn kSpills{"spills", {"Spilled VGPRs", "Spill count"}};

}  // namespace

const std::vector<StatColumn>& key_stat_columns() {
  static const std::vector<StatColumn> columns = {
      {"VGPRs", {"VGPRs"}},
      {"SGPRs", {"SGPRs"}},
      {"spilled VGPRs", {"Spilled VGPRs", "Spill count"}},
      {"spilled SGPRs", {"Spilled SGPRs"}},
      {"scratch", {"Scratch size", "Scratch Memory Size"}},
      {"LDS", {"LDS size", "Workgroup Memory Size"}},
      {"subgroups/SIMD", {"Subgroups per SIMD", "Max dispatch width"}},
  };
  return columns;
}

std::optional<double> find_stat(const PipelineStats& stats, const StatColumn& column) {
  for (const char* name : column.names) {
    for (const auto& [k, v] : stats) {
      if (k == name) return v;
    }
  }
  return std::nullopt;
}

std::optional<double> spills(const PipelineStats& stats) {
  const auto vgprs = find_stat(stats, kSpills);
  const auto sgprs = find_stat(stats, StatColumn{"", {"Spilled SGPRs"}});
  if (!vgprs && !sgprs) return std::nullopt;
  return vgprs.value_or(0) + sgprs.value_or(0);
}

}  // namespace pebench
