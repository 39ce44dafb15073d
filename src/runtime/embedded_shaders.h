// SPIR-V compiled at build time from shaders/ (cmake/Shaders.cmake) and
// embedded in the binary: one entry per shader and storage dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pebench {

struct EmbeddedShader {
  const char* name;   // file stem, e.g. "rope_apply"
  const char* dtype;  // "f32" or "f16" (built with -DSTORAGE_F16=1)
  const uint32_t* words;
  size_t word_count;
};

const EmbeddedShader* embedded_shaders_begin();
const EmbeddedShader* embedded_shaders_end();

// The shader `name` built for storage `dtype`, or nullptr.
inline const EmbeddedShader* find_embedded_shader(const std::string& name, const std::string& dtype) {
  for (const EmbeddedShader* s = embedded_shaders_begin(); s != embedded_shaders_end(); ++s) {
    if (name == s->name && dtype == s->dtype) return s;
  }
  return nullptr;
}

}  // namespace pebench
