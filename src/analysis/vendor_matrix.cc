#include "analysis/vendor_matrix.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

#include "analysis/comparison.h"

namespace pebench {

std::optional<double> ok_median(const CaseRecord* c) {
  if (!c || !c->ok() || !c->timed()) return std::nullopt;
  return c->time->median;
}

std::vector<MatrixColumn> report_columns(const std::vector<ReportFile>& reports) {
  std::vector<MatrixColumn> columns;
  for (size_t r = 0; r < reports.size(); ++r) {
    const auto devices = reports[r].result_devices();
    for (size_t d = 0; d < devices.size(); ++d) {
      const std::string name = devices.size() > 1 ? fmt::format("R{}.d{}", r, d) : fmt::format("R{}", r);
      columns.push_back({r, devices[d], name});
    }
  }
  return columns;
}

VendorMatrix vendor_matrix(const std::vector<ReportFile>& reports) {
  VendorMatrix m;
  m.columns = report_columns(reports);
  const size_t ncol = m.columns.size();
  std::unordered_map<std::string, size_t> row_of;  // case key -> row
  for (size_t col = 0; col < ncol; ++col) {
    const auto& column = m.columns[col];
    for (const auto& c : reports[column.report].cases) {
      if (c.device_info->key_name != column.device) continue;
      auto [it, fresh] = row_of.emplace(c.key, m.rows.size());
      if (fresh) {
        MatrixRow row;
        row.first = &c;
        row.cells.assign(ncol, nullptr);
        row.ratios.assign(ncol, std::nullopt);
        m.rows.push_back(std::move(row));
      }
      m.rows[it->second].cells[col] = &c;
    }
  }
  std::map<std::string, std::vector<std::vector<double>>> per_variant;  // variant -> per column ratios
  std::vector<std::string> variant_order;
  for (auto& row : m.rows) {
    const auto reference = ok_median(row.cells[0]);
    auto [it, fresh] = per_variant.emplace(row.first->variant, std::vector<std::vector<double>>(ncol));
    if (fresh) variant_order.push_back(row.first->variant);
    for (size_t col = 0; col < ncol; ++col) {
      const auto t = ok_median(row.cells[col]);
      if (!reference || !t) continue;
      row.ratios[col] = time_ratio(*t, *reference);
      it->second[col].push_back(*row.ratios[col]);
    }
  }
  for (const auto& variant : variant_order) {
    VariantRatios v;
    v.variant = variant;
    for (const auto& ratios : per_variant[variant]) {
      v.cases.push_back(ratios.size());
      v.ratios.push_back(ratios.empty() ? std::nullopt : std::optional<double>(geometric_mean(ratios)));
    }
    m.variants.push_back(std::move(v));
  }
  return m;
}

}  // namespace pebench
