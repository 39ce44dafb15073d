#include "analysis/compare_json.h"

#include <cmath>

#include "analysis/timing_rule.h"

namespace pebench {
namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json roofline_json(const CaseRecord& c) {
  if (!c.roofline) return nullptr;
  return {{"bound", c.roofline->bound}, {"fraction", c.roofline->fraction}};
}

// The timing side of a case: status, median, sample count, roofline.
nlohmann::json side_json(const CaseRecord& c, const std::optional<double>& median) {
  return {{"status", c.status},
          {"reason", c.reason},
          {"median_ns", opt(median)},
          {"samples", c.time ? nlohmann::json(c.time->samples.size()) : nlohmann::json(nullptr)},
          {"roofline", roofline_json(c)}};
}

nlohmann::json case_ref(const CaseRecord& c) {
  return {{"id", c.id},         {"variant", c.variant}, {"impl", c.impl},     {"dtype", c.dtype},
          {"label", c.label},   {"params", c.params},   {"status", c.status}, {"reason", c.reason},
          {"device", c.device_info->key_name}};
}

nlohmann::json report_json(const ReportFile& r) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : r.devices) {
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"key_name", d.key_name},
                       {"driver_name", d.driver_name},
                       {"driver_info", d.driver_info},
                       {"driver_version", d.driver_version}});
  }
  return {{"path", r.path},     {"created", r.created},    {"tool", r.tool},
          {"devices", devices}, {"cases", r.cases.size()}, {"tuned", r.tuned}};
}

nlohmann::json geomean_json(const GeoMean& g) { return {{"family", g.family}, {"cases", g.cases}, {"ratio", g.ratio}}; }

nlohmann::json pair_json(const PairComparison& p) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : p.devices) devices.push_back({{"base", d.base}, {"new", d.next}});
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : p.cases) {
    nlohmann::json j = case_ref(*c.base);
    j.erase("status");
    j.erase("reason");
    j["new_impl"] = c.next->impl;  // another than "impl" when the pair matched across impls
    j["base"] = side_json(*c.base, c.base_median);
    j["new"] = side_json(*c.next, c.new_median);
    j["ratio"] = opt(c.ratio);
    j["p_value"] = opt(c.p_value);
    j["test"] = c.p_value ? nlohmann::json(c.exact_test ? "exact" : "normal") : nlohmann::json(nullptr);
    j["verdict"] = c.verdict == Verdict::kNone ? nlohmann::json(nullptr) : nlohmann::json(verdict_name(c.verdict));
    j["status_change"] = status_change_name(c.change);
    nlohmann::json stats = nlohmann::json::array();
    for (const auto& sc : c.stat_changes) {
      stats.push_back({{"pipeline", sc.shader}, {"statistic", sc.stat}, {"base", opt(sc.base)}, {"new", opt(sc.next)},
                       {"new_spills", sc.new_spills}});
    }
    j["pipeline_stat_changes"] = stats;
    j["vk_warnings_appeared"] = c.vk_warnings_appeared;
    j["vk_warnings_gone"] = c.vk_warnings_gone;
    j["too_few_samples"] = c.too_few_samples;
    j["load_factor"] = c.load_factor;
    // run --tune: the knob's value on each side (the text's "tuned plans that differ").
    const auto base_value = tuned_value(*c.base, *c.next), new_value = tuned_value(*c.next, *c.base);
    j["tuning"] = nullptr;
    if (base_value && new_value) {
      j["tuning"] = {{"knob", c.base->tuning ? c.base->tuning->knob : c.next->tuning->knob},
                     {"base", *base_value},
                     {"new", *new_value},
                     {"differs", *base_value != *new_value}};
    }
    cases.push_back(j);
  }
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& v : p.variants) {
    variants.push_back({{"variant", v.variant},
                        {"impl", v.impl},
                        {"cases", v.cases.size()},
                        {"ratio", v.cases.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.ratio)},
                        {"slower", v.slower}});
  }
  nlohmann::json only_base = nlohmann::json::array(), only_new = nlohmann::json::array();
  for (const CaseRecord* c : p.only_in_base) only_base.push_back(case_ref(*c));
  for (const CaseRecord* c : p.only_in_new) only_new.push_back(case_ref(*c));
  nlohmann::json families = nlohmann::json::array();
  for (const auto& f : p.families) families.push_back(geomean_json(f));
  return {{"base", p.base_report},
          {"new", p.new_report},
          {"devices", devices},
          {"cross_device", p.cross_device},
          {"cross_host", p.cross_host ? nlohmann::json{{"devices", p.cross_host->devices},
                                                       {"base", p.cross_host->base},
                                                       {"new", p.cross_host->next}}
                                      : nlohmann::json(nullptr)},
          {"across_impls", p.across_impls
                               ? nlohmann::json{{"base", p.base_impls}, {"new", p.new_impls}}
                               : nlohmann::json(nullptr)},
          {"cases", cases},
          {"only_in_base", only_base},
          {"only_in_new", only_new},
          {"geomean", {{"families", families}, {"overall", p.overall ? geomean_json(*p.overall) : nlohmann::json()}}},
          {"load_factor", p.load_factor},
          {"variants", variants},
          {"counts",
           {{"faster", p.count(Verdict::kFaster)},
            {"slower", p.count(Verdict::kSlower)},
            {"unchanged", p.count(Verdict::kUnchanged)},
            {"noisy", p.count(Verdict::kNoisy)}}}};
}

