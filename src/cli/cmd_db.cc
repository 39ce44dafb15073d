// `pebench db SUBCOMMAND`: the results database (docs/results-db.md).
//   ingest   REPORT.json...       store reports (idempotent, one transaction each)
//   runs                          list runs by device, host, commit and date
//   trend                         a case's median across runs (text, md, json)
//   changes                       change points in every matching case's series
//   compare  NEW.json [--gate]    NEW against a baseline made of the last K runs
// --db FILE|postgresql://...: the database (default $PEBENCH_DB, else
// reports/pebench.db).
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "analysis/change_points.h"
#include "analysis/compare.h"
#include "analysis/compare_json.h"
#include "analysis/compare_render.h"
#include "analysis/format_units.h"
#include "analysis/text_document.h"
#include "analysis/text_table.h"
#include "cli/option_checks.h"
#include "cli/command.h"
#include "db/results_db.h"
#include "harness/contract/errors.h"

namespace pebench {
namespace {

using nlohmann::json;

std::string default_db() {
  const char* env = std::getenv("PEBENCH_DB");
  return env && *env ? env : "reports/pebench.db";
}

std::string short_commit(const std::string& c) {
  const bool dirty = c.size() > 6 && c.compare(c.size() - 6, 6, "-dirty") == 0;
  return c.substr(0, 10) + (dirty ? "-dirty" : "");
}

class DbCommand : public Command {
 public:
  std::string name() const override { return "db"; }
  std::string description() const override {
    return "results database (SQLite file or postgresql:// URL): ingest, runs, trend, changes, compare --gate";
  }

  void configure(CLI::App& app) override {
    app.require_subcommand(1);
    const auto db_option = [this](CLI::App* sub) {
      sub->add_option("--db", url_, "SQLite file or postgresql://... URL (default: $PEBENCH_DB, else reports/pebench.db)");
    };
    const auto format_option = [this](CLI::App* sub) {
      sub->add_option("--format", format_, "text, md or json")->check(CLI::IsMember({"text", "md", "json"}));
    };
    const auto series_options = [this](CLI::App* sub) {
      sub->add_option("--case", case_words_,
                      "words that must all occur in the case (e.g. \"abs.learned f32 seq=128\"); default: every case");
      sub->add_option("--device", device_, "device name substring");
      sub->add_option("--host", host_, "host CPU substring");
      sub->add_option("--time", time_, "gpu (time_ns medians) or cpu (cpu_ns medians)")
          ->check(CLI::IsMember({"gpu", "cpu"}));
      sub->add_option("--last", last_, "only the newest N runs of each series (0: all)");
    };

    ingest_ = app.add_subcommand("ingest", "store reports; the same report again is the same run");
    db_option(ingest_);
    ingest_->add_option("reports", paths_, "REPORT.json...")->required()->expected(1, -1);

    runs_ = app.add_subcommand("runs", "list runs, newest first, by device, host, commit and date");
    db_option(runs_);
    format_option(runs_);
    runs_->add_option("--device", run_filter_.device, "device name substring");
    runs_->add_option("--host", run_filter_.host, "host CPU substring");
    runs_->add_option("--commit", run_filter_.commit, "git commit prefix");
    runs_->add_option("--since", run_filter_.since, "created at or after (ISO-8601 prefix, e.g. 2026-11-01)");
    runs_->add_option("--until", run_filter_.until, "created before (ISO-8601 prefix)");
    runs_->add_option("--limit", run_filter_.limit, "the newest N (0: all)");

    trend_ = app.add_subcommand("trend", "each matching case's median across runs, with the commit of each run");
    db_option(trend_);
    format_option(trend_);
    series_options(trend_);

    changes_ = app.add_subcommand("changes", "change points in each matching case's series: where, between "
                                             "which commits, and how large a step");
    db_option(changes_);
    format_option(changes_);
    series_options(changes_);
    changes_->add_option("--min-segment", cp_.min_segment, "runs each side of a change, at least")
        ->capture_default_str()
        ->check(CLI::Range(1, 100000));
    changes_->add_option("--alpha", cp_.alpha, "permutation p-value below which a change counts")
        ->capture_default_str()
        ->check(CLI::Range(1e-9, 1.0));
    changes_->add_option("--min-step", cp_.min_step, "smallest step reported (0.02: 2%)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1e6));

    compare_ = app.add_subcommand("compare", "NEW.json against a baseline made of the last K runs of its device "
                                             "and host (per case, the median run); --gate exits 1 on a regression");
    db_option(compare_);
    format_option(compare_);
    compare_->add_option("report", new_path_, "NEW.json")->required();
    compare_->add_option("--runs", k_, "how many of the last runs make the baseline")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    compare_->add_flag("--gate", gate_, "exit 1 on a regression (as compare --gate)");
    compare_->add_option("--threshold", options_.threshold, "relative change below which a case is unchanged")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1e6));
    compare_->add_option("--alpha", options_.alpha, "significance level of the U test")
        ->capture_default_str()
        ->check(CLI::Range(1e-12, 0.999999));
    compare_->add_option("--time", time_, "gpu or cpu samples")->check(CLI::IsMember({"gpu", "cpu"}));
    compare_->add_flag("--normalize", options_.normalize, "divide ratios by the load factor");
    compare_->add_option("--load-neighbours", options_.load_neighbours, "with --normalize: a load factor per case");
    compare_->add_option("--min-samples", options_.min_samples, "fewer samples on a side fail --gate");
    compare_->add_option("--variant-threshold", variant_threshold_, "also gate each variant's median ratio")
        ->check(CLI::Range(0.0, 1e6));
    compare_->add_option("--confirm", confirm_path_, "NEW2.json: a timing reason must show there too");
  }

