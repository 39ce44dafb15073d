#include "runtime/spirv_reflect.h"

#include <fmt/format.h>

namespace pebench {
namespace {

// Opcodes and enumerants of the SPIR-V 1.x specification that matter here.
constexpr uint32_t kMagic = 0x07230203u;
constexpr uint32_t kOpName = 5;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kOpTypeImage = 25;
constexpr uint32_t kOpTypePointer = 32;
constexpr uint32_t kOpVariable = 59;
constexpr uint32_t kOpConstant = 43;
constexpr uint32_t kOpSpecConstantTrue = 48;
constexpr uint32_t kOpSpecConstantFalse = 49;
constexpr uint32_t kOpSpecConstant = 50;
constexpr uint32_t kOpSpecConstantComposite = 51;
constexpr uint32_t kOpDecorate = 71;
constexpr uint32_t kOpExecutionModeId = 331;
constexpr uint32_t kDecorationSpecId = 1;
constexpr uint32_t kDecorationBuiltIn = 11;
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;
constexpr uint32_t kDimBuffer = 5;
constexpr uint32_t kSampledStorage = 2;  // OpTypeImage's Sampled operand: a storage image
constexpr uint32_t kBuiltInWorkgroupSize = 25;
constexpr uint32_t kModeLocalSize = 17;
constexpr uint32_t kModeLocalSizeId = 38;

// A literal string operand: nul-terminated UTF-8 packed 4 bytes a word.
std::string literal_string(const uint32_t* w, size_t count) {
  std::string s;
  for (size_t i = 0; i < count; ++i) {
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((w[i] >> (8 * b)) & 0xff);
      if (c == '\0') return s;
      s.push_back(c);
    }
  }
  return s;
}

// Ids as the module defines them, gathered in one pass and resolved after.
struct Module {
  std::map<uint32_t, std::string> names;
  std::map<uint32_t, uint32_t> spec_ids;            // result id -> constant_id
  std::map<uint32_t, SpecConstantInfo> spec_values; // result id -> default
  std::map<uint32_t, uint32_t> constants;           // result id -> 32-bit literal
  std::map<uint32_t, std::vector<uint32_t>> composites;
  std::optional<uint32_t> workgroup_size_id;        // BuiltIn WorkgroupSize
  std::optional<std::array<uint32_t, 3>> local_size;
  std::optional<std::array<uint32_t, 3>> local_size_ids;
  std::map<uint32_t, uint32_t> bindings, sets;       // variable id -> Binding / DescriptorSet
  std::map<uint32_t, uint32_t> storage_buffer_images;  // OpTypeImage id (Dim Buffer, storage) -> format
  std::map<uint32_t, uint32_t> pointees;             // OpTypePointer id -> pointee type
  std::map<uint32_t, uint32_t> variables;            // variable id -> its pointer type
};

void read_instruction(Module& m, uint32_t op, const uint32_t* w, size_t n) {
  switch (op) {
    case kOpName:
      if (n >= 2) m.names[w[1]] = literal_string(w + 2, n - 2);
      break;
    case kOpDecorate:
      if (n >= 4 && w[2] == kDecorationSpecId) m.spec_ids[w[1]] = w[3];
      if (n >= 4 && w[2] == kDecorationBuiltIn && w[3] == kBuiltInWorkgroupSize) m.workgroup_size_id = w[1];
      if (n >= 4 && w[2] == kDecorationBinding) m.bindings[w[1]] = w[3];
      if (n >= 4 && w[2] == kDecorationDescriptorSet) m.sets[w[1]] = w[3];
      break;
    case kOpTypeImage:
      if (n >= 9 && w[3] == kDimBuffer && w[7] == kSampledStorage) m.storage_buffer_images[w[1]] = w[8];
      break;
    case kOpTypePointer:
      if (n >= 4) m.pointees[w[1]] = w[3];
      break;
    case kOpVariable:
      if (n >= 4) m.variables[w[2]] = w[1];
      break;
    case kOpConstant:
      if (n >= 4) m.constants[w[2]] = w[3];
      break;
    case kOpSpecConstant:
      if (n >= 4) m.spec_values[w[2]] = SpecConstantInfo{"", w[3], false};
      break;
    case kOpSpecConstantTrue:
    case kOpSpecConstantFalse:
      if (n >= 3) m.spec_values[w[2]] = SpecConstantInfo{"", op == kOpSpecConstantTrue ? 1u : 0u, true};
      break;
    case kOpSpecConstantComposite:
      if (n >= 3) m.composites[w[2]] = std::vector<uint32_t>(w + 3, w + n);
      break;
    case kOpExecutionMode:
      if (n >= 6 && w[2] == kModeLocalSize) m.local_size = std::array<uint32_t, 3>{w[3], w[4], w[5]};
      break;
    case kOpExecutionModeId:
      if (n >= 6 && w[2] == kModeLocalSizeId) m.local_size_ids = std::array<uint32_t, 3>{w[3], w[4], w[5]};
      break;
    default:
      break;
  }
}

// One dimension of the workgroup size from the id that holds it.
SpirvReflection::Dim dim_from_id(const Module& m, uint32_t id) {
  SpirvReflection::Dim d;
  if (auto s = m.spec_ids.find(id); s != m.spec_ids.end()) {
    d.spec_id = s->second;
    if (auto v = m.spec_values.find(id); v != m.spec_values.end()) d.literal = v->second.default_value;
  } else if (auto c = m.constants.find(id); c != m.constants.end()) {
    d.literal = c->second;
  }
  return d;
}

}  // namespace

