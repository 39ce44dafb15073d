#include "analysis/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace pebench {

const std::string& series_color(size_t i) {
  static const std::vector<std::string> kPalette = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                                    "#56B4E9", "#000000", "#F0E442", "#777777", "#AA4499"};
  return kPalette[i % kPalette.size()];
}

const std::string& series_dash(size_t i) {
  static const std::vector<std::string> kDashes = {"", "7 3", "2 3", "9 3 2 3", "14 4", "2 6", "5 2 5 6"};
  return kDashes[i % kDashes.size()];
}

std::string svg_line_swatch(const std::string& color, const std::string& dash) {
  return fmt::format(
      "<svg class=\"swatch-line\" width=\"26\" height=\"10\" viewBox=\"0 0 26 10\" aria-hidden=\"true\"><line x1=\"1\" "
      "y1=\"5\" x2=\"25\" y2=\"5\" stroke=\"{}\" stroke-width=\"2.5\"{}/></svg>",
      color, dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"");
}

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// Round steps (1, 2 or 5 times a power of ten) through [lo, hi], about four.
std::vector<double> linear_ticks(double lo, double hi) {
  const double raw = (hi - lo) / 4;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return ticks;
}

// Ticks for a log axis narrower than one 1-2-5 step (a chart whose values
// all lie within, say, 140-190 us): every mantissa 1..9, or, narrower
// still, round linear steps. Never only the data's own values.
std::vector<double> fine_log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  for (int k = static_cast<int>(std::floor(std::log10(lo))); k <= static_cast<int>(std::ceil(std::log10(hi))); ++k) {
    for (int m = 1; m <= 9; ++m) {
      const double v = m * std::pow(10.0, k);
      if (v >= lo && v <= hi) ticks.push_back(v);
    }
  }
  if (ticks.size() >= 2) return ticks;
  ticks.clear();
  for (double v : linear_ticks(lo, hi)) {
    if (v > 0) ticks.push_back(v);
  }
  return ticks;
}

}  // namespace

LogAxis make_log_axis(double data_min, double data_max, bool powers_of_two) {
  LogAxis a;
  constexpr double kTiny = std::numeric_limits<double>::min(), kHuge = std::numeric_limits<double>::max();
  if (!(data_min > 0) || !std::isfinite(data_min)) data_min = 1;
  if (!(data_max >= data_min) || !std::isfinite(data_max)) data_max = data_min;
  // A little room so that extreme points are not drawn on the frame; in log
  // space and inside double range, so 1e-300..1e308 data still gives finite ends.
  const double log_lo = std::log(data_min), log_hi = std::log(data_max);
  const double pad = log_hi > log_lo ? 0.06 * (log_hi - log_lo) : std::log(2.0);
  a.lo = std::max(std::exp(log_lo - pad), kTiny);
  a.hi = std::min(std::exp(log_hi + pad), kHuge);
  if (powers_of_two) {
    std::vector<double> all;
    for (int k = static_cast<int>(std::ceil(std::log2(a.lo))); std::ldexp(1.0, k) <= a.hi; ++k) {
      all.push_back(std::ldexp(1.0, k));
    }
    const size_t step = (all.size() + 7) / 8;  // at most 8 labels
    for (size_t i = 0; i < all.size(); i += std::max<size_t>(step, 1)) a.ticks.push_back(all[i]);
  } else {
    const int k0 = static_cast<int>(std::floor(std::log10(a.lo)));
    const int k1 = static_cast<int>(std::ceil(std::log10(a.hi)));
    // Many decades: decades only (every few, for at most about 10 labels); few: 1-2-5 steps.
    const std::vector<double> mantissas = k1 - k0 > 3 ? std::vector<double>{1} : std::vector<double>{1, 2, 5};
    const int decade_step = std::max(1, (k1 - k0 + 9) / 10);
    for (int k = k0; k <= k1; k += decade_step) {
      for (double m : mantissas) {
        const double v = m * std::pow(10.0, k);
        if (v >= a.lo && v <= a.hi) a.ticks.push_back(v);
      }
    }
  }
  if (a.ticks.size() < 2 && !powers_of_two) a.ticks = fine_log_ticks(a.lo, a.hi);
  if (a.ticks.size() < 2) a.ticks = {data_min, data_max};  // a degenerate range: label the data's own ends
  if (a.ticks.size() == 2 && a.ticks[0] == a.ticks[1]) a.ticks.resize(1);
  return a;
}

