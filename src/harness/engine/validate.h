// Validation: which rows to check, and the metrics of encodings.md section 0
// (nmse, max_abs, max_rel = max|out-ref| / max|ref|) over them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/contract/tensor.h"
#include "harness/contract/variant.h"
#include "harness/output/result.h"

namespace pebench {

// All rows when `total_rows * row_cost <= budget`; otherwise a deterministic
// sample of about budget/row_cost rows (at least 8): evenly strided, always
// including the first and the last row, sorted and unique.
std::vector<int64_t> sample_rows(int64_t total_rows, double row_cost, double budget);

// Where the exact (float64) reference holds a value its output's dtype cannot
// represent (past f16's 65504 or f32's largest finite value, or not finite):
// "the exact y[4032] = 8.23e+299 is past f32's largest finite value
// (3.40282e+38)"; nullopt when every checked value fits. Such a case is
// skipped, not failed: no kernel could store the answer.
std::optional<std::string> unrepresentable_output(const Reference& ref);

// Compares every written reference row with the GPU outputs in `tensors`
// (ValidationResult: harness/output/result.h, where the case's result holds it).
ValidationResult compare_outputs(const Reference& ref, const TensorMap& tensors, const Tolerance& tol);

}  // namespace pebench
