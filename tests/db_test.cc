// The results database (src/db, `pebench db`): the same tests on SQLite and
// on a real PostgreSQL server (tests/pg_server.sh, started by CTest as the
// fixture `pg`, or here when run by hand), plus the change-point method on
// synthetic series and on real quick-run samples.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <thread>

#include "analysis/change_points.h"
#include "analysis/report_file.h"
#include "db/results_db.h"
#include "db/sha256.h"
#include "test_util.h"

namespace pebench {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string source_path(const std::string& rel) { return std::string(PEBENCH_SOURCE_DIR) + "/" + rel; }

const json& quick_report() {
  static const json doc = [] {
    std::ifstream in(source_path("reports/baselines/lavapipe-quick.json"));
    return json::parse(in);
  }();
  return doc;
}

// Multiplies every sample and median statistic of the variants starting
// with `only` ("" = all) by `scale`.
void scale_times(json& doc, double scale, const std::string& only = "") {
  for (auto& r : doc["results"]) {
    if (!only.empty() && r["variant"].get<std::string>().rfind(only, 0) != 0) continue;
    for (const char* k : {"time_ns", "cpu_ns"}) {
      if (!r.contains(k)) continue;
      auto& t = r[k];
      for (const char* f : {"median", "min", "max", "mean"}) {
        if (t.contains(f) && t[f].is_number()) t[f] = t[f].get<double>() * scale;
      }
      if (t.contains("samples")) {
        for (auto& s : t["samples"]) s = s.get<double>() * scale;
      }
    }
  }
}

// A distinct report: created `hour` hours into 2026-12, its times scaled as
// scale_times does.
json variant_report(int hour, double scale = 1.0, const std::string& only = "", const std::string& commit = "") {
  json doc = quick_report();
  doc["created"] = fmt::format("2026-12-{:02d}T{:02d}:00:00Z", 1 + hour / 24, hour % 24);
  if (!commit.empty()) doc["tool"]["git_commit"] = commit;
  scale_times(doc, scale, only);
  return doc;
}

std::string write_report(const std::string& dir, const std::string& name, const json& doc) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << doc.dump();
  return path;
}

// --- PostgreSQL: one server per test process (or CTest's), a database per test.
struct PgServer {
  std::string url, skip, own_dir;
  ~PgServer() {
    if (!own_dir.empty()) {
      std::system(fmt::format("{} stop {} >/dev/null 2>&1", source_path("tests/pg_server.sh"), own_dir).c_str());
    }
  }
};

PgServer& pg_server() {
  static PgServer s = [] {
    PgServer out;
    std::string dir;
    if (const char* d = std::getenv("PEBENCH_TEST_PG_DIR"); d && *d) {
      dir = d;
    } else {
      dir = fmt::format("/tmp/pebench-pg-test-{}", getpid());
      const int rc =
          std::system(fmt::format("{} start {} >/dev/null 2>&1", source_path("tests/pg_server.sh"), dir).c_str());
      if (rc != 0) {
        out.skip = "tests/pg_server.sh start failed";
        return out;
      }
      out.own_dir = dir;
    }
    out.skip = test::read_file(dir + "/skip");
    out.url = test::read_file(dir + "/url");
    while (!out.url.empty() && out.url.back() == '\n') out.url.pop_back();
    if (out.url.empty() && out.skip.empty()) out.skip = "no PostgreSQL server at " + dir;
    return out;
  }();
  return s;
}

std::string fresh_pg_database() {
  static std::atomic<int> counter{0};
  const std::string name = fmt::format("t_{}_{}", getpid(), counter++);
  auto admin = db::connect(pg_server().url);
  admin->exec("DROP DATABASE IF EXISTS " + name);
  admin->exec("CREATE DATABASE " + name);
  std::string url = pg_server().url;
  url.replace(url.find("/postgres?"), 10, "/" + name + "?");
  return url;
}

int64_t count(db::ResultsDb& store, const std::string& table) {
  return store.connection().query("SELECT COUNT(*) FROM " + table)[0].int64(0);
}

class DbBackend : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = test::temp_dir("db");
    if (GetParam() == "postgresql") {
      if (!pg_server().skip.empty()) GTEST_SKIP() << pg_server().skip;
      url_ = fresh_pg_database();
    } else {
      url_ = dir_ + "/results.db";
    }
  }
  std::string dir_, url_;
};

