// `pebench run`: expands a sweep, runs it on the selected devices through
// Google Benchmark, validates every case and writes the report.
//
// Exit status: 0 when every case that ran validated (skipped and unsupported
// cases are fine) and at least one ran; 1 when a case failed or errored, or
// none could run or the sweep stopped on a report it could not write; 2 for
// bad arguments; 128 + the signal when SIGINT (130), SIGTERM (143), SIGHUP
// (129) or SIGXFSZ (153) ended it.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "analysis/report_file.h"
#include "analysis/text_table.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/pipeline_table.h"
#include "cli/progress_printer.h"
#include "cli/run_table.h"
#include "cli/vulkan_session.h"
#include "harness/contract/errors.h"
#include "harness/contract/registry.h"
#include "harness/engine/bench_driver.h"
#include "harness/engine/device_profile.h"
#include "harness/engine/gb_output.h"
#include "harness/engine/peak.h"
#include "harness/engine/presets.h"
#include "harness/engine/slowdown.h"
#include "harness/engine/sweep.h"
#include "harness/engine/tuning_presets.h"
#include "harness/output/report.h"
#include "io/output_file.h"

namespace pebench {
namespace {

// SIGINT, SIGTERM, SIGHUP and SIGXFSZ end a run alike: the case running
// stops, the rest are `interrupted`, the report keeps every finished case
// and the exit status is 128 + the signal. A second SIGINT, SIGTERM or
// SIGHUP kills at once; SIGXFSZ stays ignored, so a write past the file
// size limit fails (EFBIG) and its temporary file is removed.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};

void on_stop_signal(int sig) {
  if (!g_interrupted) g_interrupt_signal = sig;
  g_interrupted = true;
  std::signal(sig, sig == SIGXFSZ ? SIG_IGN : SIG_DFL);
}

void handle_stop_signals(bool on) {
  for (int sig : kStopSignals) std::signal(sig, on ? on_stop_signal : sig == SIGXFSZ ? SIG_IGN : SIG_DFL);
}

// Writes the report; when that fails (a full disk, a file size limit), says
// so and returns the run's exit status: 128 + the signal that came (SIGXFSZ
// for a file size limit), else 1. The file on disk is then the last one
// written whole, or the one the run found: each flush replaces it atomically.
int flush_or_exit_code(const ReportWriter& writer) {
  try {
    writer.flush();
    return 0;
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "pebench run: error: %s; %s was left as it was\n", e.what(), writer.path().c_str());
    return g_interrupt_signal ? interrupted_exit_code() : 1;
  }
}

// The exit status of a run a signal stopped before its first case: nothing
// was written, no earlier report was touched.
int interrupted_before_cases(const char* phase) {
  std::fprintf(stderr, "pebench run: interrupted while %s; no report was written\n", phase);
  return interrupted_exit_code();
}

class RunCommand : public Command {
 public:
  std::string name() const override { return "run"; }
  std::string description() const override {
    return "run a sweep, validate every case and write a report (Google Benchmark --benchmark_* flags pass through)";
  }

