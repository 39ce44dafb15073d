#include "analysis/gate.h"

#include <fmt/format.h>

#include "analysis/format_units.h"
#include "analysis/timing_rule.h"

namespace pebench {
namespace {

// ", cpu time, over load factor 1.83" / "": what the timing reasons measured, when
// it is not plain GPU time.
std::string measured(const PairComparison& pair, const CompareOptions& options) {
  std::string m = options.series == TimeSeries::kCpu ? "cpu time" : "";
  if (options.normalize) m += fmt::format("{}over load factor {}", m.empty() ? "" : ", ", format_ratio(pair.load_factor));
  return m.empty() ? "" : ", " + m;
}

std::string variant_reason(const PairComparison& pair, const VariantComparison& v, const CompareOptions& options) {
  std::vector<std::string> ratios;
  for (size_t i : v.cases) ratios.push_back(format_ratio(pair.cases[i].ratio) + "x");
  return fmt::format("slower: {} {}: median {}x of its {} cases ({}), threshold {}{}", v.variant, v.impl,
                     format_ratio(v.ratio), v.cases.size(), fmt::join(ratios, ", "),
                     format_threshold(*options.variant_threshold), measured(pair, options));
}

}  // namespace

GateResult evaluate_gate(const std::vector<ReportFile>& reports, const std::vector<PairComparison>& pairs,
                         const CompareOptions& options) {
  GateResult g;
  for (const auto& pair : pairs) {
    // With several NEW reports, say which one each reason is about.
    const std::string in = pairs.size() > 1 ? fmt::format(" [{}]", reports[pair.new_report].path) : "";
    const bool many_devices = pair.devices.size() > 1;
    auto name = [&](const CaseRecord& c) {
      return many_devices ? fmt::format("{} on {}", c.display(), c.device_info->key_name) : c.display();
    };
    if (pair.cross_device) {
      g.reasons.push_back(fmt::format("device: BASE ran on \"{}\", NEW on \"{}\"{}", pair.devices[0].base,
                                      pair.devices[0].next, in));
    }
    for (const auto& c : pair.cases) {
      const CaseRecord& b = *c.base;
      const CaseRecord& n = *c.next;
      const std::string why = n.reason.empty() ? "" : ": " + n.reason;
      switch (c.change) {
        case StatusChange::kBroke:
          g.reasons.push_back(fmt::format("broke: {}: ok in BASE, {} in NEW{}{}", name(b), n.status, why, in));
          break;
        case StatusChange::kLost:
          g.reasons.push_back(fmt::format("lost: {}: ok in BASE, {} in NEW{}{}", name(b), n.status, why, in));
          break;
        default:
          break;
      }
      if (c.verdict == Verdict::kSlower) {
        g.reasons.push_back(fmt::format("slower: {}: {}x ({} -> {}, p={} < {}, threshold {}{}){}", name(b),
                                        format_ratio(c.ratio), format_ns(c.base_median), format_ns(c.new_median),
                                        format_p(c.p_value), options.alpha, format_threshold(options.threshold),
                                        measured(pair, options), in));
      }
      if (c.ratio && c.too_few_samples && options.min_samples > 0) {
        g.reasons.push_back(fmt::format("samples: {}: {} in BASE and {} in NEW, fewer than the {} the rule needs{}",
                                        name(b), series_samples(*b.time, options.series).size(),
                                        series_samples(*n.time, options.series).size(), options.min_samples, in));
      }
    }
    for (const auto& v : pair.variants) {
      if (v.slower) g.reasons.push_back(variant_reason(pair, v, options) + in);
    }
    for (const CaseRecord* b : pair.only_in_base) {
      g.reasons.push_back(fmt::format("missing: {}: in BASE, absent from NEW{}", name(*b), in));
    }
  }
  return g;
}

}  // namespace pebench