namespace {

// Maps a value to a pixel along [start, start + length] on a log scale.
struct LogScale {
  double lo, hi, start, length;
  bool flip;  // y grows downwards in SVG
  double operator()(double v) const {
    const double t = (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
    return flip ? start + length - t * length : start + t * length;
  }
};

std::string num(double v) { return fmt::format("{:.17g}", v); }
std::string px(double v) { return fmt::format("{:.2f}", v); }

constexpr double kWidth = 460;
constexpr double kFont = 13;

std::string svg_open(const std::string& id, const std::string& kind, double height, const std::string& extra) {
  return fmt::format(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "data-chart=\"{}\" data-kind=\"{}\" {} font-size=\"{}\">\n",
      kWidth, px(height), html_escape(id), kind, extra, kFont);
}


// The plot box of the log-log charts.
constexpr double kLeft = 62, kRight = 12, kTop = 24, kBottom = 44, kLogHeight = 300;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kLogHeight - kTop - kBottom;

LogScale x_scale(const LogAxis& ax) { return {ax.lo, ax.hi, kLeft, kPlotW, false}; }
LogScale y_scale(const LogAxis& ay) { return {ay.lo, ay.hi, kTop, kPlotH, true}; }

// A log-log chart up to its marks: the <svg> tag (domains, plot box and
// `extra` attributes for readers and tests), the frame, grid lines, tick
// labels and axis labels.
std::string log_frame(const std::string& id, const std::string& kind, const LogAxis& ax, const LogAxis& ay,
                      const std::string& extra, const std::function<std::string(double)>& xf,
                      const std::function<std::string(double)>& yf, const std::string& x_label,
                      const std::string& y_label) {
  const LogScale sx = x_scale(ax), sy = y_scale(ay);
  std::string out = svg_open(id, kind, kLogHeight,
                             fmt::format("data-x-domain=\"{} {}\" data-y-domain=\"{} {}\" data-plot=\"{} {} {} {}\"{}",
                                         num(ax.lo), num(ax.hi), num(ay.lo), num(ay.hi), px(kLeft), px(kTop),
                                         px(kPlotW), px(kPlotH), extra));
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#bbb\"/>\n", px(kLeft),
                     px(kTop), px(kPlotW), px(kPlotH));
  out += "<g class=\"grid\" stroke=\"#e4e4e4\">\n";
  for (double t : ax.ticks) {
    out += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>\n", px(sx(t)), px(kTop), px(kTop + kPlotH));
  }
  for (double t : ay.ticks) {
    out += fmt::format("<line x1=\"{1}\" x2=\"{2}\" y1=\"{0}\" y2=\"{0}\"/>\n", px(sy(t)), px(kLeft), px(kLeft + kPlotW));
  }
  out += "</g>\n<g class=\"ticks\" fill=\"#444\">\n";
  for (double t : ax.ticks) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(sx(t)), px(kTop + kPlotH + 16),
                       html_escape(xf(t)));
  }
  for (double t : ay.ticks) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
                       px(kLeft - 5), px(sy(t)), html_escape(yf(t)));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(kLeft + kPlotW / 2),
                     px(kLogHeight - 6), html_escape(x_label));
  // The y label sits above the axis, not rotated beside it, where tick labels could overrun it.
  out += fmt::format("<text x=\"4\" y=\"{}\">{}</text>\n</g>\n", px(kTop - 9), html_escape(y_label));
  return out;
}

// Widens [xmin, xmax] x [ymin, ymax] to every point of `series`.
void extend_range(const std::vector<ChartSeries>& series, double& xmin, double& xmax, double& ymin, double& ymax) {
  for (const auto& s : series) {
    for (const auto& p : s.points) {
      xmin = std::min(xmin, p.x);
      xmax = std::max(xmax, p.x);
      ymin = std::min(ymin, p.y);
      ymax = std::max(ymax, p.y);
    }
  }
}

