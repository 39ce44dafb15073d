// `pebench compare --format json`: the comparison for scripts (schema
// pebench.compare/1). Numbers that do not exist (no time, no test) are null.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "analysis/compare.h"

namespace pebench {

inline constexpr const char* kCompareSchema = "pebench.compare/1";

nlohmann::json compare_json(const std::vector<ReportFile>& reports, const CompareResult& result);

}  // namespace pebench