  int run(CLI::App&) override {
    if (ingest_->parsed()) return run_ingest();
    if (runs_->parsed()) return run_runs();
    if (trend_->parsed()) return run_trend();
    if (changes_->parsed()) return run_changes();
    if (compare_->parsed()) return run_compare_history();
    throw UsageError("db needs a subcommand: ingest, runs, trend, changes or compare");
  }

 private:
  int run_ingest() {
    db::ResultsDb store(url_);
    size_t bytes = 0, added = 0;
    const auto start = std::chrono::steady_clock::now();
    for (const auto& p : paths_) {
      const db::IngestResult r = store.ingest_file(p);
      bytes += r.bytes;
      if (r.inserted) {
        ++added;
        std::cout << fmt::format("{}: run {}, {} results, {:.2f} MB (sha256 {})\n", p, r.run_id, r.results,
                                 r.bytes / 1e6, r.hash.substr(0, 12));
      } else {
        std::cout << fmt::format("{}: already run {} (sha256 {}); nothing added\n", p, r.run_id, r.hash.substr(0, 12));
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << fmt::format("ingested {} of {} reports, {:.2f} MB in {:.3f} s ({:.1f} MB/s) into {}\n", added,
                             paths_.size(), bytes / 1e6, s, s > 0 ? bytes / 1e6 / s : 0.0, url_);
    return 0;
  }

  int run_runs() {
    db::ResultsDb store(url_);
    const auto runs = store.runs(run_filter_);
    if (format_ == "json") {
      json out = json::array();
      for (const auto& r : runs) {
        out.push_back({{"id", r.id},           {"sha256", r.hash},        {"created", r.created},
                       {"ingested", r.ingested}, {"git_commit", r.commit}, {"version", r.tool_version},
                       {"host_cpu", r.host_cpu}, {"preset", r.preset},     {"devices", r.devices},
                       {"results", r.results}, {"ok", r.ok},               {"bytes", r.bytes},
                       {"injected", r.injected}, {"source", r.source}});
      }
      std::cout << json{{"schema", "pebench.db-runs/1"}, {"runs", out}}.dump(2) << "\n";
      return 0;
    }
    TextTable t({"run", "created", "commit", "preset", "devices", "host", "ok/results", "source"});
    for (const auto& r : runs) {
      std::string devices;
      for (const auto& d : r.devices) devices += (devices.empty() ? "" : ", ") + d;
      t.add_row({std::to_string(r.id), r.created, short_commit(r.commit), r.preset.empty() ? "-" : r.preset, devices,
                 r.host_cpu, fmt::format("{}/{}{}", r.ok, r.results, r.injected ? " (injected)" : ""), r.source});
    }
    t.align_right(0);
    std::cout << (format_ == "md" ? t.markdown() : t.text());
    std::cout << fmt::format("{} run{}\n", runs.size(), runs.size() == 1 ? "" : "s");
    return 0;
  }

  std::vector<db::SeriesInfo> matching_series(db::ResultsDb& store) {
    db::SeriesFilter f{split_words(case_words_), device_, host_};
    return store.series(f);
  }

  int run_trend() {
    db::ResultsDb store(url_);
    const bool cpu = time_ == "cpu";
    const auto series = matching_series(store);
    json out = json::array();
    TextDocument doc;
    for (const auto& s : series) {
      const auto points = store.trend(s.id, last_);
      double first = 0;
      for (const auto& p : points) {
        if (p.value(cpu) > 0) {
          first = p.value(cpu);
          break;
        }
      }
      if (format_ == "json") {
        json pts = json::array();
        for (const auto& p : points) {
          pts.push_back({{"run", p.run_id}, {"created", p.created}, {"git_commit", p.commit}, {"status", p.status},
                         {"median_ns", p.median_ns > 0 ? json(p.median_ns) : json()},
                         {"cpu_median_ns", p.cpu_median_ns > 0 ? json(p.cpu_median_ns) : json()},
                         {"samples", p.samples}});
        }
        out.push_back({{"case", s.label}, {"key", s.case_key}, {"device", s.device_key}, {"host_cpu", s.host_cpu},
                       {"points", pts}});
        continue;
      }
      doc.heading(fmt::format("{} on {} ({})", s.label, s.device_key, s.host_cpu));
      TextTable t({"run", "created", "commit", "status", cpu ? "cpu median" : "median", "vs first", "n"});
      for (const auto& p : points) {
        const double v = p.value(cpu);
        t.add_row({std::to_string(p.run_id), p.created, short_commit(p.commit), p.status, v > 0 ? format_ns(v) : "-",
                   v > 0 && first > 0 ? format_ratio(v / first) : "-", std::to_string(p.samples)});
      }
      for (size_t c : {0, 4, 5, 6}) t.align_right(c);
      doc.table(std::move(t));
    }
    if (format_ == "json") {
      std::cout << json{{"schema", "pebench.db-trend/1"}, {"time", cpu ? "cpu" : "gpu"}, {"series", out}}.dump(2)
                << "\n";
    } else {
      if (series.empty()) doc.paragraph({"no case in the database matches"});
      std::cout << (format_ == "md" ? doc.markdown() : doc.text());
    }
    return 0;
  }

  int run_changes() {
    db::ResultsDb store(url_);
    const bool cpu = time_ == "cpu";
    json out = json::array();
    TextTable t({"case", "device", "at run", "commits", "created", "before", "after", "step", "p"});
    size_t scanned = 0;
    for (const auto& s : matching_series(store)) {
      const auto all = store.trend(s.id, last_);
      std::vector<db::TrendPoint> points;
      std::vector<double> values;
      for (const auto& p : all) {
        if (p.value(cpu) > 0) {
          points.push_back(p);
          values.push_back(p.value(cpu));
        }
      }
      ++scanned;
      for (const auto& c : change_points(values, cp_)) {
        const auto& prev = points[c.index - 1];
        const auto& at = points[c.index];
        const std::string commits = fmt::format("{}..{}", short_commit(prev.commit), short_commit(at.commit));
        if (format_ == "json") {
          out.push_back({{"case", s.label},        {"key", s.case_key},        {"device", s.device_key},
                         {"host_cpu", s.host_cpu}, {"run", at.run_id},         {"previous_run", prev.run_id},
                         {"commit", at.commit},    {"previous_commit", prev.commit}, {"created", at.created},
                         {"before_ns", c.before},  {"after_ns", c.after},      {"step", c.step},
                         {"p", c.p}});
        } else {
          t.add_row({s.label, s.device_key, std::to_string(at.run_id), commits, at.created, format_ns(c.before),
                     format_ns(c.after), format_percent(c.step), format_p(c.p)});
        }
      }
    }
    if (format_ == "json") {
      std::cout << json{{"schema", "pebench.db-changes/1"}, {"series_scanned", scanned}, {"changes", out}}.dump(2)
                << "\n";
      return 0;
    }
    for (size_t c : {2, 5, 6, 7, 8}) t.align_right(c);
    std::cout << (format_ == "md" ? t.markdown() : t.text());
    std::cout << fmt::format("{} change point{} in {} series (min segment {}, alpha {}, min step {})\n", t.rows(),
                             t.rows() == 1 ? "" : "s", scanned, cp_.min_segment, cp_.alpha,
                             format_percent(cp_.min_step));
    return 0;
  }

  int run_compare_history() {
    const bool cpu = time_ == "cpu";
    options_.series = cpu ? TimeSeries::kCpu : TimeSeries::kGpu;
    if (variant_threshold_ > 0) options_.variant_threshold = variant_threshold_;
    if (options_.load_neighbours > 0 && !options_.normalize) {
      throw UsageError(fmt::format("--load-neighbours {} needs --normalize", options_.load_neighbours));
    }
    if (!confirm_path_.empty() && !gate_) throw UsageError(fmt::format("--confirm {} needs --gate", confirm_path_));
    ReportFile fresh = load_report(new_path_);  // ReportError: exit 2
    const auto devices = fresh.result_devices();
    if (devices.empty()) throw UsageError(fmt::format("{}: no results to compare", new_path_));
    db::ResultsDb store(url_);
    std::ifstream in(new_path_, std::ios::binary);
    const json new_doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
    const std::string preset = new_doc.contains("run") && new_doc["run"].is_object()
                                   ? new_doc["run"].value("preset", json()).is_string()
                                         ? new_doc["run"]["preset"].get<std::string>()
                                         : ""
                                   : "";
    const auto ids = store.last_runs(fresh.host_cpu(), devices.front(), preset, db::report_hash(new_doc), k_);
    if (ids.empty()) {
      throw UsageError(fmt::format("{}: no run in {} on {} with host {}{} to compare with", new_path_, url_,
                                   devices.front(), fresh.host_cpu(),
                                   preset.empty() ? "" : fmt::format(" and preset {}", preset)));
    }
    std::vector<json> docs;
    for (int64_t id : ids) docs.push_back(store.load_run_document(id));
    std::string id_list;
    for (int64_t id : ids) id_list += (id_list.empty() ? "" : ",") + std::to_string(id);
    const std::string base_name = fmt::format("{}#runs={}", url_, id_list);
    std::vector<ReportFile> reports;
    reports.push_back(parse_report(db::baseline_document(docs, cpu), base_name));
    reports.push_back(std::move(fresh));
    std::optional<ReportFile> confirm;
    if (!confirm_path_.empty()) confirm = load_report(confirm_path_);
    const CompareResult result = run_compare(reports, options_, gate_, confirm ? &*confirm : nullptr);
    if (format_ == "json") {
      json j = compare_json(reports, result);
      j["history"] = {{"runs", ids}, {"k", k_}};
      std::cout << j.dump(2) << "\n";
      if (result.gate) {
        for (const auto& r : result.gate->reasons) std::cerr << "gate: " << r << "\n";
      }
    } else {
      std::cout << fmt::format("baseline: the median of the last {} run{} ({}) of {} on {}\n", ids.size(),
                               ids.size() == 1 ? "" : "s", id_list, devices.front(), reports[1].host_cpu());
      std::cout << (format_ == "md" ? render_compare_markdown(reports, result) : render_compare_text(reports, result));
    }
    std::cout.flush();
    return result.gate && !result.gate->passed() ? 1 : 0;
  }

  CLI::App *ingest_ = nullptr, *runs_ = nullptr, *trend_ = nullptr, *changes_ = nullptr, *compare_ = nullptr;
  std::string url_ = default_db();
  std::string format_ = "text";
  std::vector<std::string> paths_;
  db::RunFilter run_filter_;
  std::string case_words_, device_, host_, time_ = "gpu";
  size_t last_ = 0;
  ChangePointOptions cp_{5, 0.01, 499, 0.02};
  std::string new_path_, confirm_path_;
  size_t k_ = 5;
  bool gate_ = false;
  CompareOptions options_;
  double variant_threshold_ = 0;
};

PEBENCH_REGISTER_COMMAND(DbCommand);

}  // namespace
}  // namespace pebench
