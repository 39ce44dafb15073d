// Test-only fault injection: `pebench run --inject-slowdown VARIANT[/IMPL]=FACTOR`
// makes that variant's timed GPU work FACTOR times longer, so that a
// regression gate can be shown to catch a slowdown of known size on the
// machine it guards (scripts/ci-gate.sh, docs/compare-and-gate.md).
//
// The work really runs: the timed submission holds the case's dispatches
// floor(FACTOR) times, then once more with every dispatch's workgroup count
// cut to the fractional part (along its largest dimension), so the timestamps
// measure FACTOR times the work under whatever load the machine has. A
// workgroup count is an integer, so the realised factor (total workgroups
// over one pass's) can differ a little from FACTOR; the report records both.
// Validation runs on the unslowed recording. A report made with an injected
// slowdown records it and is refused as a comparison's BASE.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "harness/registry.h"
#include "harness/variant.h"

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
double slowdown_factor(const std::vector<InjectedSlowdown>& specs, const std::string& variant,
                       const std::string& impl);

// Records `c` into `rec` so that the recorded work is `factor` times one
// pass's, with a barrier between passes. Returns the realised factor: the
// workgroups recorded over one pass's.
double record_slowed(const Case& c, Recorder& rec, double factor);

}  // namespace pebench
