#include "analysis/timing_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace pebench {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string slowdowns_text(const nlohmann::json& injected) {
  std::vector<std::string> parts;
  for (const auto& s : injected) {
    if (!s.is_object()) continue;
    std::string target = s.value("variant", "?");
    if (s.contains("impl") && s["impl"].is_string()) target += "/" + s["impl"].get<std::string>();
    parts.push_back(fmt::format("{}={}", target, s.contains("factor") ? s["factor"].dump() : "?"));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

const char* series_name(TimeSeries s) { return s == TimeSeries::kCpu ? "cpu" : "gpu"; }

double series_median(const TimeRecord& t, TimeSeries series) {
  return series == TimeSeries::kCpu ? t.cpu_median : t.median;
}

const std::vector<double>& series_samples(const TimeRecord& t, TimeSeries series) {
  return series == TimeSeries::kCpu ? t.cpu_samples : t.samples;
}

double load_factor(const std::vector<std::pair<const CaseRecord*, const CaseRecord*>>& matched, TimeSeries series) {
  std::vector<double> ratios;
  for (const auto& [b, n] : matched) {
    if (!b->ok() || !n->ok() || !b->timed() || !n->timed()) continue;
    const double base = series_median(*b->time, series), next = series_median(*n->time, series);
    if (base > 0 && next > 0) ratios.push_back(next / base);
  }
  return ratios.empty() ? 1.0 : median(ratios);
}

std::vector<VariantComparison> compare_variants(const std::vector<CaseComparison>& cases,
                                                const CompareOptions& options) {
  std::vector<VariantComparison> out;
  std::map<std::pair<std::string, std::string>, size_t> index;  // (variant, impl) -> position in out
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseComparison& c = cases[i];
    const auto key = std::make_pair(c.base->variant, c.base->impl);
    auto [it, fresh] = index.emplace(key, out.size());
    if (fresh) out.push_back({key.first, key.second, {}, 1, false});
    if (c.ratio && !c.too_few_samples) out[it->second].cases.push_back(i);
  }
  const double limit = 1.0 + options.variant_threshold.value_or(0);
  for (auto& v : out) {
    if (v.cases.empty()) continue;
    std::vector<double> ratios;
    for (size_t i : v.cases) ratios.push_back(*cases[i].ratio);
    v.ratio = median(ratios);
    v.slower = options.variant_threshold && v.ratio > limit;
  }
  return out;
}

void check_comparable(const std::vector<ReportFile>& reports, const CompareOptions& options) {
  if (!reports.empty() && !reports[0].injected.is_null()) {
    throw ReportError(fmt::format("{}: made with --inject-slowdown {}: a fault-injection report is never a BASE",
                                  reports[0].path, slowdowns_text(reports[0].injected)));
  }
  if (options.series != TimeSeries::kCpu) return;
  for (const auto& r : reports) {
    for (const auto& c : r.cases) {
      if (c.ok() && c.timed() && c.time->cpu_samples.empty()) {
        throw ReportError(
            fmt::format("{}: {} has no cpu_ns samples, which --time cpu compares (a report from "
                        "before pebench recorded CPU time: run it again)",
                        r.path, c.display()));
      }
    }
  }
}

}  // namespace pebench
