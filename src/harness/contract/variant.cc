#include "harness/contract/variant.h"

#include <stdexcept>

namespace pebench {

double io_bytes(const std::vector<TensorDesc>& tensors) {
  double bytes = 0;
  for (const auto& t : tensors) {
    if (t.role == TensorRole::kInput || t.role == TensorRole::kOutput) bytes += static_cast<double>(t.bytes());
  }
  return bytes;
}

Reference::Reference(const std::vector<TensorDesc>& tensors) {
  for (const auto& t : tensors) {
    if (t.role == TensorRole::kOutput) outputs_.push_back(Output{t, {}});
  }
}

double* Reference::row(const std::string& name, int64_t r) {
  for (auto& out : outputs_) {
    if (out.desc.name != name) continue;
    if (r < 0 || r >= out.desc.rows()) {
      throw std::out_of_range("reference row " + std::to_string(r) + " of " + name + " is out of range");
    }
    auto& v = out.rows[r];
    v.assign(static_cast<size_t>(out.desc.row_length()), 0.0);
    return v.data();
  }
  throw std::out_of_range("reference: no output named " + name);
}

}  // namespace pebench
