// A connection to the results database, the one thing SQLite and PostgreSQL
// differ in below ResultsDb (results_db.h): SQL text with $1, $2, ...
// placeholders (both back ends read them), typed parameters and rows, and
// write transactions that exclude each other's schema changes.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace pebench::db {

// Anything the database refused or could not do; the message names the
// database and the problem in one line.
struct DbError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Blob {
  std::vector<uint8_t> bytes;
};
using Value = std::variant<std::monostate, int64_t, double, std::string, Blob>;

// One result row; columns by position, as the SELECT lists them.
class Row {
 public:
  explicit Row(std::vector<Value> values) : values_(std::move(values)) {}
  bool is_null(size_t i) const { return std::holds_alternative<std::monostate>(values_.at(i)); }
  int64_t int64(size_t i) const;
  double real(size_t i) const;
  std::string text(size_t i) const;
  std::vector<uint8_t> blob(size_t i) const;
  size_t size() const { return values_.size(); }

 private:
  std::vector<Value> values_;
};

class Connection {
 public:
  virtual ~Connection() = default;
  // "sqlite" or "postgresql": the dialect for the few statements that differ.
  virtual std::string dialect() const = 0;
  // The database as given (file or URL), for messages.
  virtual std::string where() const = 0;
  // Runs one or more statements without parameters or rows.
  virtual void exec(const std::string& sql) = 0;
  // Runs one statement with $1... bound to `params`; returns its rows.
  virtual std::vector<Row> query(const std::string& sql, const std::vector<Value>& params = {}) = 0;
  // A write transaction; SQLite takes the write lock at once (BEGIN
  // IMMEDIATE), PostgreSQL waits on nothing until a statement needs it.
  virtual void begin() = 0;
  virtual void commit() = 0;
  virtual void rollback() = 0;
  // Serializes schema migrations across processes until the transaction
  // ends (SQLite: the write lock begin() took; PostgreSQL: an advisory lock).
  virtual void lock_schema() = 0;
};

// "postgresql://..." or "postgres://..." (libpq's URI, or "host=... dbname=..."
// after "postgresql:"): PostgreSQL; anything else is an SQLite file path,
// created when missing.
std::unique_ptr<Connection> connect(const std::string& url);
bool is_postgres_url(const std::string& url);

std::unique_ptr<Connection> connect_sqlite(const std::string& path);
std::unique_ptr<Connection> connect_postgres(const std::string& url);

// Rolls back on scope exit unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Connection& c) : c_(c) { c_.begin(); }
  ~Transaction() {
    if (!done_) {
      try {
        c_.rollback();
      } catch (...) {
      }
    }
  }
  void commit() {
    c_.commit();
    done_ = true;
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

 private:
  Connection& c_;
  bool done_ = false;
};

}  // namespace pebench::db
