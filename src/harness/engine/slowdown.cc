#include "harness/engine/slowdown.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/contract/errors.h"

namespace pebench {

InjectedSlowdown parse_slowdown(const std::string& text, const Registry& registry) {
  const auto bad = [&](const std::string& why) {
    return UsageError(fmt::format("--inject-slowdown '{}': {}", text, why));
  };
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) throw bad("expected VARIANT[/IMPL]=FACTOR");
  InjectedSlowdown s;
  const std::string target = text.substr(0, eq);
  const auto slash = target.find('/');
  s.variant = target.substr(0, slash);
  if (slash != std::string::npos) s.impl = target.substr(slash + 1);
  const Variant* v = registry.find(s.variant);
  if (!v) throw bad(fmt::format("unknown variant '{}' (pebench list shows them)", s.variant));
  const auto impls = v->impls();
  if (slash != std::string::npos && std::find(impls.begin(), impls.end(), s.impl) == impls.end()) {
    throw bad(fmt::format("{} has no impl '{}' ({})", s.variant, s.impl, fmt::join(impls, ", ")));
  }
  const std::string number = text.substr(eq + 1);
  size_t used = 0;
  try {
    s.factor = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != number.size() || !(s.factor > 1 && s.factor <= kMaxInjectedSlowdown)) {
    throw bad(fmt::format("FACTOR '{}' must be a number above 1 and at most {}", number, kMaxInjectedSlowdown));
  }
  return s;
}

nlohmann::json slowdowns_json(const std::vector<InjectedSlowdown>& specs) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& s : specs) {
    j.push_back({{"variant", s.variant},
                 {"impl", s.impl.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.impl)},
                 {"factor", s.factor}});
  }
  return j;
}

double slowdown_factor(const std::vector<InjectedSlowdown>& specs, const std::string& variant,
                       const std::string& impl) {
  double factor = 1;
  for (const auto& s : specs) {
    if (s.variant == variant && (s.impl.empty() || s.impl == impl)) factor = s.factor;
  }
  return factor;
}

SlowdownPasses slowdown_passes(double factor) {
  SlowdownPasses best;
  double best_error = HUGE_VAL;
  for (int divisor = 1; divisor <= kMaxSlowdownDivisor; ++divisor) {
    const int passes = static_cast<int>(std::lround(factor * divisor));
    const double error = std::abs(static_cast<double>(passes) / divisor - factor);
    if (error < best_error - 1e-12) {
      best = {passes, divisor};
      best_error = error;
    }
  }
  return best;
}

void record_passes(const Case& c, Recorder& rec, int passes) {
  for (int i = 0; i < passes; ++i) {
    if (i > 0) rec.barrier();  // a pass must not overlap the one before it
    c.record(rec);
  }
}

}  // namespace pebench
