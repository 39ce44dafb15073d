#include "analysis/variant_overhead_render.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <set>

#include "analysis/case_key.h"
#include "analysis/compare_render.h"
#include "analysis/comparison.h"
#include "analysis/format_units.h"
#include "analysis/sample_spread.h"
#include "analysis/timing_rule.h"

namespace pebench {
namespace {

// A row's case for a person: its shape, then those of its own parameters
// that tell it from another case of its variant at that shape (rope's
// scaling=none and scaling=yarn), or its label.
std::vector<std::string> case_cells(const OverheadTable& table) {
  std::map<std::string, std::vector<size_t>> by_shape;  // variant + shape key -> rows
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const CaseRecord& c = *table.rows[i].variant;
    by_shape[c.variant + "\n" + shape_key(c)].push_back(i);
  }
  const auto& shape_names = shape_param_names();
  std::vector<std::string> cells(table.rows.size());
  for (const auto& [key, rows] : by_shape) {
    std::set<std::string> differing;  // own parameters whose values differ among these rows
    for (size_t i : rows) {
      for (const auto& [name, value] : table.rows[i].variant->params.items()) {
        if (std::find(shape_names.begin(), shape_names.end(), name) != shape_names.end()) continue;
        for (size_t j : rows) {
          const auto& other = table.rows[j].variant->params;
          if (!other.contains(name) || canonical_value(other[name]) != canonical_value(value)) differing.insert(name);
        }
      }
    }
    for (size_t i : rows) {
      const CaseRecord& c = *table.rows[i].variant;
      if (!c.label.empty()) {
        cells[i] = c.label;
        continue;
      }
      std::string cell;
      auto add = [&cell, &c](const std::string& name) {
        auto it = c.params.find(name);
        if (it == c.params.end()) return;
        cell +=
            (cell.empty() ? "" : " ") + name + "=" + (it->is_string() ? it->get<std::string>() : canonical_value(*it));
      };
      for (const auto& name : shape_names) add(name);
      for (const auto& name : differing) add(name);
      cells[i] = cell;
    }
  }
  return cells;
}

// The interval's own estimate (paired: the median pair's ratio;
// pooled: Hodges-Lehmann), which need not equal the ratio of the medians.
std::string estimate_cell(const OverheadRow& row) {
  return row.interval ? format_percent(row.interval->estimate - 1) : std::string("-");
}

std::string interval_cell(const OverheadRow& row) {
  if (!row.interval) return "-";
  return format_percent(row.interval->lo - 1) + " .. " + format_percent(row.interval->hi - 1);
}

// How far apart in time the pairs' samples began (median), when paired.
std::string gap_cell(const OverheadRow& row) {
  if (!row.interval || !row.interval->paired) return "-";
  return format_ns(row.interval->median_gap_ns);
}

std::string samples_cell_of(const CaseRecord* c, double alpha) {
  return c && c->time ? samples_cell(c->time->samples.size(), alpha) : std::string("-");
}

// The variant's time cell: its median, or its status and why there is no ratio.
std::string time_cell(const OverheadRow& row) {
  if (!row.variant->ok()) return row.variant->status;
  return format_ns(row.variant_median);
}

std::string base_cell(const OverheadRow& row) {
  if (!row.base) return "none";
  if (!row.base->ok()) return row.base->status;
  return format_ns(row.base_median);
}

// Per variant, impl and dtype: the geometric mean of its rows' ratios;
// no rows when none has more than one.
TextTable summary_table(const OverheadTable& table) {
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> ratios;
  bool several = false;
  for (const auto& row : table.rows) {
    if (!row.ratio) continue;
    auto& r = ratios[{row.variant->variant, row.variant->impl, row.variant->dtype}];
    r.push_back(*row.ratio);
    several = several || r.size() > 1;
  }
  if (!several) ratios.clear();
  TextTable t({"variant", "impl", "dtype", "cases", "geomean over " + table.baseline});
  t.align_right(3);
  t.align_right(4);
  for (const auto& [key, r] : ratios) {
    const auto& [variant, impl, dtype] = key;
    t.add_row({variant, impl, dtype, std::to_string(r.size()), format_percent(geometric_mean(r) - 1)});
  }
  return t;
}

void table_section(TextDocument& doc, const ReportFile& report, const OverheadTable& table, double confidence_pct,
                   TimeSeries series, double alpha) {
  const bool device_column = report.result_devices().size() > 1;
  std::vector<std::string> header = {"variant", "impl",     "dtype", "case", table.baseline, "time", "over",
                                     "est.",    "interval", "gap",   "n"};
  if (device_column) header.insert(header.begin(), "device");
  TextTable t(header);
  const size_t first_number = header.size() - 7;
  for (size_t c = first_number; c < header.size(); ++c) t.align_right(c);
  const std::vector<std::string> cases = case_cells(table);
  size_t unmatched = 0;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const OverheadRow& row = table.rows[i];
    const CaseRecord& c = *row.variant;
    if (!row.base) ++unmatched;
    std::vector<std::string> cells;
    if (device_column) cells.push_back(c.device_info->key_name);
    for (const auto& cell :
         {c.variant, c.impl, c.dtype, cases[i], base_cell(row), time_cell(row),
          row.ratio ? format_percent(*row.ratio - 1) : std::string("-"), estimate_cell(row), interval_cell(row),
          gap_cell(row), samples_cell_of(row.base, alpha) + "/" + samples_cell_of(&c, alpha)}) {
      cells.push_back(cell);
    }
    t.add_row(cells);
  }
  doc.paragraph(
      {fmt::format("{}: {} case{} over {} at the same device, impl, dtype and shape ({} time medians; "
                   "over: the medians' ratio; est. and interval ({:g}%): of each sample against the {} "
                   "sample that began nearest it (the median pair and the sign test; gap: their median "
                   "distance in time), or Hodges-Lehmann on pooled log times where the report has no "
                   "start times or the case too few samples for the sign test (gap -); n: {} samples / the "
                   "case's):",
                   report.path, table.rows.size(), table.rows.size() == 1 ? "" : "s", table.baseline,
                   series_name(series), confidence_pct, table.baseline, table.baseline)});
  doc.table(std::move(t));
  if (unmatched > 0) {
    doc.paragraph({fmt::format("{} case{} had no {} case at {} shape.", unmatched, unmatched == 1 ? "" : "s",
                               table.baseline, unmatched == 1 ? "its" : "their")});
  }
  // Per variant, once: its parameters that differ from the baseline's.
  std::map<std::string, std::set<std::string>> differs;
  for (const auto& row : table.rows) differs[row.variant->variant].insert(row.differs.begin(), row.differs.end());
  std::vector<std::string> differing;
  for (const auto& [variant, d] : differs) {
    if (!d.empty()) differing.push_back(variant + ": " + fmt::format("{}", fmt::join(d, ", ")));
  }
  if (!differing.empty()) {
    doc.paragraph({fmt::format("parameters that differ from {}'s case (matched all the same):", table.baseline)});
    doc.list(differing);
  }
  TextTable summary = summary_table(table);
  if (summary.rows() > 0) doc.table(std::move(summary));
}

