#include "db/results_db.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "analysis/report_file.h"
#include "analysis/report_schema.h"
#include "db/sha256.h"

namespace pebench::db {
namespace {

using nlohmann::json;

// Numbered migrations, applied in order; never edit one that has shipped,
// add the next. {id} and {blob} are the dialect's auto-increment key and
// byte string types.
const std::vector<std::vector<std::string>>& migrations() {
  static const std::vector<std::vector<std::string>> m = {
      // 1: runs, their devices, series and results with every sample.
      {
          "CREATE TABLE run ("
          " id {id},"
          " report_hash TEXT NOT NULL UNIQUE,"
          " report_schema TEXT NOT NULL,"
          " created TEXT NOT NULL,"
          " ingested TEXT NOT NULL,"
          " git_commit TEXT NOT NULL,"
          " tool_version TEXT NOT NULL,"
          " host_cpu TEXT NOT NULL,"
          " preset TEXT NOT NULL,"
          " injected INTEGER NOT NULL,"
          " source TEXT NOT NULL,"
          " bytes BIGINT NOT NULL,"
          " header TEXT NOT NULL)",
          "CREATE INDEX run_host_created ON run (host_cpu, created)",
          "CREATE INDEX run_created ON run (created)",
          "CREATE INDEX run_commit ON run (git_commit)",
          "CREATE TABLE run_device ("
          " run_id BIGINT NOT NULL REFERENCES run (id) ON DELETE CASCADE,"
          " idx INTEGER NOT NULL,"
          " key_name TEXT NOT NULL,"
          " name TEXT NOT NULL,"
          " device_type TEXT NOT NULL,"
          " driver_version TEXT NOT NULL,"
          " PRIMARY KEY (run_id, idx))",
          "CREATE INDEX run_device_key ON run_device (key_name, run_id)",
          "CREATE TABLE series ("
          " id {id},"
          " case_key TEXT NOT NULL,"
          " device_key TEXT NOT NULL,"
          " host_cpu TEXT NOT NULL,"
          " label TEXT NOT NULL,"
          " variant TEXT NOT NULL,"
          " impl TEXT NOT NULL,"
          " dtype TEXT NOT NULL,"
          " UNIQUE (case_key, device_key, host_cpu))",
          "CREATE TABLE result ("
          " run_id BIGINT NOT NULL REFERENCES run (id) ON DELETE CASCADE,"
          " ordinal INTEGER NOT NULL,"
          " series_id BIGINT NOT NULL REFERENCES series (id),"
          " status TEXT NOT NULL,"
          " median_ns DOUBLE PRECISION,"
          " cpu_median_ns DOUBLE PRECISION,"
          " n_samples INTEGER NOT NULL,"
          " time_ns {blob},"
          " cpu_ns {blob},"
          " started_ns {blob},"
          " body TEXT NOT NULL,"
          " PRIMARY KEY (run_id, ordinal))",
          "CREATE INDEX result_series ON result (series_id, run_id)",
      },
  };
  return m;
}

std::string dialect_sql(std::string sql, const std::string& dialect) {
  const bool pg = dialect == "postgresql";
  const auto replace = [&](const std::string& from, const std::string& to) {
    for (size_t p = sql.find(from); p != std::string::npos; p = sql.find(from, p + to.size())) {
      sql.replace(p, from.size(), to);
    }
  };
  replace("{id}", pg ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY");
  replace("{blob}", pg ? "BYTEA" : "BLOB");
  return sql;
}

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "samples are stored as little-endian float64");

Blob pack(const json* arr) {
  Blob b;
  if (!arr || !arr->is_array()) return b;
  b.bytes.resize(arr->size() * sizeof(double));
  size_t i = 0;
  for (const auto& v : *arr) {
    const double d = v.get<double>();
    std::memcpy(b.bytes.data() + i * sizeof(double), &d, sizeof d);
    ++i;
  }
  return b;
}

json unpack(const std::vector<uint8_t>& bytes) {
  json arr = json::array();
  const size_t n = bytes.size() / sizeof(double);
  for (size_t i = 0; i < n; ++i) {
    double d;
    std::memcpy(&d, bytes.data() + i * sizeof(double), sizeof d);
    arr.push_back(d);
  }
  return arr;
}

// The member `key` of object `o`, or null.
const json* member(const json& o, const char* key) {
  if (!o.is_object()) return nullptr;
  auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

std::string text_of(const json* v) { return v && v->is_string() ? v->get<std::string>() : ""; }

Value opt_real(const json* v) {
  if (v && v->is_number()) return v->get<double>();
  return std::monostate{};
}

std::string like_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%' || c == '_' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

// SQL conditions with bound $N parameters, for the list queries' filters.
class Filters {
 public:
  explicit Filters(std::string sql) : sql_(std::move(sql)) {}
  // Binds v; returns its placeholder.
  std::string param(Value v) {
    params_.push_back(std::move(v));
    return fmt::format("${}", params_.size());
  }
  // "column LIKE pattern": text anywhere in the column, or at its start
  // (prefix), taken literally; "" when text is empty (no condition).
  std::string like(const std::string& column, const std::string& text, bool prefix = false) {
    if (text.empty()) return "";
    return column + " LIKE " + param((prefix ? "" : "%") + like_escape(text) + "%") + " ESCAPE '\\'";
  }
  // Appends " AND cond" (nothing for an empty cond).
  void where(const std::string& cond) {
    if (!cond.empty()) sql_ += " AND " + cond;
  }
  void append(const std::string& text) { sql_ += text; }
  const std::string& sql() const { return sql_; }
  const std::vector<Value>& params() const { return params_; }

 private:
  std::string sql_;
  std::vector<Value> params_;
};

// One case's series: its case key and device key name (the host is the run's).
using SeriesKey = std::pair<std::string, std::string>;
SeriesKey series_key(const CaseRecord& c) { return {c.key, c.device_info ? c.device_info->key_name : ""}; }

// Rows per multi-row INSERT: few round trips for PostgreSQL (each one costs
// a network turn), far below SQLite's 999 parameters at 11 columns. SQLite
// has no round trip to save and ran its ingest 20% slower in batches (9.0
// against 11.3 MB/s, one run, 150 reports), so it gets one row a
// statement: the same SQL each time, prepared once.
constexpr size_t kBatchRows = 64;
size_t batch_rows(const Connection& conn) { return conn.dialect() == "postgresql" ? kBatchRows : 1; }

// "INSERT INTO head VALUES ($1, ..), (..) tail" for rows of equal width, in
// batches of batch_rows(conn); `after_batch(rows so far)` runs after each.
void insert_rows(Connection& conn, const std::string& head, std::vector<std::vector<Value>> rows,
                 const std::string& tail, const std::function<void(size_t)>& after_batch = {}) {
  const size_t batch = batch_rows(conn);
  for (size_t first = 0; first < rows.size(); first += batch) {
    const size_t end = std::min(rows.size(), first + batch);
    std::string sql = "INSERT INTO " + head + " VALUES ";
    std::vector<Value> params;
    for (size_t i = first; i < end; ++i) {
      sql += i == first ? "(" : ", (";
      for (size_t k = 0; k < rows[i].size(); ++k) {
        params.push_back(std::move(rows[i][k]));
        sql += fmt::format("{}${}", k ? ", " : "", params.size());
      }
      sql += ")";
    }
    conn.query(sql + tail, params);
    if (after_batch) after_batch(end);
  }
}

// The report's series rows, inserted where new, and their ids. Rows go in
// one sorted order for every ingest, so that concurrent ingests into
// PostgreSQL wait on each other's new series rows without deadlock.
std::map<SeriesKey, int64_t> insert_series(Connection& conn, const ReportFile& report) {
  const std::string host = report.host_cpu();
  std::map<SeriesKey, const CaseRecord*> first_case;
  for (const auto& c : report.cases) first_case.emplace(series_key(c), &c);
  std::vector<std::vector<Value>> rows;
  for (const auto& [key, c] : first_case) {
    rows.push_back({key.first, key.second, host, c->display(), c->variant, c->impl, c->dtype});
  }
  insert_rows(conn, "series (case_key, device_key, host_cpu, label, variant, impl, dtype)", std::move(rows),
              " ON CONFLICT (case_key, device_key, host_cpu) DO NOTHING");
  std::map<SeriesKey, int64_t> ids;
  for (const auto& row : conn.query("SELECT case_key, device_key, id FROM series WHERE host_cpu = $1", {host})) {
    SeriesKey key{row.text(0), row.text(1)};
    if (first_case.count(key)) ids[key] = row.int64(2);
  }
  if (ids.size() != first_case.size()) throw DbError(fmt::format("{}: series rows vanished", conn.where()));
  return ids;
}

// A result without its sample arrays (stored as blobs), built member by
// member: copying the whole result and erasing them cost a fifth of an
// ingest's time.
json without_samples(const json& r) {
  if (!r.is_object()) return r;
  json body = json::object();
  for (auto it = r.begin(); it != r.end(); ++it) {
    const bool timed = (it.key() == "time_ns" || it.key() == "cpu_ns") && it.value().is_object();
    if (!timed) {
      body.emplace(it.key(), it.value());
      continue;
    }
    json& out = body[it.key()] = json::object();
    for (auto f = it.value().begin(); f != it.value().end(); ++f) {
      if (f.key() != "samples" && !(it.key() == "time_ns" && f.key() == "started_ns")) out.emplace(f.key(), f.value());
    }
  }
  return body;
}

// One result's row: its samples as blobs, the rest of its JSON as text.
std::vector<Value> result_row(int64_t run_id, const CaseRecord& c, const json& r, int64_t series_id) {
  const json* t = member(r, "time_ns");
  const json* cpu = member(r, "cpu_ns");
  Blob samples = pack(t ? member(*t, "samples") : nullptr);
  Blob started = pack(t ? member(*t, "started_ns") : nullptr);
  Blob cpu_samples = pack(cpu ? member(*cpu, "samples") : nullptr);
  const json body = without_samples(r);
  const int64_t n = static_cast<int64_t>(samples.bytes.size() / sizeof(double));
  return {run_id, static_cast<int64_t>(c.ordinal), series_id, c.status,
          opt_real(t ? member(*t, "median") : nullptr), opt_real(cpu ? member(*cpu, "median") : nullptr), n,
          std::move(samples), std::move(cpu_samples), std::move(started), body.dump()};
}

// Every result of the report, in multi-row INSERTs.
void insert_results(Connection& conn, const ReportFile& report, const json& results,
                    const std::map<SeriesKey, int64_t>& series_ids, IngestResult& out) {
  std::vector<std::vector<Value>> rows;
  rows.reserve(report.cases.size());
  for (const auto& c : report.cases) rows.push_back(result_row(out.run_id, c, results.at(c.ordinal), series_ids.at(series_key(c))));
  const char* die = std::getenv("PEBENCH_DB_TEST_DIE_AFTER");
  insert_rows(conn,
              "result (run_id, ordinal, series_id, status, median_ns, cpu_median_ns, n_samples, time_ns, cpu_ns,"
              " started_ns, body)",
              std::move(rows), "", [&](size_t done) {
                out.results = done;
                // tests: an ingest killed mid-way (after the batch holding
                // result N) must leave no partial run
                if (die && *die && done >= std::strtoul(die, nullptr, 10)) std::abort();
              });
}

}  // namespace

int latest_schema_version() { return static_cast<int>(migrations().size()); }

std::string report_hash(const json& doc) { return sha256_hex(doc.dump()); }

ResultsDb::ResultsDb(const std::string& url) : ResultsDb(connect(url)) {}

ResultsDb::ResultsDb(std::unique_ptr<Connection> connection) : conn_(std::move(connection)) { migrate(); }

int ResultsDb::schema_version() {
  const auto rows = conn_->query("SELECT MAX(version) FROM pebench_schema");
  return rows.empty() || rows[0].is_null(0) ? 0 : static_cast<int>(rows[0].int64(0));
}

void ResultsDb::migrate() {
  const int latest = latest_schema_version();
  const auto too_new = [&](int have) {
    return DbError(fmt::format("{}: the database's schema is version {}, newer than this pebench's ({}); use a "
                               "newer pebench",
                               conn_->where(), have, latest));
  };
  // Fast path, no write lock: already up to date.
  try {
    const int have = schema_version();
    if (have == latest) return;
    if (have > latest) throw too_new(have);
  } catch (const DbError& e) {
    if (std::string(e.what()).find("newer than this pebench") != std::string::npos) throw;
    // no pebench_schema table yet
  }
  Transaction tx(*conn_);
  conn_->lock_schema();
  conn_->exec("CREATE TABLE IF NOT EXISTS pebench_schema (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)");
  const int have = schema_version();
  if (have > latest) throw too_new(have);
  for (int v = have + 1; v <= latest; ++v) {
    for (const auto& sql : migrations()[v - 1]) conn_->exec(dialect_sql(sql, conn_->dialect()));
    conn_->query("INSERT INTO pebench_schema (version, applied) VALUES ($1, $2)",
                 {int64_t{v}, now_iso8601()});
  }
  tx.commit();
}

IngestResult ResultsDb::ingest_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReportError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  // One read into a string of the file's size: a stringstream copied the
  // report twice more.
  std::string text;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > 0) {
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), size);
    text.resize(static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw ReportError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  return ingest_text(text, path);
}

