// Named sweeps (`pebench run --preset NAME`). A preset sets axes for every
// variant plus overrides per variant glob; command-line axes still win.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/sweep.h"

namespace pebench {

struct Preset {
  std::string name;
  std::string description;
  std::vector<std::string> variants;  // globs; empty: every variant
  AxisSet axes;
  std::vector<std::pair<std::string, AxisSet>> overrides;  // (variant glob, axes)
  double min_time_s = 0.1;  // Google Benchmark min time per case unless --benchmark_min_time is given
};

const std::vector<Preset>& presets();
const Preset* find_preset(const std::string& name);

}  // namespace pebench
