#include "analysis/compare.h"

#include <stdexcept>

#include "analysis/timing_rule.h"

namespace pebench {

CompareResult run_compare(const std::vector<ReportFile>& reports, const CompareOptions& options, bool gate,
                          const ReportFile* confirm) {
  if (reports.size() < 2) throw std::invalid_argument("compare needs at least two reports");
  check_comparable(reports, options);
  CompareResult r;
  r.options = options;
  for (size_t i = 1; i < reports.size(); ++i) r.pairs.push_back(compare_reports(reports[0], reports[i], options, 0, i));
  if (reports.size() >= 3) r.matrix = vendor_matrix(reports);
  if (confirm) {
    check_comparable({reports[0], *confirm}, options);
    r.confirm = compare_reports(reports[0], *confirm, options, 0, reports.size());
    r.confirm_path = confirm->path;
  }
  if (gate) r.gate = evaluate_gate(reports, r.pairs, options, r.confirm ? &*r.confirm : nullptr);
  return r;
}

}  // namespace pebench
