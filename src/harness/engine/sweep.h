// Sweep expansion: from the selection and the axes (command line, preset,
// defaults) to the list of cases, each with every parameter written out.
//
// Precedence per key: command line > preset override for the variant >
// preset > the parameter's default (or its derived default). `d_model`
// without an explicit value is every heads x dim product. A key given on the
// command line that no selected variant has is a UsageError; a preset key a
// variant lacks is ignored. Combinations a variant rejects become planned
// cases with `rejected` set (reported `skipped`), and the sweep goes on.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/contract/params.h"
#include "harness/contract/registry.h"

namespace pebench {

using AxisSet = std::map<std::string, std::vector<std::string>>;

// The most cases a sweep may hold unless --max-cases raises it: past it a
// sweep is refused (UsageError) with its count, before any case is built.
inline constexpr uint64_t kDefaultMaxCases = 100000;
// The largest value a shape parameter (batch, heads, kv_heads, seq, kv_seq,
// dim, d_model) may be given; below it the product of two fits in int64.
inline constexpr int64_t kMaxShapeValue = 2147483647;

struct SweepSpec {
  std::vector<std::string> variant_globs;  // empty: every variant
  std::vector<std::string> impls;          // empty: every impl of each variant
  AxisSet axes;                            // from the command line
  AxisSet preset_axes;                     // from the preset
  std::vector<std::pair<std::string, AxisSet>> preset_overrides;  // (variant glob, axes); later wins
  uint64_t max_cases = kDefaultMaxCases;  // --max-cases
};

struct PlannedCase {
  const Variant* variant = nullptr;
  Params params;
  std::string rejected;                // non-empty: why this combination is skipped
  std::vector<std::string> explicit_keys;  // keys set by the command line or the preset
};

// Every parameter of `v`: its own plus `dtype` and `impl`.
std::vector<ParamSpec> all_params(const Variant& v);

// Fills derived defaults and checks the combination (generic shape checks,
// then the variant's own); throws CaseRejected naming the offending value.
void resolve_params(const Variant& v, Params& p);

// Throws UsageError for an unknown variant glob, impl or parameter, a
// malformed value, a shape value below 1 or above kMaxShapeValue, or a
// sweep of more than spec.max_cases cases (counted before it is built: the
// product of each variant's axis lengths, summed over the variants).
std::vector<PlannedCase> expand_sweep(const Registry& registry, const SweepSpec& spec);

// "d0-rope.apply-default-f16-1a2b3c4d": stable, filesystem-safe, unique per
// device, variant and parameter set.
std::string case_id(uint32_t device, const Variant& v, const Params& p);

// Splits "a,b,c" into items; throws UsageError naming `what` for empty items.
std::vector<std::string> split_list(const std::string& text, const std::string& what);

}  // namespace pebench
