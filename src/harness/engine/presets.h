// Named sweeps (`pebench run --preset NAME`). A preset sets axes for every
// variant plus overrides per variant glob; command-line axes still win.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/engine/sweep.h"
#include "runtime/physical_device.h"

namespace pebench {

// One sweep of a preset made of several: its own variants, impls and axes.
struct PresetPart {
  std::vector<std::string> variants;  // globs
  std::vector<std::string> impls;     // empty: every impl of each variant
  AxisSet axes;
  std::vector<std::pair<std::string, AxisSet>> overrides;  // (variant glob, axes), as Preset's
};

struct Preset {
  std::string name;
  std::string description;
  std::vector<std::string> variants;  // globs; empty: every variant
  AxisSet axes;
  std::vector<std::pair<std::string, AxisSet>> overrides;  // (variant glob, axes)
  double min_time_s = 0.1;  // Google Benchmark min time per case unless --benchmark_min_time is given
  // f16 cases run in f32 on a device (or --emulate profile) without 16-bit
  // storage, instead of all coming out unsupported (unless --dtype is given).
  bool f32_without_16bit_storage = false;
  // > 0: that many Google Benchmark repetitions per case, each of min_time_s,
  // in random order across cases (--benchmark_enable_random_interleaving),
  // unless --benchmark_repetitions is given. Every case then has at least
  // this many samples, spread over the whole run, so load on the machine
  // falls on all cases alike (docs/compare-and-gate.md).
  int repetitions = 0;
  // Unrecorded seconds a case runs whenever the run switches to it
  // (DriverOptions::warmup_s) unless --warmup is given.
  double warmup_s = 0;
  // Non-empty: the preset is the union of these sweeps (variants, axes and
  // overrides above are then unused), so that each group of shapes sweeps
  // only the variants it is for instead of one cross product of all.
  std::vector<PresetPart> parts;
};

const std::vector<Preset>& presets();
const Preset* find_preset(const std::string& name);

// The cases the sweep names (expand_sweep); for a preset of several parts,
// the union of the parts' sweeps, each case once, in part order, with the
// command line's variants, impls and axes over every part (a part none of
// whose variants has a command-line key is left out; if every part is, the
// first one's error is thrown).
std::vector<PlannedCase> expand_preset_sweep(const SweepSpec& spec, const Preset* preset);

// The cases `planned` (expanded from `spec`, which came from `preset`) as
// they run on `device`: re-expanded with f32 in place of f16 where the preset
// asks for that and the device has no 16-bit storage; otherwise `planned`.
// `note` says what was changed (empty when nothing was).
std::vector<PlannedCase> plan_for_device(const Preset* preset, const SweepSpec& spec,
                                         const std::vector<PlannedCase>& planned, const PhysicalDeviceInfo& device,
                                         std::string& note);

}  // namespace pebench
