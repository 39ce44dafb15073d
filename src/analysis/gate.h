// The regression gate: what makes `pebench compare --gate` exit 1. One
// reason per line, each naming the case:
//   slower   slower by more than the threshold and significant (p < alpha);
//            or, with a variant threshold, a variant/impl whose cases' median
//            ratio is past it (timing_rule.h)
//   samples  timed on both sides with fewer samples than --min-samples
//   broke    ok in BASE, failed validation or errored in NEW
//   lost     ok in BASE, skipped or unsupported in NEW
//   missing  in BASE, absent from NEW
//   device   BASE and NEW ran on different devices (not a regression test)
//   host     a CPU device ran on different host CPUs in BASE and NEW (its
//            times compare the CPUs); with CrossHost::kCorrectness no
//            reason, but a note, and no timing reason for that pair
//   spills   a pipeline that spilled no registers in BASE spills in NEW
//            (driver statistics, e.g. --compile-only on RADV's null device)
// The correctness reasons do not depend on the threshold: a loose timing
// threshold on a noisy runner still gates correctness. Given `confirm` (BASE
// against a second run of NEW's command), a timing reason (slower) counts
// only when that run shows it too: a regression repeats, most noise does
// not. The others go to `unconfirmed`.
#pragma once

#include <string>
#include <vector>

#include "analysis/comparison.h"
#include "analysis/report_file.h"

namespace pebench {

struct GateResult {
  std::vector<std::string> reasons;
  std::vector<std::string> unconfirmed;  // timing reasons the confirming run did not repeat
  std::vector<std::string> notes;        // what was not gated, and why
  bool passed() const { return reasons.empty(); }
};

GateResult evaluate_gate(const std::vector<ReportFile>& reports, const std::vector<PairComparison>& pairs,
                         const CompareOptions& options, const PairComparison* confirm = nullptr);

}  // namespace pebench
