#include "harness/contract/registry.h"

#include <fnmatch.h>

#include <algorithm>
#include <stdexcept>

namespace pebench {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add(std::unique_ptr<Variant> v) {
  if (find(v->id())) throw std::logic_error("variant registered twice: " + v->id());
  variants_.push_back(std::move(v));
}

std::vector<const Variant*> Registry::variants() const {
  std::vector<const Variant*> out;
  for (const auto& v : variants_) out.push_back(v.get());
  std::sort(out.begin(), out.end(), [](const Variant* a, const Variant* b) { return a->id() < b->id(); });
  return out;
}

const Variant* Registry::find(const std::string& id) const {
  for (const auto& v : variants_) {
    if (v->id() == id) return v.get();
  }
  return nullptr;
}

std::vector<const Variant*> Registry::match(const std::string& glob) const {
  std::vector<const Variant*> out;
  for (const Variant* v : variants()) {
    if (fnmatch(glob.c_str(), v->id().c_str(), 0) == 0) out.push_back(v);
  }
  return out;
}

}  // namespace pebench
