// Parameters: what a variant declares (ParamSpec) and what one case is given
// (Params). Key names are the contract of encodings.md section 5.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "harness/contract/dtype.h"

namespace pebench {

using ParamValue = std::variant<bool, int64_t, double, std::string>;

enum class ParamType { kInt, kFloat, kBool, kEnum };
const char* param_type_name(ParamType t);

struct ParamSpec {
  std::string key;
  ParamType type = ParamType::kInt;
  std::optional<ParamValue> default_value;  // empty: derived by the variant (see `derived`)
  std::string help;
  std::vector<std::string> choices;  // kEnum only
  std::string derived;               // how an empty default is derived, e.g. "offset + seq"
};

ParamSpec int_param(std::string key, int64_t def, std::string help);
ParamSpec float_param(std::string key, double def, std::string help);
ParamSpec bool_param(std::string key, bool def, std::string help);
ParamSpec enum_param(std::string key, std::string def, std::vector<std::string> choices, std::string help);
ParamSpec derived_param(std::string key, ParamType type, std::string derived, std::string help);

// Shape keys shared by all variants (encodings.md section 0). Defaults are
// the harness's; a variant may pass its own.
namespace shape {
ParamSpec batch(int64_t def = 1);
ParamSpec heads(int64_t def = 8);
ParamSpec kv_heads();  // default: heads
ParamSpec seq(int64_t def = 128);
ParamSpec kv_seq();    // default: seq
ParamSpec dim(int64_t def = 64);
ParamSpec d_model();   // default: heads * dim
ParamSpec causal(bool def = false);
}  // namespace shape

// Parses `text` as a value of `spec`'s type; throws UsageError naming the
// key and the offending text.
ParamValue parse_param_value(const ParamSpec& spec, const std::string& text);
std::string param_to_string(const ParamValue& v);

class Params {
 public:
  void set(const std::string& key, ParamValue v) { values_[key] = std::move(v); }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  const ParamValue& get(const std::string& key) const;  // throws std::out_of_range naming the key

  int64_t i(const std::string& key) const;
  double f(const std::string& key) const;  // ints convert
  bool b(const std::string& key) const;
  const std::string& s(const std::string& key) const;

  DType dtype() const;                                  // the storage dtype ("dtype")
  const std::string& impl() const { return s("impl"); }

  const std::map<std::string, ParamValue>& values() const { return values_; }
  // "k1=v1,k2=v2,..." in key order: equal params give equal strings.
  std::string canonical() const;

 private:
  std::map<std::string, ParamValue> values_;
};

}  // namespace pebench