// One series' group: its points as circles carrying their values, joined
// by a line when `line`.
std::string series_marks(const ChartSeries& s, const LogScale& sx, const LogScale& sy, bool line) {
  std::string out = fmt::format("<g class=\"series\" data-name=\"{}\">\n", html_escape(s.name));
  if (line && s.points.size() > 1) {
    std::string points;
    for (const auto& p : s.points) points += (points.empty() ? "" : " ") + px(sx(p.x)) + "," + px(sy(p.y));
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", points, s.color,
                       s.dash.empty() ? "" : " stroke-dasharray=\"" + s.dash + "\"");
  }
  for (const auto& p : s.points) {
    out += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\" data-x=\"{}\" data-y=\"{}\"><title>{}</title></circle>\n",
        px(sx(p.x)), px(sy(p.y)), s.color, num(p.x), num(p.y), html_escape(p.tooltip));
  }
  return out + "</g>\n";
}

}  // namespace

std::string svg_loglog_chart(const LineChartSpec& spec) {
  double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
  extend_range(spec.series, xmin, xmax, ymin, ymax);
  if (xmax == 0) xmin = xmax = ymin = ymax = 1;  // no points: an empty frame
  const LogAxis ax = make_log_axis(xmin, xmax, spec.x_powers_of_two);
  const LogAxis ay = make_log_axis(ymin, ymax, false);
  const LogScale sx = x_scale(ax), sy = y_scale(ay);

  const auto xf = spec.x_format ? spec.x_format : [](double v) { return fmt::format("{:g}", v); };
  const auto yf = spec.y_format ? spec.y_format : [](double v) { return fmt::format("{:g}", v); };
  std::string out = log_frame(spec.id, "loglog", ax, ay, "", xf, yf, spec.x_label, spec.y_label);
  for (const auto& s : spec.series) out += series_marks(s, sx, sy, true);
  return out + "</svg>\n";
}

std::string svg_bar_chart(const BarChartSpec& spec) {
  const double label_w = 120, value_w = 60, top = 6, bottom = 40, row = 18, bar_h = 13;
  const double pw = kWidth - label_w - value_w - 8;
  size_t rows = 0;
  double vmin = INFINITY, vmax = -INFINITY;
  for (const auto& g : spec.groups) {
    rows += 1 + g.bars.size();  // a header row, then one per bar
    for (const auto& b : g.bars) {
      vmin = std::min(vmin, b.value);
      vmax = std::max(vmax, b.value);
    }
  }
  const bool log = spec.scale == BarScale::kLog;
  const double ref = log ? 1.0 : 0.0;
  if (!(vmax >= vmin)) vmin = vmax = ref;
  vmin = std::min(vmin, ref);
  vmax = std::max(vmax, ref);
  double lo, hi;
  std::vector<double> ticks;
  if (log) {
    const LogAxis a = make_log_axis(vmin, vmax, false);
    lo = a.lo;
    hi = a.hi;
    ticks = a.ticks;
    if (std::find(ticks.begin(), ticks.end(), 1.0) == ticks.end()) ticks.push_back(1.0);
  } else {
    const double span = vmax - vmin > 0 ? vmax - vmin : 1;
    lo = vmin < 0 ? vmin - 0.05 * span : 0;
    hi = vmax > 0 ? vmax + 0.05 * span : 0;
    if (hi == lo) hi = lo + 1;
    ticks = linear_ticks(lo, hi);
  }
  auto x = [&](double v) {
    const double t = log ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : (v - lo) / (hi - lo);
    return label_w + t * pw;
  };
  const double height = top + static_cast<double>(rows) * row + bottom;
  const double ph = static_cast<double>(rows) * row;
  std::string out = svg_open(spec.id, log ? "bars-log" : "bars-linear", height,
                             fmt::format("data-x-domain=\"{} {}\" data-ref=\"{}\" data-plot=\"{} {} {} {}\"", num(lo),
                                         num(hi), num(ref), px(label_w), px(top), px(pw), px(ph)));
  const auto vf = spec.value_format ? spec.value_format : [](double v) { return fmt::format("{:g}", v); };
  const auto tf = spec.tick_format ? spec.tick_format : vf;
  out += "<g class=\"grid\" stroke=\"#e4e4e4\">\n";
  for (double t : ticks) {
    out += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>\n", px(x(t)), px(top), px(top + ph));
  }
  out += fmt::format("</g>\n<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#555\"/>\n", px(x(ref)),
                     px(top), px(top + ph));
  out += "<g class=\"ticks\" fill=\"#444\">\n";
  for (double t : ticks) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(x(t)), px(top + ph + 16),
                       html_escape(tf(t)));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n</g>\n", px(label_w + pw / 2),
                     px(height - 6), html_escape(spec.x_label));
  double y = top;
  for (const auto& g : spec.groups) {
    out += fmt::format("<g class=\"bar-group\" data-label=\"{}\">\n", html_escape(g.label));
    out += fmt::format("<text x=\"4\" y=\"{}\" font-weight=\"bold\" dominant-baseline=\"middle\">{}</text>\n",
                       px(y + row / 2), html_escape(g.label));
    y += row;
    for (const auto& b : g.bars) {
      const double x0 = std::min(x(ref), x(b.value)), x1 = std::max(x(ref), x(b.value));
      out += fmt::format("<text x=\"14\" y=\"{}\" dominant-baseline=\"middle\">{}</text>\n", px(y + row / 2),
                         html_escape(b.label));
      out += fmt::format(
          "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" data-label=\"{}\" "
          "data-value=\"{}\"><title>{}</title></rect>\n",
          px(x0), px(y + (row - bar_h) / 2), px(std::max(x1 - x0, 0.0)), px(bar_h), b.color, html_escape(b.label),
          num(b.value), html_escape(b.tooltip));
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
                         px(kWidth - 4), px(y + row / 2), html_escape(vf(b.value)));
      y += row;
    }
    out += "</g>\n";
  }
  return out + "</svg>\n";
}

