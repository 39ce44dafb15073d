#include "cli/run_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/comparison.h"
#include "analysis/format_units.h"
#include "analysis/sample_spread.h"
#include "analysis/text_table.h"

namespace pebench {

std::string roofline_cell(const std::optional<Roofline>& r) {
  return r ? fmt::format("{:.0f}% {}", 100.0 * r->fraction, r->bound) : "-";
}

std::string tuning_summary(const CaseResult::Tuning& t) {
  return fmt::format("{}={} (planned {}{})", t.knob, t.chosen, t.planned, t.from.empty() ? "" : ", from " + t.from);
}

std::string vk_validation_summary(const std::vector<CaseResult>& results) {
  size_t cases = 0, with_errors = 0;
  uint64_t errors = 0;
  struct Seen {
    uint64_t count = 0;
    size_t cases = 0;
  };
  std::map<std::string, Seen> warnings, allowed;
  for (const auto& r : results) {
    if (!r.vk_validation) continue;
    ++cases;
    errors += r.vk_validation->errors;
    if (r.vk_validation->errors) ++with_errors;
    for (const auto& [id, n] : r.vk_validation->warnings) {
      warnings[id].count += n;
      warnings[id].cases++;
    }
    for (const auto& [id, n] : r.vk_validation->allowed) {
      allowed[id].count += n;
      allowed[id].cases++;
    }
  }
  if (cases == 0) return "";
  std::string out = fmt::format(
      "validation layer: {} case(s), {} error(s) in {} case(s), {} warning id(s) outside the allow-list, {} in it\n",
      cases, errors, with_errors, warnings.size(), allowed.size());
  const auto list = [&](const std::map<std::string, Seen>& ids, const char* tag) {
    std::vector<std::pair<std::string, Seen>> sorted(ids.begin(), ids.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second.cases > b.second.cases; });
    for (const auto& [id, s] : sorted) {
      out += fmt::format("  {:>7} x {} ({} of {} cases){}\n", s.count, id, s.cases, cases, tag);
    }
  };
  list(warnings, "");
  list(allowed, " [allowed]");
  return out;
}

std::string run_table_text(const std::vector<CaseResult>& results) {
  const double alpha = CompareOptions{}.alpha;  // what `pebench compare` will test with by default
  TextTable table({"dev", "variant", "impl", "dtype", "params", "status", "median", "n", "IQR", "GB/s", "GFLOP/s",
                   "roofline", "nmse"});
  for (size_t c : {6, 7, 8, 9, 10, 11, 12}) table.align_right(c);
  size_t too_few = 0;
  for (const auto& r : results) {
    std::string median = "-", n = "-", iqr = "-", gbps = "-", gflops = "-", nmse = "-";
    if (r.time) {
      const SampleSpread s = sample_spread(r.time->samples);
      median = format_ns(r.time->median, NsStyle::kFixedUpToMs);
      n = samples_cell(s.n, alpha);
      iqr = iqr_cell(s);
      if (r.cost.bytes > 0) gbps = fmt::format("{:.2f}", r.cost.bytes / r.time->median);
      if (r.cost.flops > 0) gflops = fmt::format("{:.2f}", r.cost.flops / r.time->median);
      if (s.n < min_comparable_samples(alpha)) ++too_few;
    }
    if (r.validation.ran) nmse = fmt::format("{:.2g}", r.validation.nmse);
    table.add_row({fmt::format("d{}", r.device), r.variant, r.impl, r.dtype, r.label, status_name(r.status), median, n,
                   iqr, gbps, gflops, roofline_cell(r.roofline), nmse});
  }
  std::string out = table.text();
  // --tune: the cases that ran another plan than their planner's.
  for (const auto& r : results) {
    if (!r.tuning || r.tuning->chosen == r.tuning->planned) continue;
    out += fmt::format("tuned: d{} {} {} {} {}: {}\n", r.device, r.variant, r.impl, r.dtype, r.label,
                       tuning_summary(*r.tuning));
  }
  if (too_few > 0) {
    out += fmt::format(
        "n!: {} case(s) have fewer than {} samples, too few for `pebench compare` to call any change significant "
        "(alpha {}); give them more time with --benchmark_min_time\n",
        too_few, min_comparable_samples(alpha), alpha);
  }
  return out;
}

}  // namespace pebench
