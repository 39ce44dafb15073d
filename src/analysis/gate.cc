#include "analysis/gate.h"

#include <fmt/format.h>

#include "analysis/format_units.h"

namespace pebench {

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
      if (c.verdict == Verdict::kSlower) {
        g.reasons.push_back(fmt::format("slower: {}: {}x ({} -> {}, p={} < {}, threshold {}){}", name(b),
                                        format_ratio(c.ratio), format_ns(c.base_median), format_ns(c.new_median),
                                        format_p(c.p_value), options.alpha, format_threshold(options.threshold), in));
      }
    }
    for (const CaseRecord* b : pair.only_in_base) {
      g.reasons.push_back(fmt::format("missing: {}: in BASE, absent from NEW{}", name(*b), in));
    }
  }
  return g;
}

}  // namespace pebench