std::string svg_roofline_chart(const RooflineChartSpec& spec) {
  const double ridge = spec.compute_gflops / spec.copy_gbps;  // flops per byte where the roofs meet
  double xmin = ridge, xmax = ridge, ymin = spec.compute_gflops, ymax = spec.compute_gflops;
  extend_range(spec.series, xmin, xmax, ymin, ymax);
  ymin = std::min(ymin, spec.copy_gbps * xmin);  // the memory roof at the left edge
  const LogAxis ax = make_log_axis(xmin, xmax, false);
  const LogAxis ay = make_log_axis(ymin, ymax, false);
  const LogScale sx = x_scale(ax), sy = y_scale(ay);
  const auto g = [](double v) { return fmt::format("{:g}", v); };
  std::string out = log_frame(spec.id, "roofline", ax, ay,
                              fmt::format(" data-roof-copy=\"{}\" data-roof-compute=\"{}\"", num(spec.copy_gbps),
                                          num(spec.compute_gflops)),
                              g, g, "arithmetic intensity (flop/byte)", "achieved GFLOP/s");
  // The roofs: bandwidth x intensity up to the ridge, then the FMA throughput.
  const double x0 = ax.lo, x1 = std::min(ridge, ax.hi), x2 = ax.hi;
  out += fmt::format(
      "<polyline class=\"roof\" points=\"{},{} {},{} {},{}\" fill=\"none\" stroke=\"#555\" stroke-width=\"2\"/>\n",
      px(sx(x0)), px(sy(spec.copy_gbps * x0)), px(sx(x1)), px(sy(spec.copy_gbps * x1)), px(sx(x2)),
      px(sy(spec.compute_gflops)));
  out += fmt::format("<text class=\"roof-label\" x=\"{}\" y=\"{}\" fill=\"#555\">copy {:.3g} GB/s</text>\n",
                     px(sx(x0) + 4), px(std::max(kTop + 12, sy(spec.copy_gbps * x0) - 6)), spec.copy_gbps);
  out += fmt::format(
      "<text class=\"roof-label\" x=\"{}\" y=\"{}\" fill=\"#555\" text-anchor=\"end\">f32 FMA {:.3g} GFLOP/s</text>\n",
      px(kLeft + kPlotW - 4), px(sy(spec.compute_gflops) - 6), spec.compute_gflops);
  for (const auto& s : spec.series) out += series_marks(s, sx, sy, false);  // cases, not a progression: no lines
  return out + "</svg>\n";
}

