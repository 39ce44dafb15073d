// The variant registry. Suite files register their variants at static
// initialisation with PEBENCH_REGISTER_VARIANT(Type); the suites are an
// OBJECT library, so every registration is linked in.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/contract/variant.h"

namespace pebench {

class Registry {
 public:
  static Registry& instance();
  void add(std::unique_ptr<Variant> v);
  // All variants, sorted by id.
  std::vector<const Variant*> variants() const;
  const Variant* find(const std::string& id) const;
  // Variants whose id matches the shell-style glob (fnmatch).
  std::vector<const Variant*> match(const std::string& glob) const;

 private:
  std::vector<std::unique_ptr<Variant>> variants_;
};

template <typename T>
struct VariantRegistrar {
  VariantRegistrar() { Registry::instance().add(std::make_unique<T>()); }
};

}  // namespace pebench

#define PEBENCH_REGISTER_VARIANT(Type) \
  static const ::pebench::VariantRegistrar<Type> pebench_registrar_##Type
