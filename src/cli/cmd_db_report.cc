// The results database side of `pebench report --db` (cli/report_trends.h):
// each matching series' runs, oldest first, as the trend charts draw them.
// Built only with PEBENCH_DB, like cmd_db.cc.

#include <fmt/format.h>

#include <filesystem>

#include "cli/report_trends.h"
#include "db/results_db.h"
#include "harness/contract/errors.h"

namespace pebench {
namespace {

ReportTrends load_trends(const ReportTrendQuery& q) {
  // An SQLite file is created where missing; a report only reads one.
  if (!db::is_postgres_url(q.db) && !std::filesystem::exists(q.db)) {
    throw UsageError(fmt::format("--db {}: no such results database", q.db));
  }
  db::ResultsDb store(q.db);
  ReportTrends out;
  out.source = store.connection().where();
  for (const auto& s : store.series({q.case_words, q.device, q.host})) {
    TrendSeries t{s.label, s.device_key, s.host_cpu, {}};
    for (const auto& p : store.trend(s.id, q.last)) t.runs.push_back({p.commit, p.created, p.value(q.cpu)});
    out.series.push_back(std::move(t));
  }
  return out;
}

const bool kRegistered = (report_trend_loader() = &load_trends, true);

}  // namespace
}  // namespace pebench
