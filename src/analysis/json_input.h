// JSON from files a user hands us (reports). nlohmann's DOM parser accepts
// any nesting depth, and what walks the value afterwards (copying it,
// dump(), our own renderers) recurses once per level: 200,000 nested arrays
// overflow the stack. parse_untrusted_json refuses such a document before
// any DOM exists, and turns every nlohmann exception (syntax, a number out
// of double range) into one JsonInputError.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace pebench {

// Far deeper than any report (about 6 levels), far shallower than what a
// recursive walk of nlohmann::json can afford on an 8 MiB stack.
inline constexpr size_t kMaxJsonDepth = 100;

struct JsonInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The parsed document, or JsonInputError with a message such as
// "not valid JSON (parse error at line 3, column 7: ...)" or
// "nested deeper than 100 levels".
nlohmann::json parse_untrusted_json(const std::string& text, size_t max_depth = kMaxJsonDepth);

// Member `key` of object `j` as text: a string as it is, any other value as
// JSON ("2", "true"), "" when absent or null.
std::string json_text(const nlohmann::json& j, const char* key);

}  // namespace pebench
