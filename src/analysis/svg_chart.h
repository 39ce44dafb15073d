// SVG charts drawn by pebench itself (no library, no script): a log-log line
// chart and a horizontal bar chart. Every mark carries its value in data-*
// attributes and a <title> tooltip, and every chart its axis domain and
// plot box, so a test (or a curious reader) can check that the picture
// draws the numbers it claims to.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace pebench {

// A colour-blind-friendly categorical palette (Okabe–Ito, then greys).
const std::string& series_color(size_t i);
// Line styles to tell lines of one colour apart: "" (solid), "6 3", ...
const std::string& series_dash(size_t i);
// A short line sample for a legend.
std::string svg_line_swatch(const std::string& color, const std::string& dash);

struct LogAxis {
  double lo = 1, hi = 10;     // the domain (data padded a little in log space)
  std::vector<double> ticks;  // inside [lo, hi]
};
// Ticks at powers of two (sequence lengths) or at 1-2-5 steps per decade.
LogAxis make_log_axis(double data_min, double data_max, bool powers_of_two);

struct ChartPoint {
  double x = 0, y = 0;
  std::string tooltip;
};
struct ChartSeries {
  std::string name;
  std::string color;
  std::string dash;  // stroke-dasharray, "" for a solid line
  std::vector<ChartPoint> points;  // drawn in this order
};
struct LineChartSpec {
  std::string id;  // for data-chart, unique in the page
  std::string x_label, y_label;
  bool x_powers_of_two = true;
  std::function<std::string(double)> x_format, y_format;
  std::vector<ChartSeries> series;
};
// Log-log axes, one polyline with circle markers per series.
std::string svg_loglog_chart(const LineChartSpec& spec);

struct Bar {
  std::string label;  // the row label (shown once per group)
  double value = 0;
  std::string color;
  std::string tooltip;
};
struct BarGroup {
  std::string label;
  std::vector<Bar> bars;
};
enum class BarScale {
  kLinear,  // bars from 0; values may be negative (an overhead in %)
  kLog,     // bars from 1 on a log axis (a ratio)
};
struct BarChartSpec {
  std::string id;
  std::string x_label;
  BarScale scale = BarScale::kLinear;
  std::function<std::string(double)> value_format;
  std::function<std::string(double)> tick_format;  // default: value_format
  std::vector<BarGroup> groups;
};
// Horizontal bars, one row per bar, grouped rows labelled once: long labels
// stay readable on a phone.
std::string svg_bar_chart(const BarChartSpec& spec);

struct RooflineChartSpec {
  std::string id;
  double copy_gbps = 0, compute_gflops = 0;  // the two roofs (GB/s is bytes per ns, GFLOP/s flops per ns)
  std::vector<ChartSeries> series;  // points: x = flops per byte, y = achieved GFLOP/s
};
// Log-log: arithmetic intensity against GFLOP/s, the memory roof (slope
// copy_gbps) up to the ridge and the compute roof after it, and the cases as
// points (no lines between them).
std::string svg_roofline_chart(const RooflineChartSpec& spec);

// One run in a trend chart: x is the run's position (0, 1, ...), labelled.
struct TrendMark {
  double y = 0;
  std::string x_label;  // e.g. a short commit or a date
  std::string tooltip;
};
struct TrendChangeMark {
  size_t index = 0;  // the first run of the new level
  double step = 0;   // after / before - 1
  std::string tooltip;
};
struct TrendChartSpec {
  std::string id;
  std::string x_label, y_label;
  std::function<std::string(double)> y_format;
  std::vector<TrendMark> points;  // in run order
  std::vector<TrendChangeMark> changes;
};
// Runs in order on x (at most 6 x labels), a linear y axis around the
// values, the runs joined by a line, and each change point a dashed
// vertical line between its two runs.
std::string svg_trend_chart(const TrendChartSpec& spec);

// Text for HTML content and attribute values.
std::string html_escape(const std::string& s);

}  // namespace pebench
