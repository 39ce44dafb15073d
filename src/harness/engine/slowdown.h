// Test-only fault injection: `pebench run --inject-slowdown VARIANT[/IMPL]=FACTOR`
// makes that variant's timed GPU work FACTOR times longer, so that a
// regression gate can be shown to catch a slowdown of known size on the
// machine it guards (scripts/ci-gate.sh, docs/compare-and-gate.md).
//
// The work really runs: FACTOR is written as a fraction PASSES/DIVISOR
// (1.5 = 3/2, 3 = 3/1) and the timed submission holds the case's dispatches
// PASSES times over (a barrier between passes), so the measurement is of
// real repeated work under whatever load the machine has. With a divisor,
// each sample (GPU and CPU time) becomes F + (measured - F) / DIVISOR, where
// F is what an empty timed submission costs (measured at setup): the
// submission's fixed cost (submit, fence, on lavapipe a good part of a small
// kernel's CPU time) stays as it is, as it would under a kernel really
// FACTOR times slower, and only the passes are scaled. A fraction of a pass
// cannot be recorded instead: most kernels are grid-stride loops, so fewer
// workgroups do the same work, and on lavapipe a dispatch's fixed cost is
// about a small kernel's whole time.
// Repeated passes suit kernels whose outputs are a function of their inputs
// (every kernel whose output is not read back in place). Validation runs on
// the unslowed recording. A report made with an injected slowdown records
// it, and compare refuses it as BASE.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/contract/registry.h"
#include "harness/contract/variant.h"

namespace pebench {

struct InjectedSlowdown {
  std::string variant;  // a variant id
  std::string impl;     // empty: every impl
  double factor = 1;    // > 1
};

// The most a run may be slowed: beyond this a case only wastes CI time.
inline constexpr double kMaxInjectedSlowdown = 100;

// Parses "VARIANT[/IMPL]=FACTOR". Throws UsageError naming `text` when it is
// malformed, the variant or impl is unknown, or FACTOR is not a number in
// (1, kMaxInjectedSlowdown].
InjectedSlowdown parse_slowdown(const std::string& text, const Registry& registry);

// The report's record of a run's injections: [{"variant", "impl" (null: all), "factor"}].
nlohmann::json slowdowns_json(const std::vector<InjectedSlowdown>& specs);

// The factor for a case (1 when none applies; the last matching spec wins).
double slowdown_factor(const std::vector<InjectedSlowdown>& specs, const std::string& variant, const std::string& impl);

// FACTOR as passes / divisor, the divisor at most kMaxSlowdownDivisor, the
// nearest such fraction (the smallest divisor among equals).
struct SlowdownPasses {
  int passes = 1, divisor = 1;
};
inline constexpr int kMaxSlowdownDivisor = 10;
SlowdownPasses slowdown_passes(double factor);

// Records `c` into `rec` `passes` times, with a barrier between passes.
void record_passes(const Case& c, Recorder& rec, int passes);

}  // namespace pebench
