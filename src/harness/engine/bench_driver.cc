#include "harness/engine/bench_driver.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <optional>
#include <set>

#include "runtime/validation_allowlist.h"

namespace pebench {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_interrupt_signal{0};

int interrupted_exit_code() { return 128 + (g_interrupt_signal ? g_interrupt_signal.load() : SIGINT); }

std::string short_params(const Variant& v, const Params& p, const std::vector<std::string>& explicit_keys) {
  static const char* kShape[] = {"batch", "heads", "kv_heads", "seq", "kv_seq", "dim", "d_model", "causal"};
  std::string out;
  auto add = [&](const std::string& k) { out += (out.empty() ? "" : " ") + k + "=" + param_to_string(p.get(k)); };
  for (const char* k : kShape) {
    if (!p.has(k)) continue;
    if ((std::string(k) == "kv_heads" && p.get(k) == p.get("heads")) ||
        (std::string(k) == "kv_seq" && p.get(k) == p.get("seq"))) {
      continue;
    }
    add(k);
  }
  for (const auto& s : v.params()) {
    bool is_shape = false;
    for (const char* k : kShape) is_shape = is_shape || s.key == k;
    if (is_shape || !p.has(s.key)) continue;
    const bool given = std::find(explicit_keys.begin(), explicit_keys.end(), s.key) != explicit_keys.end();
    if (given || (s.default_value && *s.default_value != p.get(s.key))) add(s.key);
  }
  return out;
}

// Receives Google Benchmark's runs and hands each finished case to the driver.
class BenchDriver::Reporter : public benchmark::BenchmarkReporter {
 public:
  Reporter(BenchDriver& driver, std::map<std::string, size_t> index) : driver_(driver), index_(std::move(index)) {}
  bool ReportContext(const Context& context) override {
    if (driver_.options_.gb) driver_.options_.gb->context(context);
    return true;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    struct Seen {
      size_t repetitions = 0;
      std::string error;
      double cpu_s = 0, iterations = 0;
    };
    std::map<size_t, Seen> seen;
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration) continue;
      auto it = index_.find(r.run_name.function_name);  // without GB's "/manual_time" suffixes
      if (it == index_.end()) continue;
      auto& s = seen[it->second];
      s.repetitions++;
      if (r.error_occurred) s.error = r.error_message;
      s.cpu_s += r.cpu_accumulated_time;
      s.iterations += static_cast<double>(r.iterations);
    }
    for (const auto& [i, s] : seen) {
      const bool fresh = !driver_.finished_[i];
      driver_.finish(i, s.repetitions, !s.error.empty(), s.error);
      if (fresh && driver_.options_.gb) {
        driver_.options_.gb->report(driver_.names_[i], static_cast<int64_t>(i), driver_.results_[i],
                                    s.iterations > 0 ? s.cpu_s / s.iterations : 0.0);
      }
    }
  }
  void Finalize() override {
    if (driver_.options_.gb) driver_.options_.gb->finalize();
  }

 private:
  BenchDriver& driver_;
  std::map<std::string, size_t> index_;
};

BenchDriver::BenchDriver(const Instance& instance, ReportWriter& writer, DriverOptions options)
    : instance_(instance), writer_(writer), options_(std::move(options)) {}

BenchDriver::~BenchDriver() = default;

BenchDriver::Live& BenchDriver::start(size_t index) {
  Live& live = live_[index];
  live.vk_before = VkSnapshot::of(instance_);
  CaseResult& r = results_[index];
  const SweepCase& c = cases_[index];
  if (g_interrupted) {
    r.status = CaseStatus::kInterrupted;
    r.reason = stop_reason_.empty() ? "interrupted" : stop_reason_;
    return live;
  }
  if (!c.planned.rejected.empty()) {
    r.status = CaseStatus::kSkipped;
    r.reason = c.planned.rejected;
    return live;
  }
  if (c.gpu->device().lost()) {
    r.status = CaseStatus::kError;
    r.reason = "not run: the device is unusable after an earlier timeout or device loss";
    return live;
  }
  live.run = std::make_unique<CaseRun>(*c.gpu, *c.planned.variant, options_.run, r);
  live.ready = live.run->setup();
  return live;
}