std::string svg_trend_chart(const TrendChartSpec& spec) {
  const size_t n = spec.points.size();
  double ymin = INFINITY, ymax = -INFINITY;
  for (const auto& p : spec.points) {
    ymin = std::min(ymin, p.y);
    ymax = std::max(ymax, p.y);
  }
  if (!(ymax >= ymin)) ymin = ymax = 1;
  const double pad = ymax > ymin ? 0.08 * (ymax - ymin) : 0.05 * std::max(std::fabs(ymax), 1e-300);
  const double lo = ymin - pad, hi = ymax + pad;
  const double xlo = -0.5, xhi = std::max<double>(static_cast<double>(n), 1) - 0.5;
  const auto x = [&](double i) { return kLeft + (i - xlo) / (xhi - xlo) * kPlotW; };
  const auto y = [&](double v) { return kTop + kPlotH - (v - lo) / (hi - lo) * kPlotH; };
  const auto yf = spec.y_format ? spec.y_format : [](double v) { return fmt::format("{:g}", v); };
  std::string out = svg_open(spec.id, "trend", kLogHeight,
                             fmt::format("data-x-domain=\"{} {}\" data-y-domain=\"{} {}\" data-plot=\"{} {} {} {}\" "
                                         "data-runs=\"{}\"",
                                         num(xlo), num(xhi), num(lo), num(hi), px(kLeft), px(kTop), px(kPlotW),
                                         px(kPlotH), n));
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#bbb\"/>\n",
                     px(kLeft), px(kTop), px(kPlotW), px(kPlotH));
  const std::vector<double> yticks = linear_ticks(lo, hi);
  out += "<g class=\"grid\" stroke=\"#e4e4e4\">\n";
  for (double t : yticks) {
    out += fmt::format("<line x1=\"{1}\" x2=\"{2}\" y1=\"{0}\" y2=\"{0}\"/>\n", px(y(t)), px(kLeft), px(kLeft + kPlotW));
  }
  out += "</g>\n<g class=\"ticks\" fill=\"#444\">\n";
  for (double t : yticks) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
                       px(kLeft - 5), px(y(t)), html_escape(yf(t)));
  }
  // At most 6 x labels, evenly over the runs, first and last included.
  const size_t labels = std::min<size_t>(n, 6);
  for (size_t k = 0; k < labels; ++k) {
    const size_t i = labels == 1 ? 0 : (k * (n - 1) + (labels - 1) / 2) / (labels - 1);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(x(double(i))),
                       px(kTop + kPlotH + 16), html_escape(spec.points[i].x_label));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(kLeft + kPlotW / 2),
                     px(kLogHeight - 6), html_escape(spec.x_label));
  out += fmt::format("<text x=\"4\" y=\"{}\">{}</text>\n</g>\n", px(kTop - 9), html_escape(spec.y_label));
  for (const auto& c : spec.changes) {
    const double cx = x(double(c.index) - 0.5);
    out += fmt::format(
        "<line class=\"change\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#D55E00\" stroke-width=\"2\" "
        "stroke-dasharray=\"5 3\" data-index=\"{3}\" data-step=\"{4}\"><title>{5}</title></line>\n",
        px(cx), px(kTop), px(kTop + kPlotH), c.index, num(c.step), html_escape(c.tooltip));
  }
  out += "<g class=\"series\">\n";
  if (n > 1) {
    std::string points;
    for (size_t i = 0; i < n; ++i) points += (i ? " " : "") + px(x(double(i))) + "," + px(y(spec.points[i].y));
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>\n", points,
                       series_color(0));
  }
  for (size_t i = 0; i < n; ++i) {
    const auto& p = spec.points[i];
    out += fmt::format(
        "<circle class=\"run\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\" data-index=\"{}\" data-x-label=\"{}\" "
        "data-y=\"{}\"><title>{}</title></circle>\n",
        px(x(double(i))), px(y(p.y)), series_color(0), i, html_escape(p.x_label), num(p.y), html_escape(p.tooltip));
  }
  return out + "</g>\n</svg>\n";
}

}  // namespace pebench
