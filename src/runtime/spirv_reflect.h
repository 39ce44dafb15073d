// SpirvReflection: what a compute shader's own SPIR-V says about its
// interface to the host: the specialization constants it declares (id, name
// where the module keeps names, default), its workgroup size, literal or
// taken from spec constants (local_size_x_id ...), and which of its set-0
// bindings are storage texel buffers (`imageBuffer`) rather than storage
// buffers, in which format, so that the pipeline's layout follows the
// shader. The pipeline checks the host's spec constants against it and
// reports local sizes from it, so a host/shader mismatch is a clear error
// instead of a wrong answer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pebench {

struct SpecConstantInfo {
  std::string name;  // empty where the module carries no OpName for it
  uint32_t default_value = 0;
  bool is_bool = false;
};

// SPIR-V's ImageFormat enumerants that a storage texel buffer may use here.
inline constexpr uint32_t kSpirvImageFormatRgba32f = 1;
inline constexpr uint32_t kSpirvImageFormatRgba16f = 2;
inline constexpr uint32_t kSpirvImageFormatR32f = 3;

struct SpirvReflection {
  std::map<uint32_t, SpecConstantInfo> spec_constants;  // by constant_id
  // Set-0 bindings declared as storage texel buffers: binding -> ImageFormat.
  std::map<uint32_t, uint32_t> texel_buffers;
  // Per dimension: a literal size, or the constant_id whose value it takes.
  struct Dim {
    uint32_t literal = 1;
    std::optional<uint32_t> spec_id;
  };
  std::array<Dim, 3> local_size;

  // The workgroup size with `spec` (constant_id i = spec[i]) applied.
  std::array<uint32_t, 3> local_size_with(const std::vector<uint32_t>& spec) const;
  // Whether the module declares constant `id` (as a constant or a local size).
  bool declares_spec(uint32_t id) const;
  // The name of constant `id`: its OpName, else "local_size_x" (y, z) when it
  // sizes the workgroup, else "constant_<id>" (the optimizer removed it or
  // its name).
  std::string spec_name(uint32_t id) const;
};

// Parses `words`; returns nullopt when they are not a SPIR-V module.
std::optional<SpirvReflection> reflect_spirv(const uint32_t* words, size_t word_count);

}  // namespace pebench
