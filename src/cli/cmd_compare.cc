// `pebench compare BASE.json NEW.json [MORE.json…]`: cases matched by key,
// medians, ratios, a Mann–Whitney U test and a verdict per case; the vendor
// matrix for three or more reports; with --gate, exit 1 on a regression.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "analysis/compare.h"
#include "analysis/compare_json.h"
#include "analysis/compare_render.h"
#include "analysis/variant_overhead_render.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "harness/contract/errors.h"

namespace pebench {
namespace {

class CompareCommand : public Command {
 public:
  std::string name() const override { return "compare"; }
  std::string description() const override {
    return "compare reports case by case (BASE first); --gate exits 1 on a regression";
  }

  void configure(CLI::App& app) override {
    app.add_option("reports", paths_, "BASE.json NEW.json [MORE.json...] (with --over: REPORT.json [MORE.json...])")
        ->required()
        ->expected(1, -1);
    app.add_option("--over", over_,
                   "VARIANT (e.g. attn.nope): instead of comparing reports, set each case of VARIANT's family "
                   "against VARIANT's case of the same device, impl, dtype and shape in its own report: ratio of "
                   "medians and a (1 - alpha) interval");
    app.add_option("--format", format_, "text (aligned table), md (markdown) or json")
        ->check(CLI::IsMember({"text", "md", "json"}));
    app.add_flag("--gate", gate_,
                 "exit 1 when a case is slower beyond --threshold and significant, a case ok in BASE fails, "
                 "errors or no longer runs in NEW, or a BASE case is missing from NEW");
    app.add_option("--threshold", options_.threshold, "relative change below which a case counts as unchanged")
        ->capture_default_str()
        ->check(finite_in(0, 1e6));
    app.add_option("--alpha", options_.alpha, "significance level of the Mann-Whitney U test")
        ->capture_default_str()
        ->check(finite_in(0, 1, /*lo_open=*/true));
    app.add_option("--time", series_, "samples to compare: gpu (GPU timestamps) or cpu (process CPU time per sample)")
        ->capture_default_str()
        ->check(CLI::IsMember({"gpu", "cpu"}));
    app.add_flag("--normalize", options_.normalize,
                 "divide every ratio by the load factor, the median ratio of all cases timed on both sides");
    app.add_option("--load-neighbours", options_.load_neighbours,
                   "with --normalize, divide each case by its own load factor: the median ratio of the K cases of "
                   "other variants nearest it in BASE time (0: one factor for all)")
        ->capture_default_str()
        ->check(whole_in(0, 1000000));
    app.add_option("--min-samples", options_.min_samples,
                   "cases with fewer samples on a side are not tested, and fail --gate")
        ->check(whole_in(0, 1000000000));
    app.add_option("--confirm", confirm_path_,
                   "NEW2.json, a second run of NEW's command: with --gate, a timing reason counts only if it shows "
                   "there too");
    app.add_option("--cross-host", cross_host_,
                   "when a CPU device (lavapipe) ran on different host CPUs in BASE and NEW, --gate fails "
                   "(fail, a `host` reason) or gates its correctness only (correctness)")
        ->capture_default_str()
        ->check(CLI::IsMember({"fail", "correctness"}));
    app.add_option("--impl", options_.impl,
                   "NAME: against a report from another implementation (a peer report, tools/peers/, sharing no "
                   "impl with BASE), the impl compared where a case ran several (default: flash)");
    app.add_option("--variant-threshold", variant_threshold_,
                   "also gate each variant/impl on the median ratio of its cases (e.g. 0.25; 0: off)")
        ->check(finite_in(0, 1e6));
  }

