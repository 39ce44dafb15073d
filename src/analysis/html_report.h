// `pebench report`: one self-contained HTML page (inline CSS and SVG, no
// script, no network) that opens from disk and reads on a phone: devices
// and builds, time against sequence length per variant, each encoding's
// overhead over attn.nope, the vendor comparison when several reports are
// given, the validation errors of every case, and what `run --tune` measured.
#pragma once

#include <string>
#include <vector>

#include "analysis/report_file.h"
#include "analysis/trend_charts.h"

namespace pebench {

struct HtmlReportOptions {
  std::string generated;  // when the page was made (shown; empty: not shown)
  std::string generator;  // e.g. "pebench 0.1.0 (94667b3)"
  // Cases' medians across runs of a results database (`report --db`); the
  // page gets a Trends section when there are any.
  std::vector<TrendSeries> trends;
  TrendOptions trend_options;
};

std::string html_report(const std::vector<ReportFile>& reports, const HtmlReportOptions& options = {});

}  // namespace pebench
