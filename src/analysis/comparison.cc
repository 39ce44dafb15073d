#include "analysis/comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "analysis/case_key.h"
#include "analysis/enum_names.h"
#include "analysis/mann_whitney.h"
#include "analysis/pipeline_stats.h"
#include "analysis/timing_rule.h"

namespace pebench {

namespace {

constexpr std::array<const char*, 5> kVerdictNames = {"faster", "slower", "unchanged", "noisy", "-"};
static_assert(kVerdictNames.size() == static_cast<size_t>(Verdict::kNone) + 1, "one name per Verdict");
constexpr std::array<const char*, 6> kStatusChangeNames = {"same", "broke", "lost", "fixed", "not run", "changed"};
static_assert(kStatusChangeNames.size() == static_cast<size_t>(StatusChange::kOther) + 1, "one name per StatusChange");

}  // namespace

const char* verdict_name(Verdict v) { return enum_name(v, kVerdictNames, "-"); }

const char* status_change_name(StatusChange c) { return enum_name(c, kStatusChangeNames, "changed"); }

size_t PairComparison::count(Verdict v) const {
  return static_cast<size_t>(
      std::count_if(cases.begin(), cases.end(), [v](const CaseComparison& c) { return c.verdict == v; }));
}

Verdict classify(double ratio, std::optional<double> p_value, const CompareOptions& options) {
  // The band is symmetric in log space: 10% slower is ratio 1.1, 10% faster
  // the reciprocal, so A vs B and B vs A give mirrored verdicts.
  const double upper = 1.0 + options.threshold;
  const double lower = 1.0 / upper;
  if (ratio <= upper && ratio >= lower) return Verdict::kUnchanged;
  if (!p_value || *p_value >= options.alpha) return Verdict::kNoisy;
  return ratio > upper ? Verdict::kSlower : Verdict::kFaster;
}

namespace {
double pinned(double ratio) {
  return std::clamp(ratio, std::numeric_limits<double>::min(), std::numeric_limits<double>::max());
}
}  // namespace

double geometric_mean(const std::vector<double>& ratios) {
  if (ratios.empty()) return 1;
  double log_sum = 0;
  for (double r : ratios) log_sum += std::log(r);
  return pinned(std::exp(log_sum / static_cast<double>(ratios.size())));
}

double time_ratio(double num, double den) { return pinned(num / den); }

std::optional<int64_t> tuned_value(const CaseRecord& side, const CaseRecord& other) {
  if (side.tuning) return side.tuning->chosen;
  if (other.tuning) return other.tuning->planned;
  return std::nullopt;
}

namespace {

StatusChange status_change(const std::string& base, const std::string& next) {
  if (base == next) return StatusChange::kSame;
  if (base == "interrupted" || next == "interrupted") return StatusChange::kNotRun;
  // "compiled" (--compile-only) is the good state of a report that ran nothing.
  if (base == "ok" || base == "compiled") {
    if (next == "failed" || next == "error") return StatusChange::kBroke;
    return StatusChange::kLost;
  }
  if (next == "ok" || next == "compiled") return StatusChange::kFixed;
  return StatusChange::kOther;
}

// Pairs each BASE pipeline with the NEW one of the same shader and build
// (the k-th with the k-th) and lists the key statistics that differ.
std::vector<StatChange> stat_changes(const std::vector<PipelineRecordView>& base,
                                     const std::vector<PipelineRecordView>& next) {
  std::vector<StatChange> out;
  std::vector<bool> used(next.size(), false);
  for (const auto& b : base) {
    const PipelineRecordView* n = nullptr;
    for (size_t i = 0; i < next.size() && !n; ++i) {
      if (!used[i] && next[i].shader == b.shader && next[i].storage == b.storage) {
        used[i] = true;
        n = &next[i];
      }
    }
    if (!n) continue;
    for (const auto& column : key_stat_columns()) {
      const auto bv = find_stat(b.stats, column);
      const auto nv = find_stat(n->stats, column);
      if (bv == nv) continue;
      out.push_back({b.shader + "." + b.storage, column.title, bv, nv, false});
    }
    const auto bs = spills(b.stats), ns = spills(n->stats);
    if (bs && ns && *bs == 0 && *ns > 0) {
      out.push_back({b.shader + "." + b.storage, "spills (gate)", bs, ns, true});
    }
  }
  return out;
}

// `load`: the case's load factor when normalising (else 1); NEW's median and
// samples are divided by it before they meet BASE's.
CaseComparison compare_case(const CaseRecord& base, const CaseRecord& next, const CompareOptions& options,
                            double load) {
  CaseComparison c;
  c.base = &base;
  c.next = &next;
  c.load_factor = load;
  c.change = status_change(base.status, next.status);
  c.stat_changes = stat_changes(base.pipelines, next.pipelines);
  if (base.vk_warnings && next.vk_warnings) {
    for (const auto& [id, n] : *next.vk_warnings) {
      if (!base.vk_warnings->count(id)) c.vk_warnings_appeared.push_back(id);
    }
    for (const auto& [id, n] : *base.vk_warnings) {
      if (!next.vk_warnings->count(id)) c.vk_warnings_gone.push_back(id);
    }
  }
  if (base.timed()) c.base_median = series_median(*base.time, options.series);
  if (next.timed()) c.new_median = series_median(*next.time, options.series);
  // Only cases that ran correctly on both sides have a meaningful time.
  if (!base.ok() || !next.ok() || !c.base_median || !c.new_median) return c;
  c.ratio = time_ratio(*c.new_median / load, *c.base_median);
  const auto& base_samples = series_samples(*base.time, options.series);
  std::vector<double> new_samples = series_samples(*next.time, options.series);
  for (double& s : new_samples) s /= load;
  c.too_few_samples = std::min(base_samples.size(), new_samples.size()) < std::max<size_t>(options.min_samples, 1);
  if (!c.too_few_samples) {
    const MannWhitneyResult u = mann_whitney_u(base_samples, new_samples);
    c.p_value = u.p_value;
    c.exact_test = u.exact;
  }
  c.verdict = classify(*c.ratio, c.p_value, options);
  return c;
}

// The case to compare of each "device key name\nkey": the only one with
// that key, or, where several impls share it (matching across impls),
// `impl` when given, else flash; none when that leaves no single case.
std::unordered_map<std::string, const CaseRecord*> chosen_cases(
    const ReportFile& report, const std::function<std::string(const CaseRecord&)>& match_key,
    const std::string& impl) {
  std::unordered_map<std::string, std::vector<const CaseRecord*>> groups;
  for (const auto& c : report.cases) groups[c.device_info->key_name + "\n" + match_key(c)].push_back(&c);
  const std::string wanted = impl.empty() ? "flash" : impl;
  std::unordered_map<std::string, const CaseRecord*> out;
  for (const auto& [key, cases] : groups) {
    if (cases.size() == 1) {
      out[key] = cases[0];
      continue;
    }
    for (const CaseRecord* c : cases) {
      if (c->impl == wanted) out[key] = c;
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> report_impls(const ReportFile& report) {
  std::set<std::string> impls;
  for (const auto& c : report.cases) impls.insert(c.impl);
  return {impls.begin(), impls.end()};
}

bool match_across_impls(const ReportFile& base, const ReportFile& next) {
  const std::vector<std::string> a = report_impls(base), b = report_impls(next);
  if (a.empty() || b.empty()) return false;
  std::vector<std::string> shared;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(shared));
  return shared.empty();
}

PairComparison compare_reports(const ReportFile& base, const ReportFile& next, const CompareOptions& options,
                               size_t base_index, size_t new_index) {
  PairComparison out;
  out.base_report = base_index;
  out.new_report = new_index;

  // Pair devices by name; two single-device reports on different devices
  // are paired with each other.
  const auto base_devices = base.result_devices();
  const auto new_devices = next.result_devices();
  std::map<std::string, std::string> new_for_base;  // base key name -> new key name
  for (const auto& b : base_devices) {
    if (std::find(new_devices.begin(), new_devices.end(), b) != new_devices.end()) {
      new_for_base[b] = b;
      out.devices.push_back({b, b});
    }
  }
  if (out.devices.empty() && base_devices.size() == 1 && new_devices.size() == 1) {
    new_for_base[base_devices[0]] = new_devices[0];
    out.devices.push_back({base_devices[0], new_devices[0]});
    out.cross_device = true;
  }

  if (!base.same_host_cpu(next)) {
    PairComparison::Hosts hosts{{}, base.host_cpu(), next.host_cpu()};
    for (const auto& dp : out.devices) {
      const DeviceRecord* b = base.device(dp.base);
      const DeviceRecord* n = next.device(dp.next);
      if (b && n && b->device_type == "cpu" && n->device_type == "cpu") hosts.devices.push_back(dp.base);
    }
    if (!hosts.devices.empty()) out.cross_host = hosts;
  }

  out.across_impls = match_across_impls(base, next);
  if (out.across_impls) {
    out.base_impls = report_impls(base);
    out.new_impls = report_impls(next);
  }
  const auto match_key = [&out](const CaseRecord& c) {
    return out.across_impls ? case_key_without_impl(c.variant, c.dtype, c.params) : c.key;
  };
  // Each side's case to compare for each device + key: the only one, or
  // (across impls) the impl chosen among several.
  const std::unordered_map<std::string, const CaseRecord*> new_by_key = chosen_cases(next, match_key, options.impl);
  const std::unordered_map<std::string, const CaseRecord*> base_by_key = chosen_cases(base, match_key, options.impl);
  std::unordered_map<const CaseRecord*, bool> matched_new;

  std::vector<std::pair<const CaseRecord*, const CaseRecord*>> matched;  // BASE order
  for (const auto& b : base.cases) {
    auto dev = new_for_base.find(b.device_info->key_name);
    const CaseRecord* n = nullptr;
    const std::string key = match_key(b);
    auto chosen = base_by_key.find(b.device_info->key_name + "\n" + key);
    if (dev != new_for_base.end() && chosen != base_by_key.end() && chosen->second == &b) {
      auto it = new_by_key.find(dev->second + "\n" + key);
      if (it != new_by_key.end()) n = it->second;
    }
    if (!n) {
      out.only_in_base.push_back(&b);
      continue;
    }
    matched_new[n] = true;
    matched.emplace_back(&b, n);
  }
  if (options.normalize) {
    out.load_factor = load_factor(matched, options.series);
    // Medians far apart (1e-3 ns against 1e306 ns) overflow the ratio.
    if (!(std::isfinite(out.load_factor) && out.load_factor > 0)) {
      throw ReportError(fmt::format("{} against {}: the load factor (the median NEW/BASE ratio) is {}; "
                                    "--normalize cannot divide by it",
                                    next.path, base.path, out.load_factor));
    }
  }
  const std::vector<double> factors =
      options.normalize && options.load_neighbours > 0
          ? case_load_factors(matched, options.series, options.load_neighbours, out.load_factor)
          : std::vector<double>(matched.size(), out.load_factor);
  for (size_t i = 0; i < factors.size(); ++i) {
    if (!(std::isfinite(factors[i]) && factors[i] > 0)) {
      throw ReportError(fmt::format("{}: {}: its load factor (--load-neighbours) is {}; --normalize cannot divide "
                                    "by it",
                                    next.path, matched[i].first->display(), factors[i]));
    }
  }

  std::map<std::string, std::vector<double>> family_ratios;
  std::vector<double> all_ratios;
  for (size_t i = 0; i < matched.size(); ++i) {
    const auto& [b, n] = matched[i];
    CaseComparison c = compare_case(*b, *n, options, factors[i]);
    if (c.ratio) {
      family_ratios[b->family()].push_back(*c.ratio);
      all_ratios.push_back(*c.ratio);
    }
    out.cases.push_back(c);
  }
  if (options.variant_threshold) out.variants = compare_variants(out.cases, options);
  for (const auto& n : next.cases) {
    if (!matched_new.count(&n)) out.only_in_new.push_back(&n);
  }
  for (const auto& [family, ratios] : family_ratios) {
    out.families.push_back({family, ratios.size(), geometric_mean(ratios)});
  }
  if (!all_ratios.empty()) out.overall = GeoMean{"all", all_ratios.size(), geometric_mean(all_ratios)};
  return out;
}

}  // namespace pebench
