#include "analysis/gate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "analysis/format_units.h"
#include "analysis/timing_rule.h"

namespace pebench {
namespace {

// ", cpu time, over load factor 1.83" / ", over local load factors 0.91-1.3
// (12 nearest cases)" / "": what the timing reasons measured, when it is not
// plain GPU time; `factors`: those of the cases the reason is about.
std::string measured(const std::vector<double>& factors, const CompareOptions& options) {
  std::string m = options.series == TimeSeries::kCpu ? "cpu time" : "";
  if (options.normalize && !factors.empty()) {
    const auto [lo, hi] = std::minmax_element(factors.begin(), factors.end());
    const bool one = *lo == *hi;
    const std::string values = one ? format_ratio(*lo) : fmt::format("{}-{}", format_ratio(*lo), format_ratio(*hi));
    m += fmt::format("{}over {}load factor{} {}", m.empty() ? "" : ", ", options.load_neighbours ? "local " : "",
                     one ? "" : "s", values);
    if (options.load_neighbours) m += fmt::format(" ({} nearest cases)", options.load_neighbours);
  }
  return m.empty() ? "" : ", " + m;
}

std::string variant_reason(const PairComparison& pair, const VariantComparison& v, const CompareOptions& options) {
  std::vector<std::string> ratios;
  std::vector<double> factors;
  for (size_t i : v.cases) {
    ratios.push_back(format_ratio(pair.cases[i].ratio) + "x");
    factors.push_back(pair.cases[i].load_factor);
  }
  return fmt::format("slower: {} {}: median {}x of its {} cases ({}), threshold {}{}", v.variant, v.impl,
                     format_ratio(v.ratio), v.cases.size(), fmt::join(ratios, ", "),
                     format_threshold(*options.variant_threshold), measured(factors, options));
}

// The confirming run's verdict on the same BASE case / variant (null when it
// has none). Both pairs share BASE, so its records identify a case.
const CaseComparison* confirming_case(const PairComparison* confirm, const CaseRecord* base) {
  if (!confirm) return nullptr;
  for (const auto& c : confirm->cases) {
    if (c.base == base) return &c;
  }
  return nullptr;
}

const VariantComparison* confirming_variant(const PairComparison* confirm, const VariantComparison& v) {
  if (!confirm) return nullptr;
  for (const auto& w : confirm->variants) {
    if (w.variant == v.variant && w.impl == v.impl) return &w;
  }
  return nullptr;
}

}  // namespace

GateResult evaluate_gate(const std::vector<ReportFile>& reports, const std::vector<PairComparison>& pairs,
                         const CompareOptions& options, const PairComparison* confirm) {
  GateResult g;
  // A timing reason: kept when there is no confirming run or it repeats the
  // finding (`again`: its ratio there), else noted as unconfirmed.
  auto timing = [&](const std::string& reason, std::optional<double> again) {
    if (!confirm) {
      g.reasons.push_back(reason);
    } else if (again) {
      g.reasons.push_back(fmt::format("{}; confirmed: {}x in a second run", reason, format_ratio(*again)));
    } else {
      g.unconfirmed.push_back(reason);
    }
  };
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
    const bool fail_cross_host = options.cross_host == CrossHost::kFail;
    if (pair.cross_host) {
      const auto& h = *pair.cross_host;
      const std::string what = fmt::format("BASE ran {} on {}, NEW on {}{}", fmt::join(h.devices, " and "), h.base,
                                           h.next, in);
      if (fail_cross_host) {
        g.reasons.push_back(fmt::format("host: {}: a CPU device's times compare its hosts", what));
      } else {
        g.notes.push_back(fmt::format("timing not gated: {}: a CPU device's times compare its hosts", what));
      }
    }
    // Timing reasons, except for the CPU devices timed on another host when
    // only their correctness is gated.
    auto time_gated = [&](const CaseRecord& b) {
      if (!pair.cross_host || fail_cross_host) return true;
      const auto& cpus = pair.cross_host->devices;
      return std::find(cpus.begin(), cpus.end(), b.device_info->key_name) == cpus.end();
    };
    for (const auto& c : pair.cases) {
      const CaseRecord& b = *c.base;
      const CaseRecord& n = *c.next;
      const std::string why = n.reason.empty() ? "" : ": " + n.reason;
      switch (c.change) {
        case StatusChange::kBroke:
          g.reasons.push_back(fmt::format("broke: {}: {} in BASE, {} in NEW{}{}", name(b), b.status, n.status, why, in));
          break;
        case StatusChange::kLost:
          g.reasons.push_back(fmt::format("lost: {}: {} in BASE, {} in NEW{}{}", name(b), b.status, n.status, why, in));
          break;
        case StatusChange::kNotRun:
          // Not a regression, but no evidence either: like a missing case.
          if (b.ok()) g.reasons.push_back(fmt::format("not run: {}: ok in BASE, {} in NEW{}", name(b), n.status, in));
          break;
        default:
          break;
      }
      for (const auto& sc : c.stat_changes) {
        if (!sc.new_spills) continue;
        g.reasons.push_back(fmt::format("spills: {}: {} spills {:g} registers, none in BASE{}", name(b), sc.shader,
                                        sc.next.value_or(0), in));
      }
      if (!time_gated(b)) continue;
      if (c.verdict == Verdict::kSlower) {
        const CaseComparison* again = confirming_case(confirm, c.base);
        timing(fmt::format("slower: {}: {}x ({} -> {}, p={} < {}, threshold {}{}){}", name(b), format_ratio(c.ratio),
                           format_ns(c.base_median), format_ns(c.new_median), format_p(c.p_value), options.alpha,
                           format_threshold(options.threshold), measured({c.load_factor}, options), in),
               again && again->verdict == Verdict::kSlower ? again->ratio : std::nullopt);
      }
      if (c.ratio && c.too_few_samples && options.min_samples > 0) {
        g.reasons.push_back(fmt::format("samples: {}: {} in BASE and {} in NEW, fewer than the {} the rule needs{}",
                                        name(b), series_samples(*b.time, options.series).size(),
                                        series_samples(*n.time, options.series).size(), options.min_samples, in));
      }
    }
    for (const auto& v : pair.variants) {
      const bool gated = std::any_of(v.cases.begin(), v.cases.end(),
                                     [&](size_t i) { return time_gated(*pair.cases[i].base); });
      if (!v.slower || !gated) continue;
      const VariantComparison* again = confirming_variant(confirm, v);
      timing(variant_reason(pair, v, options) + in,
             again && again->slower ? std::optional<double>(again->ratio) : std::nullopt);
    }
    for (const CaseRecord* b : pair.only_in_base) {
      g.reasons.push_back(fmt::format("missing: {}: in BASE, absent from NEW{}", name(*b), in));
    }
  }
  return g;
}

}  // namespace pebench
