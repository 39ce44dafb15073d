// The validation layer's warnings pebench accepts, each with the reason
// (issue 41: best-practices warnings go to 0 outside this list). A case's
// warnings are counted in two maps: those outside the list (report
// `vk_validation.warnings`), which a change must fix or add here with a
// reason, and those in it (`vk_validation.allowed`). docs/gpu-readiness.md
// ("Validation levels and the allow-list") gives the measured counts.
#pragma once

#include <string>
#include <vector>

namespace pebench {

struct AllowedWarning {
  const char* id;      // the layer's message id name (pMessageIdName)
  const char* reason;  // why pebench does not (or cannot yet) follow it
};

const std::vector<AllowedWarning>& validation_allowlist();

// The reason `id` is allowed, or nullptr when it is not in the list.
const char* allowlist_reason(const std::string& id);

}  // namespace pebench
