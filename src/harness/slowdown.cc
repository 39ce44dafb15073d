#include "harness/slowdown.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/errors.h"

namespace pebench {
namespace {

double workgroups(const Dispatch& d) {
  return static_cast<double>(d.groups[0]) * static_cast<double>(d.groups[1]) * static_cast<double>(d.groups[2]);
}

// Forwards everything to `inner`, counting workgroups; with `fraction` < 1
// every dispatch keeps only that fraction of its workgroups (at least one),
// cut along its largest dimension. Kernels index their work by workgroup id,
// so a cut dispatch does a subset of the same work.
class CountingRecorder : public Recorder {
 public:
  CountingRecorder(Recorder& inner, double fraction) : inner_(inner), fraction_(fraction) {}
  const PhysicalDeviceInfo& device() const override { return inner_.device(); }
  const DeviceFeatures& enabled() const override { return inner_.enabled(); }
  const LaunchPlanner& launch() const override { return inner_.launch(); }
  void barrier() override { inner_.barrier(); }
  void dispatch(const Dispatch& d) override {
    if (fraction_ >= 1) {
      groups_ += workgroups(d);
      inner_.dispatch(d);
      return;
    }
    Dispatch cut = d;
    auto& largest = *std::max_element(cut.groups.begin(), cut.groups.end());
    largest = std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(largest * fraction_)));
    groups_ += workgroups(cut);
    inner_.dispatch(cut);
  }
  double groups() const { return groups_; }

 private:
  Recorder& inner_;
  double fraction_;
  double groups_ = 0;
};

}  // namespace

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
    j.push_back({{"variant", s.variant}, {"impl", s.impl.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.impl)},
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

double record_slowed(const Case& c, Recorder& rec, double factor) {
  CountingRecorder pass(rec, 1);
  c.record(pass);
  const double one_pass = pass.groups();
  const auto whole = static_cast<int>(std::floor(factor));
  for (int i = 1; i < whole; ++i) {
    rec.barrier();  // a repeat must not overlap the pass before it
    c.record(pass);
  }
  const double rest = factor - whole;
  double total = pass.groups();
  if (rest > 0) {
    rec.barrier();
    CountingRecorder part(rec, rest);
    c.record(part);
    total += part.groups();
  }
  return one_pass > 0 ? total / one_pass : 1;
}

}  // namespace pebench
