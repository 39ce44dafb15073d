// The table `run --compile-only` prints: one row per pipeline of every case,
// with the driver statistics of analysis/pipeline_stats.h.
#pragma once

#include <vector>

#include "analysis/text_table.h"
#include "harness/output/result.h"

namespace pebench {

TextTable pipeline_table(const std::vector<CaseResult>& results);

}  // namespace pebench