TEST_P(DbBackend, MigratesOnceAndRecordsTheSchemaVersion) {
  {
    db::ResultsDb a(url_);
    EXPECT_EQ(a.schema_version(), db::latest_schema_version());
  }
  db::ResultsDb b(url_);  // again: nothing to apply
  EXPECT_EQ(count(b, "pebench_schema"), db::latest_schema_version());
  EXPECT_EQ(count(b, "run"), 0);
}

TEST_P(DbBackend, RefusesADatabaseNewerThanThisBuild) {
  {
    db::ResultsDb a(url_);
    a.connection().exec("INSERT INTO pebench_schema (version, applied) VALUES (999, 'future')");
  }
  try {
    db::ResultsDb b(url_);
    FAIL() << "opened a database of schema 999";
  } catch (const db::DbError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("version 999, newer than this pebench's"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST_P(DbBackend, KeepsEverySampleAndRebuildsTheReport) {
  db::ResultsDb store(url_);
  const auto path = write_report(dir_, "a.json", quick_report());
  const auto r = store.ingest_file(path);
  ASSERT_TRUE(r.inserted);
  EXPECT_EQ(r.results, quick_report()["results"].size());
  const ReportFile original = parse_report(quick_report(), "original");
  const ReportFile back = parse_report(store.load_run_document(r.run_id), "db");
  ASSERT_EQ(back.cases.size(), original.cases.size());
  size_t samples = 0;
  for (size_t i = 0; i < original.cases.size(); ++i) {
    const auto& a = original.cases[i];
    const auto& b = back.cases[i];
    EXPECT_EQ(a.key, b.key);
    EXPECT_EQ(a.status, b.status);
    ASSERT_EQ(a.time.has_value(), b.time.has_value());
    if (!a.time) continue;
    EXPECT_EQ(a.time->samples, b.time->samples) << a.display();
    EXPECT_EQ(a.time->cpu_samples, b.time->cpu_samples) << a.display();
    EXPECT_EQ(a.time->started_ns, b.time->started_ns) << a.display();
    EXPECT_EQ(a.time->median, b.time->median);
    samples += b.time->samples.size();
  }
  EXPECT_GT(samples, 5000u);
  EXPECT_EQ(back.host_cpu(), original.host_cpu());
}

TEST_P(DbBackend, TheSameReportTwiceIsOneRun) {
  db::ResultsDb store(url_);
  const auto path = write_report(dir_, "a.json", quick_report());
  const auto first = store.ingest_file(path);
  // Reformatted (indented) but the same report: the same run.
  const auto second = store.ingest_text(quick_report().dump(2), "again.json");
  EXPECT_TRUE(first.inserted);
  EXPECT_FALSE(second.inserted);
  EXPECT_EQ(first.run_id, second.run_id);
  EXPECT_EQ(first.hash, second.hash);
  EXPECT_EQ(count(store, "run"), 1);
  EXPECT_EQ(count(store, "result"), static_cast<int64_t>(quick_report()["results"].size()));
  EXPECT_TRUE(store.ingest_text(variant_report(1).dump(), "other.json").inserted);
  EXPECT_EQ(count(store, "run"), 2);
}

TEST_P(DbBackend, RefusesAnotherSchemaVersionWithOneLine) {
  db::ResultsDb store(url_);
  json doc = quick_report();
  doc["schema"] = "pebench.report/2";
  try {
    store.ingest_text(doc.dump(), "future.json");
    FAIL() << "ingested a pebench.report/2 report";
  } catch (const ReportError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg, "future.json: schema pebench.report/2 is not pebench.report/1, the one this pebench ingests");
  }
  EXPECT_THROW(store.ingest_text("{\"schema\": 1", "broken.json"), ReportError);
  EXPECT_EQ(count(store, "run"), 0);
}

TEST_P(DbBackend, ListsRunsByDeviceHostCommitAndDate) {
  db::ResultsDb store(url_);
  store.ingest_text(variant_report(0, 1.0, "", "aaaa1111").dump(), "r0.json");
  store.ingest_text(variant_report(30, 1.0, "", "bbbb2222").dump(), "r1.json");
  store.ingest_text(variant_report(60, 1.0, "", "bbbb3333").dump(), "r2.json");
  const auto all = store.runs({});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].source, "r2.json");  // newest first
  EXPECT_EQ(all[0].results, static_cast<int64_t>(quick_report()["results"].size()));
  ASSERT_EQ(all[0].devices.size(), 1u);
  EXPECT_EQ(store.runs({"llvmpipe"}).size(), 3u);
  EXPECT_EQ(store.runs({"no such gpu"}).size(), 0u);
  EXPECT_EQ(store.runs({"", "model 167"}).size(), 3u);
  EXPECT_EQ(store.runs({"", "EPYC"}).size(), 0u);
  EXPECT_EQ(store.runs({"", "", "bbbb"}).size(), 2u);
  EXPECT_EQ(store.runs({"", "", "", "2026-12-02"}).size(), 2u);          // since
  EXPECT_EQ(store.runs({"", "", "", "", "2026-12-02"}).size(), 1u);      // until
  EXPECT_EQ(store.runs({"", "", "", "", "", 2}).size(), 2u);             // limit
  EXPECT_EQ(store.runs({"%"}).size(), 0u);  // LIKE wildcards are literal
}

