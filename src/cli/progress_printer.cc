#include "cli/progress_printer.h"

#include <fmt/format.h>

#include <cmath>

#include "analysis/format_units.h"
#include "cli/run_table.h"

namespace pebench {

std::string progress_line(size_t done, size_t total, const CaseResult& r) {
  std::string line = fmt::format("[{:>{}}/{}] d{} {} {} {} {}", done, std::to_string(total).size(), total, r.device,
                                 r.variant, r.impl, r.dtype, r.label);
  line += fmt::format("  {}", status_name(r.status));
  if (r.time) {
    line += fmt::format("  {}", format_ns(r.time->median));
    if (r.cost.bytes > 0) line += fmt::format("  {:.2f} GB/s", r.cost.bytes / r.time->median);
    if (r.cost.flops > 0) line += fmt::format("  {:.2f} GFLOP/s", r.cost.flops / r.time->median);
  }
  if (r.validation.ran && std::isfinite(r.validation.nmse)) line += fmt::format("  nmse {:.2g}", r.validation.nmse);
  if (r.tuning) line += "  tuned " + tuning_summary(*r.tuning);
  if (r.status == CaseStatus::kCompiled) line += fmt::format("  {} pipeline(s)", r.pipelines.size());
  if (r.status != CaseStatus::kOk && !r.reason.empty()) line += "  (" + r.reason + ")";
  return line;
}

void ProgressPrinter::case_finished(size_t done, size_t total, const CaseResult& result) {
  std::fprintf(out_, "%s\n", progress_line(done, total, result).c_str());
  std::fflush(out_);
}

}  // namespace pebench
