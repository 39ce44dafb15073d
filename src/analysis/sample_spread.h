// How many timing samples a case has and how far they spread, for the run
// table, `compare` and the HTML report: n, the quartiles and the
// interquartile range relative to the median (robust to GPU timings' long
// right tail, unlike stddev), and whether n is enough for `pebench compare`
// to ever call a change significant.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pebench {

struct SampleSpread {
  size_t n = 0;
  double q1 = 0, median = 0, q3 = 0;  // linear interpolation between order statistics
  // (q3 - q1) / median; 0 when the median is not positive.
  double iqr_relative() const { return median > 0 ? (q3 - q1) / median : 0.0; }
};

SampleSpread sample_spread(std::vector<double> samples);

// The fewest samples per side with which the two-sided Mann-Whitney U test
// of `pebench compare` can reach p < alpha at all (complete separation):
// 5 at the default alpha 0.01, since 2 / C(8, 4) = 0.029 but 2 / C(10, 5) =
// 0.0079. Fewer samples can never show a significant change.
size_t min_comparable_samples(double alpha);

// "n 12, IQR 3.1%"-style cells: "12", "3.1%" ("-" for n < 2); a flag after n
// when n < min_comparable_samples(alpha).
std::string samples_cell(size_t n, double alpha);
std::string iqr_cell(const SampleSpread& s);

}  // namespace pebench
