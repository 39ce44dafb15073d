#include "harness/contract/params.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "analysis/enum_names.h"
#include "harness/contract/errors.h"
#include "io/checked_number.h"

namespace pebench {

namespace {

constexpr std::array<const char*, 4> kParamTypeNames = {"int", "float", "bool", "enum"};
static_assert(kParamTypeNames.size() == static_cast<size_t>(ParamType::kEnum) + 1, "one name per ParamType");

}  // namespace

const char* param_type_name(ParamType t) { return enum_name(t, kParamTypeNames, "?"); }

ParamSpec int_param(std::string key, int64_t def, std::string help) {
  return ParamSpec{std::move(key), ParamType::kInt, ParamValue{def}, std::move(help), {}, {}};
}
ParamSpec float_param(std::string key, double def, std::string help) {
  return ParamSpec{std::move(key), ParamType::kFloat, ParamValue{def}, std::move(help), {}, {}};
}
ParamSpec bool_param(std::string key, bool def, std::string help) {
  return ParamSpec{std::move(key), ParamType::kBool, ParamValue{def}, std::move(help), {}, {}};
}
ParamSpec enum_param(std::string key, std::string def, std::vector<std::string> choices, std::string help) {
  return ParamSpec{std::move(key), ParamType::kEnum, ParamValue{std::move(def)}, std::move(help), std::move(choices),
                   {}};
}
ParamSpec derived_param(std::string key, ParamType type, std::string derived, std::string help) {
  return ParamSpec{std::move(key), type, std::nullopt, std::move(help), {}, std::move(derived)};
}

namespace shape {
ParamSpec batch(int64_t def) { return int_param("batch", def, "batch size B"); }
ParamSpec heads(int64_t def) { return int_param("heads", def, "query heads H"); }
ParamSpec kv_heads() { return derived_param("kv_heads", ParamType::kInt, "heads", "key/value heads Hkv (H % Hkv == 0)"); }
ParamSpec seq(int64_t def) { return int_param("seq", def, "query length N"); }
ParamSpec kv_seq() { return derived_param("kv_seq", ParamType::kInt, "seq", "key length M (M >= N)"); }
ParamSpec dim(int64_t def) { return int_param("dim", def, "head dim D"); }
ParamSpec d_model() { return derived_param("d_model", ParamType::kInt, "heads * dim", "model dim d"); }
ParamSpec causal(bool def) { return bool_param("causal", def, "causal mask: key j visible to query i iff j <= i'"); }
}  // namespace shape

ParamValue parse_param_value(const ParamSpec& spec, const std::string& text) {
  auto bad = [&](const char* what) {
    return UsageError(fmt::format("invalid value '{}' for parameter {}: {}", text, spec.key, what));
  };
  switch (spec.type) {
    case ParamType::kInt: {
      const auto v = parse_whole(text, INT64_MIN, INT64_MAX);
      if (!v) throw bad("expected an integer");
      return ParamValue{*v};
    }
    case ParamType::kFloat: {
      const auto v = parse_real(text, -DBL_MAX, DBL_MAX);
      if (!v) throw bad("expected a finite number");
      return ParamValue{*v};
    }
    case ParamType::kBool: {
      if (text == "1" || text == "true" || text == "yes" || text == "on") return ParamValue{true};
      if (text == "0" || text == "false" || text == "no" || text == "off") return ParamValue{false};
      throw bad("expected 0/1 or true/false");
    }
    case ParamType::kEnum: {
      // No choices: free text the variant's resolve() checks (mrope_section's "s0:s1:s2").
      if (spec.choices.empty()) return ParamValue{text};
      for (const auto& c : spec.choices) {
        if (c == text) return ParamValue{text};
      }
      std::string all;
      for (const auto& c : spec.choices) all += (all.empty() ? "" : ", ") + c;
      throw UsageError(fmt::format("invalid value '{}' for parameter {}: expected one of {}", text, spec.key, all));
    }
  }
  throw bad("unknown type");
}

std::string param_to_string(const ParamValue& v) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return fmt::format("{}", d); }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(Visitor{}, v);
}

const ParamValue& Params::get(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw std::out_of_range("parameter '" + key + "' is not set");
  return it->second;
}

int64_t Params::i(const std::string& key) const {
  const ParamValue& v = get(key);
  if (auto p = std::get_if<int64_t>(&v)) return *p;
  if (auto p = std::get_if<bool>(&v)) return *p ? 1 : 0;
  throw std::invalid_argument("parameter '" + key + "' is not an integer");
}

double Params::f(const std::string& key) const {
  const ParamValue& v = get(key);
  if (auto p = std::get_if<double>(&v)) return *p;
  if (auto p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
  throw std::invalid_argument("parameter '" + key + "' is not a number");
}

bool Params::b(const std::string& key) const {
  const ParamValue& v = get(key);
  if (auto p = std::get_if<bool>(&v)) return *p;
  if (auto p = std::get_if<int64_t>(&v)) return *p != 0;
  throw std::invalid_argument("parameter '" + key + "' is not a boolean");
}

const std::string& Params::s(const std::string& key) const {
  const ParamValue& v = get(key);
  if (auto p = std::get_if<std::string>(&v)) return *p;
  throw std::invalid_argument("parameter '" + key + "' is not a string");
}

DType Params::dtype() const {
  auto t = parse_dtype(s("dtype"));
  if (!t) throw std::invalid_argument("parameter 'dtype' is not a dtype");
  return *t;
}

std::string Params::canonical() const {
  std::string out;
  for (const auto& [k, v] : values_) {
    if (!out.empty()) out += ',';
    out += k + "=" + param_to_string(v);
  }
  return out;
}

}  // namespace pebench
