#include "harness/output/result.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "analysis/enum_names.h"
#include "analysis/report_schema.h"

namespace pebench {

static_assert(kStatusNames.size() == static_cast<size_t>(CaseStatus::kCompiled) + 1, "one name per CaseStatus");

const char* status_name(CaseStatus s) { return enum_name(s, kStatusNames, "error"); }

namespace {

double median_of_sorted(const std::vector<double>& v) {
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

TimeStats time_stats(std::vector<double> samples, std::vector<double> cpu_samples, std::vector<double> started_ns) {
  TimeStats t;
  t.samples = samples;
  t.cpu_samples = cpu_samples;
  t.started_ns = std::move(started_ns);
  if (!cpu_samples.empty()) {
    std::sort(cpu_samples.begin(), cpu_samples.end());
    t.cpu_median = median_of_sorted(cpu_samples);
  }
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  t.min = samples.front();
  t.max = samples.back();
  t.median = median_of_sorted(samples);
  t.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  double var = 0;
  for (double s : samples) var += (s - t.mean) * (s - t.mean);
  t.stddev = n > 1 ? std::sqrt(var / static_cast<double>(n - 1)) : 0.0;
  return t;
}

namespace {

// JSON has no inf/NaN: such a number is written as null.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json params_to_json(const Params& p) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : p.values()) {
    std::visit([&j, &k = k](const auto& x) { j[k] = x; }, v);
  }
  return j;
}

nlohmann::json pipeline_to_json(const PipelineRecord& p) {
  nlohmann::json spec = nlohmann::json::object();
  for (const auto& [name, value] : p.spec_constants) spec[name] = value;
  nlohmann::json j = {{report_key::kShader, p.shader},
                      {report_key::kStorage, p.storage},
                      {report_key::kSpecConstants, spec},
                      {report_key::kLocalSize, p.local_size},
                      {report_key::kGroups, p.groups}};
  if (!p.stats.empty()) {
    nlohmann::json stats = nlohmann::json::object();
    for (const auto& [name, value] : p.stats) stats[name] = number(value);
    j[report_key::kStats] = stats;
  }
  return j;
}

nlohmann::json result_to_json(const CaseResult& r) {
  nlohmann::json j;
  j[report_key::kId] = r.id;
  j[report_key::kDevice] = r.device;
  j[report_key::kVariant] = r.variant;
  j[report_key::kImpl] = r.impl;
  j[report_key::kDtype] = r.dtype;
  j[report_key::kParams] = params_to_json(r.params);
  j[report_key::kLabel] = r.label;
  if (!r.benchmark.empty()) j[report_key::kBenchmark] = r.benchmark;
  j[report_key::kStatus] = status_name(r.status);
  j[report_key::kReason] = r.reason;
  if (r.time) {
    j[report_key::kTimeNs] = {{report_key::kMedian, r.time->median}, {report_key::kMin, r.time->min},
                              {report_key::kMax, r.time->max},       {report_key::kMean, r.time->mean},
                              {report_key::kStddev, r.time->stddev}, {report_key::kSamples, r.time->samples}};
    if (!r.time->started_ns.empty()) j[report_key::kTimeNs][report_key::kStartedNs] = r.time->started_ns;
    j[report_key::kTiming] = r.timing;
  } else {
    j[report_key::kTimeNs] = nullptr;
    j[report_key::kTiming] = nullptr;
  }
  if (r.time && !r.time->cpu_samples.empty()) {
    j[report_key::kCpuNs] = {{report_key::kMedian, r.time->cpu_median}, {report_key::kSamples, r.time->cpu_samples}};
  } else {
    j[report_key::kCpuNs] = nullptr;
  }
  j[report_key::kBytes] = r.cost.bytes;
  j[report_key::kFlops] = r.cost.flops;
  if (r.time && r.time->median > 0) {
    j[report_key::kGbps] = r.cost.bytes / r.time->median;    // bytes per ns == GB/s
    j[report_key::kGflops] = r.cost.flops / r.time->median;  // flops per ns == GFLOP/s
  } else {
    j[report_key::kGbps] = nullptr;
    j[report_key::kGflops] = nullptr;
  }
  if (r.validation.ran) {
    const auto& v = r.validation;
    nlohmann::json tol = {{report_key::kNmse, v.tolerance.nmse}};
    if (v.tolerance.max_rel > 0) tol[report_key::kMaxRel] = v.tolerance.max_rel;
    if (!v.tolerance.model.empty()) tol[report_key::kModel] = v.tolerance.model;
    j[report_key::kValidation] = {{report_key::kNmse, number(v.nmse)},      {report_key::kMaxAbs, number(v.max_abs)},
                                  {report_key::kMaxRel, number(v.max_rel)}, {report_key::kTolerance, tol},
                                  {report_key::kPassed, v.passed},          {report_key::kRowsChecked, v.rows_checked},
                                  {report_key::kRowsTotal, v.rows_total}};
    if (!v.detail.empty()) j[report_key::kValidation][report_key::kDetail] = v.detail;
  } else {
    j[report_key::kValidation] = nullptr;
  }
  j[report_key::kVkValidationErrors] = r.vk_validation_errors;
  if (r.vk_validation) {
    nlohmann::json warnings = nlohmann::json::object();
    nlohmann::json allowed = nlohmann::json::object();
    for (const auto& [id, n] : r.vk_validation->warnings) warnings[id] = n;
    for (const auto& [id, n] : r.vk_validation->allowed) allowed[id] = n;
    j[report_key::kVkValidation] = {{report_key::kErrors, r.vk_validation->errors},
                                    {report_key::kWarnings, std::move(warnings)},
                                    {report_key::kAllowed, std::move(allowed)}};
  }
  j[report_key::kRoofline] = r.roofline ? roofline_to_json(*r.roofline) : nlohmann::json(nullptr);
  j[report_key::kWarmupRuns] = r.warmup_runs;
  j[report_key::kPipelines] = nlohmann::json::array();
  for (const auto& p : r.pipelines) j[report_key::kPipelines].push_back(pipeline_to_json(p));
  if (r.tuning) {
    nlohmann::json candidates = nlohmann::json::array();
    for (const auto& c : r.tuning->candidates) {
      nlohmann::json one = {{report_key::kValue, c.value}, {report_key::kStatus, status_name(c.status)}};
      if (c.status == CaseStatus::kOk) {
        one[report_key::kMedianNs] = number(c.median_ns);
      } else {
        one[report_key::kReason] = c.reason;
      }
      candidates.push_back(std::move(one));
    }
    j[report_key::kTuning] = {{report_key::kKnob, r.tuning->knob},
                              {report_key::kPlanned, r.tuning->planned},
                              {report_key::kChosen, r.tuning->chosen},
                              {report_key::kCandidates, candidates}};
    if (!r.tuning->from.empty()) j[report_key::kTuning][report_key::kFrom] = r.tuning->from;
  }
  if (r.injected_slowdown) {
    const auto& s = *r.injected_slowdown;
    j[report_key::kInjectSlowdown] = {{"factor", s.factor},
                                      {"passes", s.passes},
                                      {"divisor", s.divisor},
                                      {"fixed_ns", s.fixed_ns},
                                      {"fixed_cpu_ns", s.fixed_cpu_ns}};
  }
  return j;
}

}  // namespace pebench
