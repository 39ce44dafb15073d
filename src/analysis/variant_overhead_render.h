// `pebench compare --over VARIANT` printed: for people, an aligned text
// table or markdown (a TextDocument); for scripts, JSON (schema
// pebench.overhead/1; numbers that do not exist are null).
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "analysis/text_document.h"
#include "analysis/variant_overhead.h"

namespace pebench {

inline constexpr const char* kOverheadSchema = "pebench.overhead/1";

// tables[i] is reports[i]'s; `alpha`: where a sample count is flagged as too
// few for compare's U test (sample_spread.h).
TextDocument overhead_document(const std::vector<ReportFile>& reports, const std::vector<OverheadTable>& tables,
                               TimeSeries series, double alpha);
nlohmann::json overhead_json(const std::vector<ReportFile>& reports, const std::vector<OverheadTable>& tables,
                             TimeSeries series);

}  // namespace pebench
