// The table `pebench run` prints when the sweep ends: per case its median,
// how many samples it has and how far they spread, its throughput and its
// place under the device's roofs, a note on cases with too few samples to
// compare, and a line per case that --tune ran with another plan than its
// planner's.
#pragma once

#include <string>
#include <vector>

#include "harness/output/result.h"

namespace pebench {

// The table and, when needed, its footnotes.
std::string run_table_text(const std::vector<CaseResult>& results);

// "row_slots=6 (planned 8)", ", from REPORT" added under --tune-from: what
// the progress line and the table's `tuned:` lines say of a case's tuning.
std::string tuning_summary(const CaseResult::Tuning& t);

// After a run under the validation layer (--validate): its errors and its
// warnings by message id, each with its count and the cases that raised it,
// most cases first. "" when no case ran under the layer.
std::string vk_validation_summary(const std::vector<CaseResult>& results);

// "83% memory": the fraction of the roof that bounds the case.
std::string roofline_cell(const std::optional<Roofline>& r);

}  // namespace pebench