TEST_P(DbBackend, TrendIsOldestFirstAndFollowsTheCase) {
  db::ResultsDb store(url_);
  for (int i : {2, 0, 1}) store.ingest_text(variant_report(i, 1.0 + 0.1 * i).dump(), fmt::format("r{}.json", i));
  const auto series = store.series({{"abs.learned", "f32", "seq=128"}});
  ASSERT_EQ(series.size(), 1u);
  const auto points = store.trend(series[0].id);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_LT(points[0].created, points[1].created);
  EXPECT_NEAR(points[1].median_ns / points[0].median_ns, 1.1, 1e-9);
  EXPECT_NEAR(points[2].median_ns / points[0].median_ns, 1.2, 1e-9);
  EXPECT_EQ(store.trend(series[0].id, 2).size(), 2u);
  EXPECT_NEAR(store.trend(series[0].id, 2)[0].median_ns, points[1].median_ns, 1e-6);
}

TEST_P(DbBackend, BaselineOfTheLastRunsTakesEachCasesMedianRun) {
  db::ResultsDb store(url_);
  const double scales[] = {1.3, 1.0, 0.8, 1.1};  // oldest first
  for (int i = 0; i < 4; ++i) store.ingest_text(variant_report(i, scales[i]).dump(), fmt::format("r{}.json", i));
  const ReportFile q = parse_report(quick_report(), "q");
  const auto ids = store.last_runs(q.host_cpu(), q.result_devices().front(), "quick", "", 3);
  ASSERT_EQ(ids.size(), 3u);  // the newest three: 1.1, 0.8, 1.0
  std::vector<json> docs;
  for (auto id : ids) docs.push_back(store.load_run_document(id));
  const ReportFile base = parse_report(db::baseline_document(docs, false), "baseline");
  ASSERT_EQ(base.cases.size(), q.cases.size());
  for (size_t i = 0; i < q.cases.size(); ++i) {
    if (!q.cases[i].timed()) continue;
    EXPECT_NEAR(base.cases[i].time->median / q.cases[i].time->median, 1.0, 1e-9) << q.cases[i].display();
  }
  EXPECT_TRUE(store.last_runs(q.host_cpu(), "other device", "quick", "", 3).empty());
  EXPECT_TRUE(store.last_runs("another cpu", q.result_devices().front(), "quick", "", 3).empty());
  EXPECT_TRUE(store.last_runs(q.host_cpu(), q.result_devices().front(), "standard", "", 3).empty());
}

TEST_P(DbBackend, EightConcurrentIngestsLoseNothing) {
  db::ResultsDb store(url_);  // migrated before the race; the race on migration is the next test's
  std::vector<std::string> paths;
  for (int i = 0; i < 8; ++i) paths.push_back(write_report(dir_, fmt::format("c{}.json", i), variant_report(i, 1 + i * 0.01)));
  std::vector<test::ProcessResult> results(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { results[i] = test::run_pebench({"db", "ingest", "--db", url_, paths[i]}); });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(count(store, "run"), 8);
  EXPECT_EQ(count(store, "result"), 8 * static_cast<int64_t>(quick_report()["results"].size()));
  EXPECT_EQ(count(store, "series"), static_cast<int64_t>(quick_report()["results"].size()));
}

