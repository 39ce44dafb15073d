#include "analysis/html_report.h"

#include <fmt/format.h>

#include <map>

#include "analysis/case_key.h"
#include "analysis/format_units.h"
#include "analysis/json_input.h"
#include "analysis/pipeline_stats.h"
#include "analysis/report_charts.h"
#include "analysis/sample_spread.h"
#include "analysis/svg_chart.h"
#include "analysis/vendor_matrix.h"

namespace pebench {
namespace {

const char* kStyle = R"css(
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 0 auto;
       max-width: 1180px; padding: 12px; }
h1 { font-size: 1.5em; margin: 0.2em 0; }
h2 { font-size: 1.2em; margin: 1.6em 0 0.4em; border-bottom: 1px solid #ddd; padding-bottom: 2px; }
h3 { font-size: 1em; margin: 0 0 4px; }
p.note { color: #555; margin: 0.3em 0; }
nav a { margin-right: 12px; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; text-align: left; white-space: nowrap;
         vertical-align: top; }
th { background: #f5f5f5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { white-space: normal; min-width: 16em; }
td.long { white-space: normal; overflow-wrap: anywhere; min-width: 8em; max-width: 24em; }
tr.bad td { background: #fde8e8; }
tr.skip td { color: #777; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 460px), 1fr)); gap: 14px; }
figure { margin: 0; border: 1px solid #e4e4e4; border-radius: 6px; padding: 8px; min-width: 0; }
svg.chart { width: 100%; max-width: 640px; height: auto; display: block; }
svg.swatch-line { vertical-align: middle; margin-right: 5px; }
ul.legend { list-style: none; padding: 0; margin: 6px 0 0; font-size: 12px; display: flex; flex-wrap: wrap;
            gap: 2px 14px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; }
details { margin-top: 6px; }
summary { cursor: pointer; color: #0b57a4; }
)css";

std::string esc(const std::string& s) { return html_escape(s); }

std::string table_open(const std::vector<std::string>& header) {
  std::string out = "<div class=\"scroll\"><table>\n<tr>";
  for (const auto& h : header) out += "<th>" + esc(h) + "</th>";
  return out + "</tr>\n";
}
const char* kTableClose = "</table></div>\n";

std::string case_shape(const CaseRecord& c) { return c.label.empty() ? params_label(c.params) : c.label; }

std::string legend(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out = "<ul class=\"legend\">";
  for (const auto& [color, name] : entries) {
    out += fmt::format("<li><span class=\"swatch\" style=\"background:{}\"></span>{}</li>", color, esc(name));
  }
  return out + "</ul>\n";
}

// "R0 = Vendor A GPU (a.json) · R1 = ...": what the short column names in
// legends stand for, said once instead of in every legend entry.
std::string column_key(const std::vector<MatrixColumn>& columns) {
  if (columns.size() < 2) return "";
  std::vector<std::string> parts;
  for (const auto& c : columns) parts.push_back(fmt::format("<b>{}</b> = {}", esc(c.name), esc(c.device)));
  return "<p class=\"note\">" + join(parts, " · ") + "</p>\n";
}

std::string devices_section(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns) {
  std::string out = "<h2 id=\"devices\">Devices and builds</h2>\n";
  out += table_open({"", "file", "device", "type", "driver", "Vulkan", "pebench", "build", "host", "created",
                     "cases"});
  for (const auto& col : columns) {
    const ReportFile& r = reports[col.report];
    const DeviceRecord* d = r.device(col.device);
    std::map<std::string, size_t> statuses;
    for (const auto& c : r.cases) {
      if (c.device_info->key_name == col.device) ++statuses[c.status];
    }
    std::vector<std::string> counts;
    for (const auto& [s, n] : statuses) counts.push_back(fmt::format("{} {}", n, s));
    const std::string driver = d ? join({d->driver_name, d->driver_info, d->driver_version}, " ") : "";
    const std::string build = join({json_text(r.tool, "build_type"), json_text(r.tool, "compiler")}, ", ");
    const std::string host =
        join({json_text(r.host, "cpu"), json_text(r.host, "logical_cores") + " cores", json_text(r.host, "os")}, ", ");
    // Paths, drivers, builds and hosts wrap: unwrapped, the table ran past a 1400 px window.
    out += fmt::format(
        "<tr><td>{}</td><td class=\"long\">{}</td><td class=\"long\">{}</td><td>{}</td><td class=\"long\">{}</td>"
        "<td>{}</td><td>{}</td><td class=\"long\">{}</td><td class=\"long\">{}</td><td>{}</td><td class=\"long\">{}</td>"
        "</tr>\n",
        esc(col.name), esc(r.path), esc(col.device), esc(d ? d->device_type : ""), esc(driver),
        esc(d ? d->api_version : ""), esc(r.tool_string()), esc(build), esc(host), esc(r.created),
        esc(join(counts, ", ")));
  }
  out += kTableClose;
  for (size_t i = 0; i < reports.size(); ++i) {
    if (reports[i].command.empty()) continue;
    std::vector<std::string> args;
    for (const auto& a : reports[i].command) args.push_back(a.is_string() ? a.get<std::string>() : a.dump());
    out += fmt::format("<p class=\"note\" style=\"overflow-wrap:anywhere\">{}: <code>{}</code></p>\n",
                       esc(reports[i].path), esc(join(args, " ")));
  }
  return out;
}

std::string seq_section(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns) {
  std::string out = "<h2 id=\"seq\">Time against sequence length</h2>\n";
  const auto charts = seq_charts(reports, columns);
  if (charts.empty()) return out + "<p class=\"note\">No timed case with a sequence length.</p>\n";
  out += "<p class=\"note\">Median GPU time per case, log-log axes; one line per device, impl, dtype and any other "
         "parameter that varies. Hover or tap a point for the case.</p>\n";
  out += column_key(columns) + "<div class=\"charts\">\n";
  for (size_t ci = 0; ci < charts.size(); ++ci) {
    const auto& chart = charts[ci];
    LineChartSpec spec;
    spec.id = "seq-" + chart.variant;
    spec.x_label = "sequence length";
    spec.y_label = "median time";
    spec.x_format = [](double v) { return fmt::format("{:g}", v); };
    spec.y_format = [](double v) { return format_ns(v, NsStyle::kCompact); };
    // Several devices: colour is the device, line style the impl/dtype/...;
    // one device: colour tells the lines apart.
    const bool by_device = columns.size() > 1;
    std::map<std::string, size_t> style_index;
    std::string entries;
    for (size_t si = 0; si < chart.series.size(); ++si) {
      const auto& s = chart.series[si];
      const size_t style = style_index.emplace(s.style, style_index.size()).first->second;
      ChartSeries cs{s.name, series_color(by_device ? s.column : si), by_device ? series_dash(style) : "", {}};
      for (const auto& p : s.points) {
        cs.points.push_back({p.seq, p.median_ns,
                             fmt::format("{}\n{} {} {}\n{}", s.name, p.c->variant, p.c->impl, case_shape(*p.c),
                                         format_ns(p.median_ns))});
      }
      entries += fmt::format("<li>{}{}</li>", svg_line_swatch(cs.color, cs.dash), esc(s.name));
      spec.series.push_back(std::move(cs));
    }
    out += fmt::format("<figure><h3>{}</h3>\n{}<ul class=\"legend\">{}</ul></figure>\n", esc(chart.variant),
                       svg_loglog_chart(spec), entries);
  }
  return out + "</div>\n";
}

std::string overhead_section(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns) {
  std::string out = "<h2 id=\"overhead\">Encoding overhead over attn.nope</h2>\n";
  const auto charts = overhead_charts(reports, columns);
  if (charts.empty()) {
    return out + fmt::format(
                     "<p class=\"note\">Not available: these reports hold no {} case with an attention encoding of "
                     "the same shape, impl and dtype to set against it.</p>\n",
                     kOverheadReference);
  }
  out += "<p class=\"note\">Each encoding's median time over attn.nope's on the same shape, impl and dtype, minus 1 "
         "(geometric mean over the shapes both ran).</p>\n<div class=\"charts\">\n";
  for (const auto& chart : charts) {
    BarChartSpec spec;
    spec.id = "overhead-" + columns[chart.column].name;
    spec.x_label = "overhead over attn.nope";
    spec.scale = BarScale::kLinear;
    spec.value_format = [](double v) { return format_percent(v); };
    spec.tick_format = [](double v) { return fmt::format("{:g}%", v * 100); };
    std::map<std::string, size_t> color_of;  // impl dtype -> colour
    std::vector<std::pair<std::string, std::string>> entries;
    std::string details =
        table_open({"encoding", "impl", "dtype", "case", "time", "attn.nope", "overhead", "parameters that differ"});
    std::vector<std::string> differing;
    for (const auto& bar : chart.bars) {
      if (spec.groups.empty() || spec.groups.back().label != bar.variant) spec.groups.push_back({bar.variant, {}});
      const std::string series = bar.impl + " " + bar.dtype;
      auto [it, fresh] = color_of.emplace(series, color_of.size());
      if (fresh) entries.emplace_back(series_color(it->second), series);
      const std::string differs = join({bar.differs.begin(), bar.differs.end()}, ", ");
      spec.groups.back().bars.push_back(
          {series, bar.ratio - 1, series_color(it->second),
           fmt::format("{} {}: {} over attn.nope ({} shapes){}", bar.variant, series, format_percent(bar.ratio - 1),
                       bar.matches.size(), differs.empty() ? "" : "; differs: " + differs)});
      if (!differs.empty()) differing.push_back(fmt::format("{} {}: {}", bar.variant, series, differs));
      for (const auto& m : bar.matches) {
        details += fmt::format(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
            "<td class=\"num\">{}</td><td class=\"wrap\">{}</td></tr>\n",
            esc(bar.variant), esc(bar.impl), esc(bar.dtype), esc(case_shape(*m.encoded)),
            esc(format_ns(m.encoded->time->median)), esc(format_ns(m.reference->time->median)),
            esc(format_percent(m.ratio - 1)), esc(join(m.differs, ", ")));
      }
    }
    details += kTableClose;
    std::string notes;
    if (!differing.empty()) {
      notes = "<p class=\"note\">Same shape, other parameters differ (the overhead includes their effect): " +
              esc(join(differing, "; ")) + "</p>\n";
    }
    out += fmt::format("<figure><h3>{} {}</h3>\n{}{}{}<details><summary>per shape</summary>{}</details></figure>\n",
                       esc(columns[chart.column].name), esc(columns[chart.column].device), svg_bar_chart(spec),
                       legend(entries), notes, details);
  }
  return out + "</div>\n";
}

std::string roofline_chart_figure(const std::vector<MatrixColumn>& columns, const RooflineChart& chart) {
  RooflineChartSpec spec;
  spec.id = "roofline-" + columns[chart.column].name;
  spec.copy_gbps = chart.peak.copy_gbps;
  spec.compute_gflops = chart.peak.f32_gflops;
  std::string entries;
  for (size_t v = 0; v < chart.variants.size(); ++v) {
    const auto& [variant, points] = chart.variants[v];
    ChartSeries cs{variant, series_color(v), "", {}};
    for (const auto& p : points) {
      const std::string roof =
          p.c->roofline ? fmt::format("\n{:.0f}% of the {} roof", 100 * p.c->roofline->fraction, p.c->roofline->bound)
                        : "";
      cs.points.push_back({p.intensity, p.gflops,
                           fmt::format("{} {} {} {}\n{:.3g} flop/byte, {:.3g} GFLOP/s{}", p.c->variant, p.c->impl,
                                       p.c->dtype, case_shape(*p.c), p.intensity, p.gflops, roof)});
    }
    entries += fmt::format("<li><span class=\"swatch\" style=\"background:{}\"></span>{}</li>", cs.color, esc(variant));
    spec.series.push_back(std::move(cs));
  }
  const std::string not_drawn =
      chart.not_drawn ? fmt::format("<p class=\"note\">{} case(s) count no flops and are not drawn; their fractions "
                                    "are in the table below.</p>\n",
                                    chart.not_drawn)
                      : "";
  return fmt::format("<figure><h3>{} {}</h3>\n{}<ul class=\"legend\">{}</ul>{}</figure>\n",
                     esc(columns[chart.column].name), esc(columns[chart.column].device), svg_roofline_chart(spec),
                     entries, not_drawn);
}

// Per case: its median, sample count and spread, throughput and roofline.
std::string timing_table(const ReportFile& report, const MatrixColumn& column) {
  constexpr double kAlpha = 0.01;  // pebench compare's default
  std::string out = table_open({"variant", "impl", "dtype", "case", "median", "n", "IQR", "GB/s", "GFLOP/s",
                                "bound", "fraction of roof"});
  size_t too_few = 0;
  for (const auto& c : report.cases) {
    if (c.device_info->key_name != column.device || !c.ok() || !c.timed()) continue;
    const SampleSpread sp = sample_spread(c.time->samples);
    if (!c.time->samples.empty() && sp.n < min_comparable_samples(kAlpha)) ++too_few;
    const double m = c.time->median;
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>"
        "<td class=\"num\">{}</td></tr>\n",
        esc(c.variant), esc(c.impl), esc(c.dtype), esc(case_shape(c)), esc(format_ns(m)),
        c.time->samples.empty() ? "-" : esc(samples_cell(sp.n, kAlpha)), esc(iqr_cell(sp)),
        c.bytes > 0 ? fmt::format("{:.3g}", c.bytes / m) : "-", c.flops > 0 ? fmt::format("{:.3g}", c.flops / m) : "-",
        c.roofline ? esc(c.roofline->bound) : "-",
        c.roofline ? fmt::format("{:.0f}%", 100 * c.roofline->fraction) : "-");
  }
  out += kTableClose;
  if (too_few > 0) {
    out += fmt::format("<p class=\"note\">n!: {} case(s) have fewer than {} samples, too few for `pebench compare` to "
                       "call any change significant (alpha {}).</p>\n",
                       too_few, min_comparable_samples(kAlpha), kAlpha);
  }
  return out;
}

std::string roofline_section(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns) {
  std::string out = "<h2 id=\"roofline\">Rooflines and timing</h2>\n";
  out += "<p class=\"note\">Each case's arithmetic intensity (the cost model's flops per byte) against the GFLOP/s "
         "it achieved, under the device's two measured roofs (<code>pebench peak</code>: copy bandwidth, f32 FMA "
         "throughput; pebench's kernels compute in f32 at either storage dtype). A case's fraction is the time the "
         "roofline model allows for its bytes and flops over its median time. The table gives every timed case's "
         "sample count (n) and interquartile range relative to the median (IQR).</p>\n";
  const auto charts = roofline_charts(reports, columns);
  if (charts.empty()) {
    out += "<p class=\"note\">No roofline: these reports hold no measured peak (runs with "
           "<code>--no-peak</code>, or from an older pebench).</p>\n";
  } else {
    out += "<div class=\"charts\">\n";
    for (const auto& chart : charts) out += roofline_chart_figure(columns, chart);
    out += "</div>\n";
  }
  for (const auto& col : columns) {
    out += fmt::format("<h3>{} {}</h3>\n", esc(col.name), esc(col.device));
    out += timing_table(reports[col.report], col);
  }
  return out;
}

std::string vendor_section(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns) {
  if (columns.size() < 2) return "";
  std::string out = "<h2 id=\"vendors\">Vendor comparison</h2>\n";
  const VendorMatrix m = vendor_matrix(reports);
  out += fmt::format("<p class=\"note\">Per variant, the geometric mean of each case's median time over {}'s ({}), "
                     "on a log axis: left of 1 is faster.</p>\n",
                     esc(columns[0].name), esc(columns[0].device));
  BarChartSpec spec;
  spec.id = "vendors";
  spec.x_label = fmt::format("time ratio to {}", columns[0].name);
  spec.scale = BarScale::kLog;
  spec.value_format = [](double v) { return fmt::format("{:.3g}x", v); };
  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t col = 1; col < columns.size(); ++col) {
    entries.emplace_back(series_color(col), fmt::format("{} {}", columns[col].name, columns[col].device));
  }
  for (const auto& v : m.variants) {
    BarGroup g{v.variant, {}};
    for (size_t col = 1; col < columns.size(); ++col) {
      if (!v.ratios[col]) continue;
      g.bars.push_back({columns[col].name, *v.ratios[col], series_color(col),
                        fmt::format("{} {}: {:.3g}x {} over {} cases", v.variant, columns[col].name, *v.ratios[col],
                                    columns[0].name, v.cases[col])});
    }
    if (!g.bars.empty()) spec.groups.push_back(std::move(g));
  }
  if (spec.groups.empty()) {
    return out + "<p class=\"note\">No case ran correctly in the first report and another one.</p>\n";
  }
  out += fmt::format("<figure>{}{}</figure>\n", svg_bar_chart(spec), legend(entries));
  // The numbers behind the bars, case by case.
  std::vector<std::string> header = {"variant", "impl", "dtype", "case"};
  for (size_t col = 0; col < columns.size(); ++col) {
    header.push_back(columns[col].name);
    if (col > 0) header.push_back(columns[col].name + "/" + columns[0].name);
  }
  std::string table = table_open(header);
  for (const auto& row : m.rows) {
    table += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>", esc(row.first->variant),
                         esc(row.first->impl), esc(row.first->dtype), esc(case_shape(*row.first)));
    for (size_t col = 0; col < columns.size(); ++col) {
      const CaseRecord* c = row.cells[col];
      const std::string t = !c ? "-" : !c->ok() ? c->status : format_ns(ok_median(c));
      table += fmt::format("<td class=\"num\">{}</td>", esc(t));
      if (col > 0) table += fmt::format("<td class=\"num\">{}</td>", esc(format_ratio(row.ratios[col])));
    }
    table += "</tr>\n";
  }
  out += "<details><summary>every case</summary>" + table + kTableClose + "</details>\n";
  return out;
}

std::string validation_section(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns) {
  std::string out = "<h2 id=\"validation\">Validation</h2>\n";
  out += "<p class=\"note\">Every case against the float64 CPU reference: normalised mean squared error (nmse) "
         "and its tolerance, the largest absolute and relative errors, and why a case did not run.</p>\n";
  for (const auto& col : columns) {
    out += fmt::format("<h3>{} {}</h3>\n", esc(col.name), esc(col.device));
    out += table_open({"variant", "impl", "dtype", "case", "status", "nmse", "tolerance", "max abs", "max rel",
                       "rows", "reason"});
    for (const auto& c : reports[col.report].cases) {
      if (c.device_info->key_name != col.device) continue;
      const char* cls = c.status == "failed" || c.status == "error" ? " class=\"bad\""
                        : c.ok()                                    ? ""
                                                                    : " class=\"skip\"";
      std::string nmse = "-", tol = "-", max_abs = "-", max_rel = "-", rows = "-", why = c.reason;
      if (c.validation) {
        const auto& v = *c.validation;
        nmse = v.nmse ? format_number(v.nmse) : "non-finite";
        tol = format_number(v.tol_nmse);
        max_abs = v.max_abs ? format_number(v.max_abs) : "non-finite";
        max_rel = v.max_rel ? format_number(v.max_rel) : "non-finite";
        rows = fmt::format("{}/{}", v.rows_checked, v.rows_total);
        if (!v.detail.empty()) why += (why.empty() ? "" : "; ") + v.detail;
      } else if (c.ok()) {
        why = "not validated";
      }
      if (c.vk_validation_errors) why += fmt::format("{}{} Vulkan validation errors", why.empty() ? "" : "; ",
                                                     c.vk_validation_errors);
      out += fmt::format(
          "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"wrap\">{}</td></tr>\n",
          cls, esc(c.variant), esc(c.impl), esc(c.dtype), esc(case_shape(c)), esc(c.status), esc(nmse), esc(tol),
          esc(max_abs), esc(max_rel), esc(rows), esc(why));
    }
    out += kTableClose;
  }
  return out;
}

bool any_tuning(const std::vector<ReportFile>& reports) {
  for (const auto& r : reports) {
    for (const auto& c : r.cases) {
      if (c.tuning) return true;
    }
  }
  return false;
}

// One candidate: "6: 346 ms (0.90)", its median against the planner's
// candidate's; the value the case ran in bold; a candidate that did not run
// with its status and reason.
std::string tuning_candidate(const TuningRecord& t, const TuningRecord::Candidate& c) {
  std::optional<double> planned_ns;
  for (const auto& p : t.candidates) {
    if (p.value == t.planned) planned_ns = p.median_ns;
  }
  std::string text;
  if (c.median_ns) {
    text = fmt::format("{}: {}", c.value, format_ns(*c.median_ns));
    if (planned_ns) text += " (" + format_ratio(*c.median_ns / *planned_ns) + ")";
  } else {
    text = fmt::format("{}: {}{}", c.value, c.status, c.reason.empty() ? "" : " (" + c.reason + ")");
  }
  return c.value == t.chosen ? "<b>" + esc(text) + "</b>" : esc(text);
}

// Cases of a `run --tune`: what was measured and which plan the case then ran
// (its times everywhere else on the page are that plan's).
std::string tuning_section(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns) {
  if (!any_tuning(reports)) return "";
  std::string out = "<h2 id=\"tuning\">Tuning</h2>\n";
  out += "<p class=\"note\">Cases of a run with <code>--tune</code>: the knob it measured on the device, the "
         "planner's value and the value the case then ran (bold), with each candidate's median over its tuning "
         "executions and its ratio to the planner's (a run with <code>--tune-from</code> takes an earlier report's value "
         "and times no candidate). The planner's value stands unless another is faster by "
         "more than the tuning's margin (README, Tuning). Every time elsewhere on this page is that of the value the "
         "case ran.</p>\n";
  for (const auto& col : columns) {
    std::string rows;
    for (const auto& c : reports[col.report].cases) {
      if (c.device_info->key_name != col.device || !c.tuning) continue;
      const TuningRecord& t = *c.tuning;
      std::vector<std::string> candidates;
      for (const auto& one : t.candidates) candidates.push_back(tuning_candidate(t, one));
      if (!t.from.empty()) candidates.push_back("chosen in " + esc(t.from) + " (--tune-from), not timed here");
      rows += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"wrap\">{}</td></tr>\n",
          esc(c.variant), esc(c.impl), esc(c.dtype), esc(case_shape(c)), esc(t.knob), t.planned,
          t.moved() ? fmt::format("<b>{}</b>", t.chosen) : std::to_string(t.chosen), join(candidates, " · "));
    }
    if (rows.empty()) continue;
    out += fmt::format("<h3>{} {}</h3>\n", esc(col.name), esc(col.device));
    out += table_open({"variant", "impl", "dtype", "case", "knob", "planned", "ran", "candidates"}) + rows +
           kTableClose;
  }
  return out;
}

// One row per pipeline of every case that recorded pipelines: the shader, its
// workgroup and the driver statistics a kernel engineer reads first.
std::string kernels_section(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns) {
  std::string out = "<h2 id=\"kernels\">Kernels</h2>\n";
  out += "<p class=\"note\">Each case's pipelines with the driver's own statistics "
         "(VK_KHR_pipeline_executable_properties): registers, spills, scratch, shared memory and occupancy. "
         "\"-\": the driver does not report it.</p>\n";
  const auto& stat_columns = key_stat_columns();
  for (const auto& col : columns) {
    std::vector<std::string> header = {"variant", "impl", "dtype", "case", "shader", "local size", "spec constants"};
    for (const auto& s : stat_columns) header.push_back(s.title);
    std::string rows;
    for (const auto& c : reports[col.report].cases) {
      if (c.device_info->key_name != col.device) continue;
      for (const auto& p : c.pipelines) {
        const auto spilled = spills(p.stats);
        rows += fmt::format("<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}.{}</td><td>{}</td>"
                            "<td class=\"wrap\">{}</td>",
                            spilled && *spilled > 0 ? " class=\"bad\"" : "", esc(c.variant), esc(c.impl),
                            esc(c.dtype), esc(case_shape(c)), esc(p.shader), esc(p.storage),
                            esc(join([&] {
                              std::vector<std::string> dims;
                              for (uint32_t d : p.local_size) dims.push_back(std::to_string(d));
                              return dims;
                            }(), "x")),
                            esc(p.spec));
        for (const auto& s : stat_columns) {
          const auto v = find_stat(p.stats, s);
          rows += fmt::format("<td class=\"num\">{}</td>", v ? fmt::format("{:g}", *v) : "-");
        }
        rows += "</tr>\n";
      }
    }
    if (rows.empty()) continue;
    out += fmt::format("<h3>{} {}</h3>\n", esc(col.name), esc(col.device));
    out += table_open(header) + rows + kTableClose;
  }
  return out;
}

std::string report_nav(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns,
                       bool trends) {
  std::string out =
      "<nav><a href=\"#devices\">devices</a><a href=\"#seq\">time vs length</a><a href=\"#roofline\">roofline</a>"
      "<a href=\"#overhead\">overhead</a>";
  if (columns.size() > 1) out += "<a href=\"#vendors\">vendors</a>";
  out += "<a href=\"#validation\">validation</a><a href=\"#kernels\">kernels</a>";
  if (any_tuning(reports)) out += "<a href=\"#tuning\">tuning</a>";
  if (trends) out += "<a href=\"#trends\">trends</a>";
  return out + "</nav>\n";
}

// Everything the page shows of the reports themselves.
std::string report_sections(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns) {
  return devices_section(reports, columns) + seq_section(reports, columns) + roofline_section(reports, columns) +
         overhead_section(reports, columns) + vendor_section(reports, columns) + validation_section(reports, columns) +
         kernels_section(reports, columns) + tuning_section(reports, columns);
}

}  // namespace

std::string html_report(const std::vector<ReportFile>& reports, const HtmlReportOptions& options) {
  const auto columns = report_columns(reports);
  std::vector<std::string> files;
  for (const auto& r : reports) files.push_back(r.path);
  if (!options.trends.empty()) files.push_back("trends from " + options.trend_options.source);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>pebench report: {}</title>\n<style>{}</style>\n</head>\n<body>\n",
                     esc(join(files, ", ")), kStyle);
  out += "<h1>pebench report</h1>\n";
  std::vector<std::string> made;
  if (!options.generator.empty()) made.push_back("by " + options.generator);
  if (!options.generated.empty()) made.push_back("on " + options.generated);
  out += fmt::format("<p class=\"note\">{} report{}{}{}</p>\n", reports.size(), reports.size() == 1 ? "" : "s",
                     made.empty() ? "" : ", made ", esc(join(made, " ")));
  if (!reports.empty()) out += report_nav(reports, columns, !options.trends.empty()) + report_sections(reports, columns);
  if (reports.empty() && !options.trends.empty()) out += "<nav><a href=\"#trends\">trends</a></nav>\n";
  out += trend_section(options.trends, options.trend_options);
  return out + "</body>\n</html>\n";
}

}  // namespace pebench
