#include "harness/engine/gb_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>

#include "harness/contract/errors.h"
#include "harness/output/build_info.h"
#include "io/checked_number.h"
#include "io/output_file.h"

namespace pebench {
namespace {

using Run = benchmark::BenchmarkReporter::Run;

// The longest --benchmark_min_time or --benchmark_min_warmup_time: a day.
constexpr double kMaxGbSeconds = 86400;

bool parse_bool(const std::string& flag, const std::string& v) {
  if (v.empty() || v == "true" || v == "1" || v == "yes") return true;
  if (v == "false" || v == "0" || v == "no") return false;
  throw UsageError(fmt::format("{}={}: expected true or false", flag, v));
}

std::string checked_format(const std::string& flag, const std::string& v) {
  if (v == "console" || v == "json" || v == "csv") return v;
  throw UsageError(fmt::format("{}={}: expected console, json or csv", flag, v));
}

// Throws unless N of `arg` (--benchmark_repetitions=N) is a whole number from
// 1 up. Google Benchmark takes any 32-bit int there and reserves that many
// runs: -1 ends in std::length_error ("vector::reserve"), 0 runs nothing.
void check_repetitions(const std::string& arg, const std::string& v) {
  if (!parse_whole(v, 1, INT_MAX)) {
    throw UsageError(fmt::format("{}: must be a whole number from 1 to {}", arg, INT_MAX));
  }
}

// Google Benchmark's own flags that pebench passes on, checked here first:
// Google Benchmark 1.7 takes "nan" or "1e400" seconds and then never ends
// a case, reads any word as true, and answers a bad time unit with its
// usage text on stdout and exit 0. Each is one line naming the value.
void check_passthrough(const std::string& arg) {
  const auto eq = arg.find('=');
  const std::string flag = arg.substr(0, eq);
  const std::string v = eq == std::string::npos ? "" : arg.substr(eq + 1);
  auto one_of = [&](std::initializer_list<const char*> words, const char* expected) {
    for (const char* w : words) {
      if (v == w) return;
    }
    throw UsageError(fmt::format("{}: expected {}", arg, expected));
  };
  if (flag == "--benchmark_min_time") {
    if (!parse_real(v, 0, kMaxGbSeconds, /*lo_open=*/true)) {
      throw UsageError(fmt::format("{}: expected seconds, a finite number above 0 and at most {:g} (Google "
                                   "Benchmark 1.7 has no 'Nx' iteration form)",
                                   arg, kMaxGbSeconds));
    }
  } else if (flag == "--benchmark_min_warmup_time") {
    if (!parse_real(v, 0, kMaxGbSeconds)) {
      throw UsageError(fmt::format("{}: expected seconds, a finite number from 0 to {:g}", arg, kMaxGbSeconds));
    }
  } else if (flag == "--benchmark_enable_random_interleaving" || flag == "--benchmark_counters_tabular") {
    if (eq != std::string::npos) parse_bool(flag, v);
  } else if (flag == "--benchmark_color") {
    one_of({"auto", "true", "false", "yes", "no", "1", "0"}, "auto, true or false");
  } else if (flag == "--benchmark_time_unit") {
    one_of({"ns", "us", "ms", "s"}, "ns, us, ms or s");
  } else if (flag == "--v") {
    if (!parse_whole(v, 0, 100)) throw UsageError(fmt::format("{}: expected a whole number from 0 to 100", arg));
  } else if (flag != "--benchmark_context" && flag != "--benchmark_perf_counters") {
    throw UsageError(fmt::format("unknown option '{}'", arg));
  }
}

// The value of "--benchmark_x=value" if `arg` is flag `name`.
bool flag_value(const std::string& arg, const std::string& name, std::string& value) {
  if (arg == name) {
    value.clear();
    return true;
  }
  if (arg.rfind(name + "=", 0) != 0) return false;
  value = arg.substr(name.size() + 1);
  return true;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Every parameter's value with all parameters at their defaults: fixed ones
// from the spec; d_model as the sweep derives it from the default heads and
// dim; the other derived ones from this case's own values.
std::map<std::string, ParamValue> default_values(const Variant& v, const Params& p) {
  std::map<std::string, ParamValue> out;
  Params own;  // this case without its derived parameters
  for (const auto& s : all_params(v)) {
    if (s.default_value) out[s.key] = *s.default_value;
    if (s.default_value || s.key == "d_model") own.set(s.key, p.get(s.key));
  }
  if (p.has("d_model")) out["d_model"] = ParamValue(int64_t{8} * 64);  // shape::heads() x shape::dim() defaults
  try {
    resolve_params(v, own);
  } catch (const std::exception&) {
    return out;  // derived ones then always differ: named
  }
  for (const auto& s : all_params(v)) {
    if (!s.default_value && s.key != "d_model" && own.has(s.key)) out[s.key] = own.get(s.key);
  }
  return out;
}

std::string case_name(const PlannedCase& c, uint32_t device, bool prefix, bool every_param) {
  const Params& p = c.params;
  std::string name = prefix ? fmt::format("d{}/", device) : "";
  name += fmt::format("{}/{}/{}", c.variant->id(), p.impl(), p.s("dtype"));
  const auto defaults = default_values(*c.variant, p);
  for (const auto& s : all_params(*c.variant)) {
    if (s.key == "impl" || s.key == "dtype" || !p.has(s.key)) continue;
    auto d = defaults.find(s.key);
    if (every_param || d == defaults.end() || d->second != p.get(s.key)) {
      name += "/" + s.key + ":" + param_to_string(p.get(s.key));
    }
  }
  return name;
}

double median_of_sorted(const std::vector<double>& v) {
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Stats {
  double mean = 0, median = 0, stddev = 0;
};
Stats stats_of(std::vector<double> v) {
  Stats s;
  std::sort(v.begin(), v.end());
  s.median = median_of_sorted(v);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) : 0.0;
  return s;
}

Run base_run(const std::string& name, int64_t family, int64_t repetitions) {
  Run run;
  run.run_name.function_name = name;
  run.family_index = family;
  run.per_family_instance_index = 0;
  run.repetitions = repetitions;
  run.repetition_index = Run::no_repetition_index;
  run.threads = 1;
  run.time_unit = benchmark::kMicrosecond;
  run.statistics = nullptr;
  run.report_label = "";
  return run;
}

benchmark::Counter rate(double per_second) { return benchmark::Counter(per_second, benchmark::Counter::kIsRate); }

// GB's aggregates, the way its ComputeStats lays them out: `iterations` is
// the number of samples and times are scaled by it, so that the reporters'
// per-iteration division gives the statistic itself; cv is a plain ratio.
void add_aggregates(std::vector<Run>& runs, const Run& proto, const std::vector<double>& real_s,
                    const std::vector<double>& bytes_rate, const std::vector<double>& flops_rate, double cpu_s) {
  const auto t = stats_of(real_s), b = stats_of(bytes_rate), f = stats_of(flops_rate);
  const double n = static_cast<double>(real_s.size());
  auto add = [&](const char* stat, double real, double bytes, double flops, bool percentage) {
    Run a = proto;
    a.run_type = Run::RT_Aggregate;
    a.aggregate_name = stat;
    a.aggregate_unit = percentage ? benchmark::kPercentage : benchmark::kTime;
    a.iterations = static_cast<benchmark::IterationCount>(real_s.size());
    a.real_accumulated_time = percentage ? real : real * n;
    a.cpu_accumulated_time = percentage ? 0.0 : (std::string(stat) == "stddev" ? 0.0 : cpu_s * n);
    a.counters["bytes_per_second"] = rate(bytes);
    a.counters["FLOP/s"] = rate(flops);
    runs.push_back(std::move(a));
  };
  add("mean", t.mean, b.mean, f.mean, false);
  add("median", t.median, b.median, f.median, false);
  add("stddev", t.stddev, b.stddev, f.stddev, false);
  add("cv", t.mean > 0 ? t.stddev / t.mean : 0, b.mean > 0 ? b.stddev / b.mean : 0,
      f.mean > 0 ? f.stddev / f.mean : 0, true);
}

// GB's JSON, except that "library_build_type" is the build type of the code
// whose times these are (pebench and its shaders; the times are GPU
// timestamps), not that of the Debian libbenchmark, which is built without
// NDEBUG and calls itself "debug": that value is kept as
// "libbenchmark_build_type".
class JsonReporter : public benchmark::JSONReporter {
 public:
  bool ReportContext(const Context& context) override {
    std::ostringstream text;
    std::ostream& real = GetOutputStream();
    SetOutputStream(&text);
    const bool ok = JSONReporter::ReportContext(context);
    SetOutputStream(&real);
    real << relabel_build_type(text.str());
    return ok;
  }

 private:
  static std::string relabel_build_type(std::string s) {
    const std::string key = "\"library_build_type\": \"";
    const size_t at = s.find(key);
    if (at == std::string::npos) return s;
    const size_t begin = at + key.size(), end = s.find('"', begin);
    const std::string library = s.substr(begin, end - begin);
    const std::string line_start = s.substr(s.rfind('\n', at) + 1, at - s.rfind('\n', at) - 1);  // the indent
    s.replace(at, end + 1 - at,
              fmt::format("\"library_build_type\": \"{}\",\n{}\"libbenchmark_build_type\": \"{}\"",
                          lower(build_info().build_type), line_start, library));
    return s;
  }
};

std::unique_ptr<benchmark::BenchmarkReporter> make_reporter(const std::string& format, bool color) {
  if (format == "json") return std::make_unique<JsonReporter>();
  if (format == "csv") {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
  }
  return std::make_unique<benchmark::ConsoleReporter>(color ? benchmark::ConsoleReporter::OO_Defaults
                                                            : benchmark::ConsoleReporter::OO_Tabular);
}

}  // namespace

GbFlags parse_gb_flags(const std::vector<std::string>& args) {
  GbFlags f;
  std::string v;
  for (const auto& a : args) {
    if (a.rfind("--benchmark_", 0) != 0) throw UsageError(fmt::format("unknown option '{}'", a));
    if (flag_value(a, "--benchmark_format", v)) {
      f.format = checked_format("--benchmark_format", v);
    } else if (flag_value(a, "--benchmark_out_format", v)) {
      f.out_format = checked_format("--benchmark_out_format", v);
    } else if (flag_value(a, "--benchmark_out", v)) {
      if (v.empty()) throw UsageError("--benchmark_out needs a file: --benchmark_out=FILE");
      f.out = v;
    } else if (flag_value(a, "--benchmark_report_aggregates_only", v)) {
      f.report_aggregates_only = parse_bool("--benchmark_report_aggregates_only", v);
    } else if (flag_value(a, "--benchmark_display_aggregates_only", v)) {
      f.display_aggregates_only = parse_bool("--benchmark_display_aggregates_only", v);
    } else if (flag_value(a, "--benchmark_list_tests", v)) {
      f.list_tests = parse_bool("--benchmark_list_tests", v);
    } else if (flag_value(a, "--benchmark_filter", v)) {
      f.filter = v;
      gb_filter_matches(f.filter, "");  // a bad expression is bad input now, not later
    } else if (const std::string reps = "--benchmark_repetitions="; a.rfind(reps, 0) == 0) {
      check_repetitions(a, a.substr(reps.size()));
      f.repetitions_given = true;
      f.passthrough.push_back(a);
    } else {
      check_passthrough(a);
      f.min_time_given = f.min_time_given || a.rfind("--benchmark_min_time=", 0) == 0;
      f.passthrough.push_back(a);
    }
  }
  return f;
}

bool gb_filter_matches(const std::string& filter, const std::string& name) {
  std::string spec = filter;
  const bool negative = !spec.empty() && spec[0] == '-';
  if (negative) spec = spec.substr(1);
  if (spec.empty() || spec == "all") return !negative;
  try {
    const bool found = std::regex_search(name, std::regex(spec, std::regex::extended));
    return found != negative;
  } catch (const std::regex_error& e) {
    throw UsageError(fmt::format("--benchmark_filter={}: not a regular expression ({})", filter, e.what()));
  }
}

std::vector<std::string> gb_names(const std::vector<PlannedCase>& cases, const std::vector<uint32_t>& devices,
                                  bool device_prefix) {
  std::vector<std::string> names;
  std::map<std::string, int> count;
  for (size_t i = 0; i < cases.size(); ++i) {
    names.push_back(case_name(cases[i], devices[i], device_prefix, false));
    ++count[names.back()];
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    if (count[names[i]] > 1) names[i] = case_name(cases[i], devices[i], device_prefix, true);
  }
  return names;
}

FilteredCases filter_cases(const std::vector<std::pair<uint32_t, PlannedCase>>& planned, const std::string& filter) {
  std::vector<PlannedCase> cases;
  std::vector<uint32_t> devices;
  for (const auto& [device, pc] : planned) {
    devices.push_back(device);
    cases.push_back(pc);
  }
  const bool several = std::set<uint32_t>(devices.begin(), devices.end()).size() > 1;
  const auto names = gb_names(cases, devices, several);
  FilteredCases out;
  for (size_t i = 0; i < planned.size(); ++i) {
    if (!gb_filter_matches(filter, names[i])) continue;
    out.cases.push_back(planned[i]);
    out.names.push_back(names[i]);
  }
  return out;
}

void gb_add_device_context(const nlohmann::json& device, bool several_devices) {
  const std::string suffix = several_devices ? fmt::format("_d{}", device.value("index", 0)) : "";
  const std::string driver = fmt::format("{} {} ({})", device.value("driver_name", ""),
                                         device.value("driver_version", ""), device.value("driver_info", ""));
  benchmark::AddCustomContext("device" + suffix, device.value("name", ""));
  benchmark::AddCustomContext("driver" + suffix, driver);
  static bool once = false;  // Google Benchmark's context is process-wide
  if (!once) {
    once = true;
    benchmark::AddCustomContext("pebench", fmt::format("{} ({})", build_info().version, build_info().git_commit));
    benchmark::AddCustomContext("timing", "GPU timestamps, one repetition per sample (manual time)");
  }
}

std::vector<Run> gb_runs(const std::string& name, int64_t family, const CaseResult& r, double cpu_s_per_iteration,
                         bool aggregates_only) {
  std::vector<Run> runs;
  if (r.status != CaseStatus::kOk || !r.time || r.time->samples.empty()) {
    Run e = base_run(name, family, 1);
    e.repetition_index = 0;
    e.error_occurred = true;
    e.error_message = fmt::format("{}: {}", status_name(r.status), r.reason);
    e.iterations = 0;
    runs.push_back(std::move(e));
    return runs;
  }
  const auto& samples = r.time->samples;
  const Run proto = base_run(name, family, static_cast<int64_t>(samples.size()));
  std::vector<double> real_s, bytes_rate, flops_rate;
  for (size_t k = 0; k < samples.size(); ++k) {
    const double s = samples[k] * 1e-9;
    real_s.push_back(s);
    bytes_rate.push_back(r.cost.bytes / s);
    flops_rate.push_back(r.cost.flops / s);
    if (aggregates_only) continue;
    Run one = proto;
    one.repetition_index = static_cast<int64_t>(k);
    one.iterations = 1;
    one.real_accumulated_time = s;
    one.cpu_accumulated_time = cpu_s_per_iteration;
    one.counters["bytes_per_second"] = rate(bytes_rate.back());
    one.counters["FLOP/s"] = rate(flops_rate.back());
    runs.push_back(std::move(one));
  }
  if (samples.size() > 1) add_aggregates(runs, proto, real_s, bytes_rate, flops_rate, cpu_s_per_iteration);
  return runs;
}

GbOutput::GbOutput(const GbFlags& flags) : flags_(flags) {
  if (!flags.format.empty()) display_ = make_reporter(flags.format, true);
  if (!flags.out.empty()) {
    // Written whole at finalize(), atomically (io/output_file.h): a signal,
    // a full disk or a file size limit leaves the old file as it was.
    check_output_path(flags.out, "--benchmark_out");
    file_ = make_reporter(flags.out_format, false);
    file_->SetOutputStream(&out_);
    file_->SetErrorStream(&out_);
  }
}

GbOutput::~GbOutput() {
  try {
    finalize();
  } catch (const std::exception& e) {
    fmt::print(stderr, "pebench run: error: {}\n", e.what());
  }
}

void GbOutput::context(const benchmark::BenchmarkReporter::Context& context) {
  started_ = true;
  if (display_) display_->ReportContext(context);
  if (file_) file_->ReportContext(context);
}

void GbOutput::report(const std::string& name, int64_t family, const CaseResult& r, double cpu_s_per_iteration) {
  const bool file_aggregates = flags_.report_aggregates_only;
  const bool display_aggregates = flags_.report_aggregates_only || flags_.display_aggregates_only;
  if (display_) display_->ReportRuns(gb_runs(name, family, r, cpu_s_per_iteration, display_aggregates));
  if (file_) file_->ReportRuns(gb_runs(name, family, r, cpu_s_per_iteration, file_aggregates));
}

void GbOutput::finalize() {
  if (finalized_ || !started_) return;  // a JSON reporter closes only what its context opened
  finalized_ = true;
  if (display_) display_->Finalize();
  if (file_) file_->Finalize();
  if (file_) write_file_atomic(flags_.out, out_.str());
}

}  // namespace pebench
