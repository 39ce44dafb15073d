// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: the
// identity of an ingested report (results_db.h).
#pragma once

#include <string>
#include <string_view>

namespace pebench::db {

std::string sha256_hex(std::string_view data);

}  // namespace pebench::db
