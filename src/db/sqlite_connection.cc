// The SQLite back end: one file, WAL journal (readers never wait for the
// writer), a 60 s busy timeout so that concurrent ingests queue for the
// write lock instead of failing.
#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "db/connection.h"

namespace pebench::db {
namespace {

class SqliteConnection : public Connection {
 public:
  explicit SqliteConnection(const std::string& path) : path_(path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK) {
      std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      db_ = nullptr;
      throw DbError(fmt::format("{}: cannot open the SQLite database: {}", path, msg));
    }
    try {
      sqlite3_busy_timeout(db_, static_cast<int>(kBusyTimeout.count()));
      exec("PRAGMA foreign_keys = ON");
      enter_wal();
      exec("PRAGMA synchronous = NORMAL");
    } catch (...) {
      sqlite3_close(db_);  // the destructor does not run for a constructor that throws
      db_ = nullptr;
      throw;
    }
  }
  ~SqliteConnection() override {
    for (auto& [sql, st] : cache_) sqlite3_finalize(st);
    sqlite3_close(db_);
  }

  std::string dialect() const override { return "sqlite"; }
  std::string where() const override { return path_; }

  void exec(const std::string& sql) override {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw DbError(fmt::format("{}: {}", path_, msg));
    }
  }

  std::vector<Row> query(const std::string& sql, const std::vector<Value>& params) override {
    sqlite3_stmt* st = prepared(sql);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    for (size_t i = 0; i < params.size(); ++i) {
      const std::string name = fmt::format("${}", i + 1);
      const int idx = sqlite3_bind_parameter_index(st, name.c_str());
      if (idx == 0) continue;  // a parameter the statement does not use
      const Value& v = params[i];
      int rc = SQLITE_OK;
      if (std::holds_alternative<std::monostate>(v)) {
        rc = sqlite3_bind_null(st, idx);
      } else if (auto p = std::get_if<int64_t>(&v)) {
        rc = sqlite3_bind_int64(st, idx, *p);
      } else if (auto p = std::get_if<double>(&v)) {
        rc = sqlite3_bind_double(st, idx, *p);
      } else if (auto p = std::get_if<std::string>(&v)) {
        rc = sqlite3_bind_text(st, idx, p->data(), static_cast<int>(p->size()), SQLITE_TRANSIENT);
      } else {
        const auto& b = std::get<Blob>(v).bytes;
        rc = sqlite3_bind_blob(st, idx, b.empty() ? "" : static_cast<const void*>(b.data()),
                               static_cast<int>(b.size()), SQLITE_TRANSIENT);
      }
      if (rc != SQLITE_OK) throw DbError(fmt::format("{}: binding ${}: {}", path_, i + 1, sqlite3_errmsg(db_)));
    }
    std::vector<Row> rows;
    for (;;) {
      const int rc = sqlite3_step(st);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        std::string msg = sqlite3_errmsg(db_);
        sqlite3_reset(st);
        throw DbError(fmt::format("{}: {}", path_, msg));
      }
      const int n = sqlite3_column_count(st);
      std::vector<Value> values;
      values.reserve(n);
      for (int c = 0; c < n; ++c) {
        switch (sqlite3_column_type(st, c)) {
          case SQLITE_INTEGER: values.emplace_back(static_cast<int64_t>(sqlite3_column_int64(st, c))); break;
          case SQLITE_FLOAT: values.emplace_back(sqlite3_column_double(st, c)); break;
          case SQLITE_TEXT:
            values.emplace_back(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, c)),
                                            sqlite3_column_bytes(st, c)));
            break;
          case SQLITE_BLOB: {
            const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(st, c));
            values.emplace_back(Blob{std::vector<uint8_t>(p, p + sqlite3_column_bytes(st, c))});
            break;
          }
          default: values.emplace_back(std::monostate{});
        }
      }
      rows.emplace_back(std::move(values));
    }
    sqlite3_reset(st);
    return rows;
  }

  void begin() override { exec("BEGIN IMMEDIATE"); }
  void commit() override { exec("COMMIT"); }
  void rollback() override { exec("ROLLBACK"); }
  void lock_schema() override {}  // BEGIN IMMEDIATE holds the only write lock

 private:
  static constexpr std::chrono::milliseconds kBusyTimeout{60000};

  // WAL: readers see the last commit while an ingest writes. A database on
  // a file system without shared memory keeps its rollback journal.
  // Switching a rollback-journal database to WAL reads it and then needs its
  // write lock; SQLite does not call the busy handler for that upgrade (it
  // could deadlock), so a first open that meets another connection's write
  // lock got "database is locked" at once. It waits here instead, for as
  // long as the busy timeout would.
  void enter_wal() {
    const auto deadline = std::chrono::steady_clock::now() + kBusyTimeout;
    for (int wait_ms = 1;; wait_ms = std::min(2 * wait_ms, 50)) {
      const int rc = sqlite3_exec(db_, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) return;
      if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) {
        throw DbError(fmt::format("{}: {}", path_, sqlite3_errmsg(db_)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    }
  }

  sqlite3_stmt* prepared(const std::string& sql) {
    for (auto& [s, st] : cache_) {
      if (s == sql) return st;
    }
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &st, nullptr) != SQLITE_OK) {
      throw DbError(fmt::format("{}: {}", path_, sqlite3_errmsg(db_)));
    }
    cache_.emplace_back(sql, st);
    return st;
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  std::vector<std::pair<std::string, sqlite3_stmt*>> cache_;
};

}  // namespace

std::unique_ptr<Connection> connect_sqlite(const std::string& path) {
  return std::make_unique<SqliteConnection>(path);
}

}  // namespace pebench::db