  int run(CLI::App&) override {
    if (!(options_.threshold >= 0) || !std::isfinite(options_.threshold)) {
      throw UsageError(fmt::format("--threshold {} must be a finite number >= 0", options_.threshold));
    }
    if (!(options_.alpha > 0 && options_.alpha < 1)) {
      throw UsageError(fmt::format("--alpha {} must be between 0 and 1", options_.alpha));
    }
    if (!(variant_threshold_ >= 0) || !std::isfinite(variant_threshold_)) {
      throw UsageError(fmt::format("--variant-threshold {} must be a finite number >= 0", variant_threshold_));
    }
    if (options_.load_neighbours > 0 && !options_.normalize) {
      throw UsageError(fmt::format("--load-neighbours {} needs --normalize", options_.load_neighbours));
    }
    if (variant_threshold_ > 0) options_.variant_threshold = variant_threshold_;
    options_.series = series_ == "cpu" ? TimeSeries::kCpu : TimeSeries::kGpu;
    if (!over_.empty()) return run_over();
    if (paths_.size() < 2) {
      throw UsageError(fmt::format("compare needs BASE.json and NEW.json (got only {}), or --over VARIANT", paths_[0]));
    }
    options_.cross_host = cross_host_ == "correctness" ? CrossHost::kCorrectness : CrossHost::kFail;
    if (!confirm_path_.empty() && (!gate_ || paths_.size() != 2)) {
      throw UsageError(fmt::format("--confirm {} needs --gate and exactly two reports, BASE and NEW", confirm_path_));
    }
    const std::vector<ReportFile> reports = load_reports(paths_);  // ReportError: bad input, exit 2
    if (!options_.impl.empty()) check_impl_option(reports);
    std::optional<ReportFile> confirm;
    if (!confirm_path_.empty()) confirm = load_report(confirm_path_);
    const CompareResult result = run_compare(reports, options_, gate_, confirm ? &*confirm : nullptr);
    if (format_ == "json") {
      std::cout << compare_json(reports, result).dump(2) << "\n" << std::flush;
      // stdout stays one JSON document; the gate's verdict also goes to stderr.
      if (result.gate && !result.gate->passed()) {
        for (const auto& r : result.gate->reasons) std::cerr << "gate: " << r << "\n";
      }
      if (result.gate) {
        for (const auto& r : result.gate->unconfirmed) std::cerr << "note: not confirmed: " << r << "\n";
        for (const auto& n : result.gate->notes) std::cerr << "note: " << n << "\n";
      }
    } else if (format_ == "md") {
      std::cout << render_compare_markdown(reports, result);
    } else {
      std::cout << render_compare_text(reports, result);
    }
    std::cout.flush();
    return result.gate && !result.gate->passed() ? 1 : 0;
  }

 private:
  // --impl chooses among one side's impls when a pair matches across impls
  // (a peer report); anywhere else it would be silently ignored.
  void check_impl_option(const std::vector<ReportFile>& reports) const {
    bool found = false;
    for (const auto& r : reports) {
      const auto impls = report_impls(r);
      found = found || std::find(impls.begin(), impls.end(), options_.impl) != impls.end();
    }
    if (!found) throw UsageError(fmt::format("--impl {}: no case of that impl in the reports", options_.impl));
    for (size_t i = 1; i < reports.size(); ++i) {
      if (match_across_impls(reports[0], reports[i])) continue;
      throw UsageError(fmt::format("--impl {}: {} and {} share impls, so their cases match impl by impl; --impl "
                                   "chooses among one side's impls against a report from another implementation",
                                   options_.impl, reports[0].path, reports[i].path));
    }
  }

  // --over: each report's cases against its own cases of one variant.
  int run_over() {
    const auto refuse = [this](bool given, const char* option) {
      if (given)
        throw UsageError(fmt::format("--over {} compares cases within each report: {} does not apply", over_, option));
    };
    refuse(gate_, "--gate");
    refuse(!confirm_path_.empty(), "--confirm");
    refuse(options_.normalize, "--normalize");
    refuse(variant_threshold_ > 0, "--variant-threshold");
    refuse(!options_.impl.empty(), "--impl");
    const std::vector<ReportFile> reports = load_reports(paths_);  // ReportError: bad input, exit 2
    std::vector<OverheadTable> tables;
    for (const auto& r : reports) tables.push_back(variant_overheads(r, over_, options_.series, 1 - options_.alpha));
    if (format_ == "json") {
      std::cout << overhead_json(reports, tables, options_.series).dump(2) << "\n";
    } else {
      const TextDocument doc = overhead_document(reports, tables, options_.series, options_.alpha);
      std::cout << (format_ == "md" ? doc.markdown() : doc.text());
    }
    std::cout.flush();
    return 0;
  }

  std::vector<std::string> paths_;
  std::string over_;
  std::string format_ = "text";
  bool gate_ = false;
  std::string series_ = "gpu", confirm_path_, cross_host_ = "fail";
  double variant_threshold_ = 0;
  CompareOptions options_;
};

PEBENCH_REGISTER_COMMAND(CompareCommand);

}  // namespace
}  // namespace pebench
