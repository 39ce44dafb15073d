// The identity of a case across reports: variant, impl, dtype and every
// parameter, written canonically so that key order, 4 against 4.0, and
// reports that repeat impl/dtype inside params all give one key. The device
// is matched separately (see comparison.h); the driver version never is, so a
// baseline survives a driver update.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace pebench {

// One parameter value as canonical text: integral numbers without a
// fraction, other numbers with round-trip precision, strings quoted.
std::string canonical_value(const nlohmann::json& v);

// "variant|impl|dtype|k1=v1,k2=v2,..." with keys sorted.
std::string case_key(const std::string& variant, const std::string& impl, const std::string& dtype,
                     const nlohmann::json& params);

// case_key() with the impl left out: the same case run by another
// implementation (a peer report, tools/peers/) has the same key.
std::string case_key_without_impl(const std::string& variant, const std::string& dtype, const nlohmann::json& params);

// "k=v k=v" of every parameter but impl and dtype, for a case without a label.
std::string params_label(const nlohmann::json& params);

}  // namespace pebench
