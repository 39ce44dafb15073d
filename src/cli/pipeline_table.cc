#include "cli/pipeline_table.h"

#include <fmt/format.h>

#include "analysis/pipeline_stats.h"

namespace pebench {

TextTable pipeline_table(const std::vector<CaseResult>& results) {
  std::vector<std::string> header = {"dev", "variant", "impl", "dtype", "params", "status", "shader", "local size"};
  const auto& columns = key_stat_columns();
  for (const auto& c : columns) header.push_back(c.title);
  TextTable table(header);
  for (size_t c = 8; c < header.size(); ++c) table.align_right(c);
  for (const auto& r : results) {
    std::vector<std::string> lead = {fmt::format("d{}", r.device), r.variant, r.impl, r.dtype, r.label,
                                     status_name(r.status)};
    if (r.pipelines.empty()) {
      lead.resize(header.size(), "-");
      lead[6] = r.reason.empty() ? "-" : r.reason;
      table.add_row(lead);
      continue;
    }
    for (const auto& p : r.pipelines) {
      std::vector<std::string> row = lead;
      row.push_back(p.shader);
      row.push_back(fmt::format("{}x{}x{}", p.local_size[0], p.local_size[1], p.local_size[2]));
      for (const auto& c : columns) {
        const auto v = find_stat(p.stats, c);
        row.push_back(v ? fmt::format("{:g}", *v) : "-");
      }
      table.add_row(row);
    }
  }
  return table;
}

}  // namespace pebench
