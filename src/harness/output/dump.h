// Dumps for external verification (interface.md, "Dumps"): DIR/<case-id>/
// with meta.json and one NAME.npy per spec tensor (inputs and outputs), the
// exact values the GPU read and wrote.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "harness/contract/params.h"
#include "harness/contract/tensor.h"

namespace pebench {

// Writes the case's folder; returns its path.
std::string dump_case(const std::string& dir, const std::string& case_id, const std::string& variant,
                      const Params& params, const TensorMap& tensors);

}  // namespace pebench