  void configure(CLI::App& app) override {
    app.allow_extras();  // --benchmark_* flags, checked in run()
    app.add_option("--device", device_, "all | INDEX | NAME-SUBSTRING (default: first discrete GPU, else first device)");
    app.add_option("--variant", variants_, "variant globs, comma-separated (e.g. 'attn.*,rope.apply')");
    app.add_option("--impl", impls_, "impls, comma-separated (e.g. naive,flash)");
    app.add_option("--preset", preset_, "named sweep: quick, standard, llm, kernels, mobile, gpu");
    for (const auto& [flag, key] : kAxisFlags) app.add_option(flag, axis_text_[key], "sweep axis " + key + " (comma list)");
    app.add_option("--param", params_, "KEY=V[,V...] for any variant parameter (repeatable)");
    app.add_option("--max-cases", max_cases_,
                   "the most cases the sweep may hold; a larger one is refused before it is built")
        ->capture_default_str()
        ->check(whole_in(1, 100000000));
    app.add_option("--out", out_, "report file")->capture_default_str();
    app.add_option("--dump", dump_, "write inputs/outputs of every case as NPY under DIR");
    app.add_flag("--no-validate", no_validate_, "skip checking results against the float64 reference");
    app.add_flag("--validate{core}", validate_list_,
                 "Khronos validation layer: --validate (core checks) or --validate=LIST of core, sync, gpu-av, "
                 "best-practices (with the Arm, AMD and NVIDIA checks), all; its errors fail the case, its warnings "
                 "are counted by id");
    app.add_option("--seed", seed_, "input seed (mixed with each case's parameters)")
        ->capture_default_str()
        ->check(whole_uint64());
    app.add_flag("--quiet", quiet_, "no progress lines");
    app.add_flag("--no-peak", no_peak_, "do not measure the devices' roofs (devices[].peak, results[].roofline)");
    app.add_flag("--tune", tune_,
                 "before timing a case, time each plan choice that depends on the device (CPU flash kernels: "
                 "query rows per invocation) and run the fastest (results[].tuning)");
    app.add_option("--tune-from", tune_from_,
                   "as --tune, but each case REPORT tuned on a device of the same name takes the value it chose "
                   "there without timing the candidates (results[].tuning.from)");
    app.add_flag("--compile-only", compile_only_,
                 "plan every case and build its pipelines, run nothing (works on devices that cannot execute)");
    app.add_option("--emulate", emulate_, "plan for a device profile: a built-in name (devices --profiles) or a "
                                          "Vulkan Profiles JSON file");
    app.add_option("--inject-slowdown", slowdowns_,
                   "VARIANT[/IMPL]=FACTOR: test-only, makes that variant's timed GPU work FACTOR times longer "
                   "(repeatable); the report records it and cannot be a baseline");
    app.add_option("--warmup", warmup_s_,
                   "seconds each case runs unrecorded whenever the run switches to it (default: the preset's, "
                   "quick 0.005; else 0)")
        ->check(warmup_seconds());
    app.add_option("--timeout", timeout_s_, "seconds one submission may take before the device is given up")
        ->capture_default_str()
        ->check(submit_timeout_seconds());
    app.add_option("--memory", memory_,
                   "where kernel operands live: host (mapped where device-local memory is host-visible) or "
                   "discrete (device-local, never mapped; uploads and readbacks through staging buffers). "
                   "Default: discrete on a discrete GPU (or --emulate profile of one), else host")
        ->check(CLI::IsMember({"host", "discrete"}));
  }

  int run(CLI::App& app) override {
    handle_stop_signals(true);
    struct Restore {
      ~Restore() { handle_stop_signals(false); }
    } restore;
    return run_sweep(app);
  }