nlohmann::json opt(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json side_json(const CaseRecord* c, const std::optional<double>& median) {
  if (!c) return nullptr;
  return {{"id", c->id},
          {"status", c->status},
          {"median_ns", opt(median)},
          {"samples", c->time ? nlohmann::json(c->time->samples.size()) : nlohmann::json(nullptr)}};
}

nlohmann::json row_json(const OverheadRow& row) {
  const CaseRecord& c = *row.variant;
  nlohmann::json interval = nullptr;
  if (row.interval) {
    interval = {{"estimate", row.interval->estimate},
                {"lo", row.interval->lo},
                {"hi", row.interval->hi},
                {"confidence", row.interval->confidence},
                {"exact", row.interval->exact},
                {"paired", row.interval->paired},
                {"median_gap_ns",
                 row.interval->paired ? nlohmann::json(row.interval->median_gap_ns) : nlohmann::json(nullptr)}};
  }
  return {{"device", c.device_info->key_name},
          {"variant", c.variant},
          {"impl", c.impl},
          {"dtype", c.dtype},
          {"label", c.label},
          {"params", c.params},
          {"reason", c.reason},
          {"case", side_json(&c, row.variant_median)},
          {"base", side_json(row.base, row.base_median)},
          {"differs", row.differs},
          {"ratio", opt(row.ratio)},
          {"interval", interval}};
}

}  // namespace

TextDocument overhead_document(const std::vector<ReportFile>& reports, const std::vector<OverheadTable>& tables,
                               TimeSeries series, double alpha) {
  TextDocument doc;
  const std::string baseline = tables.empty() ? "" : tables.front().baseline;
  doc.heading("pebench compare --over " + baseline);
  std::vector<std::string> roles;
  for (size_t i = 0; i < reports.size(); ++i) roles.push_back(reports.size() == 1 ? "REPORT" : fmt::format("R{}", i));
  doc.table(reports_table(reports, roles));
  for (size_t i = 0; i < reports.size() && i < tables.size(); ++i) {
    table_section(doc, reports[i], tables[i], 100 * (1 - alpha), series, alpha);
  }
  return doc;
}

nlohmann::json overhead_json(const std::vector<ReportFile>& reports, const std::vector<OverheadTable>& tables,
                             TimeSeries series) {
  nlohmann::json out = {{"schema", kOverheadSchema},
                        {"over", tables.empty() ? "" : tables.front().baseline},
                        {"series", series_name(series)},
                        {"reports", nlohmann::json::array()}};
  for (size_t i = 0; i < reports.size() && i < tables.size(); ++i) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : tables[i].rows) rows.push_back(row_json(row));
    out["reports"].push_back({{"path", reports[i].path}, {"rows", rows}});
  }
  return out;
}

}  // namespace pebench
