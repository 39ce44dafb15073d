// ProgressSink: where the engine reports each case as it finishes. The
// engine says what finished; how a terminal shows it is the CLI's business
// (cli/progress_printer.h), so harness/ formats no terminal lines.
#pragma once

#include <cstddef>

#include "harness/output/result.h"

namespace pebench {

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // The `done`-th of `total` cases has finished; `result` is final (it is in
  // the report, or about to be).
  virtual void case_finished(size_t done, size_t total, const CaseResult& result) = 0;
};

}  // namespace pebench
