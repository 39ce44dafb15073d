#include "db/connection.h"

#include <fmt/format.h>

namespace pebench::db {

namespace {
const char* kind_name(const Value& v) {
  switch (v.index()) {
    case 0: return "null";
    case 1: return "integer";
    case 2: return "real";
    case 3: return "text";
    default: return "blob";
  }
}

// A column as a number: integers and reals convert, text is parsed.
template <typename T, typename Parse>
T number_of(const Value& v, size_t i, Parse parse, const char* what) {
  if (auto p = std::get_if<int64_t>(&v)) return static_cast<T>(*p);
  if (auto p = std::get_if<double>(&v)) return static_cast<T>(*p);
  if (auto p = std::get_if<std::string>(&v)) {
    try {
      return parse(*p);
    } catch (...) {
    }
  }
  throw DbError(fmt::format("column {} is {}, not {}", i, kind_name(v), what));
}
}  // namespace

int64_t Row::int64(size_t i) const {
  return number_of<int64_t>(values_.at(i), i, [](const std::string& s) { return std::stoll(s); }, "an integer");
}

double Row::real(size_t i) const {
  return number_of<double>(values_.at(i), i, [](const std::string& s) { return std::stod(s); }, "a number");
}

std::string Row::text(size_t i) const {
  const Value& v = values_.at(i);
  if (auto p = std::get_if<std::string>(&v)) return *p;
  if (std::holds_alternative<std::monostate>(v)) return "";
  if (auto p = std::get_if<int64_t>(&v)) return std::to_string(*p);
  if (auto p = std::get_if<double>(&v)) return fmt::format("{}", *p);
  throw DbError(fmt::format("column {} is a blob, not text", i));
}

std::vector<uint8_t> Row::blob(size_t i) const {
  const Value& v = values_.at(i);
  if (auto p = std::get_if<Blob>(&v)) return p->bytes;
  if (std::holds_alternative<std::monostate>(v)) return {};
  if (auto p = std::get_if<std::string>(&v)) return {p->begin(), p->end()};
  throw DbError(fmt::format("column {} is {}, not a blob", i, kind_name(v)));
}

bool is_postgres_url(const std::string& url) {
  return url.rfind("postgresql:", 0) == 0 || url.rfind("postgres:", 0) == 0;
}

std::unique_ptr<Connection> connect(const std::string& url) {
  if (is_postgres_url(url)) return connect_postgres(url);
  return connect_sqlite(url);
}

}  // namespace pebench::db
