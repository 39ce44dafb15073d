// What each variant costs over a baseline variant of its family in the same
// report (`pebench compare --over attn.nope REPORT`): every attn.* case set
// against the attn.nope case of the same device, impl, dtype and shape
// (encodings.md section 5's shape keys: batch, heads, kv_heads, seq,
// kv_seq, dim, d_model, causal), so each encoding's cost is read as a ratio
// taken within one run, the only comparison of speeds a shared machine
// allows. The variant's own parameters (scale, buckets, ...) are not part
// of the match.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/comparison.h"
#include "analysis/ratio_interval.h"
#include "analysis/report_file.h"

namespace pebench {

// The parameters that make a case's shape (encodings.md section 5), in
// the order a row shows them.
const std::vector<std::string>& shape_param_names();

// "device|impl|dtype|batch=1,seq=2048,...": the shape parameters the case has.
std::string shape_key(const CaseRecord& c);

// Same impl and dtype, and every shape parameter both cases have agrees.
bool same_shape(const CaseRecord& a, const CaseRecord& base);

// The parameters both have, other than the shape's, impl and dtype, whose
// values differ, each as "scale 1 (attn.nope 0.125)".
std::vector<std::string> non_shape_differences(const CaseRecord& a, const CaseRecord& base);

// Of `bases` (a baseline variant's cases on a's device), the one of a's
// shape whose other parameters differ least from a's (the first of those),
// with the differences in `differs`; null when none has a's shape.
const CaseRecord* matching_base(const CaseRecord& a, const std::vector<const CaseRecord*>& bases,
                                std::vector<std::string>* differs);

struct OverheadRow {
  const CaseRecord* variant = nullptr;
  const CaseRecord* base = nullptr;  // the baseline's case at that shape (matching_base); null: none
  std::vector<std::string> differs;  // their other parameters that differ (non_shape_differences)
  // When both ran ok and were timed: their medians (in the compared
  // series), variant / base, and the interval of that ratio: paired by
  // start time where both record it (paired_ratio_interval), else, or
  // where the case has too few samples for the sign test at this level,
  // from the pooled samples (ratio_interval).
  std::optional<double> base_median, variant_median, ratio;
  std::optional<RatioInterval> interval;
};

struct OverheadTable {
  std::string baseline;           // the baseline variant's id
  std::vector<OverheadRow> rows;  // the family's other cases, in report order
};

// Throws ReportError (one line, naming the report and the value) when the
// report has no case of `baseline`. `confidence`: the intervals' level.
// Pointers point into `report`.
OverheadTable variant_overheads(const ReportFile& report, const std::string& baseline, TimeSeries series,
                                double confidence);

}  // namespace pebench
