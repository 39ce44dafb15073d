#include "analysis/timing_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

// A matched pair ok and timed on both sides in one series.
struct TimedPair {
  size_t index;  // in matched
  const std::string& variant;
  double log_base, ratio;  // log of BASE's median; NEW/BASE
};

std::vector<TimedPair> timed_pairs(const std::vector<std::pair<const CaseRecord*, const CaseRecord*>>& matched,
                                   TimeSeries series) {
  std::vector<TimedPair> out;
  for (size_t i = 0; i < matched.size(); ++i) {
    const auto& [b, n] = matched[i];
    if (!b->ok() || !n->ok() || !b->timed() || !n->timed()) continue;
    const double base = series_median(*b->time, series), next = series_median(*n->time, series);
    if (base > 0 && next > 0) out.push_back({i, b->variant, std::log(base), next / base});
  }
  return out;
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
  for (const auto& t : timed_pairs(matched, series)) ratios.push_back(t.ratio);
  return ratios.empty() ? 1.0 : median(ratios);
}

std::vector<double> case_load_factors(const std::vector<std::pair<const CaseRecord*, const CaseRecord*>>& matched,
                                      TimeSeries series, size_t neighbours, double overall) {
  std::vector<double> out(matched.size(), overall);
  const std::vector<TimedPair> timed = timed_pairs(matched, series);
  for (const TimedPair& t : timed) {
    std::vector<std::pair<double, double>> others;  // (distance in log BASE time, ratio), in matched order
    for (const TimedPair& o : timed) {
      if (o.variant != t.variant) others.emplace_back(std::abs(o.log_base - t.log_base), o.ratio);
    }
    if (others.empty()) continue;
    const size_t k = std::min(std::max<size_t>(neighbours, 1), others.size());
    std::stable_sort(others.begin(), others.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> ratios;
    for (size_t i = 0; i < k; ++i) ratios.push_back(others[i].second);
    out[t.index] = median(ratios);
  }
  return out;
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
  if (options.normalize) {
    // A median below a picosecond is no measurement (5e-324 ns made the load
    // factor infinite, every normalized ratio 0 and the gate pass anything).
    for (const auto& r : reports) {
      for (const auto& c : r.cases) {
        if (!c.ok() || !c.timed()) continue;
        const double m = series_median(*c.time, options.series);
        if (!(m >= kShortestMeasurableNs)) {
          throw ReportError(fmt::format("{}: {}: a {} median of {:g} ns is below {:g} ns, not a measured time; "
                                        "--normalize would divide every ratio by a meaningless load factor",
                                        r.path, c.display(), series_name(options.series), m,
                                        kShortestMeasurableNs));
        }
      }
    }
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