 private:
  int run_sweep(CLI::App& app) {
    if (app.count("--validate")) {
      std::string why;
      const auto checks = parse_validation_checks(validate_list_, &why);
      if (!checks) throw UsageError("--validate=" + validate_list_ + ": " + why);
      vk_checks_ = *checks;
      vk_validation_ = true;
    }
    const Preset* preset = nullptr;
    const SweepSpec spec = sweep_spec(preset);
    // Google Benchmark flags: pebench applies the output, filter and listing
    // ones itself (harness/engine/gb_output.h), Google Benchmark the rest;
    // every value is checked here, before anything is read or built.
    const GbFlags gb = parse_gb_flags(app.remaining());
    if (compile_only_ && !dump_.empty()) {
      throw UsageError("--compile-only runs nothing, so it has nothing to --dump");
    }
    if (compile_only_ && (tune_ || !tune_from_.empty())) {
      throw UsageError(fmt::format("--compile-only runs nothing, so it has nothing to {}",
                                   tune_ ? "--tune" : "--tune-from " + tune_from_));
    }
    if (!tune_from_.empty()) {
      tune_presets_ = TuningPresets(load_report(tune_from_));  // ReportError: bad input, exit 2
      if (tune_presets_.empty()) {
        throw UsageError(fmt::format("--tune-from {}: no case in it was tuned (no results[].tuning); make it with "
                                     "run --tune",
                                     tune_from_));
      }
      tune_ = true;
    }
    std::optional<DeviceProfile> profile;
    if (!emulate_.empty()) profile = load_profile(emulate_);
    // What this run writes, checked before anything runs (io/output_file.h):
    // regular files only, none of its inputs, not one file twice, locked.
    const OutputClaim out_claim(out_, "--out");
    OutputClaim gb_claim;
    if (!gb.out.empty()) gb_claim = OutputClaim(gb.out, "--benchmark_out");
    if (!dump_.empty()) check_output_dir(dump_, "--dump");
    std::vector<InjectedSlowdown> injected;
    for (const auto& text : slowdowns_) injected.push_back(parse_slowdown(text, Registry::instance()));
    const auto planned = expand_preset_sweep(spec, preset);
    if (planned.empty()) throw UsageError("the selection matches no case");
    if (g_interrupted) return interrupted_before_cases("expanding the sweep");

    const int repetitions = preset && !gb.repetitions_given ? preset->repetitions : 0;
    if (!initialize_google_benchmark(gb, repetitions)) return 2;

    // Devices, each one's plan, and the cases the filter keeps.
    VulkanSession vk = open_vulkan(vk_validation_, vk_checks_, /*print_warnings=*/!quiet_);
    const auto selected = select_devices(vk.devices, device_);
    std::vector<PhysicalDeviceInfo> infos;
    const FilteredCases kept = plan_cases(preset, spec, planned, vk.devices, selected, profile, gb, infos);
    if (gb.list_tests) {
      for (const auto& name : kept.names) std::cout << name << "\n";
      return 0;
    }
    if (kept.cases.empty()) throw UsageError(fmt::format("--benchmark_filter={} matches no case", gb.filter));
    if (g_interrupted) return interrupted_before_cases("planning the cases");
    const OpenDevices open = open_devices(*vk.instance, selected, infos, kept);
    if (g_interrupted) return interrupted_before_cases("opening the devices");

    DriverOptions options = driver_options(preset, gb, repetitions, injected);
    ReportWriter writer(out_, report_header(open, repetitions, options.warmup_s, gb, injected));
    // Fail early (and visibly) if the report cannot be written.
    if (const int code = flush_or_exit_code(writer); code != 0) return code;

    ProgressPrinter progress(stderr);
    options.progress = quiet_ ? nullptr : &progress;
    options.roofs = open.roofs;
    options.names = kept.names;
    GbOutput gb_out(gb);
    if (gb_out.active()) options.gb = &gb_out;

    if (compile_only_) {
      compile_sweep(*vk.instance, writer, open.cases, options.progress);
    } else {
      BenchDriver driver(*vk.instance, writer, options);
      driver.run(open.cases);
    }
    if (const int code = flush_or_exit_code(writer); code != 0) return code;
    if (compile_only_) return summarize_compiled(writer);

    // With a Google Benchmark format stdout is that format's alone.
    const int code = summarize(writer, gb.format.empty() ? std::cout : std::cerr);
    for (const auto& ctx : open.contexts) {
      if (ctx->device().lost()) {
        // Work may still be running on that device: tearing Vulkan down now
        // would crash or hang, and the report is already written.
        std::fflush(stdout);
        std::fflush(stderr);
        std::_Exit(code);
      }
    }
    return code;
  }

  // The devices opened for the run, and what each brings.
  struct OpenDevices {
    std::vector<std::unique_ptr<GpuContext>> contexts;
    nlohmann::json devices = nlohmann::json::array();  // the report's "devices"
    std::vector<SweepCase> cases;                      // the kept cases, on their device's context
    std::map<uint32_t, Roofs> roofs;                   // by device index, where measured
  };

