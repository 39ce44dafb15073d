#include "analysis/trend_charts.h"

#include <fmt/format.h>

#include "analysis/format_units.h"
#include "analysis/svg_chart.h"

namespace pebench {
namespace {

std::string short_commit(const std::string& c) { return c.empty() ? "?" : c.substr(0, 7); }

std::string x_label(const TrendRun& r, TrendAxis axis) {
  return axis == TrendAxis::kDate ? r.created.substr(0, 10) : short_commit(r.commit);
}

std::string run_tooltip(const TrendRun& r) {
  return fmt::format("{}\n{}\n{}", r.commit.empty() ? "(no commit)" : r.commit, r.created, format_ns(r.value_ns));
}

std::string change_tooltip(const TrendChartData& d, const ChangePoint& c) {
  const TrendRun& before = d.runs[c.index - 1];
  const TrendRun& after = d.runs[c.index];
  return fmt::format("change {}..{}: {} -> {} ({}), p {}", short_commit(before.commit), short_commit(after.commit),
                     format_ns(c.before), format_ns(c.after), format_percent(c.step), format_p(c.p));
}

std::string trend_figure(const TrendSeries& s, size_t index, const TrendOptions& options) {
  const TrendChartData d = trend_chart_data(s, options);
  TrendChartSpec spec;
  spec.id = fmt::format("trend-{}", index);
  spec.x_label = options.x == TrendAxis::kDate ? "run (date)" : "run (commit)";
  spec.y_label = options.time == "cpu" ? "median CPU time" : "median GPU time";
  spec.y_format = [](double v) { return format_ns(v, NsStyle::kCompact); };
  for (const auto& r : d.runs) spec.points.push_back({r.value_ns, x_label(r, options.x), run_tooltip(r)});
  std::string changes;
  for (const auto& c : d.changes) {
    spec.changes.push_back({c.index, c.step, change_tooltip(d, c)});
    changes += "<li>" + html_escape(change_tooltip(d, c)) + "</li>";
  }
  return fmt::format("<figure><h3>{}</h3>\n<p class=\"note\">{} ({}); {} run{}, {} change point{}</p>\n{}{}</figure>\n",
                     html_escape(s.label), html_escape(s.device), html_escape(s.host), d.runs.size(),
                     d.runs.size() == 1 ? "" : "s", d.changes.size(), d.changes.size() == 1 ? "" : "s",
                     svg_trend_chart(spec), changes.empty() ? "" : "<ul class=\"changes\">" + changes + "</ul>");
}

}  // namespace

TrendChartData trend_chart_data(const TrendSeries& series, const TrendOptions& options) {
  TrendChartData d;
  std::vector<double> values;
  for (const auto& r : series.runs) {
    if (!(r.value_ns > 0)) continue;
    d.runs.push_back(r);
    values.push_back(r.value_ns);
  }
  d.changes = change_points(values, options.change_points);
  return d;
}

std::string trend_section(const std::vector<TrendSeries>& series, const TrendOptions& options) {
  if (series.empty()) return "";
  std::string out = "<h2 id=\"trends\">Trends</h2>\n";
  out += fmt::format(
      "<p class=\"note\">From the results database {}: each case's median {} time per run, oldest first; dashed "
      "lines mark change points (as <code>pebench db changes</code> finds them: min segment {}, alpha {}, min "
      "step {}). Runs where the case did not run ok are left out.</p>\n<div class=\"charts\">\n",
      html_escape(options.source), options.time == "cpu" ? "CPU" : "GPU", options.change_points.min_segment,
      options.change_points.alpha, format_percent(options.change_points.min_step));
  for (size_t i = 0; i < series.size(); ++i) out += trend_figure(series[i], i, options);
  return out + "</div>\n";
}

}  // namespace pebench
