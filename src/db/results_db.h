// The results database: pebench reports ingested into SQLite (a file) or
// PostgreSQL (a URL), every sample kept, for trends, change points and a
// gate against the last runs of a device (docs/results-db.md).
//
// Layout (migration 1): run (one ingested report: its SHA-256, the report's
// header JSON), run_device, series (one case on one device and host CPU:
// case key, device key name, host CPU) and result (a run's case: status,
// medians, the samples as little-endian float64 blobs, and the rest of the
// result's JSON), so that any report can be rebuilt exactly enough for
// compare (load_run_document) and every statistic recomputed.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/connection.h"

namespace pebench::db {

// The schema this build writes: the highest numbered migration it knows.
int latest_schema_version();

struct IngestResult {
  int64_t run_id = 0;
  bool inserted = false;  // false: the same report (by hash) was already there
  size_t results = 0;
  size_t bytes = 0;
  std::string hash;
};

struct RunFilter {
  std::string device;  // substring of a device name
  std::string host;    // substring of the host CPU string
  std::string commit;  // prefix of tool.git_commit
  std::string since, until;  // ISO-8601 prefixes compared as text (created >= since, created < until)
  size_t limit = 0;          // newest N; 0: all
};

struct RunInfo {
  int64_t id = 0;
  std::string hash, created, ingested, commit, tool_version, host_cpu, preset, source;
  std::vector<std::string> devices;  // device key names
  int64_t results = 0, ok = 0, bytes = 0;
  bool injected = false;
};

struct SeriesFilter {
  std::vector<std::string> words;  // each must occur in the case's label ("abs.learned default f32 seq=128")
  std::string device, host;        // substrings
};

struct SeriesInfo {
  int64_t id = 0;
  std::string case_key, device_key, host_cpu, label, variant, impl, dtype;
};

struct TrendPoint {
  int64_t run_id = 0;
  std::string created, commit, status;
  double median_ns = 0, cpu_median_ns = 0;  // 0: not timed
  int64_t samples = 0;
  // The median a trend follows (GPU, or CPU time with cpu); 0 where the
  // case did not run ok or was not timed.
  double value(bool cpu) const { return status != "ok" ? 0 : cpu ? cpu_median_ns : median_ns; }
};

class ResultsDb {
 public:
  // Connects and applies any migration not yet applied (each in its own
  // transaction, serialized across processes). A database with a schema
  // newer than this build's is refused with one line.
  explicit ResultsDb(const std::string& url);
  explicit ResultsDb(std::unique_ptr<Connection> connection);

  int schema_version();
  Connection& connection() { return *conn_; }

  // One report, in one transaction: all of it or nothing. The same report
  // (SHA-256 of its canonical JSON) ingested again is the same run.
  // Throws ReportError for a file that is not a pebench.report/1 report.
  IngestResult ingest_file(const std::string& path);
  IngestResult ingest_text(const std::string& text, const std::string& source);

  std::vector<RunInfo> runs(const RunFilter& filter);
  std::vector<SeriesInfo> series(const SeriesFilter& filter);
  // A series across runs, oldest first (report creation time); `last`: the newest N (0: all).
  std::vector<TrendPoint> trend(int64_t series_id, size_t last = 0);

  // The report as ingested, samples included (a pebench.report/1 document).
  nlohmann::json load_run_document(int64_t run_id);
  // Runs (newest first) of this host CPU that ran on the device `device_key`
  // with the same preset ("" matches runs without one), not made with
  // --inject-slowdown, except the run of `exclude_hash`; at most k.
  std::vector<int64_t> last_runs(const std::string& host_cpu, const std::string& device_key,
                                 const std::string& preset, const std::string& exclude_hash, size_t k);

 private:
  void migrate();
  std::unique_ptr<Connection> conn_;
};

// The canonical hash of a report document (what ingest calls the same report).
std::string report_hash(const nlohmann::json& doc);

// A baseline made of several runs' documents (newest first): per device and
// case, the result of the run whose median (`cpu`: CPU-time median) is the
// median of the runs' medians, as scripts/make-baseline.sh does; a case ok
// in none of them comes from the newest run that has it. The header is the
// newest run's, with "history": {"runs": [hashes], "pick": "median"}.
nlohmann::json baseline_document(const std::vector<nlohmann::json>& runs, bool cpu);

}  // namespace pebench::db
