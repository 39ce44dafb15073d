#include "analysis/variant_overhead.h"

#include <fmt/format.h>

#include <unordered_map>

#include "analysis/case_key.h"
#include "analysis/timing_rule.h"

namespace pebench {

const std::vector<std::string>& shape_param_names() {
  static const std::vector<std::string> names = {"batch",  "heads", "kv_heads", "seq",
                                                 "kv_seq", "dim",   "d_model",  "causal"};
  return names;
}

std::string shape_key(const CaseRecord& c) {
  std::string params;
  for (const auto& name : shape_param_names()) {
    auto it = c.params.find(name);
    if (it == c.params.end()) continue;
    params += (params.empty() ? "" : ",") + name + "=" + canonical_value(*it);
  }
  return fmt::format("{}|{}|{}|{}", c.device_info->key_name, c.impl, c.dtype, params);
}

namespace {

OverheadRow overhead_row(const CaseRecord& variant, const CaseRecord* base, TimeSeries series, double confidence) {
  OverheadRow row;
  row.variant = &variant;
  row.base = base;
  if (!base || !base->ok() || !variant.ok() || !base->timed() || !variant.timed()) return row;
  row.base_median = series_median(*base->time, series);
  row.variant_median = series_median(*variant.time, series);
  row.ratio = time_ratio(*row.variant_median, *row.base_median);
  const auto& x = series_samples(*base->time, series);
  const auto& y = series_samples(*variant.time, series);
  // Samples taken close in time move together on a drifting machine: pair
  // them where the report says when each began.
  const bool timed_starts = !base->time->started_ns.empty() && !variant.time->started_ns.empty();
  row.interval = timed_starts ? paired_ratio_interval(x, base->time->started_ns, y, variant.time->started_ns, confidence)
                              : ratio_interval(x, y, confidence);
  return row;
}

}  // namespace

OverheadTable variant_overheads(const ReportFile& report, const std::string& baseline, TimeSeries series,
                                double confidence) {
  OverheadTable table;
  table.baseline = baseline;
  std::unordered_map<std::string, const CaseRecord*> base_by_shape;
  std::string family;
  for (const auto& c : report.cases) {
    if (c.variant != baseline) continue;
    family = c.family();
    auto [it, inserted] = base_by_shape.emplace(shape_key(c), &c);
    if (!inserted) {
      throw ReportError(fmt::format("{}: --over {}: two {} cases of one shape ({} and {}): keep one per shape",
                                    report.path, baseline, baseline, it->second->display(), c.display()));
    }
  }
  if (base_by_shape.empty()) {
    throw ReportError(fmt::format("{}: --over {}: the report has no {} case", report.path, baseline, baseline));
  }
  for (const auto& c : report.cases) {
    if (c.variant == baseline || c.family() != family) continue;
    auto it = base_by_shape.find(shape_key(c));
    table.rows.push_back(overhead_row(c, it == base_by_shape.end() ? nullptr : it->second, series, confidence));
  }
  return table;
}

}  // namespace pebench
