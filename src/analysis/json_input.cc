#include "analysis/json_input.h"

#include <fmt/format.h>

namespace pebench {
namespace {

// nlohmann's exception text without its "[json.exception.parse_error.101] " tag.
std::string untagged(const std::string& what) {
  const auto p = what.find("] ");
  return p == std::string::npos ? what : what.substr(p + 2);
}

// A SAX pass that builds nothing: it only tracks the depth and stops the
// parser (by returning false) at the first level past the limit, so even a
// gigabyte of '[' costs one pass and no memory.
class DepthCheck : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit DepthCheck(size_t max_depth) : max_depth_(max_depth) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool key(string_t&) override { return true; }
  bool start_object(std::size_t) override { return enter(); }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override { return enter(); }
  bool end_array() override { return leave(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    // Syntax errors name their line and column; out_of_range (a number such
    // as 1e400) names only the token, so add where it is.
    error_ = untagged(e.what());
    if (error_.find(" at line ") == std::string::npos) error_ += fmt::format(" at byte {}", position);
    return false;
  }

  // Empty when the document is fine.
  std::string problem() const {
    if (too_deep_) return fmt::format("nested deeper than {} levels (arrays and objects inside each other)", max_depth_);
    if (!error_.empty()) return fmt::format("not valid JSON ({})", error_);
    return "";
  }

 private:
  bool enter() {
    too_deep_ = ++depth_ > max_depth_;
    return !too_deep_;
  }
  bool leave() {
    --depth_;
    return true;
  }

  size_t max_depth_;
  size_t depth_ = 0;
  bool too_deep_ = false;
  std::string error_;
};

}  // namespace

nlohmann::json parse_untrusted_json(const std::string& text, size_t max_depth) {
  DepthCheck check(max_depth);
  const bool fine = nlohmann::json::sax_parse(text, &check);
  if (!fine) {
    const std::string problem = check.problem();
    throw JsonInputError(problem.empty() ? "not valid JSON" : problem);
  }
  // Known to be well-formed and shallow: the DOM parse cannot fail or nest deeply.
  return nlohmann::json::parse(text);
}

std::string json_text(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace pebench