void BenchDriver::body(size_t index, void* state_ptr) {
  auto& st = *static_cast<benchmark::State*>(state_ptr);
  auto it = live_.find(index);
  Live& live = it != live_.end() ? it->second : start(index);
  CaseResult& r = results_[index];
  if (!live.ready || g_interrupted) {
    if (g_interrupted && live.ready) {
      r.status = CaseStatus::kInterrupted;
      r.reason = stop_reason_.empty() ? "interrupted" : stop_reason_;
      live.ready = false;
    }
    st.SkipWithError(fmt::format("{}: {}", status_name(r.status), r.reason).c_str());
    return;
  }
  auto& samples = invocations_[index].emplace_back();
  const bool switched = last_body_ != index;
  last_body_ = index;
  try {
    if (switched && options_.warmup_s > 0) warm_up(*live.run, r);
    for (auto _ : st) {
      const double started = elapsed_ns();
      CaseRun::Sample s = live.run->time_sample();
      s.started_ns = started;
      st.SetIterationTime(s.ns * 1e-9);
      samples.push_back(s);
    }
  } catch (const std::exception& e) {
    r.status = CaseStatus::kError;
    r.reason = std::string("while timing: ") + e.what();
    live.ready = false;
    st.SkipWithError(r.reason.c_str());
    return;
  }
  st.SetBytesProcessed(static_cast<int64_t>(r.cost.bytes) * st.iterations());
  st.counters["FLOP/s"] = benchmark::Counter(r.cost.flops, benchmark::Counter::kIsIterationInvariantRate);
}

double BenchDriver::elapsed_ns() {
  const auto now = std::chrono::steady_clock::now();
  if (!first_sample_) first_sample_ = now;
  return std::chrono::duration<double, std::nano>(now - *first_sample_).count();
}

namespace {

// The timing of the last `repetitions` invocations (Google Benchmark's
// repetitions; earlier ones were its own trial runs), or none without samples.
std::optional<TimeStats> last_repetitions_time(const std::vector<std::vector<CaseRun::Sample>>& invocations,
                                               size_t repetitions) {
  std::vector<double> samples, cpu, started;
  const size_t first = invocations.size() > repetitions ? invocations.size() - repetitions : 0;
  for (size_t k = first; k < invocations.size(); ++k) {
    for (const CaseRun::Sample& s : invocations[k]) {
      samples.push_back(s.ns);
      cpu.push_back(s.cpu_ns);
      started.push_back(s.started_ns);
    }
  }
  if (samples.empty()) return std::nullopt;
  return time_stats(std::move(samples), std::move(cpu), std::move(started));
}

// The validation-layer errors raised since `before` are the case's;
// any turns a case that ran (ok, failed or compiled) into an error naming
// the first. Under the layer the case also records its warnings by id.
void count_validation_errors(const Instance& instance, const VkSnapshot& before, CaseResult& r) {
  r.vk_validation_errors = instance.validation_error_count() - before.errors;
  if (instance.validation_enabled()) {
    VkValidationCounts counts;
    counts.errors = r.vk_validation_errors;
    for (const auto& [id, n] : instance.validation_warnings_by_id()) {
      const auto was = before.warnings.find(id);
      const uint64_t since = n - (was == before.warnings.end() ? 0 : was->second);
      if (since > 0) (allowlist_reason(id) ? counts.allowed : counts.warnings)[id] = since;
    }
    r.vk_validation = std::move(counts);
  }
  const bool ran = r.status == CaseStatus::kOk || r.status == CaseStatus::kFailed || r.status == CaseStatus::kCompiled;
  if (r.vk_validation_errors == 0 || !ran) return;
  const auto msgs = instance.validation_messages();
  r.status = CaseStatus::kError;
  r.reason = fmt::format("{} Vulkan validation-layer error(s); first: {}", r.vk_validation_errors,
                         msgs.empty() ? "(see stderr)" : msgs.front());
}

}  // namespace

VkSnapshot BenchDriver::release(size_t index) {
  auto it = live_.find(index);
  if (it == live_.end()) return VkSnapshot::of(instance_);
  VkSnapshot before = std::move(it->second.vk_before);
  live_.erase(it);  // frees the case's GPU memory; teardown is validated too
  return before;
}

void BenchDriver::write_finished_in_order() {
  // Results go to the report in sweep order, which random interleaving does
  // not finish cases in: each waits for the cases before it.
  if (written_ < cases_.size() && finished_[written_]) {
    while (written_ < cases_.size() && finished_[written_]) writer_.add(results_[written_++]);
    try {
      writer_.flush();
    } catch (const std::runtime_error& e) {
      // A full disk or a file size limit: the report on disk is the last one
      // written, whole. Stop the sweep; the cases not run say why, and the
      // run's last flush tries once more.
      if (stop_reason_.empty()) {
        stop_reason_ = fmt::format("not run: the report could not be written: {}", e.what());
        fmt::print(stderr, "pebench run: error: {}; stopping the sweep\n", e.what());
      }
      g_interrupted = true;
    }
  }
}