IngestResult ResultsDb::ingest_text(const std::string& text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw ReportError(fmt::format("{}: not JSON ({})", source, e.what()));
  }
  // The schema first, in one line, before any other check.
  if (const json* schema = member(doc, report_key::kSchema); schema && schema->is_string() &&
                                                               schema->get<std::string>() != kReportSchema) {
    throw ReportError(fmt::format("{}: schema {} is not {}, the one this pebench ingests", source,
                                  schema->get<std::string>(), kReportSchema));
  }
  const ReportFile report = parse_report(doc, source);  // ReportError: not a valid report

  IngestResult out;
  out.hash = report_hash(doc);
  out.bytes = text.size();
  const json* tool = member(doc, "tool");
  const json* run = member(doc, "run");
  const bool injected = run && member(*run, report_key::kInjectSlowdown) &&
                        !member(*run, report_key::kInjectSlowdown)->is_null() &&
                        !member(*run, report_key::kInjectSlowdown)->empty();
  json header = json::object();  // the report but its results, without copying them
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() != "results") header.emplace(it.key(), it.value());
  }

  Transaction tx(*conn_);
  auto ins = conn_->query(
      "INSERT INTO run (report_hash, report_schema, created, ingested, git_commit, tool_version, host_cpu, preset,"
      " injected, source, bytes, header) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
      " ON CONFLICT (report_hash) DO NOTHING RETURNING id",
      {out.hash, std::string(kReportSchema), report.created, now_iso8601(),
       text_of(tool ? member(*tool, "git_commit") : nullptr), text_of(tool ? member(*tool, "version") : nullptr),
       report.host_cpu(), text_of(run ? member(*run, "preset") : nullptr), int64_t{injected ? 1 : 0}, source,
       static_cast<int64_t>(text.size()), header.dump()});
  if (ins.empty()) {
    const auto rows = conn_->query("SELECT id FROM run WHERE report_hash = $1", {out.hash});
    tx.commit();
    out.run_id = rows.empty() ? 0 : rows[0].int64(0);
    return out;
  }
  out.run_id = ins[0].int64(0);
  out.inserted = true;
  for (const auto& d : report.devices) {
    conn_->query(
        "INSERT INTO run_device (run_id, idx, key_name, name, device_type, driver_version) VALUES ($1, $2, $3, $4, "
        "$5, $6)",
        {out.run_id, d.index, d.key_name, d.name, d.device_type, d.driver_version});
  }

  const std::map<SeriesKey, int64_t> series_ids = insert_series(*conn_, report);
  insert_results(*conn_, report, doc.at("results"), series_ids, out);
  tx.commit();
  return out;
}

