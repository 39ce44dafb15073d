// The PostgreSQL back end, through libpq: text parameters (binary for
// blobs), text results (bytea decoded with PQunescapeBytea), one
// connection per process. Many machines ingest into one server; schema
// migrations serialize on an advisory lock.
#include <fmt/format.h>
#include <libpq-fe.h>

#include <cstring>

#include "db/connection.h"

namespace pebench::db {
namespace {

constexpr unsigned kByteaOid = 17, kInt8Oid = 20, kInt4Oid = 23, kInt2Oid = 21, kFloat8Oid = 701,
                   kFloat4Oid = 700, kNumericOid = 1700;

// The URL without a password, for messages.
std::string redacted(const std::string& url) {
  const auto scheme = url.find("://");
  const auto at = url.find('@');
  if (scheme == std::string::npos || at == std::string::npos || at < scheme) return url;
  const auto colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon) + ":***" + url.substr(at);
}

class PgConnection : public Connection {
 public:
  explicit PgConnection(const std::string& url) : where_(redacted(url)) {
    // "postgresql:host=... dbname=..." (a keyword/value string after the
    // scheme) as well as libpq's own URIs.
    std::string conninfo = url;
    if (url.rfind("postgresql:", 0) == 0 && url.rfind("postgresql://", 0) != 0) conninfo = url.substr(11);
    conn_ = PQconnectdb(conninfo.c_str());
    if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
      std::string msg = conn_ ? one_line(PQerrorMessage(conn_)) : "out of memory";
      PQfinish(conn_);
      conn_ = nullptr;
      throw DbError(fmt::format("{}: cannot connect to PostgreSQL: {}", where_, msg));
    }
    exec("SET client_min_messages = warning");
  }
  ~PgConnection() override { PQfinish(conn_); }

  std::string dialect() const override { return "postgresql"; }
  std::string where() const override { return where_; }

  void exec(const std::string& sql) override {
    PGresult* r = PQexec(conn_, sql.c_str());
    check(r, sql);
    PQclear(r);
  }

  std::vector<Row> query(const std::string& sql, const std::vector<Value>& params) override {
    std::vector<std::string> text(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    std::vector<int> lengths(params.size(), 0), formats(params.size(), 0);
    std::vector<unsigned> types(params.size(), 0);
    for (size_t i = 0; i < params.size(); ++i) {
      const Value& v = params[i];
      if (std::holds_alternative<std::monostate>(v)) continue;
      if (auto p = std::get_if<int64_t>(&v)) {
        text[i] = std::to_string(*p);
        types[i] = kInt8Oid;
      } else if (auto p = std::get_if<double>(&v)) {
        text[i] = fmt::format("{}", *p);  // shortest round-trip form
        types[i] = kFloat8Oid;
      } else if (auto p = std::get_if<std::string>(&v)) {
        text[i] = *p;
      } else {
        const auto& b = std::get<Blob>(v).bytes;
        values[i] = b.empty() ? "" : reinterpret_cast<const char*>(b.data());
        lengths[i] = static_cast<int>(b.size());
        formats[i] = 1;
        types[i] = kByteaOid;
        continue;
      }
      values[i] = text[i].c_str();
      lengths[i] = static_cast<int>(text[i].size());
    }
    PGresult* r = PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), types.data(), values.data(),
                               lengths.data(), formats.data(), 0);
    check(r, sql);
    std::vector<Row> rows;
    const int n = PQntuples(r), cols = PQnfields(r);
    rows.reserve(n);
    for (int t = 0; t < n; ++t) {
      std::vector<Value> row;
      row.reserve(cols);
      for (int c = 0; c < cols; ++c) {
        if (PQgetisnull(r, t, c)) {
          row.emplace_back(std::monostate{});
          continue;
        }
        const char* s = PQgetvalue(r, t, c);
        const unsigned type = PQftype(r, c);
        if (type == kInt8Oid || type == kInt4Oid || type == kInt2Oid) {
          row.emplace_back(static_cast<int64_t>(std::strtoll(s, nullptr, 10)));
        } else if (type == kFloat8Oid || type == kFloat4Oid || type == kNumericOid) {
          row.emplace_back(std::strtod(s, nullptr));
        } else if (type == kByteaOid) {
          size_t len = 0;
          unsigned char* bytes = PQunescapeBytea(reinterpret_cast<const unsigned char*>(s), &len);
          if (!bytes) throw DbError(fmt::format("{}: cannot decode a bytea value", where_));
          row.emplace_back(Blob{std::vector<uint8_t>(bytes, bytes + len)});
          PQfreemem(bytes);
        } else {
          row.emplace_back(std::string(s, PQgetlength(r, t, c)));
        }
      }
      rows.emplace_back(std::move(row));
    }
    PQclear(r);
    return rows;
  }

  void begin() override { exec("BEGIN"); }
  void commit() override { exec("COMMIT"); }
  void rollback() override { exec("ROLLBACK"); }
  // Any 64-bit key of ours: pebench's schema lock.
  void lock_schema() override { exec("SELECT pg_advisory_xact_lock(7010482130048)"); }

 private:
  static std::string one_line(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    for (char& ch : s) {
      if (ch == '\n') ch = ' ';
    }
    return s;
  }

  void check(PGresult* r, const std::string& sql) {
    const auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return;
    std::string msg = one_line(r ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
    if (msg.empty()) msg = one_line(PQerrorMessage(conn_));
    PQclear(r);
    throw DbError(fmt::format("{}: {}", where_, msg));
  }

  std::string where_;
  PGconn* conn_ = nullptr;
};

}  // namespace

std::unique_ptr<Connection> connect_postgres(const std::string& url) { return std::make_unique<PgConnection>(url); }

}  // namespace pebench::db