std::optional<SpirvReflection> reflect_spirv(const uint32_t* words, size_t word_count) {
  if (words == nullptr || word_count < 5 || words[0] != kMagic) return std::nullopt;
  Module m;
  for (size_t i = 5; i < word_count;) {
    const uint32_t n = words[i] >> 16;
    if (n == 0 || i + n > word_count) return std::nullopt;  // truncated or corrupt
    read_instruction(m, words[i] & 0xffff, words + i, n);
    i += n;
  }

  SpirvReflection r;
  for (const auto& [result, id] : m.spec_ids) {
    auto v = m.spec_values.find(result);
    if (v == m.spec_values.end()) continue;  // a SpecId on something else (composites carry none)
    SpecConstantInfo info = v->second;
    if (auto name = m.names.find(result); name != m.names.end()) info.name = name->second;
    auto [it, inserted] = r.spec_constants.emplace(id, info);
    if (!inserted && it->second.name.empty()) it->second.name = info.name;  // several ids may share a constant_id
  }
  for (const auto& [var, pointer] : m.variables) {
    const auto pointee = m.pointees.find(pointer);
    const auto image = pointee == m.pointees.end() ? m.storage_buffer_images.end()
                                                   : m.storage_buffer_images.find(pointee->second);
    const auto binding = m.bindings.find(var);
    const auto set = m.sets.find(var);
    if (image == m.storage_buffer_images.end() || binding == m.bindings.end()) continue;
    if (set != m.sets.end() && set->second != 0) continue;
    r.texel_buffers[binding->second] = image->second;
  }
  // A WorkgroupSize built-in that is a spec composite wins over the
  // execution mode (the spec says so); a literal one repeats the mode.
  const auto spec_size = m.workgroup_size_id ? m.composites.find(*m.workgroup_size_id) : m.composites.end();
  if (spec_size != m.composites.end() && spec_size->second.size() == 3) {
    for (int k = 0; k < 3; ++k) r.local_size[k] = dim_from_id(m, spec_size->second[k]);
  } else if (m.local_size_ids) {
    for (int k = 0; k < 3; ++k) r.local_size[k] = dim_from_id(m, (*m.local_size_ids)[k]);
  } else if (m.local_size) {
    for (int k = 0; k < 3; ++k) r.local_size[k].literal = (*m.local_size)[k];
  }
  return r;
}

std::array<uint32_t, 3> SpirvReflection::local_size_with(const std::vector<uint32_t>& spec) const {
  std::array<uint32_t, 3> out{};
  for (int k = 0; k < 3; ++k) {
    const Dim& d = local_size[k];
    out[k] = d.spec_id && *d.spec_id < spec.size() ? spec[*d.spec_id] : d.literal;
  }
  return out;
}

bool SpirvReflection::declares_spec(uint32_t id) const {
  if (spec_constants.count(id)) return true;
  for (const auto& d : local_size) {
    if (d.spec_id == id) return true;
  }
  return false;
}

std::string SpirvReflection::spec_name(uint32_t id) const {
  if (auto it = spec_constants.find(id); it != spec_constants.end() && !it->second.name.empty()) return it->second.name;
  static const char* kDims[] = {"local_size_x", "local_size_y", "local_size_z"};
  for (int k = 0; k < 3; ++k) {
    if (local_size[k].spec_id == id) return kDims[k];
  }
  return fmt::format("constant_{}", id);
}

}  // namespace pebench
