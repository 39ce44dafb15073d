// What the HTML report draws, as data (report_html.cc turns it into SVG):
//   - per variant, median time against sequence length, one series per
//     device column, impl, dtype and any other parameter that varies;
//   - per device column, each attention encoding's time over attn.nope's on
//     the same shape (its overhead), as a geometric mean over shapes;
//   - with several columns, each variant's geometric mean time ratio to the
//     first column (the vendor view, vendor_matrix.h).
// Only cases that ran correctly and were timed are drawn.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "analysis/report_file.h"
#include "analysis/vendor_matrix.h"

namespace pebench {

struct SeqPoint {
  double seq = 0, median_ns = 0;
  const CaseRecord* c = nullptr;
};
struct SeqSeries {
  std::string name;
  std::string style;  // the name without the device column: impl, dtype, parameters
  size_t column = 0;
  std::vector<SeqPoint> points;  // ascending seq
};
struct SeqChart {
  std::string variant;
  std::vector<SeqSeries> series;
};
// Variants without a numeric "seq" parameter or without timed cases give no chart.
std::vector<SeqChart> seq_charts(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns);

inline constexpr const char* kOverheadReference = "attn.nope";

struct OverheadMatch {
  const CaseRecord* encoded = nullptr;
  const CaseRecord* reference = nullptr;  // the attn.nope case of the same shape
  double ratio = 1;                       // encoded / reference median
  // Parameters both have that are not shape but differ, as "scale 1 (attn.nope 0.125)".
  std::vector<std::string> differs;
};
struct OverheadBarData {
  std::string variant, impl, dtype;
  double ratio = 1;  // geometric mean of the matches' ratios; overhead = ratio - 1
  std::vector<OverheadMatch> matches;
  std::set<std::string> differs;  // every match's differences, once
};
struct OverheadChart {
  size_t column = 0;
  std::vector<OverheadBarData> bars;  // sorted by variant, impl, dtype
};
// Attention cases match an attn.nope case of the same column, impl, dtype and
// shape as `compare --over` matches them (variant_overhead.h, matching_base):
// other parameters both have may differ (attn.t5's spec default scale is 1,
// attn.nope's 1/sqrt(D)), and the match says so. Columns without attn.nope
// cases give no chart.
std::vector<OverheadChart> overhead_charts(const std::vector<ReportFile>& reports,
                                           const std::vector<MatrixColumn>& columns);

// Per device column with a measured peak: every ok, timed case with bytes
// and flops at (flops / bytes, flops / median), one series per variant; the
// cases without flops (or bytes) cannot sit on log axes and are counted.
struct RooflinePoint {
  double intensity = 0, gflops = 0;
  const CaseRecord* c = nullptr;
};
struct RooflineChart {
  size_t column = 0;
  PeakRecord peak;
  std::vector<std::pair<std::string, std::vector<RooflinePoint>>> variants;  // first-seen order
  size_t not_drawn = 0;
};
std::vector<RooflineChart> roofline_charts(const std::vector<ReportFile>& reports,
                                           const std::vector<MatrixColumn>& columns);

}  // namespace pebench