TEST_P(DbBackend, ConcurrentFirstOpensMigrateOnce) {
  std::vector<std::string> paths;
  for (int i = 0; i < 4; ++i) paths.push_back(write_report(dir_, fmt::format("m{}.json", i), variant_report(i)));
  std::vector<test::ProcessResult> results(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] { results[i] = test::run_pebench({"db", "ingest", "--db", url_, paths[i]}); });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << r.out;
  db::ResultsDb store(url_);
  EXPECT_EQ(count(store, "pebench_schema"), db::latest_schema_version());
  EXPECT_EQ(count(store, "run"), 4);
}

TEST_P(DbBackend, AKilledIngestLeavesNoPartialRun) {
  const auto path = write_report(dir_, "a.json", quick_report());
  const auto killed = test::run_pebench({"db", "ingest", "--db", url_, path}, {"PEBENCH_DB_TEST_DIE_AFTER=50"});
  EXPECT_NE(killed.exit_code, 0) << killed.out;
  {
    db::ResultsDb store(url_);
    EXPECT_EQ(count(store, "run"), 0);
    EXPECT_EQ(count(store, "result"), 0);
  }
  const auto again = test::run_pebench({"db", "ingest", "--db", url_, path});
  EXPECT_EQ(again.exit_code, 0) << again.out;
  db::ResultsDb store(url_);
  EXPECT_EQ(count(store, "run"), 1);
  EXPECT_EQ(count(store, "result"), static_cast<int64_t>(quick_report()["results"].size()));
}

TEST_P(DbBackend, CompareGatesAgainstTheLastRuns) {
  for (int i = 0; i < 5; ++i) {
    const auto p = write_report(dir_, fmt::format("h{}.json", i), variant_report(i, 1.0 + 0.01 * (i % 3)));
    ASSERT_EQ(test::run_pebench({"db", "ingest", "--db", url_, p}).exit_code, 0);
  }
  const auto clean = write_report(dir_, "clean.json", variant_report(10, 1.0));
  const auto slow = write_report(dir_, "slow.json", variant_report(11, 1.5, "abs.learned"));
  const auto pass = test::run_pebench({"db", "compare", "--db", url_, clean, "--gate", "--runs", "5"});
  EXPECT_EQ(pass.exit_code, 0) << pass.out;
  EXPECT_NE(pass.out.find("baseline: the median of the last 5 runs"), std::string::npos) << pass.out;
  const auto fail = test::run_pebench({"db", "compare", "--db", url_, slow, "--gate", "--runs", "5"});
  EXPECT_EQ(fail.exit_code, 1) << fail.out;
  EXPECT_NE(fail.out.find("abs.learned"), std::string::npos) << fail.out;
  EXPECT_EQ(fail.out.find("gate: slower: abs.sinusoidal"), std::string::npos) << fail.out;
}

INSTANTIATE_TEST_SUITE_P(Sqlite, DbBackend, ::testing::Values("sqlite"));
INSTANTIATE_TEST_SUITE_P(Postgres, DbBackend, ::testing::Values("postgresql"));

// --- The command line (SQLite).

