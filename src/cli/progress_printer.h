// The progress lines of `pebench run`: one line per finished case on a
// terminal stream (stderr), "[ 3/12] d0 rope.apply naive f32 seq=128 ...  ok
// 86.76 us  1.23 GB/s".
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include "harness/engine/progress.h"
#include "harness/output/result.h"

namespace pebench {

// The one-line progress report of a finished case ("[3/12] d0 rope.apply ...").
std::string progress_line(size_t done, size_t total, const CaseResult& r);

// A ProgressSink that prints progress_line and flushes, so the lines show
// as cases finish.
class ProgressPrinter : public ProgressSink {
 public:
  explicit ProgressPrinter(FILE* out) : out_(out) {}
  void case_finished(size_t done, size_t total, const CaseResult& result) override;

 private:
  FILE* out_;
};

}  // namespace pebench
