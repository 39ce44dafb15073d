// Trend charts for the HTML report: each case's median across runs (oldest
// first, commit or date on x) with its change points marked. The data comes
// from a results database, which the CLI reads (cli/cmd_db_report.cc);
// analysis only draws what it is given, so it never depends on db.
#pragma once

#include <string>
#include <vector>

#include "analysis/change_points.h"

namespace pebench {

struct TrendRun {
  std::string commit;   // the run's git commit (may be empty)
  std::string created;  // ISO-8601
  double value_ns = 0;  // the run's median; 0 or less: not timed ok, not drawn
};
struct TrendSeries {
  std::string label, device, host;
  std::vector<TrendRun> runs;  // oldest first
};
enum class TrendAxis { kCommit, kDate };
struct TrendOptions {
  TrendAxis x = TrendAxis::kCommit;
  std::string time = "gpu";  // which median: "gpu" or "cpu" (for labels)
  std::string source;        // the database, as given (shown; URL passwords already hidden)
  ChangePointOptions change_points{5, 0.01, 499, 0.02};  // as `db changes`
};

// The drawn runs of a series (value_ns > 0), in order, and the change points
// among them (indices into the drawn runs).
struct TrendChartData {
  std::vector<TrendRun> runs;
  std::vector<ChangePoint> changes;
};
TrendChartData trend_chart_data(const TrendSeries& series, const TrendOptions& options);

// The page's "Trends" section: one chart per series; "" when there are none.
std::string trend_section(const std::vector<TrendSeries>& series, const TrendOptions& options);

}  // namespace pebench