// Turning a rollback-journal database into WAL reads it and then takes its
// write lock, and SQLite calls no busy handler for that upgrade. A first open
// that met another connection's write lock failed at once with "database is
// locked" (ConcurrentFirstOpensMigrateOnce, 1 run in 13 here); here the
// other connection is a plain sqlite3 one holding BEGIN IMMEDIATE, so the
// race is certain.
TEST(SqliteDb, AFirstOpenWaitsForAnotherWritersLock) {
  const std::string dir = test::temp_dir("sqlite-wait");
  const std::string path = dir + "/results.db";
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  const auto exec = [&](const char* sql) { ASSERT_EQ(sqlite3_exec(other, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql; };
  exec("CREATE TABLE earlier (x INTEGER)");  // a database in rollback-journal mode, not empty
  exec("BEGIN IMMEDIATE");
  exec("INSERT INTO earlier VALUES (1)");
  std::atomic<bool> ingest_done{false};
  std::thread holder([&] {
    for (int i = 0; i < 30 && !ingest_done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    exec("COMMIT");
  });
  const auto report = write_report(dir, "r.json", quick_report());
  const auto r = test::run_pebench({"db", "ingest", "--db", path, report});
  ingest_done = true;
  holder.join();
  sqlite3_close(other);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  db::ResultsDb store(path);
  EXPECT_EQ(count(store, "run"), 1);
}

TEST(DbCli, HelpListsTheSubcommands) {
  const auto r = test::run_pebench({"db", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* sub : {"ingest", "runs", "trend", "changes", "compare"}) {
    EXPECT_NE(r.out.find(std::string("  ") + sub + " "), std::string::npos) << sub << "\n" << r.out;
  }
}

TEST(DbCli, IngestRunsTrendAndChanges) {
  const std::string dir = test::temp_dir("cli");
  const std::string url = dir + "/r.db";
  std::vector<std::string> args{"db", "ingest", "--db", url};
  // 24 runs; abs.learned 6% slower from the 13th (commit c12) on.
  for (int i = 0; i < 24; ++i) {
    std::mt19937_64 rng(i);
    const double jitter = 1 + std::normal_distribution<double>(0, 0.01)(rng);
    json doc = variant_report(i, jitter, "", fmt::format("c{:02d}", i));
    if (i >= 12) scale_times(doc, 1.06, "abs.learned");
    args.push_back(write_report(dir, fmt::format("r{}.json", i), doc));
  }
  const auto ingest = test::run_pebench(args);
  ASSERT_EQ(ingest.exit_code, 0) << ingest.out;
  EXPECT_NE(ingest.out.find("ingested 24 of 24 reports"), std::string::npos) << ingest.out;
  const auto again = test::run_pebench({"db", "ingest", "--db", url, args[4]});
  EXPECT_NE(again.out.find("already run 1"), std::string::npos) << again.out;

  const auto runs = test::run_pebench({"db", "runs", "--db", url, "--commit", "c1", "--format", "json"});
  ASSERT_EQ(runs.exit_code, 0) << runs.out;
  EXPECT_EQ(json::parse(runs.out)["runs"].size(), 10u);  // c10..c19

  const auto trend = test::run_pebench(
      {"db", "trend", "--db", url, "--case", "abs.learned f32 seq=128", "--time", "cpu", "--format", "json"});
  ASSERT_EQ(trend.exit_code, 0) << trend.out;
  const json t = json::parse(trend.out);
  ASSERT_EQ(t["series"].size(), 1u);
  EXPECT_EQ(t["series"][0]["points"].size(), 24u);
  EXPECT_EQ(t["series"][0]["points"][0]["git_commit"], "c00");

  const auto md = test::run_pebench({"db", "trend", "--db", url, "--case", "abs.learned f32 seq=128", "--format", "md"});
  EXPECT_NE(md.out.find("| run |"), std::string::npos) << md.out;

  const auto changes = test::run_pebench({"db", "changes", "--db", url, "--time", "cpu", "--format", "json"});
  ASSERT_EQ(changes.exit_code, 0) << changes.out;
  const json c = json::parse(changes.out);
  size_t learned = 0, others = 0;
  for (const auto& ch : c["changes"]) {
    if (ch["case"].get<std::string>().rfind("abs.learned", 0) == 0) {
      ++learned;
      EXPECT_EQ(ch["commit"], "c12") << ch.dump();
      EXPECT_EQ(ch["previous_commit"], "c11") << ch.dump();
      EXPECT_NEAR(ch["step"].get<double>(), 0.06, 0.02) << ch.dump();
    } else {
      ++others;
    }
  }
  EXPECT_GE(learned, 1u) << changes.out;
  EXPECT_EQ(others, 0u) << changes.out;
}

// `pebench report --db`: the trend chart draws every run of the case, oldest
// first (ingested in another order), at its median, and marks the step.
TEST(DbCli, ReportDrawsTrendChartsInRunOrder) {
  const std::string dir = test::temp_dir("report");
  const std::string url = dir + "/r.db";
  const std::string kCase = "abs.learned f32 seq=128";
  double base = 0;
  for (const auto& r : quick_report()["results"]) {
    if (r["variant"] == "abs.learned" && r["dtype"] == "f32" && r["params"]["seq"] == 128) {
      base = r["time_ns"]["median"].get<double>();
      break;
    }
  }
  ASSERT_GT(base, 0);
  // 16 runs, abs.learned 10% slower from c08 on; ingested newest first.
  std::vector<double> expected;
  std::vector<std::string> args{"db", "ingest", "--db", url};
  for (int i = 0; i < 16; ++i) {
    const double jitter = 1 + 0.005 * ((i * 3) % 4);
    json doc = variant_report(i, jitter, "", fmt::format("c{:02d}", i));
    if (i >= 8) scale_times(doc, 1.10, "abs.learned");
    expected.push_back(base * jitter * (i >= 8 ? 1.10 : 1.0));
    args.insert(args.begin() + 4, write_report(dir, fmt::format("r{}.json", i), doc));
  }
  ASSERT_EQ(test::run_pebench(args).exit_code, 0);
  const std::string page = dir + "/page.html";
  const auto r = test::run_pebench({"report", "--db", url, "--case", kCase, "-o", page});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("0 reports, 1 trend)"), std::string::npos) << r.out;
  const std::string html = test::read_file(page);
  const auto svg_at = html.find("data-kind=\"trend\"");
  ASSERT_NE(svg_at, std::string::npos) << html;
  const std::string svg = html.substr(svg_at, html.find("</svg>", svg_at) - svg_at);
  const std::regex circle("<circle class=\"run\"[^>]* data-index=\"(\\d+)\" data-x-label=\"([^\"]*)\" data-y=\"([^\"]*)\"");
  size_t n = 0;
  for (std::sregex_iterator it(svg.begin(), svg.end(), circle), end; it != end; ++it, ++n) {
    ASSERT_LT(n, expected.size());
    EXPECT_EQ((*it)[1].str(), std::to_string(n));
    EXPECT_EQ((*it)[2].str(), fmt::format("c{:02d}", n));
    EXPECT_NEAR(std::stod((*it)[3].str()), expected[n], expected[n] * 1e-9);
  }
  EXPECT_EQ(n, expected.size());
  const std::regex change("<line class=\"change\"[^>]* data-index=\"(\\d+)\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, change)) << svg;
  EXPECT_EQ(m[1].str(), "8");

  // --x date labels the runs by their dates.
  ASSERT_EQ(test::run_pebench({"report", "--db", url, "--case", kCase, "--x", "date", "-o", page}).exit_code, 0);
  EXPECT_NE(test::read_file(page).find("data-x-label=\"2026-12-01\""), std::string::npos);
}

TEST(DbCli, ReportRefusesTrendOptionsWithoutADatabase) {
  const std::string dir = test::temp_dir("report-bad");
  const auto none = test::run_pebench({"report", "-o", dir + "/p.html"});
  EXPECT_EQ(none.exit_code, 2) << none.out;
  const auto no_db = test::run_pebench({"report", "--case", "abs", "-o", dir + "/p.html"});
  EXPECT_EQ(no_db.exit_code, 2) << no_db.out;
  EXPECT_NE(no_db.out.find("--case"), std::string::npos) << no_db.out;
  const auto missing = test::run_pebench({"report", "--db", dir + "/missing.db", "-o", dir + "/p.html"});
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_NE(missing.out.find("missing.db"), std::string::npos) << missing.out;
  EXPECT_FALSE(fs::exists(dir + "/missing.db"));
}

TEST(DbCli, RefusesAnotherSchemaWithOneLineAndExit2) {
  const std::string dir = test::temp_dir("schema");
  json doc = quick_report();
  doc["schema"] = "pebench.report/2";
  const auto r = test::run_pebench({"db", "ingest", "--db", dir + "/r.db", write_report(dir, "x.json", doc)});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find("schema pebench.report/2 is not pebench.report/1"), std::string::npos) << r.out;
}

// --- Pieces.

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(db::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(db::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(db::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(db::sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

std::vector<double> noisy_series(uint64_t seed, size_t n, size_t step_at, double step, double sd) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, sd);
  std::vector<double> s(n);
  for (size_t i = 0; i < n; ++i) s[i] = 100.0 * (1 + noise(rng)) * (i >= step_at ? 1 + step : 1);
  return s;
}

TEST(ChangePoints, FindsA5PercentStepWithinOneRun) {
  // Noise of 2% (sd) per run; a 5% step at run 20 of 40.
  int found = 0, extra = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const auto cps = change_points(noisy_series(seed, 40, 20, 0.05, 0.02));
    bool hit = false;
    for (const auto& c : cps) {
      if (c.index + 1 >= 20 && c.index <= 21) {
        hit = true;
        EXPECT_GT(c.step, 0.02);
        EXPECT_GT(c.z, 0);
      } else {
        ++extra;
      }
    }
    found += hit;
  }
  EXPECT_GE(found, 45) << "of 50";
  EXPECT_LE(extra, 5);
}

TEST(ChangePoints, FlatSeriesHaveNone) {
  int clean = 0;
  for (uint64_t seed = 100; seed < 150; ++seed) clean += change_points(noisy_series(seed, 40, 40, 0, 0.02)).empty();
  EXPECT_GE(clean, 45) << "of 50";
}

TEST(ChangePoints, AnOutlierIsNotAStep) {
  auto s = noisy_series(7, 40, 40, 0, 0.01);
  s[10] *= 3;
  s[30] *= 2.5;
  EXPECT_TRUE(change_points(s).empty());
}

TEST(ChangePoints, TwoStepsBothFound) {
  auto s = noisy_series(3, 60, 20, 0.10, 0.01);
  for (size_t i = 40; i < 60; ++i) s[i] *= 0.85;
  const auto cps = change_points(s);
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_NEAR(double(cps[0].index), 20, 1);
  EXPECT_NEAR(double(cps[1].index), 40, 1);
  EXPECT_NEAR(cps[0].step, 0.10, 0.03);
  EXPECT_NEAR(cps[1].step, -0.15, 0.03);
}

TEST(ChangePoints, NoSplitCloserThanTheMinimumSegment) {
  auto s = noisy_series(5, 30, 27, 0.5, 0.01);  // a big step 3 runs from the end
  EXPECT_TRUE(change_points(s, {5}).empty());
  s = noisy_series(5, 30, 10, 0.5, 0.01);
  ASSERT_EQ(change_points(s, {5}).size(), 1u);
  EXPECT_EQ(change_points(s, {5})[0].index, 10u);
  for (const auto& c : change_points(s, {12})) {
    EXPECT_GE(c.index, 12u);
    EXPECT_LE(c.index, 18u);
  }
}

TEST(ChangePoints, RealQuickRunNoise) {
  // Each "run" of a case is the median of as many of its real samples (CPU
  // time, the quick baseline's, drawn with replacement) as the case has, as
  // a real run's median is of all its samples; from run 15 of 30 on, the
  // samples are 5% slower. Every ok case with at least 50 samples. (Runs
  // of only 25 draws, as this test first drew, have 2-8 times the noise of
  // a real run's median: 30 of 34 found then.)
  const ReportFile q = parse_report(quick_report(), "quick");
  int hits = 0, flat_clean = 0, series = 0;
  for (const auto& c : q.cases) {
    if (!c.timed() || c.time->cpu_samples.size() < 50) continue;
    ++series;
    const std::vector<double>& samples = c.time->cpu_samples;
    std::mt19937_64 rng(series);
    std::uniform_int_distribution<size_t> pick(0, samples.size() - 1);
    const auto make = [&](double step) {
      std::vector<double> s;
      for (size_t run = 0; run < 30; ++run) {
        std::vector<double> draw;
        for (size_t k = 0; k < samples.size(); ++k) draw.push_back(samples[pick(rng)]);
        std::nth_element(draw.begin(), draw.begin() + draw.size() / 2, draw.end());
        s.push_back(draw[draw.size() / 2] * (run >= 15 ? 1 + step : 1));
      }
      return s;
    };
    const auto stepped = change_points(make(0.05));
    hits += stepped.size() == 1 && stepped[0].index + 1 >= 15 && stepped[0].index <= 16;
    flat_clean += change_points(make(0)).empty();
  }
  // Measured: 34 of 34 steps found within one run, 33 of 34 flat series
  // clean; the goal is 9 of 10 each.
  RecordProperty("steps_found", hits);
  RecordProperty("flat_clean", flat_clean);
  ASSERT_EQ(series, 34);
  EXPECT_GE(hits, 31);  // 90%
  EXPECT_GE(flat_clean, 31);
}

TEST(ChangePoints, Deterministic) {
  const auto s = noisy_series(11, 40, 20, 0.04, 0.02);
  const auto a = change_points(s), b = change_points(s);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].p, b[i].p);
}

}  // namespace
}  // namespace pebench
