// `pebench report --db`: the trend charts' data comes from the results
// database, which only builds with PEBENCH_DB (SQLite and libpq). The
// report command asks through this hook; cli/cmd_db_report.cc sets it where
// the database is built in, and it stays null elsewhere (Android).
#pragma once

#include <string>
#include <vector>

#include "analysis/trend_charts.h"

namespace pebench {

struct ReportTrendQuery {
  std::string db;                       // SQLite file or postgresql:// URL
  std::vector<std::string> case_words;  // all must occur in the case; none: every case
  std::string device, host;             // substrings; empty: any
  bool cpu = false;                     // CPU-time medians instead of GPU
  size_t last = 0;                      // the newest N runs of each series; 0: all
};
struct ReportTrends {
  std::vector<TrendSeries> series;
  std::string source;  // the database as shown (a URL's password hidden)
};
using ReportTrendLoader = ReportTrends (*)(const ReportTrendQuery&);
ReportTrendLoader& report_trend_loader();

}  // namespace pebench
