// Named sweeps (`pebench run --preset NAME`). A preset sets axes for every
// variant plus overrides per variant glob; command-line axes still win.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/engine/sweep.h"
#include "runtime/physical_device.h"

namespace pebench {

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
};

const std::vector<Preset>& presets();
const Preset* find_preset(const std::string& name);

// The cases `planned` (expanded from `spec`, which came from `preset`) as
// they run on `device`: re-expanded with f32 in place of f16 where the preset
// asks for that and the device has no 16-bit storage; otherwise `planned`.
// `note` says what was changed (empty when nothing was).
std::vector<PlannedCase> plan_for_device(const Preset* preset, const SweepSpec& spec,
                                         const std::vector<PlannedCase>& planned, const PhysicalDeviceInfo& device,
                                         std::string& note);

}  // namespace pebench