  // The sweep the options name: the preset's (`preset` is set to it), then
  // --variant, --impl, the axis flags and --param over it.
  SweepSpec sweep_spec(const Preset*& preset) {
    SweepSpec spec;
    spec.max_cases = max_cases_;
    if (!preset_.empty()) {
      preset = find_preset(preset_);
      if (!preset) {
        std::string names;
        for (const auto& p : presets()) names += (names.empty() ? "" : ", ") + p.name;
        throw UsageError(fmt::format("unknown preset '{}' (available: {})", preset_, names));
      }
      spec.variant_globs = preset->variants;
      spec.preset_axes = preset->axes;
      spec.preset_overrides = preset->overrides;
    }
    if (!variants_.empty()) spec.variant_globs = split_list(variants_, "--variant");
    if (!impls_.empty()) spec.impls = split_list(impls_, "--impl");
    for (const auto& [flag, key] : kAxisFlags) {
      if (!axis_text_[key].empty()) spec.axes[key] = split_list(axis_text_[key], flag);
    }
    for (const auto& p : params_) {
      const auto eq = p.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == p.size()) {
        throw UsageError(fmt::format("malformed --param '{}': expected KEY=V[,V...]", p));
      }
      const std::string key = p.substr(0, eq);
      auto values = split_list(p.substr(eq + 1), "--param " + key);
      auto& dst = spec.axes[key];
      dst.insert(dst.end(), values.begin(), values.end());
    }
    return spec;
  }

