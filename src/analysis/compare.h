// `pebench compare` as a whole, without the command line: BASE against every
// other report, the vendor matrix when there are three or more, and the gate
// when asked for. The renderers (compare_render.h, compare_json.h) print it.
#pragma once

#include <optional>
#include <vector>

#include "analysis/comparison.h"
#include "analysis/gate.h"
#include "analysis/report_file.h"
#include "analysis/vendor_matrix.h"

namespace pebench {

struct CompareResult {
  CompareOptions options;
  std::vector<PairComparison> pairs;   // reports[0] against reports[i], i >= 1
  std::optional<VendorMatrix> matrix;  // three or more reports
  std::optional<GateResult> gate;      // when gating
  // BASE against a second measurement of NEW's code (--confirm), and its file.
  std::optional<PairComparison> confirm;
  std::string confirm_path;
};

// `reports` must hold at least two reports and outlive the result, as must
// `confirm`: a second run of NEW's command, against which the gate checks
// every timing reason (gate.h). Throws ReportError when the reports cannot
// be compared under `options` (check_comparable).
CompareResult run_compare(const std::vector<ReportFile>& reports, const CompareOptions& options, bool gate,
                          const ReportFile* confirm = nullptr);

}  // namespace pebench
