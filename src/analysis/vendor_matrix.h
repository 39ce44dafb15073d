// The vendor view of three or more reports: one column per device of each
// report, one row per case (matched by key, device left out), the median
// time in every column and its ratio to the first column; per variant the
// geometric mean of those ratios.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/report_file.h"

namespace pebench {

struct MatrixColumn {
  size_t report = 0;
  std::string device;  // key name
  std::string name;    // "R1", or "R1.d0" when the report holds several devices
};

struct MatrixRow {
  const CaseRecord* first = nullptr;           // the first column's case that has one, for display
  std::vector<const CaseRecord*> cells;        // per column; nullptr: not in that column
  std::vector<std::optional<double>> ratios;   // per column: median / first column's median
};

struct VariantRatios {
  std::string variant;
  std::vector<size_t> cases;                  // per column: cases timed here and in column 0
  std::vector<std::optional<double>> ratios;  // per column: geometric mean ratio to column 0
};

struct VendorMatrix {
  std::vector<MatrixColumn> columns;
  std::vector<MatrixRow> rows;  // first-seen order over the columns
  std::vector<VariantRatios> variants;
};

// One column per device that has results, report by report.
std::vector<MatrixColumn> report_columns(const std::vector<ReportFile>& reports);

// Pointers in the result point into `reports`: keep them alive.
VendorMatrix vendor_matrix(const std::vector<ReportFile>& reports);

// The median of a case when it ran correctly and was timed.
std::optional<double> ok_median(const CaseRecord* c);

}  // namespace pebench