std::vector<RunInfo> ResultsDb::runs(const RunFilter& f) {
  Filters q(
      "SELECT r.id, r.report_hash, r.created, r.ingested, r.git_commit, r.tool_version, r.host_cpu, r.preset,"
      " r.source, r.bytes, r.injected,"
      " (SELECT COUNT(*) FROM result x WHERE x.run_id = r.id),"
      " (SELECT COUNT(*) FROM result x WHERE x.run_id = r.id AND x.status = 'ok')"
      " FROM run r WHERE 1 = 1");
  if (const std::string d = q.like("d.key_name", f.device); !d.empty()) {
    q.where("EXISTS (SELECT 1 FROM run_device d WHERE d.run_id = r.id AND " + d + ")");
  }
  q.where(q.like("r.host_cpu", f.host));
  q.where(q.like("r.git_commit", f.commit, true));
  if (!f.since.empty()) q.where("r.created >= " + q.param(f.since));
  if (!f.until.empty()) q.where("r.created < " + q.param(f.until));
  q.append(" ORDER BY r.created DESC, r.id DESC");
  if (f.limit > 0) q.append(" LIMIT " + q.param(static_cast<int64_t>(f.limit)));
  std::vector<RunInfo> out;
  for (const auto& row : conn_->query(q.sql(), q.params())) {
    RunInfo r;
    r.id = row.int64(0);
    r.hash = row.text(1);
    r.created = row.text(2);
    r.ingested = row.text(3);
    r.commit = row.text(4);
    r.tool_version = row.text(5);
    r.host_cpu = row.text(6);
    r.preset = row.text(7);
    r.source = row.text(8);
    r.bytes = row.int64(9);
    r.injected = row.int64(10) != 0;
    r.results = row.int64(11);
    r.ok = row.int64(12);
    out.push_back(std::move(r));
  }
  for (auto& r : out) {
    for (const auto& row : conn_->query("SELECT key_name FROM run_device WHERE run_id = $1 ORDER BY idx", {r.id})) {
      r.devices.push_back(row.text(0));
    }
  }
  return out;
}

