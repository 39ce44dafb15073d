// `pebench compare` for people: an aligned text table (terminal) or
// markdown (issues, PRs), built once as a TextDocument.
#pragma once

#include <string>
#include <vector>

#include "analysis/compare.h"
#include "analysis/text_document.h"

namespace pebench {

// One row per report, under `roles` ("BASE", "NEW", ...): what ran where,
// with which build.
TextTable reports_table(const std::vector<ReportFile>& reports, const std::vector<std::string>& roles);

TextDocument compare_document(const std::vector<ReportFile>& reports, const CompareResult& result);

inline std::string render_compare_text(const std::vector<ReportFile>& reports, const CompareResult& result) {
  return compare_document(reports, result).text();
}
inline std::string render_compare_markdown(const std::vector<ReportFile>& reports, const CompareResult& result) {
  return compare_document(reports, result).markdown();
}

}  // namespace pebench
