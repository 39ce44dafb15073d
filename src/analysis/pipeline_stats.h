// The pipeline statistics a kernel engineer reads first, across drivers:
// each column names the statistic under every driver's own name
// (VK_KHR_pipeline_executable_properties has no common vocabulary). The
// `run --compile-only` table, `compare` and the HTML report read them here.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pebench {

using PipelineStats = std::vector<std::pair<std::string, double>>;

struct StatColumn {
  const char* title;               // the table's heading
  std::vector<const char*> names;  // the statistic's name in each driver
};

// registers, spilled registers, scratch, shared memory, occupancy.
const std::vector<StatColumn>& key_stat_columns();

// The first of `column`'s names present in `stats`.
std::optional<double> find_stat(const PipelineStats& stats, const StatColumn& column);

// Spilled registers of any kind (RADV's VGPRs and SGPRs, others' spill
// counts); nullopt when the driver reports none of them.
std::optional<double> spills(const PipelineStats& stats);

}  // namespace pebench
