#include "harness/contract/tensor.h"

#include <array>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "analysis/enum_names.h"

namespace pebench {

const TensorPlacement& TensorLayout::at(const std::string& tensor) const {
  auto it = tensors.find(tensor);
  if (it == tensors.end()) throw std::logic_error("no tensor named " + tensor);
  return it->second;
}

TensorLayout tensor_layout(const std::vector<TensorDesc>& tensors) {
  TensorLayout layout;
  for (const auto& t : tensors) {
    TensorPlacement& p = layout.tensors[t.name];
    p.buffer = t.pack.empty() ? t.name : t.pack;
    p.bytes = t.bytes();
    size_t& end = layout.buffers[p.buffer];
    p.offset = (end + kPackAlignment - 1) / kPackAlignment * kPackAlignment;
    end = p.offset + p.span();
  }
  for (const auto& t : tensors) {
    if (!t.pack.empty() && layout.tensors.count(t.pack)) {
      throw std::logic_error("pack " + t.pack + " is named like a tensor");
    }
  }
  return layout;
}

namespace {

constexpr std::array<const char*, 4> kRoleNames = {"input", "output", "constant", "scratch"};
static_assert(kRoleNames.size() == static_cast<size_t>(TensorRole::kScratch) + 1, "one name per TensorRole");

}  // namespace

const char* role_name(TensorRole r) { return enum_name(r, kRoleNames, "?"); }

int64_t TensorDesc::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool shape_is_valid(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0) return false;
    if (n > std::numeric_limits<int64_t>::max() / d) return false;
    n *= d;
  }
  return true;
}

HostTensor::HostTensor(TensorDesc desc) : desc_(std::move(desc)) {
  if (!shape_is_valid(desc_.shape)) throw std::invalid_argument("tensor " + desc_.name + ": invalid shape");
  numel_ = desc_.numel();
  bytes_.assign(desc_.bytes(), 0);
}

double HostTensor::get(int64_t i) const {
  const uint8_t* p = bytes_.data();
  switch (desc_.dtype) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, p + i * 4, 4);
      return f;
    }
    case DType::kF16: {
      uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      return half_to_float(h);
    }
    case DType::kI32: {
      int32_t v;
      std::memcpy(&v, p + i * 4, 4);
      return v;
    }
  }
  return 0;
}

void HostTensor::set(int64_t i, double v) {
  uint8_t* p = bytes_.data();
  switch (desc_.dtype) {
    case DType::kF32: {
      const float f = static_cast<float>(v);
      std::memcpy(p + i * 4, &f, 4);
      break;
    }
    case DType::kF16: {
      const uint16_t h = float_to_half(static_cast<float>(v));
      std::memcpy(p + i * 2, &h, 2);
      break;
    }
    case DType::kI32: {
      const int32_t x = static_cast<int32_t>(v);
      std::memcpy(p + i * 4, &x, 4);
      break;
    }
  }
}

std::vector<double> HostTensor::to_f64() const {
  std::vector<double> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = get(i);
  return out;
}

void HostTensor::fill_uniform(Rng& rng, double lo, double hi) {
  for (int64_t i = 0; i < numel_; ++i) set(i, rng.uniform(lo, hi));
}

void HostTensor::fill_normal(Rng& rng, double stddev) {
  for (int64_t i = 0; i < numel_; ++i) set(i, stddev * rng.normal());
}

}  // namespace pebench