void BenchDriver::warm_up(CaseRun& run, CaseResult& r) {
  // At least warmup_s, then on while each run is still >10% faster than the
  // one before (the slow start decays over ~10 runs, so a fixed time ends it
  // early exactly when the runs are slow), up to 20x warmup_s.
  const double min_ns = options_.warmup_s * 1e9;
  double total = 0, previous = 0;
  for (;;) {
    const double ns = run.time_sample().ns;
    ++r.warmup_runs;
    total += ns;
    const bool speeding_up = previous > 0 && ns * 1.1 < previous;
    previous = ns;
    if (g_interrupted || total >= 20 * min_ns || (total >= min_ns && !speeding_up)) return;
  }
}

void BenchDriver::finish(size_t index, size_t repetitions, bool gb_error, const std::string& gb_message) {
  if (finished_[index]) return;
  finished_[index] = true;
  const VkSnapshot vk_before = release(index);
  CaseResult& r = results_[index];
  if (!gb_error && !invocations_[index].empty()) {
    if (auto t = last_repetitions_time(invocations_[index], repetitions)) r.time = std::move(t);
  }
  invocations_[index].clear();
  if (r.status == CaseStatus::kError && r.reason.empty()) r.reason = gb_message;
  count_validation_errors(instance_, vk_before, r);
  if (auto roofs = options_.roofs.find(cases_[index].device_index); roofs != options_.roofs.end() && r.time &&
      r.status == CaseStatus::kOk) {
    r.roofline = roofline(r.cost, r.time->median, roofs->second);
  }
  write_finished_in_order();
  ++done_;
  if (options_.progress) options_.progress->case_finished(done_, cases_.size(), r);
}

CaseResult initial_result(const SweepCase& c) {
  CaseResult r;
  r.device = c.device_index;
  r.variant = c.planned.variant->id();
  r.params = c.planned.params;
  r.impl = r.params.impl();
  r.dtype = r.params.s("dtype");
  r.id = case_id(c.device_index, *c.planned.variant, r.params);
  r.label = short_params(*c.planned.variant, r.params, c.planned.explicit_keys);
  return r;
}

void compile_sweep(const Instance& instance, ReportWriter& writer, const std::vector<SweepCase>& cases,
                   ProgressSink* progress) {
  const RunOptions options;
  for (size_t i = 0; i < cases.size(); ++i) {
    const SweepCase& c = cases[i];
    CaseResult r = initial_result(c);
    const VkSnapshot before = VkSnapshot::of(instance);
    if (g_interrupted) {
      r.status = CaseStatus::kInterrupted;
      r.reason = "interrupted";
    } else if (!c.planned.rejected.empty()) {
      r.status = CaseStatus::kSkipped;
      r.reason = c.planned.rejected;
    } else {
      CaseRun(*c.gpu, *c.planned.variant, options, r).compile();
    }
    count_validation_errors(instance, before, r);
    writer.add(r);
    writer.flush();
    if (progress) progress->case_finished(i + 1, cases.size(), r);
  }
}

void BenchDriver::run(const std::vector<SweepCase>& cases) {
  cases_ = cases;
  results_.assign(cases_.size(), CaseResult{});
  invocations_.assign(cases_.size(), {});
  finished_.assign(cases_.size(), false);
  names_ = options_.names;
  if (names_.size() != cases_.size()) {
    std::vector<PlannedCase> planned;
    std::vector<uint32_t> devices;
    for (const auto& c : cases_) {
      planned.push_back(c.planned);
      devices.push_back(c.device_index);
    }
    names_ = gb_names(planned, devices, std::set<uint32_t>(devices.begin(), devices.end()).size() > 1);
  }
  written_ = 0;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < cases_.size(); ++i) {
    const SweepCase& c = cases_[i];
    CaseResult& r = results_[i];
    r = initial_result(c);
    const std::string& name = names_[i];
    r.benchmark = name;
    index[name] = i;
    auto* b = benchmark::RegisterBenchmark(name.c_str(), [this, i](benchmark::State& st) { body(i, &st); });
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (options_.min_time_s > 0) b->MinTime(options_.min_time_s);
    if (options_.repetitions > 0) b->Repetitions(options_.repetitions);
  }
  Reporter reporter(*this, index);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  live_.clear();
}

}  // namespace pebench
