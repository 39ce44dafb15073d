// Validation: which rows to check, and the metrics of encodings.md section 0
// (nmse, max_abs, max_rel = max|out-ref| / max|ref|) over them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/tensor.h"
#include "harness/variant.h"

namespace pebench {

// All rows when `total_rows * row_cost <= budget`; otherwise a deterministic
// sample of about budget/row_cost rows (at least 8): evenly strided, always
// including the first and the last row, sorted and unique.
std::vector<int64_t> sample_rows(int64_t total_rows, double row_cost, double budget);

struct ValidationResult {
  bool ran = false;
  double nmse = 0;
  double max_abs = 0;
  double max_rel = 0;
  Tolerance tolerance;
  bool passed = false;
  int64_t rows_checked = 0;
  int64_t rows_total = 0;
  int64_t elements_checked = 0;
  std::string detail;  // why it failed (NaN, worst element), empty when passed
};

// Compares every written reference row with the GPU outputs in `tensors`.
ValidationResult compare_outputs(const Reference& ref, const TensorMap& tensors, const Tolerance& tol);

}  // namespace pebench
