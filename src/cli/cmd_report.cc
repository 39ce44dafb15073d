// `pebench report A.json [B.json…] -o report.html`: one self-contained HTML
// page with the reports' devices, charts and validation errors; with
// `--db FILE|URL` (and --case, --device, --host, --time, --last, --x), also
// each matching case's median across the database's runs, change points
// marked (docs/results-db.md). Reports are optional with --db.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <sstream>

#include "analysis/html_report.h"
#include "cli/option_checks.h"
#include "cli/command.h"
#include "cli/report_trends.h"
#include "harness/contract/errors.h"
#include "harness/output/build_info.h"
#include "harness/output/report.h"

namespace pebench {

ReportTrendLoader& report_trend_loader() {
  static ReportTrendLoader loader = nullptr;
  return loader;
}

namespace {

class ReportCommand : public Command {
 public:
  std::string name() const override { return "report"; }
  std::string description() const override { return "write one self-contained HTML page with charts of reports"; }

  void configure(CLI::App& app) override {
    app.add_option("reports", paths_, "A.json [B.json...] (optional with --db)")->expected(0, -1);
    app.add_option("-o,--out", out_, "the HTML file to write")->capture_default_str();
    app.add_option("--db", trend_query_.db,
                   "also draw trend charts from this results database (SQLite file or postgresql://... URL)");
    app.add_option("--case", case_words_,
                   "with --db: words that must all occur in the case (e.g. \"abs.learned f32 seq=128\"); default: every "
                   "case");
    app.add_option("--device", trend_query_.device, "with --db: device name substring");
    app.add_option("--host", trend_query_.host, "with --db: host CPU substring");
    app.add_option("--time", time_, "with --db: gpu (time_ns medians) or cpu (cpu_ns medians)")
        ->capture_default_str()
        ->check(CLI::IsMember({"gpu", "cpu"}));
    app.add_option("--last", trend_query_.last, "with --db: only the newest N runs of each case (0: all)");
    app.add_option("--x", x_axis_, "with --db: what labels the runs: commit or date")
        ->capture_default_str()
        ->check(CLI::IsMember({"commit", "date"}));
  }

  int run(CLI::App& app) override {
    refuse_trend_options_without_db(app);
    if (paths_.empty() && trend_query_.db.empty()) throw UsageError("report needs REPORT.json files, --db, or both");
    refuse_input_as_output();
    const std::vector<ReportFile> reports = paths_.empty() ? std::vector<ReportFile>{} : load_reports(paths_);
    const OutputClaim claim(out_, "-o");  // a regular file, none of the inputs, locked (io/output_file.h)
    HtmlReportOptions options;
    if (!trend_query_.db.empty()) add_trends(options);
    options.generated = iso8601_now();
    const BuildInfo& b = build_info();
    options.generator = fmt::format("pebench {} ({})", b.version, std::string(b.git_commit).substr(0, 7));
    write_file_atomic(out_, html_report(reports, options));
    std::cout << fmt::format("wrote {} ({} report{}", out_, reports.size(), reports.size() == 1 ? "" : "s");
    if (!trend_query_.db.empty()) {
      std::cout << fmt::format(", {} trend{}", options.trends.size(), options.trends.size() == 1 ? "" : "s");
    }
    std::cout << ")\n";
    return 0;
  }

 private:
  // `report mine.json -o mine.json` would replace the report with its page.
  // equivalent() sees through ./, .. and links; a missing -o file is new.
  void refuse_input_as_output() const {
    for (const auto& p : paths_) {
      std::error_code ec;
      if (std::filesystem::equivalent(out_, p, ec)) {
        throw UsageError(fmt::format("-o {} is the input report {}; not overwriting it", out_, p));
      }
    }
  }

  void refuse_trend_options_without_db(CLI::App& app) const {
    if (!trend_query_.db.empty()) return;
    for (const char* o : {"--case", "--device", "--host", "--time", "--last", "--x"}) {
      if (app.count(o) > 0) throw UsageError(fmt::format("{} selects trend charts; it needs --db", o));
    }
  }

  void add_trends(HtmlReportOptions& options) {
    const ReportTrendLoader load = report_trend_loader();
    if (!load) throw UsageError("--db: this pebench was built without the results database (PEBENCH_DB off)");
    trend_query_.case_words = split_words(case_words_);
    trend_query_.cpu = time_ == "cpu";
    ReportTrends trends = load(trend_query_);
    if (trends.series.empty()) {
      throw UsageError(fmt::format("--db {}: no case matches{}", trends.source,
                                   case_words_.empty() ? "" : " --case \"" + case_words_ + "\""));
    }
    options.trends = std::move(trends.series);
    options.trend_options.x = x_axis_ == "date" ? TrendAxis::kDate : TrendAxis::kCommit;
    options.trend_options.time = time_;
    options.trend_options.source = trends.source;
  }

  std::vector<std::string> paths_;
  std::string out_ = "report.html";
  ReportTrendQuery trend_query_;
  std::string case_words_, time_ = "gpu", x_axis_ = "commit";
};

PEBENCH_REGISTER_COMMAND(ReportCommand);

}  // namespace
}  // namespace pebench
