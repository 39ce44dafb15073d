#include "analysis/variant_overhead.h"

#include <fmt/format.h>

#include <algorithm>
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

bool same_shape(const CaseRecord& a, const CaseRecord& base) {
  if (a.impl != base.impl || a.dtype != base.dtype) return false;
  for (const auto& k : shape_param_names()) {
    auto x = a.params.find(k), y = base.params.find(k);
    if (x != a.params.end() && y != base.params.end() && canonical_value(*x) != canonical_value(*y)) return false;
  }
  return true;
}

std::vector<std::string> non_shape_differences(const CaseRecord& a, const CaseRecord& base) {
  const auto& shape = shape_param_names();
  std::vector<std::string> out;
  for (const auto& [k, v] : base.params.items()) {
    if (std::find(shape.begin(), shape.end(), k) != shape.end() || k == "impl" || k == "dtype") continue;
    auto mine = a.params.find(k);
    if (mine != a.params.end() && canonical_value(*mine) != canonical_value(v)) {
      out.push_back(fmt::format("{} {} ({} {})", k, canonical_value(*mine), base.variant, canonical_value(v)));
    }
  }
  return out;
}

const CaseRecord* matching_base(const CaseRecord& a, const std::vector<const CaseRecord*>& bases,
                                std::vector<std::string>* differs) {
  const CaseRecord* best = nullptr;
  std::vector<std::string> best_differs;
  for (const CaseRecord* b : bases) {
    if (!same_shape(a, *b)) continue;
    auto d = non_shape_differences(a, *b);
    if (!best || d.size() < best_differs.size()) {
      best = b;
      best_differs = std::move(d);
    }
  }
  if (differs) *differs = std::move(best_differs);
  return best;
}

namespace {

OverheadRow overhead_row(const CaseRecord& variant, const std::vector<const CaseRecord*>& bases, TimeSeries series,
                         double confidence) {
  OverheadRow row;
  row.variant = &variant;
  const CaseRecord* base = matching_base(variant, bases, &row.differs);
  row.base = base;
  if (!base || !base->ok() || !variant.ok() || !base->timed() || !variant.timed()) return row;
  row.base_median = series_median(*base->time, series);
  row.variant_median = series_median(*variant.time, series);
  row.ratio = time_ratio(*row.variant_median, *row.base_median);
  const auto& x = series_samples(*base->time, series);
  const auto& y = series_samples(*variant.time, series);
  // Samples taken close in time move together on a drifting machine: pair
  // them where the report says when each began. The sign test needs more
  // samples than the U test for a level (6 for 95%, 8 for 99% against 4
  // and 5 a side): with fewer, the pooled interval.
  const bool timed_starts = !base->time->started_ns.empty() && !variant.time->started_ns.empty();
  if (timed_starts) {
    row.interval = paired_ratio_interval(x, base->time->started_ns, y, variant.time->started_ns, confidence);
  }
  if (!row.interval) row.interval = ratio_interval(x, y, confidence);
  return row;
}

}  // namespace

OverheadTable variant_overheads(const ReportFile& report, const std::string& baseline, TimeSeries series,
                                double confidence) {
  OverheadTable table;
  table.baseline = baseline;
  std::unordered_map<std::string, std::vector<const CaseRecord*>> bases_by_device;
  std::string family;
  for (const auto& c : report.cases) {
    if (c.variant != baseline) continue;
    family = c.family();
    bases_by_device[c.device_info->key_name].push_back(&c);
  }
  if (bases_by_device.empty()) {
    throw ReportError(fmt::format("{}: --over {}: the report has no {} case", report.path, baseline, baseline));
  }
  for (const auto& c : report.cases) {
    if (c.variant == baseline || c.family() != family) continue;
    table.rows.push_back(overhead_row(c, bases_by_device[c.device_info->key_name], series, confidence));
  }
  return table;
}

}  // namespace pebench
