// `pebench report A.json [B.json…] -o report.html`: one self-contained HTML
// page with the reports' devices, charts and validation errors.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "analysis/html_report.h"
#include "cli/command.h"
#include "harness/contract/errors.h"
#include "harness/output/build_info.h"
#include "harness/output/report.h"

namespace pebench {
namespace {

class ReportCommand : public Command {
 public:
  std::string name() const override { return "report"; }
  std::string description() const override { return "write one self-contained HTML page with charts of reports"; }

  void configure(CLI::App& app) override {
    app.add_option("reports", paths_, "A.json [B.json...]")->required()->expected(1, -1);
    app.add_option("-o,--out", out_, "the HTML file to write")->capture_default_str();
  }

  int run(CLI::App&) override {
    refuse_input_as_output();
    const std::vector<ReportFile> reports = load_reports(paths_);  // ReportError: bad input, exit 2
    const OutputClaim claim(out_, "-o");  // a regular file, none of the inputs, locked (io/output_file.h)
    HtmlReportOptions options;
    options.generated = iso8601_now();
    const BuildInfo& b = build_info();
    options.generator = fmt::format("pebench {} ({})", b.version, std::string(b.git_commit).substr(0, 7));
    write_file_atomic(out_, html_report(reports, options));
    std::cout << fmt::format("wrote {} ({} report{})\n", out_, reports.size(), reports.size() == 1 ? "" : "s");
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

  std::vector<std::string> paths_;
  std::string out_ = "report.html";
};

PEBENCH_REGISTER_COMMAND(ReportCommand);

}  // namespace
}  // namespace pebench