  // Hands Google Benchmark its flags; false when it rejects one.
  static bool initialize_google_benchmark(const GbFlags& gb, int repetitions) {
    // Static: Google Benchmark keeps argv[0] (its JSON context's
    // "executable"), so the strings must outlive this call; a local vector
    // left it pointing at freed memory (garbage bytes, invalid UTF-8 JSON).
    static std::vector<std::string> gb_args;
    static std::vector<char*> gb_argv;
    gb_args = {"pebench"};
    gb_args.insert(gb_args.end(), gb.passthrough.begin(), gb.passthrough.end());
    // Placed first, so the user's own flag, if any, wins.
    if (repetitions > 0) gb_args.insert(gb_args.begin() + 1, "--benchmark_enable_random_interleaving=true");
    gb_argv.clear();
    for (auto& a : gb_args) gb_argv.push_back(a.data());
    int gb_argc = static_cast<int>(gb_argv.size());
    benchmark::Initialize(&gb_argc, gb_argv.data());
    return !benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data());
  }

  // Each selected device's view (the --emulate profile's, if any: appended
  // to `infos`, in `selected` order) and plan, then the cases the benchmark
  // filter keeps.
  FilteredCases plan_cases(const Preset* preset, const SweepSpec& spec, const std::vector<PlannedCase>& planned,
                           const std::vector<PhysicalDeviceInfo>& devices, const std::vector<uint32_t>& selected,
                           const std::optional<DeviceProfile>& profile, const GbFlags& gb,
                           std::vector<PhysicalDeviceInfo>& infos) const {
    std::vector<std::pair<uint32_t, PlannedCase>> per_device;
    for (uint32_t idx : selected) {
      infos.push_back(profile ? apply_profile(devices[idx], *profile) : devices[idx]);
      std::string note;
      for (auto& pc : plan_for_device(preset, spec, planned, infos.back(), note)) per_device.emplace_back(idx, pc);
      if (!note.empty() && !quiet_ && !gb.list_tests) std::cerr << "pebench run: " << note << "\n";
    }
    return filter_cases(per_device, gb.filter);
  }

  // Opens each selected device, measures its roofs (unless --no-peak or
  // --compile-only) and puts the kept cases on it.
  OpenDevices open_devices(const Instance& instance, const std::vector<uint32_t>& selected,
                           const std::vector<PhysicalDeviceInfo>& infos, const FilteredCases& kept) const {
    OpenDevices open;
    for (size_t d = 0; d < selected.size(); ++d) {
      const uint32_t idx = selected[d];
      const PhysicalDeviceInfo& info = infos[d];
      auto ctx = GpuContext::Create(instance, info);
      if (!ctx.ok()) {
        throw std::runtime_error(fmt::format("cannot open device {} ({}): {}", idx, info.name,
                                             ctx.status().message()));
      }
      if (!compile_only_ && !ctx.value()->device().can_execute()) {
        throw UsageError(fmt::format("device {} ({}): {}; run it with --compile-only to build and inspect the "
                                     "pipelines", idx, info.name, ctx.value()->device().cannot_execute_reason()));
      }
      open.contexts.push_back(std::move(ctx).value());
      Device& device = open.contexts.back()->device();
      device.set_submit_timeout(timeout_s_);
      if (!memory_.empty()) device.set_memory_mode(memory_ == "discrete" ? MemoryMode::kDiscrete : MemoryMode::kHost);
      open.devices.push_back(device_json(info));
      open.devices.back()["memory"] = memory_mode_name(device.memory_mode());
      gb_add_device_context(open.devices.back(), selected.size() > 1);
      if (!no_peak_ && !compile_only_) measure_roofs(*open.contexts.back(), idx, open.devices.back(), open.roofs);
      for (const auto& [device, pc] : kept.cases) {
        if (device == idx) open.cases.push_back(SweepCase{open.contexts.back().get(), idx, pc});
      }
    }
    return open;
  }

  // Every top-level key of the report but "results".
  nlohmann::json report_header(const OpenDevices& open, int repetitions, double warmup_s, const GbFlags& gb,
                               const std::vector<InjectedSlowdown>& injected) const {
    nlohmann::json header;
    header[report_key::kSchema] = kReportSchema;
    header[report_key::kTool] = tool_json();
    header[report_key::kCreated] = iso8601_now();
    header[report_key::kCommand] = command_line();
    header[report_key::kHost] = host_json();
    header[report_key::kDevices] = open.devices;
    header[report_key::kRun] = {{"preset", preset_.empty() ? nullptr : nlohmann::json(preset_)},
                                {"seed", seed_},
                                {"validate", !no_validate_},
                                {"vulkan_validation", vk_validation_},
                                {"vulkan_validation_checks", vk_validation_ ? nlohmann::json(vk_checks_.names())
                                                                            : nlohmann::json(nullptr)},
                                {"compile_only", compile_only_},
                                {report_key::kTune, tune_},
                                {report_key::kTuneFrom, tune_from_.empty() ? nullptr : nlohmann::json(tune_from_)},
                                {"cases", open.cases.size()},
                                {"repetitions", repetitions},
                                {"warmup_s", warmup_s},
                                {"benchmark_filter", gb.filter.empty() ? nullptr : nlohmann::json(gb.filter)}};
    if (!injected.empty()) header[report_key::kRun][report_key::kInjectSlowdown] = slowdowns_json(injected);
    return header;
  }

  // What the options ask of each case and of Google Benchmark; the caller
  // adds the progress sink, the roofs, the names and the output.
  DriverOptions driver_options(const Preset* preset, const GbFlags& gb, int repetitions,
                               const std::vector<InjectedSlowdown>& injected) const {
    DriverOptions options;
    options.run.validate = !no_validate_;
    options.run.dump_dir = dump_;
    options.run.seed = seed_;
    options.run.inject_slowdown = injected;
    options.run.tune = tune_;
    options.run.tune_from = tune_presets_;
    if (!gb.min_time_given) options.min_time_s = preset ? preset->min_time_s : 0.1;
    options.repetitions = repetitions;
    options.warmup_s = warmup_s_ ? *warmup_s_ : preset ? preset->warmup_s : 0;
    return options;
  }

  // Once per device, before its cases: the roofs every ok result is set against.
  void measure_roofs(GpuContext& ctx, uint32_t idx, nlohmann::json& device, std::map<uint32_t, Roofs>& roofs) const {
    const DevicePeak peak = measure_peak(ctx);
    device["peak"] = peak_to_json(peak);
    roofs[idx] = peak.roofs;
    if (quiet_) return;
    const std::string f16 = peak.roofs.f16_gflops ? fmt::format("{:.1f} GFLOP/s", *peak.roofs.f16_gflops) : "-";
    fmt::print(stderr, "peak d{}: copy {:.2f} GB/s, f32 FMA {:.1f} GFLOP/s, f16 FMA {}\n", idx, peak.roofs.copy_gbps,
               peak.roofs.f32_gflops, f16);
  }

  int summarize(const ReportWriter& writer, std::ostream& out) {
    size_t ok = 0, bad = 0, other = 0, interrupted = 0;
    std::string first_bad, first_other;
    for (const auto& r : writer.results()) {
      if (r.status == CaseStatus::kOk) {
        ++ok;
      } else if (r.status == CaseStatus::kInterrupted) {
        ++interrupted;
      } else if (r.status == CaseStatus::kFailed || r.status == CaseStatus::kError) {
        if (bad++ == 0) first_bad = fmt::format("{} {}: {}", r.id, status_name(r.status), r.reason);
      } else if (other++ == 0) {
        first_other = fmt::format("{} {}: {}", r.id, status_name(r.status), r.reason);
      }
    }
    out << run_table_text(writer.results());
    out << vk_validation_summary(writer.results());
    out << fmt::format("{} ok, {} failed or errored, {} skipped or unsupported{}; report: {}\n", ok, bad, other,
                       interrupted ? fmt::format(", {} interrupted", interrupted) : "", writer.path());
    if (g_interrupt_signal) {
      std::cerr << "pebench run: interrupted; the report holds the cases that finished\n";
      return interrupted_exit_code();
    }
    if (interrupted > 0) {
      std::cerr << "pebench run: error: the sweep stopped early; " << interrupted << " cases did not run\n";
      return 1;
    }
    if (bad > 0) {
      std::cerr << "pebench run: error: " << first_bad << "\n";
      return 1;
    }
    if (ok == 0) {
      std::cerr << "pebench run: error: no case ran" << (first_other.empty() ? "" : ": " + first_other) << "\n";
      return 1;
    }
    return 0;
  }

  // --compile-only: one row per pipeline, with the statistics a kernel
  // engineer reads first (the report has them all).
  int summarize_compiled(const ReportWriter& writer) {
    std::cout << pipeline_table(writer.results()).text();
    size_t compiled = 0, bad = 0, other = 0;
    std::string first_bad;
    for (const auto& r : writer.results()) {
      if (r.status == CaseStatus::kCompiled) {
        ++compiled;
      } else if (r.status == CaseStatus::kError) {
        if (bad++ == 0) first_bad = fmt::format("{} {}: {}", r.id, status_name(r.status), r.reason);
      } else {
        ++other;
      }
    }
    std::cout << fmt::format("{} compiled, {} errored, {} skipped or unsupported; report: {}\n", compiled, bad, other,
                             writer.path());
    if (g_interrupt_signal) return interrupted_exit_code();
    if (bad > 0) {
      std::cerr << "pebench run: error: " << first_bad << "\n";
      return 1;
    }
    if (compiled == 0) {
      std::cerr << "pebench run: error: no case compiled\n";
      return 1;
    }
    return 0;
  }

  inline static const std::vector<std::pair<std::string, std::string>> kAxisFlags = {
      {"--batch", "batch"}, {"--seq", "seq"},   {"--kv-seq", "kv_seq"}, {"--heads", "heads"},
      {"--kv-heads", "kv_heads"}, {"--dim", "dim"}, {"--dtype", "dtype"}, {"--causal", "causal"}};

  std::string device_, variants_, impls_, preset_, out_ = "reports/latest.json", dump_;
  std::map<std::string, std::string> axis_text_;
  std::vector<std::string> params_, slowdowns_;
  std::string emulate_, tune_from_, memory_;
  TuningPresets tune_presets_;  // --tune-from's choices, read before any device opens
  std::string validate_list_;  // --validate[=LIST]: empty when not given
  ValidationChecks vk_checks_;
  bool no_validate_ = false, vk_validation_ = false, quiet_ = false, compile_only_ = false, no_peak_ = false,
       tune_ = false;
  uint64_t seed_ = 0, max_cases_ = kDefaultMaxCases;
  double timeout_s_ = 120;
  std::optional<double> warmup_s_;
};

PEBENCH_REGISTER_COMMAND(RunCommand);

}  // namespace
}  // namespace pebench