nlohmann::json matrix_json(const VendorMatrix& m) {
  nlohmann::json columns = nlohmann::json::array();
  for (const auto& c : m.columns) columns.push_back({{"name", c.name}, {"report", c.report}, {"device", c.device}});
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : m.rows) {
    nlohmann::json j = case_ref(*row.first);
    j.erase("status");
    j.erase("reason");
    j.erase("device");
    j.erase("id");
    nlohmann::json cells = nlohmann::json::array();
    for (size_t col = 0; col < m.columns.size(); ++col) {
      const CaseRecord* c = row.cells[col];
      if (!c) {
        cells.push_back(nullptr);
        continue;
      }
      cells.push_back({{"status", c->status},
                       {"median_ns", c->timed() ? nlohmann::json(c->time->median) : nlohmann::json(nullptr)},
                       {"ratio", opt(row.ratios[col])}});
    }
    j["cells"] = cells;
    rows.push_back(j);
  }
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& v : m.variants) {
    nlohmann::json ratios = nlohmann::json::array();
    for (const auto& r : v.ratios) ratios.push_back(opt(r));
    variants.push_back({{"variant", v.variant}, {"cases", v.cases}, {"ratios", ratios}});
  }
  return {{"columns", columns}, {"rows", rows}, {"variants", variants}};
}

}  // namespace

nlohmann::json compare_json(const std::vector<ReportFile>& reports, const CompareResult& result) {
  nlohmann::json j;
  j["schema"] = kCompareSchema;
  j["threshold"] = result.options.threshold;
  j["alpha"] = result.options.alpha;
  j["time"] = series_name(result.options.series);
  j["normalize"] = result.options.normalize;
  j["load_neighbours"] = result.options.load_neighbours;
  j["min_samples"] = result.options.min_samples;
  j["cross_host"] = result.options.cross_host == CrossHost::kFail ? "fail" : "correctness";
  j["variant_threshold"] = result.options.variant_threshold ? nlohmann::json(*result.options.variant_threshold)
                                                             : nlohmann::json(nullptr);
  j["reports"] = nlohmann::json::array();
  for (const auto& r : reports) j["reports"].push_back(report_json(r));
  j["comparisons"] = nlohmann::json::array();
  for (const auto& p : result.pairs) j["comparisons"].push_back(pair_json(p));
  j["matrix"] = result.matrix ? matrix_json(*result.matrix) : nlohmann::json(nullptr);
  if (result.gate) {
    j["gate"] = {{"passed", result.gate->passed()},
                 {"reasons", result.gate->reasons},
                 {"unconfirmed", result.gate->unconfirmed},
                 {"notes", result.gate->notes},
                 {"confirm", result.confirm ? nlohmann::json(result.confirm_path) : nlohmann::json(nullptr)}};
  } else {
    j["gate"] = nullptr;
  }
  return j;
}

}  // namespace pebench
