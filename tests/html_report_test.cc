// `pebench report`: the page is self-contained, and its charts draw the data
// they claim to: every point and bar is checked against the crafted
// fixtures' closed-form model (tests/data/make_vendor_fixtures.py) and
// against the chart's own axes.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "analysis/html_report.h"
#include "analysis/pipeline_stats.h"
#include "analysis/report_file.h"
#include "analysis/svg_chart.h"
#include "test_util.h"

namespace pebench {
namespace {

const std::string kData = std::string(PEBENCH_SOURCE_DIR) + "/tests/data/";

std::vector<ReportFile> vendor_reports() {
  std::vector<ReportFile> out;
  for (const char* f : {"vendor_a.json", "vendor_b.json", "vendor_c.json"}) out.push_back(load_report(kData + f));
  return out;
}

// The fixtures' model (see make_vendor_fixtures.py).
double model_median(const std::string& device, const std::string& variant, const std::string& impl,
                    const std::string& dtype, double seq) {
  const std::map<std::string, double> speed = {{"Vendor A GPU", 1}, {"Vendor B GPU", 0.5}, {"Vendor C GPU", 4}};
  const std::map<std::string, double> encoding = {{"attn.nope", 1}, {"attn.t5", 1.5}, {"attn.alibi", 1.25}};
  if (variant == "abs.learned") return 200 * seq / 128 * speed.at(device);
  return 1000 * (seq / 128) * (seq / 128) * (impl == "flash" ? 0.5 : 1) * (dtype == "f16" ? 0.8 : 1) *
         encoding.at(variant) * speed.at(device);
}

// --- a minimal reader for the SVG the page holds --------------------------------

std::string attr(const std::string& tag, const std::string& name) {
  const std::regex re(" " + name + "=\"([^\"]*)\"");
  std::smatch m;
  if (!std::regex_search(tag, m, re)) return "";
  return m[1];
}

std::vector<double> numbers(const std::string& text) {
  std::vector<double> out;
  std::istringstream in(text);
  for (double v; in >> v;) out.push_back(v);
  return out;
}

// The <svg> element whose data-chart is `id`, or "".
std::string chart(const std::string& html, const std::string& id) {
  const auto start = html.find("<svg class=\"chart\"");
  for (auto pos = start; pos != std::string::npos; pos = html.find("<svg class=\"chart\"", pos + 1)) {
    const auto open_end = html.find('>', pos);
    if (attr(html.substr(pos, open_end - pos), "data-chart") == id) {
      return html.substr(pos, html.find("</svg>", pos) + 6 - pos);
    }
  }
  return "";
}

// Opening tags named `name` inside `text`.
std::vector<std::string> tags(const std::string& text, const std::string& name) {
  std::vector<std::string> out;
  for (auto pos = text.find("<" + name + " "); pos != std::string::npos; pos = text.find("<" + name + " ", pos + 1)) {
    out.push_back(text.substr(pos, text.find('>', pos) + 1 - pos));
  }
  return out;
}

// Blocks "<g class="CLASS" ...>...</g>" (not nested in our charts).
std::vector<std::string> groups(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  const std::string open = "<g class=\"" + cls + "\"";
  for (auto pos = svg.find(open); pos != std::string::npos; pos = svg.find(open, pos + 1)) {
    out.push_back(svg.substr(pos, svg.find("</g>", pos) + 4 - pos));
  }
  return out;
}

double log_map(double v, double lo, double hi, double start, double length) {
  return start + (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) * length;
}

std::string html_of(const std::vector<ReportFile>& reports) { return html_report(reports, {}); }

// --- trend charts (report --db; the database side is tested in db_test.cc) ---------

TEST(HtmlReport, TrendChartDrawsEveryRunInOrderAndMarksTheStep) {
  // 20 runs, 8% slower from the 11th (commit c10); run c04 did not run ok.
  TrendSeries s{"abs.learned default f32 seq=128", "lavapipe", "AMD EPYC", {}};
  std::vector<std::pair<std::string, double>> drawn;
  for (int i = 0; i < 20; ++i) {
    const double v = (100000 + 700 * ((i * 7) % 5)) * (i >= 10 ? 1.08 : 1.0);
    const std::string commit = fmt::format("c{:02d}{}", i, std::string(38, 'a'));
    s.runs.push_back({commit, fmt::format("2026-12-{:02d}T00:00:00Z", i + 1), i == 4 ? 0.0 : v});
    if (i != 4) drawn.emplace_back(commit.substr(0, 7), v);
  }
  HtmlReportOptions options;
  options.trends = {s};
  options.trend_options.source = "r.db";
  const std::string html = html_report({}, options);
  EXPECT_NE(html.find("<a href=\"#trends\">"), std::string::npos);
  const std::string svg = chart(html, "trend-0");
  ASSERT_FALSE(svg.empty()) << html;
  const std::string head = svg.substr(0, svg.find('>'));
  EXPECT_EQ(attr(head, "data-kind"), "trend");
  EXPECT_EQ(attr(head, "data-runs"), std::to_string(drawn.size()));
  const auto plot = numbers(attr(head, "data-plot"));  // x y width height
  const auto yd = numbers(attr(head, "data-y-domain"));
  ASSERT_EQ(plot.size(), 4u);
  ASSERT_EQ(yd.size(), 2u);
  const auto circles = tags(svg, "circle");
  ASSERT_EQ(circles.size(), drawn.size());
  double last_x = -1;
  for (size_t i = 0; i < circles.size(); ++i) {
    SCOPED_TRACE(circles[i]);
    EXPECT_EQ(attr(circles[i], "data-index"), std::to_string(i));
    EXPECT_EQ(attr(circles[i], "data-x-label"), drawn[i].first);
    EXPECT_DOUBLE_EQ(std::stod(attr(circles[i], "data-y")), drawn[i].second);
    const double cx = std::stod(attr(circles[i], "cx")), cy = std::stod(attr(circles[i], "cy"));
    EXPECT_GT(cx, last_x);  // left to right in run order
    last_x = cx;
    EXPECT_NEAR(cy, plot[1] + plot[3] - (drawn[i].second - yd[0]) / (yd[1] - yd[0]) * plot[3], 0.01);
  }
  const auto changes = tags(svg, "line class=\"change\"");
  ASSERT_EQ(changes.size(), 1u) << svg;
  EXPECT_EQ(attr(changes[0], "data-index"), "9");  // c10 is the 10th drawn run (c04 is not drawn)
  EXPECT_NEAR(std::stod(attr(changes[0], "data-step")), 0.08, 0.02);
  EXPECT_NE(html.find("change c09aaaa..c10aaaa"), std::string::npos);
}

TEST(HtmlReport, NoTrendSectionWithoutTrends) {
  const std::string html = html_of(vendor_reports());
  EXPECT_EQ(html.find("id=\"trends\""), std::string::npos);
  EXPECT_EQ(html.find("data-kind=\"trend\""), std::string::npos);
}

// --- the charts ---------------------------------------------------------------------

TEST(HtmlReport, SeqChartsDrawEveryTimedCaseAtItsPlace) {
  const std::string html = html_of(vendor_reports());
  for (const std::string variant : {"attn.nope", "attn.t5", "attn.alibi", "abs.learned"}) {
    SCOPED_TRACE(variant);
    const std::string svg = chart(html, "seq-" + variant);
    ASSERT_FALSE(svg.empty());
    const std::string head = svg.substr(0, svg.find('>'));
    const auto xd = numbers(attr(head, "data-x-domain")), yd = numbers(attr(head, "data-y-domain"));
    const auto plot = numbers(attr(head, "data-plot"));  // x y width height
    ASSERT_EQ(xd.size(), 2u);
    ASSERT_EQ(yd.size(), 2u);
    ASSERT_EQ(plot.size(), 4u);
    const auto series = groups(svg, "series");
    // One line per device and impl/dtype: kv_seq (= seq) and table_len (= seq) do not split lines.
    EXPECT_EQ(series.size(), variant == "abs.learned" ? 3u : 12u);
    std::set<std::string> seen_cases;
    for (const auto& s : series) {
      const std::string name = attr(s.substr(0, s.find('>')), "data-name");
      // "R1 · flash f16": the column's short name, not its device's long one (the page names it once).
      const std::regex re("(R[0-9]) \xC2\xB7 (\\w+) (f16|f32)");
      std::smatch m;
      ASSERT_TRUE(std::regex_match(name, m, re)) << name;
      const std::map<std::string, std::string> device = {
          {"R0", "Vendor A GPU"}, {"R1", "Vendor B GPU"}, {"R2", "Vendor C GPU"}};
      const auto circles = tags(s, "circle");
      EXPECT_EQ(circles.size(), variant == "abs.learned" ? 2u : 3u) << name;
      std::string polyline_expected;
      double last_x = 0;
      for (const auto& c : circles) {
        const double x = std::stod(attr(c, "data-x")), y = std::stod(attr(c, "data-y"));
        EXPECT_GT(x, last_x) << "points in order of sequence length";
        last_x = x;
        // The value is the case's median...
        EXPECT_NEAR(y, model_median(device.at(m[1]), variant, m[2], m[3], x), 1e-9 * y) << name << " seq " << x;
        seen_cases.insert(name + " " + attr(c, "data-x"));
        // ...drawn where the axes put it.
        const double cx = std::stod(attr(c, "cx")), cy = std::stod(attr(c, "cy"));
        EXPECT_NEAR(cx, log_map(x, xd[0], xd[1], plot[0], plot[2]), 0.006);
        EXPECT_NEAR(cy, plot[1] + plot[3] - (log_map(y, yd[0], yd[1], 0, plot[3])), 0.006);
        EXPECT_GE(cx, plot[0]);
        EXPECT_LE(cx, plot[0] + plot[2]);
        EXPECT_GE(cy, plot[1]);
        EXPECT_LE(cy, plot[1] + plot[3]);
        polyline_expected += (polyline_expected.empty() ? "" : " ") + attr(c, "cx") + "," + attr(c, "cy");
      }
      const auto lines = tags(s, "polyline");
      ASSERT_EQ(lines.size(), 1u);
      EXPECT_EQ(attr(lines[0], "points"), polyline_expected) << "the line joins the points";
    }
    EXPECT_EQ(seen_cases.size(), variant == "abs.learned" ? 6u : 36u);
  }
  // rope.apply has one failed and one skipped case: nothing to draw.
  EXPECT_TRUE(chart(html, "seq-rope.apply").empty());
  // The key to the short names, once, before the charts.
  const auto section = html.substr(html.find("id=\"seq\""), html.find("id=\"roofline\"") - html.find("id=\"seq\""));
  EXPECT_NE(section.find("<b>R1</b> = Vendor B GPU"), std::string::npos);
  size_t mentions = 0;
  for (auto pos = section.find("Vendor B GPU"); pos != std::string::npos; pos = section.find("Vendor B GPU", pos + 1)) {
    ++mentions;
  }
  EXPECT_EQ(mentions, 1u) << "the device's long name repeats in the legends";
}

TEST(HtmlReport, OverheadBarsAreEncodingOverNope) {
  const std::string html = html_of(vendor_reports());
  for (const std::string column : {"R0", "R1", "R2"}) {
    SCOPED_TRACE(column);
    const std::string svg = chart(html, "overhead-" + column);
    ASSERT_FALSE(svg.empty());
    const std::string head = svg.substr(0, svg.find('>'));
    const auto xd = numbers(attr(head, "data-x-domain")), plot = numbers(attr(head, "data-plot"));
    EXPECT_EQ(attr(head, "data-kind"), "bars-linear");
    auto px = [&](double v) { return plot[0] + (v - xd[0]) / (xd[1] - xd[0]) * plot[2]; };
    std::map<std::string, size_t> bars_per_group;
    for (const auto& g : groups(svg, "bar-group")) {
      const std::string encoding = attr(g.substr(0, g.find('>')), "data-label");
      // t5 costs 1.5x nope, alibi 1.25x, on every shape, impl and dtype.
      const double expected = encoding == "attn.t5" ? 0.5 : encoding == "attn.alibi" ? 0.25 : NAN;
      for (const auto& rect : tags(g, "rect")) {
        ++bars_per_group[encoding];
        const double v = std::stod(attr(rect, "data-value"));
        EXPECT_NEAR(v, expected, 1e-12) << encoding << " " << attr(rect, "data-label");
        EXPECT_NEAR(std::stod(attr(rect, "x")), px(0), 0.006);
        EXPECT_NEAR(std::stod(attr(rect, "width")), px(v) - px(0), 0.011);
      }
    }
    const std::map<std::string, size_t> expected_bars = {{"attn.alibi", 4}, {"attn.t5", 4}};  // 2 impls x 2 dtypes
    EXPECT_EQ(bars_per_group, expected_bars);
  }
}

TEST(HtmlReport, OverheadMatchesOnShapeAndSaysWhatElseDiffers) {
  // attn.t5's spec default scale is 1, attn.nope's 1/sqrt(D): a different
  // parameter must not drop t5 from the chart, and the page must say it.
  auto reports = vendor_reports();
  reports.resize(1);
  for (auto& c : reports[0].cases) {
    if (c.variant == "attn.nope") c.params["scale"] = 0.125;
    if (c.variant == "attn.t5") c.params["scale"] = 1.0;
  }
  const std::string html = html_of(reports);
  const std::string svg = chart(html, "overhead-R0");
  ASSERT_FALSE(svg.empty());
  std::set<std::string> encodings;
  for (const auto& g : groups(svg, "bar-group")) encodings.insert(attr(g.substr(0, g.find('>')), "data-label"));
  EXPECT_EQ(encodings, (std::set<std::string>{"attn.alibi", "attn.t5"}));
  EXPECT_NE(html.find("scale 1 (attn.nope 0.125)"), std::string::npos);
}

TEST(LogAxis, ANarrowRangeGetsRoundTicksNotTheDataValues) {
  // attn.t5's chart: every median between 140 and 190 us.
  const LogAxis a = make_log_axis(143.7e3, 187.2e3, false);
  ASSERT_GE(a.ticks.size(), 2u);
  for (double t : a.ticks) {
    EXPECT_GE(t, a.lo);
    EXPECT_LE(t, a.hi);
    EXPECT_NE(t, 143.7e3);
    EXPECT_NE(t, 187.2e3);
    const double mantissa = t / std::pow(10.0, std::floor(std::log10(t)));
    EXPECT_NEAR(mantissa * 10, std::round(mantissa * 10), 1e-9) << t << " is not a round value";
  }
}

TEST(HtmlReport, RooflineChartDrawsEveryCaseUnderTheDevicesRoofs) {
  auto reports = vendor_reports();
  reports.resize(1);
  reports[0].devices[0].peak = PeakRecord{10.0, 400.0, std::nullopt};  // ridge at 40 flop/byte
  size_t drawn = 0;
  for (auto& c : reports[0].cases) {
    if (!c.ok() || !c.timed()) continue;
    c.bytes = 1e6;
    c.flops = c.family() == "attn" ? 1e8 : 0;  // abs.learned: no flops, not drawable
    const double model = std::max(c.bytes / 10.0, c.flops / 400.0);
    c.roofline = RooflineRecord{c.flops / 400.0 > c.bytes / 10.0 ? "compute" : "memory", model / c.time->median};
    drawn += c.flops > 0;
  }
  const std::string html = html_of(reports);
  const std::string svg = chart(html, "roofline-R0");
  ASSERT_FALSE(svg.empty());
  const std::string head = svg.substr(0, svg.find('>'));
  EXPECT_EQ(attr(head, "data-kind"), "roofline");
  EXPECT_EQ(std::stod(attr(head, "data-roof-copy")), 10.0);
  EXPECT_EQ(std::stod(attr(head, "data-roof-compute")), 400.0);
  const auto xd = numbers(attr(head, "data-x-domain")), yd = numbers(attr(head, "data-y-domain"));
  const auto plot = numbers(attr(head, "data-plot"));
  auto px = [&](double x) { return log_map(x, xd[0], xd[1], plot[0], plot[2]); };
  auto py = [&](double y) { return plot[1] + plot[3] - log_map(y, yd[0], yd[1], 0, plot[3]); };
  // The roofs: bandwidth x intensity up to the ridge, flat after it.
  const auto roof = tags(svg, "polyline");
  ASSERT_EQ(roof.size(), 1u);
  const auto pts = numbers(std::regex_replace(attr(roof[0], "points"), std::regex(","), " "));
  ASSERT_EQ(pts.size(), 6u);
  EXPECT_NEAR(pts[0], px(xd[0]), 0.006);
  EXPECT_NEAR(pts[1], py(10.0 * xd[0]), 0.006);
  EXPECT_NEAR(pts[2], px(40.0), 0.006);
  EXPECT_NEAR(pts[3], py(400.0), 0.006);
  EXPECT_NEAR(pts[5], py(400.0), 0.006);
  // Every attention case at (flops / bytes, flops / median).
  size_t circles = 0;
  for (const auto& c : tags(svg, "circle")) {
    ++circles;
    const double x = std::stod(attr(c, "data-x")), y = std::stod(attr(c, "data-y"));
    EXPECT_NEAR(x, 100.0, 1e-9);
    EXPECT_NEAR(std::stod(attr(c, "cx")), px(x), 0.006);
    EXPECT_NEAR(std::stod(attr(c, "cy")), py(y), 0.006);
  }
  EXPECT_EQ(circles, drawn);
  EXPECT_NE(html.find("count no flops and are not drawn"), std::string::npos);
  // The table: sample count, spread and fraction for every timed case.
  const auto section = html.substr(html.find("id=\"roofline\""));
  EXPECT_NE(section.find("<th>n</th><th>IQR</th>"), std::string::npos);
  EXPECT_NE(section.find("<td>compute</td>"), std::string::npos);
}

TEST(HtmlReport, NoRooflineWithoutAPeak) {
  auto reports = vendor_reports();
  reports.resize(1);
  const std::string html = html_of(reports);
  EXPECT_EQ(html.find("data-chart=\"roofline-"), std::string::npos);
  EXPECT_NE(html.find("No roofline: these reports hold no measured peak"), std::string::npos);
  // The fixtures have 5 samples per case: enough; one with 3 is flagged.
  reports[0].cases[0].time->samples.resize(3);
  const std::string flagged = html_of(reports);
  EXPECT_NE(flagged.find("<td class=\"num\">3!</td>"), std::string::npos);
  EXPECT_NE(flagged.find("n!: 1 case(s) have fewer than 5 samples"), std::string::npos);
}

TEST(HtmlReport, VendorBarsAreTimeRatiosToTheFirstReport) {
  const std::string html = html_of(vendor_reports());
  const std::string svg = chart(html, "vendors");
  ASSERT_FALSE(svg.empty());
  const std::string head = svg.substr(0, svg.find('>'));
  EXPECT_EQ(attr(head, "data-kind"), "bars-log");
  const auto xd = numbers(attr(head, "data-x-domain")), plot = numbers(attr(head, "data-plot"));
  auto px = [&](double v) { return log_map(v, xd[0], xd[1], plot[0], plot[2]); };
  size_t bars = 0;
  for (const auto& g : groups(svg, "bar-group")) {
    for (const auto& rect : tags(g, "rect")) {
      ++bars;
      const double v = std::stod(attr(rect, "data-value"));
      const double expected = attr(rect, "data-label") == "R1" ? 0.5 : 4.0;  // B twice as fast, C four times slower
      EXPECT_NEAR(v, expected, 1e-12);
      EXPECT_NEAR(std::stod(attr(rect, "x")), std::min(px(1), px(v)), 0.006);
      EXPECT_NEAR(std::stod(attr(rect, "width")), std::fabs(px(v) - px(1)), 0.011);
    }
  }
  EXPECT_EQ(bars, 8u);  // 4 timed variants x 2 other reports
}

TEST(HtmlReport, ValidationTableListsEveryCase) {
  const auto reports = vendor_reports();
  const std::string html = html_of(reports);
  const auto section = html.substr(html.find("id=\"validation\""));
  size_t rows = 0;
  for (auto pos = section.find("<tr"); pos != std::string::npos; pos = section.find("<tr", pos + 1)) ++rows;
  size_t cases = 0;
  for (const auto& r : reports) cases += r.cases.size();
  EXPECT_EQ(rows, cases + reports.size());  // plus a header row per report
  EXPECT_NE(section.find("<tr class=\"bad\"><td>rope.apply</td><td>default</td><td>f16</td>"), std::string::npos);
  EXPECT_NE(section.find("<td class=\"num\">0.25</td>"), std::string::npos);  // the failing nmse
  EXPECT_NE(section.find("nmse 0.25 &gt; tolerance 1e-06"), std::string::npos);
  EXPECT_NE(section.find("rotary_dim=63 must be even"), std::string::npos);
}

TEST(HtmlReport, KernelsSectionListsPipelinesWithTheDriversStatistics) {
  // The committed navi21 baseline: --compile-only on RADV's null device.
  const auto rep = load_report(std::string(PEBENCH_SOURCE_DIR) + "/reports/baselines/navi21-kernels.json");
  const std::string html = html_of({rep});
  const auto at = html.find("id=\"kernels\"");
  ASSERT_NE(at, std::string::npos);
  const auto section = html.substr(at);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (auto pos = section.find(what); pos != std::string::npos; pos = section.find(what, pos + 1)) ++n;
    return n;
  };
  size_t pipelines = 0, spilling = 0;
  for (const auto& c : rep.cases) {
    for (const auto& p : c.pipelines) {
      ++pipelines;
      spilling += spills(p.stats).value_or(0) > 0;
    }
  }
  EXPECT_EQ(count("<tr"), pipelines + 1);  // plus the header
  EXPECT_EQ(count("<tr class=\"bad\">"), spilling);  // a spilling pipeline is marked
  EXPECT_NE(section.find("<th>spilled VGPRs</th>"), std::string::npos);
  EXPECT_NE(section.find("attn_flash_gpu_nope.f32"), std::string::npos);  // the GPU kernel, on navi21
}

// A crafted run --tune case: one row per tuned case with the planner's value,
// the value it ran and each candidate's median against the planner's.
TEST(HtmlReport, TuningSectionListsEveryTunedCaseAndItsCandidates) {
  std::ifstream in(kData + "vendor_a.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  size_t tuned_at = doc["results"].size();
  for (size_t i = 0; i < doc["results"].size(); ++i) {
    if (doc["results"][i]["impl"] == "flash" && tuned_at == doc["results"].size()) tuned_at = i;
  }
  ASSERT_LT(tuned_at, doc["results"].size());
  doc["results"][tuned_at]["tuning"] = {
      {"knob", "row_slots"},
      {"planned", 8},
      {"chosen", 6},
      {"candidates",
       {{{"value", 8}, {"status", "ok"}, {"median_ns", 4.0e8}},
        {{"value", 6}, {"status", "ok"}, {"median_ns", 3.5e8}},
        {{"value", 5}, {"status", "unsupported"}, {"reason", "5 < 6"}}}}};
  const auto untuned = html_of(vendor_reports());
  EXPECT_EQ(untuned.find("id=\"tuning\""), std::string::npos);  // no tuned case, no section
  EXPECT_EQ(untuned.find("href=\"#tuning\""), std::string::npos);

  const ReportFile rep = parse_report(doc, "tuned.json");
  const std::string html = html_of({rep});
  EXPECT_NE(html.find("<a href=\"#tuning\">tuning</a>"), std::string::npos);
  const auto at = html.find("id=\"tuning\"");
  ASSERT_NE(at, std::string::npos);
  const auto section = html.substr(at);
  size_t rows = 0;
  for (auto pos = section.find("<tr>"); pos != std::string::npos; pos = section.find("<tr>", pos + 1)) ++rows;
  EXPECT_EQ(rows, 2u);  // the header and the one tuned case
  const auto& c = rep.cases[tuned_at];
  EXPECT_NE(section.find(fmt::format("<td>{}</td><td>flash</td><td>{}</td>", c.variant, c.dtype)),
            std::string::npos);
  EXPECT_NE(section.find("<td>row_slots</td><td class=\"num\">8</td><td class=\"num\"><b>6</b></td>"),
            std::string::npos)
      << section;
  // 350 ms over 400 ms; the value that ran in bold; the one that did not with its reason.
  EXPECT_NE(section.find("8: 400.000 ms (1.000) · <b>6: 350.000 ms (0.875)</b> · 5: unsupported (5 &lt; 6)"),
            std::string::npos)
      << section;
}

TEST(HtmlReport, SelfContained) {
  const std::string html = html_of(vendor_reports());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"), std::string::npos);
  for (const char* needle : {"<script", "<link", " src=", "url(", "@import"}) {
    EXPECT_EQ(html.find(needle), std::string::npos) << needle;
  }
  // The only URL is SVG's namespace name, which is never fetched.
  std::string rest = html;
  const std::string ns = "http://www.w3.org/2000/svg";
  for (auto pos = rest.find(ns); pos != std::string::npos; pos = rest.find(ns)) rest.erase(pos, ns.size());
  EXPECT_EQ(rest.find("http"), std::string::npos);
  EXPECT_EQ(rest.find("//"), std::string::npos);
}

TEST(HtmlReport, DegradesWithoutAttnNopeOrASecondReport) {
  auto only_abs = vendor_reports();
  only_abs.resize(1);
  auto& cases = only_abs[0].cases;
  cases.erase(std::remove_if(cases.begin(), cases.end(), [](const CaseRecord& c) { return c.family() == "attn"; }),
              cases.end());
  const std::string html = html_of(only_abs);
  EXPECT_NE(html.find("Not available: these reports hold no attn.nope case"), std::string::npos);
  EXPECT_EQ(html.find("data-chart=\"overhead-"), std::string::npos);
  EXPECT_EQ(html.find("data-chart=\"vendors\""), std::string::npos);  // one report: no vendor view
  EXPECT_EQ(html.find("id=\"vendors\""), std::string::npos);
  const std::string svg = chart(html, "seq-abs.learned");
  ASSERT_FALSE(svg.empty());
  const auto series = groups(svg, "series");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(attr(series[0].substr(0, series[0].find('>')), "data-name"), "default f32");  // one device: no column
}

// Sets every time of every case in `r` to `ns`.
void set_all_times(ReportFile& r, double ns) {
  for (auto& c : r.cases) {
    if (!c.time) continue;
    c.time->median = c.time->min = c.time->max = ns;
    for (auto& s : c.time->samples) s = ns;
  }
}

TEST(HtmlReport, HugeAndTinyFiniteTimesAreDrawnAsNumbers) {
  auto reports = vendor_reports();
  set_all_times(reports[0], 1e308);
  set_all_times(reports[2], 1e-300);  // ratios to R0 underflow to 0 in double
  const std::string html = html_of(reports);
  test::expect_plain_numbers(html);
  // Every coordinate of every chart is a finite number.
  size_t coordinates = 0;
  for (const char* name : {"circle", "rect", "line", "text"}) {
    for (const auto& t : tags(html, name)) {
      for (const char* a : {"cx", "cy", "x", "y", "width", "x1", "x2", "y1", "y2"}) {
        const std::string v = attr(t, a);
        if (v.empty()) continue;
        ++coordinates;
        EXPECT_TRUE(std::isfinite(std::stod(v))) << t;
      }
    }
  }
  EXPECT_GT(coordinates, 100u);
  EXPECT_FALSE(chart(html, "vendors").empty());
}

TEST(HtmlReport, TextIsEscaped) {
  auto reports = vendor_reports();
  reports.resize(1);
  reports[0].devices[0].key_name = "<b>GPU</b> & \"friends\"";
  reports[0].cases[0].reason = "<script>alert(1)</script>";
  reports[0].cases[0].status = "error";
  const std::string html = html_of(reports);
  EXPECT_EQ(html.find("<b>GPU"), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;GPU&lt;/b&gt; &amp; &quot;friends&quot;"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

// `report mine.json -o mine.json` replaced the report with HTML.
TEST(HtmlReport, RefusesToWriteOverAnInputReport) {
  const std::string dir = test::temp_dir("self");
  const std::string mine = dir + "/mine.json";
  std::filesystem::copy_file(kData + "vendor_a.json", mine);
  const std::string before = test::read_file(mine);
  for (const std::string& out : {mine, dir + "/./../self/mine.json"}) {
    const auto r = test::run_pebench({"report", kData + "vendor_b.json", mine, "-o", out});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("error: -o " + out + " is the input report " + mine + "; not overwriting it"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_EQ(test::read_file(mine), before) << "the input report was changed";
  }
}

// The atomic rename replaced a read-only file, which came back writable.
TEST(HtmlReport, RefusesToReplaceAReadOnlyFile) {
  namespace fs = std::filesystem;
  const std::string dir = test::temp_dir("readonly");
  const std::string out = dir + "/kept.html";
  std::ofstream(out) << "keep me";
  fs::permissions(out, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const auto r = test::run_pebench({"report", kData + "vendor_a.json", "-o", out});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("error: " + out + " is read-only; not replacing it"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_EQ(test::read_file(out), "keep me");
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "a temporary file was left";
}

// Replacing a writable file keeps its permission bits (0600 stays private).
TEST(HtmlReport, ReplacingAFileKeepsItsPermissions) {
  namespace fs = std::filesystem;
  const std::string dir = test::temp_dir("perms");
  const std::string out = dir + "/private.html";
  std::ofstream(out) << "old";
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write);
  const auto r = test::run_pebench({"report", kData + "vendor_a.json", "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(test::read_file(out).rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
}

TEST(HtmlReport, CommandWritesThePage) {
  const std::string dir = test::temp_dir("report");
  const std::string out = dir + "/sub/report.html";
  const auto r = test::run_pebench({"report", kData + "vendor_a.json", kData + "vendor_b.json", "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(out);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string html = buf.str();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_FALSE(chart(html, "vendors").empty());
  EXPECT_FALSE(chart(html, "seq-attn.t5").empty());
}

}  // namespace
}  // namespace pebench
