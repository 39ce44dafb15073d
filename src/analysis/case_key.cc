#include "analysis/case_key.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace pebench {

std::string canonical_value(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::number_integer:
      return std::to_string(v.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return std::to_string(v.get<uint64_t>());
    case nlohmann::json::value_t::number_float: {
      const double d = v.get<double>();
      // 4.0 and 4 are the same parameter value; 2^53 bounds exact integers.
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9007199254740992.0) {
        return std::to_string(static_cast<int64_t>(d));
      }
      return fmt::format("{:.17g}", d);
    }
    case nlohmann::json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + canonical_value(v[i]);
      return out + "]";
    }
    case nlohmann::json::value_t::object: {
      std::map<std::string, std::string> sorted;
      for (const auto& [k, x] : v.items()) sorted[k] = canonical_value(x);
      std::string out = "{";
      for (const auto& [k, x] : sorted) out += (out.size() > 1 ? "," : "") + k + "=" + x;
      return out + "}";
    }
    default:
      return v.dump();  // strings quoted, booleans, null
  }
}

std::string case_key(const std::string& variant, const std::string& impl, const std::string& dtype,
                     const nlohmann::json& params) {
  std::map<std::string, std::string> sorted;
  for (const auto& [k, x] : params.items()) {
    if (k == "impl" || k == "dtype") continue;  // already in the key; some writers repeat them
    sorted[k] = canonical_value(x);
  }
  std::string out = variant + "|" + impl + "|" + dtype + "|";
  bool first = true;
  for (const auto& [k, x] : sorted) {
    out += (first ? "" : ",") + k + "=" + x;
    first = false;
  }
  return out;
}

std::string case_key_without_impl(const std::string& variant, const std::string& dtype,
                                 const nlohmann::json& params) {
  return case_key(variant, "", dtype, params);
}

std::string params_label(const nlohmann::json& params) {
  std::string out;
  for (const auto& [k, x] : params.items()) {
    if (k == "impl" || k == "dtype") continue;
    std::string value = x.is_string() ? x.get<std::string>() : canonical_value(x);
    out += (out.empty() ? "" : " ") + k + "=" + value;
  }
  return out;
}

}  // namespace pebench