std::vector<SeriesInfo> ResultsDb::series(const SeriesFilter& f) {
  Filters q("SELECT id, case_key, device_key, host_cpu, label, variant, impl, dtype FROM series WHERE 1 = 1");
  for (const auto& w : f.words) q.where(q.like("label", w));
  q.where(q.like("device_key", f.device));
  q.where(q.like("host_cpu", f.host));
  q.append(" ORDER BY label, device_key, host_cpu");
  std::vector<SeriesInfo> out;
  for (const auto& row : conn_->query(q.sql(), q.params())) {
    out.push_back({row.int64(0), row.text(1), row.text(2), row.text(3), row.text(4), row.text(5), row.text(6),
                   row.text(7)});
  }
  return out;
}

std::vector<TrendPoint> ResultsDb::trend(int64_t series_id, size_t last) {
  std::string sql =
      "SELECT r.id, r.created, r.git_commit, x.status, x.median_ns, x.cpu_median_ns, x.n_samples"
      " FROM result x JOIN run r ON r.id = x.run_id WHERE x.series_id = $1 ORDER BY r.created DESC, r.id DESC";
  std::vector<Value> params{series_id};
  if (last > 0) {
    sql += " LIMIT $2";
    params.push_back(static_cast<int64_t>(last));
  }
  std::vector<TrendPoint> out;
  for (const auto& row : conn_->query(sql, params)) {
    TrendPoint p;
    p.run_id = row.int64(0);
    p.created = row.text(1);
    p.commit = row.text(2);
    p.status = row.text(3);
    p.median_ns = row.is_null(4) ? 0 : row.real(4);
    p.cpu_median_ns = row.is_null(5) ? 0 : row.real(5);
    p.samples = row.int64(6);
    out.push_back(std::move(p));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

json ResultsDb::load_run_document(int64_t run_id) {
  const auto head = conn_->query("SELECT header FROM run WHERE id = $1", {run_id});
  if (head.empty()) throw DbError(fmt::format("{}: no run {}", conn_->where(), run_id));
  json doc = json::parse(head[0].text(0));
  json results = json::array();
  for (const auto& row : conn_->query(
           "SELECT body, time_ns, cpu_ns, started_ns FROM result WHERE run_id = $1 ORDER BY ordinal", {run_id})) {
    json r = json::parse(row.text(0));
    if (r.contains("time_ns") && r["time_ns"].is_object()) {
      r["time_ns"]["samples"] = unpack(row.blob(1));
      const auto started = row.blob(3);
      if (!started.empty()) r["time_ns"]["started_ns"] = unpack(started);
    }
    if (r.contains("cpu_ns") && r["cpu_ns"].is_object()) r["cpu_ns"]["samples"] = unpack(row.blob(2));
    results.push_back(std::move(r));
  }
  doc["results"] = std::move(results);
  return doc;
}

std::vector<int64_t> ResultsDb::last_runs(const std::string& host_cpu, const std::string& device_key,
                                          const std::string& preset, const std::string& exclude_hash, size_t k) {
  std::vector<int64_t> out;
  for (const auto& row : conn_->query(
           "SELECT r.id FROM run r WHERE r.host_cpu = $1 AND r.preset = $2 AND r.injected = 0"
           " AND r.report_hash <> $3"
           " AND EXISTS (SELECT 1 FROM run_device d WHERE d.run_id = r.id AND d.key_name = $4)"
           " ORDER BY r.created DESC, r.id DESC LIMIT $5",
           {host_cpu, preset, exclude_hash, device_key, static_cast<int64_t>(k)})) {
    out.push_back(row.int64(0));
  }
  return out;
}

json baseline_document(const std::vector<json>& runs, bool cpu) {
  if (runs.empty()) throw DbError("no runs to make a baseline of");
  json base = runs.front();
  base.erase("results");
  // Device key names of the newest run -> its indices; other runs' results
  // move onto those indices (a device the newest run lacks is left out).
  const auto key_names = [](const json& doc) {
    std::map<int64_t, std::string> names;
    std::map<std::string, int> seen;
    for (const auto& d : doc.at("devices")) {
      const std::string name = d.value("name", "");
      const int n = seen[name]++;
      names[d.value("index", int64_t{0})] = n ? fmt::format("{} #{}", name, n + 1) : name;
    }
    return names;
  };
  std::map<std::string, int64_t> index_of;
  for (const auto& [idx, name] : key_names(runs.front())) index_of[name] = idx;

  struct Candidate {
    size_t run;
    const json* result;
    double median;
    bool ok;
  };
  std::map<std::string, std::vector<Candidate>> by_case;  // device key + case key -> candidates
  std::vector<std::string> order;
  json hashes = json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    hashes.push_back(report_hash(runs[i]));
    const auto names = key_names(runs[i]);
    const ReportFile rf = parse_report(runs[i], fmt::format("run {}", i));
    for (const auto& c : rf.cases) {
      const auto dn = names.find(c.device);
      if (dn == names.end() || !index_of.count(dn->second)) continue;
      const std::string key = dn->second + "\x1f" + c.key;
      if (!by_case.count(key)) order.push_back(key);
      const double median = !c.time ? 0 : cpu ? c.time->cpu_median : c.time->median;
      by_case[key].push_back({i, &runs[i].at("results").at(c.ordinal), median, c.ok() && median > 0});
    }
  }
  json results = json::array();
  for (const auto& key : order) {
    auto& cands = by_case[key];
    std::vector<Candidate> ok;
    for (const auto& c : cands) {
      if (c.ok) ok.push_back(c);
    }
    const Candidate* pick = &cands.front();
    if (!ok.empty()) {
      std::sort(ok.begin(), ok.end(), [](const Candidate& a, const Candidate& b) { return a.median < b.median; });
      pick = &ok[(ok.size() - 1) / 2];
    }
    json r = *pick->result;
    r["device"] = index_of.at(key.substr(0, key.find('\x1f')));
    results.push_back(std::move(r));
  }
  base["results"] = std::move(results);
  base["history"] = {{"runs", hashes}, {"pick", cpu ? "median run by cpu_ns.median" : "median run by time_ns.median"}};
  return base;
}

}  // namespace pebench::db
