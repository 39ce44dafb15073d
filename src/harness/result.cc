#include "harness/result.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pebench {

const char* status_name(CaseStatus s) {
  switch (s) {
    case CaseStatus::kOk:
      return "ok";
    case CaseStatus::kFailed:
      return "failed";
    case CaseStatus::kSkipped:
      return "skipped";
    case CaseStatus::kUnsupported:
      return "unsupported";
    case CaseStatus::kError:
      return "error";
    case CaseStatus::kCompiled:
      return "compiled";
    case CaseStatus::kInterrupted:
      return "interrupted";
  }
  return "error";
}

namespace {

double median_of_sorted(const std::vector<double>& v) {
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

TimeStats time_stats(std::vector<double> samples, std::vector<double> cpu_samples) {
  TimeStats t;
  t.samples = samples;
  t.cpu_samples = cpu_samples;
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
  nlohmann::json j = {{"shader", p.shader},         {"storage", p.storage},
                      {"spec_constants", spec},     {"local_size", p.local_size},
                      {"groups", p.groups}};
  if (!p.stats.empty()) {
    nlohmann::json stats = nlohmann::json::object();
    for (const auto& [name, value] : p.stats) stats[name] = number(value);
    j["stats"] = stats;
  }
  return j;
}

nlohmann::json result_to_json(const CaseResult& r) {
  nlohmann::json j;
  j["id"] = r.id;
  j["device"] = r.device;
  j["variant"] = r.variant;
  j["impl"] = r.impl;
  j["dtype"] = r.dtype;
  j["params"] = params_to_json(r.params);
  j["label"] = r.label;
  if (!r.benchmark.empty()) j["benchmark"] = r.benchmark;
  j["status"] = status_name(r.status);
  j["reason"] = r.reason;
  if (r.time) {
    j["time_ns"] = {{"median", r.time->median}, {"min", r.time->min},       {"max", r.time->max},
                    {"mean", r.time->mean},     {"stddev", r.time->stddev}, {"samples", r.time->samples}};
    j["timing"] = r.timing;
  } else {
    j["time_ns"] = nullptr;
    j["timing"] = nullptr;
  }
  if (r.time && !r.time->cpu_samples.empty()) {
    j["cpu_ns"] = {{"median", r.time->cpu_median}, {"samples", r.time->cpu_samples}};
  } else {
    j["cpu_ns"] = nullptr;
  }
  j["bytes"] = r.cost.bytes;
  j["flops"] = r.cost.flops;
  if (r.time && r.time->median > 0) {
    j["gbps"] = r.cost.bytes / r.time->median;   // bytes per ns == GB/s
    j["gflops"] = r.cost.flops / r.time->median;  // flops per ns == GFLOP/s
  } else {
    j["gbps"] = nullptr;
    j["gflops"] = nullptr;
  }
  if (r.validation.ran) {
    const auto& v = r.validation;
    nlohmann::json tol = {{"nmse", v.tolerance.nmse}};
    if (v.tolerance.max_rel > 0) tol["max_rel"] = v.tolerance.max_rel;
    if (!v.tolerance.model.empty()) tol["model"] = v.tolerance.model;
    j["validation"] = {{"nmse", number(v.nmse)},
                       {"max_abs", number(v.max_abs)},
                       {"max_rel", number(v.max_rel)},
                       {"tolerance", tol},
                       {"passed", v.passed},
                       {"rows_checked", v.rows_checked},
                       {"rows_total", v.rows_total}};
    if (!v.detail.empty()) j["validation"]["detail"] = v.detail;
  } else {
    j["validation"] = nullptr;
  }
  j["vk_validation_errors"] = r.vk_validation_errors;
  j["roofline"] = r.roofline ? roofline_to_json(*r.roofline) : nlohmann::json(nullptr);
  j["pipelines"] = nlohmann::json::array();
  for (const auto& p : r.pipelines) j["pipelines"].push_back(pipeline_to_json(p));
  if (r.injected_slowdown) {
    const auto& s = *r.injected_slowdown;
    j["inject_slowdown"] = {{"factor", s.factor},     {"passes", s.passes},           {"divisor", s.divisor},
                            {"fixed_ns", s.fixed_ns}, {"fixed_cpu_ns", s.fixed_cpu_ns}};
  }
  return j;
}

}  // namespace pebench
