// Tensors as the harness sees them: a description (name, role, dtype, shape)
// and a host copy holding the exact bytes the GPU reads or wrote.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/contract/dtype.h"
#include "harness/contract/rng.h"

namespace pebench {

enum class TensorRole {
  kInput,     // generated on the host, uploaded, dumped (a spec tensor)
  kOutput,    // written by the kernel, read back, validated and dumped (a spec tensor)
  kConstant,  // derived on the host from the parameters (e.g. frequency tables), uploaded, not dumped
  kScratch,   // device-only intermediate (e.g. the naive score matrix), never read back
};

const char* role_name(TensorRole r);

struct TensorDesc {
  std::string name;
  TensorRole role = TensorRole::kInput;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::string shape_doc;  // symbolic shape for `pebench list`, e.g. "[B,N,d]"
  // Tensors with the same non-empty pack share one device buffer, so that a
  // kernel can reach them all through one binding where a device allows few
  // (Android's baseline: 4 storage buffers per stage). See tensor_layout().
  std::string pack;

  int64_t numel() const;
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_bytes(dtype); }
  // Rows are all dims but the last; a row is `row_length()` contiguous elements.
  int64_t row_length() const { return shape.empty() ? 1 : shape.back(); }
  int64_t rows() const { return row_length() ? numel() / row_length() : 0; }
};

// Offsets inside a pack are multiples of this: Vulkan's largest
// minStorageBufferOffsetAlignment, so any member can also be bound alone, and
// a multiple of every element and vec4 size, so offsets are whole elements.
constexpr size_t kPackAlignment = 256;

// Where the harness puts each tensor on the device: a buffer of its own
// (named like the tensor) or its pack's, members in declaration order.
struct TensorPlacement {
  std::string buffer;
  size_t offset = 0;  // bytes
  size_t bytes = 0;
  // The bytes it occupies there: at least 4 and a multiple of 4 (Vulkan
  // forbids empty buffers and fills whole words), what binding it alone and
  // its output fill cover.
  size_t span() const { return (std::max<size_t>(bytes, 4) + 3) / 4 * 4; }
};
struct TensorLayout {
  std::map<std::string, TensorPlacement> tensors;
  std::map<std::string, size_t> buffers;  // bytes of every device buffer
  const TensorPlacement& at(const std::string& tensor) const;
};
// Throws std::logic_error when a pack is named like a tensor.
TensorLayout tensor_layout(const std::vector<TensorDesc>& tensors);

class HostTensor {
 public:
  HostTensor() = default;
  explicit HostTensor(TensorDesc desc);

  const TensorDesc& desc() const { return desc_; }
  int64_t numel() const { return numel_; }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }
  size_t bytes() const { return bytes_.size(); }

  // The exact stored value of element i.
  double get(int64_t i) const;
  // Stores v rounded to the tensor's dtype.
  void set(int64_t i, double v);
  // All elements as doubles (the values the GPU reads), for references.
  std::vector<double> to_f64() const;

  void fill_uniform(Rng& rng, double lo, double hi);
  void fill_normal(Rng& rng, double stddev);

 private:
  TensorDesc desc_;
  int64_t numel_ = 0;
  std::vector<uint8_t> bytes_;
};

using TensorMap = std::map<std::string, HostTensor>;

// Checks that every dim is positive and the element count fits in int64.
bool shape_is_valid(const std::vector<int64_t>& shape);

}  // namespace pebench
