// `pebench compare`: key matching, the Mann–Whitney U test against values
// computed independently (scipy, hand enumeration), verdicts and the gate on
// crafted reports, the three output formats and corrupt inputs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/case_key.h"
#include "analysis/compare.h"
#include "analysis/compare_json.h"
#include "analysis/compare_render.h"
#include "analysis/mann_whitney.h"
#include "analysis/format_units.h"
#include "analysis/ratio_interval.h"
#include "analysis/report_file.h"
#include "test_util.h"

namespace pebench {
namespace {

using nlohmann::json;

// --- crafting reports ----------------------------------------------------

struct CaseSpec {
  std::string variant = "abs.learned";
  std::string impl = "default";
  std::string dtype = "f32";
  json params = {{"batch", 1}, {"seq", 128}, {"d_model", 256}};
  std::string status = "ok";
  std::string reason;
  std::vector<double> samples;      // empty: time_ns null
  std::vector<double> cpu_samples;  // empty: cpu_ns null
  bool validated = true;            // false: validation null
};

double median_of(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

// n samples around `center` with a deterministic spread of +-`spread` (relative).
std::vector<double> samples_around(double center, size_t n, double spread, uint32_t seed) {
  std::vector<double> out;
  uint32_t state = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const double u = static_cast<double>(state >> 8) / static_cast<double>(1u << 24);  // [0, 1)
    out.push_back(center * (1 + spread * (2 * u - 1)));
  }
  return out;
}

json case_json(const CaseSpec& c, int index) {
  json j = {{"id", "c" + std::to_string(index)},
            {"device", 0},
            {"variant", c.variant},
            {"impl", c.impl},
            {"dtype", c.dtype},
            {"params", c.params},
            {"label", ""},
            {"status", c.status},
            {"reason", c.reason}};
  if (c.samples.empty()) {
    j["time_ns"] = nullptr;
  } else {
    const auto [lo, hi] = std::minmax_element(c.samples.begin(), c.samples.end());
    j["time_ns"] = {{"median", median_of(c.samples)}, {"min", *lo}, {"max", *hi}, {"samples", c.samples}};
  }
  j["cpu_ns"] = c.cpu_samples.empty() ? json(nullptr)
                                      : json{{"median", median_of(c.cpu_samples)}, {"samples", c.cpu_samples}};
  if (c.validated && c.status != "skipped" && c.status != "unsupported") {
    const bool passed = c.status != "failed";
    j["validation"] = {{"nmse", passed ? 1e-12 : 0.5}, {"max_abs", 1e-6}, {"max_rel", 1e-6},
                       {"tolerance", {{"nmse", 1e-9}}}, {"passed", passed}, {"rows_checked", 8}, {"rows_total", 8}};
  } else {
    j["validation"] = nullptr;
  }
  return j;
}

json report_json(const std::vector<CaseSpec>& cases, const std::string& device = "Test GPU",
                 const std::string& driver_version = "1.0.0") {
  json results = json::array();
  for (size_t i = 0; i < cases.size(); ++i) results.push_back(case_json(cases[i], static_cast<int>(i)));
  return {{"schema", "pebench.report/1"},
          {"tool", {{"version", "0.1.0"}, {"git_commit", "abcdef0123456789"}}},
          {"created", "2026-01-01T00:00:00Z"},
          {"host", {{"os", "test"}, {"cpu", "test"}, {"logical_cores", 2}}},
          {"devices",
           {{{"index", 0}, {"name", device}, {"driver_name", "drv"}, {"driver_info", "info"},
             {"driver_version", driver_version}}}},
          {"results", results}};
}

std::string write_text(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string write_json(const std::string& dir, const std::string& name, const json& j) {
  return write_text(dir, name, j.dump(1));
}

ReportFile parse(const json& j, const std::string& name = "test.json") { return parse_report(j, name); }

const CompareOptions kDefaults;

// --- key matching ----------------------------------------------------------

TEST(CompareKey, ParameterOrderAndNumberSpellingDoNotMatter) {
  // The same case written by two writers: keys in another order, 4 as 4.0,
  // impl/dtype repeated inside params by one of them.
  const json a = json::parse(R"({"seq": 128, "factor": 4, "scaling": "yarn", "impl": "default", "dtype": "f16"})");
  const json b = json::parse(R"({"scaling": "yarn", "factor": 4.0, "seq": 128.0})");
  EXPECT_EQ(case_key("rope.apply", "default", "f16", a), case_key("rope.apply", "default", "f16", b));
  // A real difference in any parameter, or in impl/dtype, is a different case.
  const json c = json::parse(R"({"scaling": "yarn", "factor": 4.5, "seq": 128})");
  EXPECT_NE(case_key("rope.apply", "default", "f16", a), case_key("rope.apply", "default", "f16", c));
  EXPECT_NE(case_key("rope.apply", "default", "f16", a), case_key("rope.apply", "default", "f32", a));
  EXPECT_NE(case_key("rope.apply", "default", "f16", a), case_key("rope.apply", "flash", "f16", a));
  EXPECT_NE(case_key("rope.apply", "default", "f16", a), case_key("rope.scaled", "default", "f16", a));
}

TEST(CompareKey, FilesWithReorderedKeysMatchCaseByCase) {
  const std::string dir = test::temp_dir("reordered");
  // Raw text, so the order on disk really differs.
  const std::string head = R"({"schema": "pebench.report/1", "devices": [{"index": 0, "name": "GPU"}], "results": [)";
  const std::string base = head +
                           R"({"device": 0, "variant": "v.a", "impl": "i", "dtype": "f32", "status": "ok",
      "params": {"seq": 128, "offset": 0, "heads": 4}, "time_ns": {"median": 100, "samples": [99, 100, 101]}}]})";
  const std::string next = head +
                           R"({"status": "ok", "time_ns": {"samples": [99, 100, 101], "median": 100}, "dtype": "f32",
      "params": {"heads": 4.0, "seq": 128, "offset": 0}, "impl": "i", "variant": "v.a", "device": 0}]})";
  const ReportFile b = load_report(write_text(dir, "base.json", base));
  const ReportFile n = load_report(write_text(dir, "new.json", next));
  const PairComparison p = compare_reports(b, n, kDefaults);
  ASSERT_EQ(p.cases.size(), 1u);
  EXPECT_TRUE(p.only_in_base.empty());
  EXPECT_TRUE(p.only_in_new.empty());
  EXPECT_DOUBLE_EQ(*p.cases[0].ratio, 1.0);
}

TEST(CompareKey, DefaultsAreWrittenOutSoADifferentDefaultIsADifferentCase) {
  // Reports write every parameter, defaults included: a build whose default
  // offset changed runs a different case, and compare must say so rather
  // than match it.
  CaseSpec old_default, new_default;
  old_default.params = {{"seq", 128}, {"offset", 0}};
  new_default.params = {{"seq", 128}, {"offset", 16}};
  old_default.samples = new_default.samples = {10, 11, 12};
  const ReportFile b = parse(report_json({old_default}));
  const ReportFile n = parse(report_json({new_default}));
  const PairComparison p = compare_reports(b, n, kDefaults);
  EXPECT_TRUE(p.cases.empty());
  ASSERT_EQ(p.only_in_base.size(), 1u);
  ASSERT_EQ(p.only_in_new.size(), 1u);
  EXPECT_EQ(p.only_in_base[0]->params["offset"], 0);
  EXPECT_EQ(p.only_in_new[0]->params["offset"], 16);
}

TEST(CompareKey, DriverVersionIsNotPartOfTheKeyButTheDeviceIs) {
  CaseSpec c;
  c.samples = {10, 11, 12};
  const ReportFile b = parse(report_json({c}, "GPU X", "1.0.0"));
  const ReportFile updated = parse(report_json({c}, "GPU X", "2.0.0"));
  const PairComparison p = compare_reports(b, updated, kDefaults);
  EXPECT_EQ(p.cases.size(), 1u);
  EXPECT_FALSE(p.cross_device);
  const std::vector<ReportFile> both = {b, updated};
  const CompareResult r = run_compare(both, kDefaults, true);
  EXPECT_TRUE(r.gate->passed());
  EXPECT_NE(render_compare_text(both, r).find("driver changed on GPU X"), std::string::npos);

  // Two single-device reports on different devices: compared device
  // against device, and never a passing gate.
  const ReportFile other = parse(report_json({c}, "GPU Y"));
  const PairComparison cross = compare_reports(b, other, kDefaults);
  EXPECT_TRUE(cross.cross_device);
  EXPECT_EQ(cross.cases.size(), 1u);
  const std::vector<ReportFile> reports = {b, other};
  const GateResult g = evaluate_gate(reports, {cross}, kDefaults);
  ASSERT_EQ(g.reasons.size(), 1u);
  EXPECT_EQ(g.reasons[0].rfind("device:", 0), 0u) << g.reasons[0];
}

TEST(CompareKey, MultiDeviceReportsPairDevicesByName) {
  CaseSpec c;
  c.samples = {10, 11, 12};
  // One case on each of two devices: median 11 on index 0, 20 on index 1.
  json base = report_json({c, c});
  base["devices"] = {{{"index", 0}, {"name", "A"}}, {{"index", 1}, {"name", "B"}}};
  base["results"][1]["device"] = 1;
  base["results"][1]["time_ns"]["median"] = 20;
  // NEW names the indices the other way round, so its median-20 case ran on
  // A: matching by name pairs A's 11 with A's 20.
  json next = base;
  next["devices"] = {{{"index", 0}, {"name", "B"}}, {{"index", 1}, {"name", "A"}}};
  const ReportFile b = parse(base), n = parse(next);
  const PairComparison p = compare_reports(b, n, kDefaults);
  ASSERT_EQ(p.cases.size(), 2u);
  EXPECT_EQ(p.devices.size(), 2u);
  for (const auto& cc : p.cases) EXPECT_EQ(cc.base->device_info->name, cc.next->device_info->name);
  EXPECT_EQ(p.cases[0].base->device_info->name, "A");
  EXPECT_DOUBLE_EQ(*p.cases[0].ratio, 20.0 / 11.0);
  EXPECT_DOUBLE_EQ(*p.cases[1].ratio, 11.0 / 20.0);
}

// --- a peer report: another implementation's cases (tools/peers/) ------------

// pebench's attention cases (naive and flash) and a rope case, medians 40
// (naive), 10 (flash) and 5 (rope); a peer's report of the same cases under
// its own impls, medians 20 and 4 (interface.md: peer reports keep the keys,
// impl names the peer).
std::vector<CaseSpec> pebench_cases() {
  CaseSpec naive, flash, rope;
  naive.variant = flash.variant = "attn.nope";
  naive.params = flash.params = {{"batch", 1}, {"heads", 2}, {"kv_heads", 2}, {"seq", 64}, {"kv_seq", 64},
                                 {"dim", 16},  {"causal", false}, {"scale", 0.25}};
  naive.impl = "naive";
  flash.impl = "flash";
  naive.params["impl"] = "naive";  // as pebench writes them; the key ignores impl inside params
  flash.params["impl"] = "flash";
  naive.samples = {39, 40, 41};
  flash.samples = {9, 10, 11};
  rope.variant = "rope.apply";
  rope.params = {{"batch", 1}, {"heads", 2}, {"seq", 64}, {"dim", 16}, {"style", "neox"}};
  rope.samples = {4, 5, 6};
  return {naive, flash, rope};
}

std::vector<CaseSpec> peer_cases() {
  std::vector<CaseSpec> cases = pebench_cases();
  CaseSpec sdpa = cases[1], rope = cases[2];
  sdpa.impl = "torch-sdpa";
  sdpa.params["impl"] = "torch-sdpa";
  sdpa.samples = {19, 20, 21};
  rope.impl = "torch";
  rope.samples = {3, 4, 5};
  return {sdpa, rope};
}

TEST(CompareKey, PeerReportMatchesPebenchsFlashAcrossImpls) {
  const ReportFile b = parse(report_json(pebench_cases()), "pebench.json");
  const ReportFile n = parse(report_json(peer_cases(), "Test GPU"), "peer.json");
  EXPECT_TRUE(match_across_impls(b, n));
  const PairComparison p = compare_reports(b, n, kDefaults);
  EXPECT_TRUE(p.across_impls);
  EXPECT_EQ(p.base_impls, (std::vector<std::string>{"default", "flash", "naive"}));
  EXPECT_EQ(p.new_impls, (std::vector<std::string>{"torch", "torch-sdpa"}));
  ASSERT_EQ(p.cases.size(), 2u);
  EXPECT_EQ(p.cases[0].base->impl, "flash");
  EXPECT_EQ(p.cases[0].next->impl, "torch-sdpa");
  EXPECT_DOUBLE_EQ(*p.cases[0].ratio, 20.0 / 10.0);
  EXPECT_EQ(p.cases[1].base->impl, "default");
  EXPECT_EQ(p.cases[1].next->impl, "torch");
  EXPECT_DOUBLE_EQ(*p.cases[1].ratio, 4.0 / 5.0);
  // naive has no partner: listed, never dropped.
  ASSERT_EQ(p.only_in_base.size(), 1u);
  EXPECT_EQ(p.only_in_base[0]->impl, "naive");
  EXPECT_TRUE(p.only_in_new.empty());

  // The table says which impls were paired; the peer may be BASE as well.
  const std::vector<ReportFile> both = {b, n};
  const std::string text = render_compare_text(both, run_compare(both, kDefaults, false));
  EXPECT_NE(text.find("flash vs torch-sdpa"), std::string::npos) << text;
  EXPECT_NE(text.find("default vs torch"), std::string::npos) << text;
  EXPECT_NE(text.find("impls differ: BASE ran default, flash, naive, NEW ran torch, torch-sdpa"), std::string::npos)
      << text;
  const PairComparison reverse = compare_reports(n, b, kDefaults);
  ASSERT_EQ(reverse.cases.size(), 2u);
  EXPECT_EQ(reverse.cases[0].next->impl, "flash");
  EXPECT_DOUBLE_EQ(*reverse.cases[0].ratio, 10.0 / 20.0);
  ASSERT_EQ(reverse.only_in_new.size(), 1u);
  EXPECT_EQ(reverse.only_in_new[0]->impl, "naive");

  // JSON: the pair's impls, and each case's NEW impl.
  const json j = compare_json(both, run_compare(both, kDefaults, false));
  const json& pair = j["comparisons"][0];
  EXPECT_EQ(pair["across_impls"]["new"], json({"torch", "torch-sdpa"}));
  EXPECT_EQ(pair["cases"][0]["impl"], "flash");
  EXPECT_EQ(pair["cases"][0]["new_impl"], "torch-sdpa");
}

TEST(CompareKey, PeerReportAgainstNaiveWithTheImplOption) {
  const ReportFile b = parse(report_json(pebench_cases()), "pebench.json");
  const ReportFile n = parse(report_json(peer_cases()), "peer.json");
  CompareOptions naive = kDefaults;
  naive.impl = "naive";
  const PairComparison p = compare_reports(b, n, naive);
  ASSERT_EQ(p.cases.size(), 2u);
  EXPECT_EQ(p.cases[0].base->impl, "naive");
  EXPECT_DOUBLE_EQ(*p.cases[0].ratio, 20.0 / 40.0);
  EXPECT_EQ(p.cases[1].base->impl, "default");  // rope.apply ran one impl: compared whatever its name
  ASSERT_EQ(p.only_in_base.size(), 1u);
  EXPECT_EQ(p.only_in_base[0]->impl, "flash");

  // On the command line: --impl, and its misuse (one line, exit 2).
  const std::string dir = test::temp_dir("peer_impl");
  const std::string base_path = write_json(dir, "pebench.json", report_json(pebench_cases()));
  const std::string peer_path = write_json(dir, "peer.json", report_json(peer_cases()));
  const auto r = test::run_pebench({"compare", base_path, peer_path, "--impl", "naive"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("naive vs torch-sdpa"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("flash vs torch-sdpa"), std::string::npos) << r.out;
  const auto plain = test::run_pebench({"compare", base_path, peer_path});
  EXPECT_EQ(plain.exit_code, 0) << plain.out;
  EXPECT_NE(plain.out.find("flash vs torch-sdpa"), std::string::npos) << plain.out;
  const auto typo = test::run_pebench({"compare", base_path, peer_path, "--impl", "nayve"});
  EXPECT_EQ(typo.exit_code, 2) << typo.out;
  EXPECT_NE(typo.out.find("--impl nayve: no case of that impl"), std::string::npos) << typo.out;
  const auto shared = test::run_pebench({"compare", base_path, base_path, "--impl", "naive"});
  EXPECT_EQ(shared.exit_code, 2) << shared.out;
  EXPECT_NE(shared.out.find("share impls"), std::string::npos) << shared.out;
}

TEST(CompareKey, ReportsSharingImplsStillMatchImplByImpl) {
  // Two pebench reports: naive against naive and flash against flash, as
  // before; a peer-less pair gets no impl note and no "vs".
  std::vector<CaseSpec> slower = pebench_cases();
  slower[0].samples = {79, 80, 81};
  slower[1].samples = {29, 30, 31};
  const ReportFile b = parse(report_json(pebench_cases()));
  const ReportFile n = parse(report_json(slower));
  EXPECT_FALSE(match_across_impls(b, n));
  const PairComparison p = compare_reports(b, n, kDefaults);
  EXPECT_FALSE(p.across_impls);
  ASSERT_EQ(p.cases.size(), 3u);
  for (const auto& c : p.cases) EXPECT_EQ(c.base->impl, c.next->impl);
  EXPECT_DOUBLE_EQ(*p.cases[0].ratio, 2.0);
  EXPECT_DOUBLE_EQ(*p.cases[1].ratio, 3.0);
  EXPECT_DOUBLE_EQ(*p.cases[2].ratio, 1.0);
  EXPECT_TRUE(p.only_in_base.empty());
  EXPECT_TRUE(p.only_in_new.empty());
  const std::vector<ReportFile> both = {b, n};
  const std::string text = render_compare_text(both, run_compare(both, kDefaults, false));
  EXPECT_EQ(text.find(" vs "), std::string::npos) << text;
  EXPECT_EQ(text.find("impls differ"), std::string::npos) << text;
  EXPECT_TRUE(compare_json(both, run_compare(both, kDefaults, false))["comparisons"][0]["across_impls"].is_null());

  // One impl shared is enough to match impl by impl: a report of flash
  // only against one of naive and flash leaves naive only in NEW.
  std::vector<CaseSpec> flash_only = {pebench_cases()[1]};
  const PairComparison partial = compare_reports(parse(report_json(flash_only)), b, kDefaults);
  EXPECT_FALSE(partial.across_impls);
  ASSERT_EQ(partial.cases.size(), 1u);
  EXPECT_EQ(partial.only_in_new.size(), 2u);
}

// --- Mann–Whitney U -----------------------------------------------------------

TEST(MannWhitney, ScipyDocumentationExample) {
  // scipy.stats.mannwhitneyu docs: males vs females, U = 17,
  // exact p = 0.1111111111111111 (= 2 * 7/126, see the enumeration test),
  // asymptotic (with continuity correction) p = 0.11134688653314041.
  const std::vector<double> males = {19, 22, 16, 29, 24}, females = {20, 11, 17, 12};
  const MannWhitneyResult r = mann_whitney_u(males, females);
  EXPECT_DOUBLE_EQ(r.u1, 17);
  EXPECT_DOUBLE_EQ(r.u2, 3);
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.p_value, 0.1111111111111111, 1e-12);
  // Swapping the samples mirrors U and keeps the two-sided p.
  const MannWhitneyResult s = mann_whitney_u(females, males);
  EXPECT_DOUBLE_EQ(s.u1, 3);
  EXPECT_NEAR(s.p_value, r.p_value, 1e-12);
}

TEST(MannWhitney, TiesUseTheNormalApproximationWithTieCorrection) {
  // scipy 1.10.1: mannwhitneyu(x, y, method='asymptotic')
  //   -> statistic 9.0, pvalue 0.0962020408864322
  const std::vector<double> x = {1, 2, 2, 3, 4, 5}, y = {2, 3, 3, 6, 7, 8, 8};
  const MannWhitneyResult r = mann_whitney_u(x, y);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u1, 9);
  EXPECT_NEAR(r.p_value, 0.0962020408864322, 1e-12);
}

TEST(MannWhitney, ExactForSmallSamplesWithoutTies) {
  // scipy 1.10.1, method='exact': statistic 41.0, pvalue 0.22762995518413476
  const std::vector<double> x = {0.5, 1.3, 2.2, 3.1, 4.8, 5.5, 6.0, 7.7, 8.1, 9.9};
  const std::vector<double> y = {1.0, 2.5, 3.3, 4.0, 5.1, 6.6, 7.0, 8.8, 9.2, 10.5, 11.1, 12.4};
  const MannWhitneyResult r = mann_whitney_u(x, y);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u1, 41);
  EXPECT_NEAR(r.p_value, 0.22762995518413476, 1e-12);

  // The largest exact size, 50 and 50: scipy method='exact' -> U 1120, p 0.3735888965213186
  std::vector<double> a, b;
  for (int i = 0; i < 50; ++i) {
    a.push_back(2 * i);
    b.push_back(2 * i + 1 + (i > 25 ? 10 : 0));
  }
  const MannWhitneyResult big = mann_whitney_u(a, b);
  EXPECT_TRUE(big.exact);
  EXPECT_DOUBLE_EQ(big.u1, 1120);
  EXPECT_NEAR(big.p_value, 0.3735888965213186, 1e-10);
}

TEST(MannWhitney, LargeSamplesUseTheNormalApproximation) {
  // scipy 1.10.1, method='asymptotic': U 1412.5, p 0.0422148349191375 (ties)
  std::vector<double> a, b;
  for (int i = 0; i < 60; ++i) {
    a.push_back(100 + (i * 37) % 61);
    b.push_back(105 + (i * 41) % 67);
  }
  const MannWhitneyResult r = mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u1, 1412.5);
  EXPECT_NEAR(r.p_value, 0.0422148349191375, 1e-12);
}

TEST(MannWhitney, ExactTailMatchesEnumeration) {
  // Under the null every choice of which m of the m+n ranks belong to the
  // first sample is equally likely; U = (sum of those ranks) - m(m+1)/2.
  for (auto [m, n] : std::vector<std::pair<size_t, size_t>>{{5, 4}, {3, 6}, {1, 7}, {6, 6}}) {
    std::vector<double> count(m * n + 1, 0);
    double total = 0;
    std::vector<bool> pick(m + n, false);
    std::fill(pick.begin(), pick.begin() + static_cast<long>(m), true);
    do {
      double rank_sum = 0;
      for (size_t i = 0; i < m + n; ++i) rank_sum += pick[i] ? static_cast<double>(i + 1) : 0;
      count[static_cast<size_t>(rank_sum - static_cast<double>(m * (m + 1) / 2))] += 1;
      total += 1;
    } while (std::prev_permutation(pick.begin(), pick.end()));
    double tail = 0;
    for (size_t u = m * n + 1; u-- > 0;) {
      tail += count[u];
      EXPECT_NEAR(mann_whitney_exact_sf(static_cast<double>(u), m, n), tail / total, 1e-12)
          << "m=" << m << " n=" << n << " u=" << u;
    }
  }
  EXPECT_NEAR(mann_whitney_exact_sf(17, 5, 4), 7.0 / 126.0, 1e-15);
}

TEST(MannWhitney, DegenerateInputsGiveNoEvidence) {
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, {1, 2, 3}).p_value, 1);
  EXPECT_DOUBLE_EQ(mann_whitney_u({5, 5, 5}, {5, 5, 5, 5}).p_value, 1);
  // Completely separated samples of 3 and 3: p = 2/C(6,3) = 0.1, never below
  // 0.05 however large the shift.
  EXPECT_NEAR(mann_whitney_u({1, 2, 3}, {100, 200, 300}).p_value, 0.1, 1e-12);
}

// --- verdicts and the gate --------------------------------------------------------

TEST(CompareVerdict, ThresholdBandIsSymmetricInLogSpace) {
  const CompareOptions o;  // 10%, alpha 0.01
  EXPECT_EQ(classify(1.05, 1e-9, o), Verdict::kUnchanged);  // significant but small
  EXPECT_EQ(classify(1.0 / 1.05, 1e-9, o), Verdict::kUnchanged);
  EXPECT_EQ(classify(1.2, 1e-9, o), Verdict::kSlower);
  EXPECT_EQ(classify(1.0 / 1.2, 1e-9, o), Verdict::kFaster);
  EXPECT_EQ(classify(1.1, 1e-9, o), Verdict::kUnchanged);  // the band's edges are inside
  EXPECT_EQ(classify(1.1001, 1e-9, o), Verdict::kSlower);
  EXPECT_EQ(classify(0.91, 1e-9, o), Verdict::kUnchanged);  // 1/1.1 = 0.909...: inside
  EXPECT_EQ(classify(0.905, 1e-9, o), Verdict::kFaster);    // 10.5% faster, but 1/0.905 = 1.105 > 1.1
  EXPECT_EQ(classify(1.2, 0.02, o), Verdict::kNoisy);  // large but not significant
  EXPECT_EQ(classify(1.2, std::nullopt, o), Verdict::kNoisy);
}

struct GateRun {
  int exit_code;
  std::string out;
};

GateRun gate(const json& base, const json& next, const std::vector<std::string>& extra = {}) {
  const std::string dir = test::temp_dir("gate");
  std::vector<std::string> args = {"compare", write_json(dir, "base.json", base), write_json(dir, "new.json", next),
                                   "--gate"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = test::run_pebench(args);
  return {r.exit_code, r.out};
}

size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    const auto start = line.find_first_not_of(" ");
    if (start != std::string::npos && line.compare(start, prefix.size(), prefix) == 0) ++n;
  }
  return n;
}

// Two cases, 40 samples each with +-5% spread.
std::vector<CaseSpec> two_cases(double scale_first, double scale_second, uint32_t seed) {
  CaseSpec a, b;
  a.params = {{"seq", 128}};
  b.params = {{"seq", 1024}};
  a.samples = samples_around(1000 * scale_first, 40, 0.05, seed);
  b.samples = samples_around(8000 * scale_second, 40, 0.05, seed + 1);
  return {a, b};
}

TEST(CompareGate, IdenticalReportsPass) {
  const json base = report_json(two_cases(1, 1, 1));
  const GateRun r = gate(base, base);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("gate: passed"), std::string::npos) << r.out;
}

TEST(CompareGate, SignificantRegressionFails) {
  const GateRun r = gate(report_json(two_cases(1, 1, 1)), report_json(two_cases(1.3, 1.02, 7)));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "slower: abs.learned default f32 seq=128:"), 1u) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "slower:"), 1u) << r.out;  // the 2% case is unchanged
  // A looser threshold lets the same 30% through.
  EXPECT_EQ(gate(report_json(two_cases(1, 1, 1)), report_json(two_cases(1.3, 1.02, 7)), {"--threshold", "0.5"})
                .exit_code,
            0);
}

// Two compile-only reports of one case whose flash pipeline reports
// `base_spills` and `new_spills` spilled VGPRs.
json compiled_with_spills(double spills, double vgprs) {
  CaseSpec c;
  c.variant = "attn.nope";
  c.impl = "flash";
  c.status = "compiled";
  c.validated = false;
  json r = report_json({c});
  r["results"][0]["pipelines"] = json::array(
      {{{"shader", "attn_flash_nope"}, {"storage", "f32"}, {"spec_constants", {{"HEAD_DIM", 128}}},
        {"local_size", {64, 1, 1}}, {"groups", {8, 8, 1}},
        {"stats", {{"VGPRs", vgprs}, {"Spilled VGPRs", spills}, {"Subgroups per SIMD", 2}}}}});
  return r;
}

TEST(CompareGate, NewSpillsFailAndChangedStatisticsAreListed) {
  // 0 -> 12 spilled VGPRs: the gate names the pipeline, whatever the timing threshold.
  const GateRun spilled = gate(compiled_with_spills(0, 200), compiled_with_spills(12, 256), {"--threshold", "100"});
  EXPECT_EQ(spilled.exit_code, 1) << spilled.out;
  EXPECT_EQ(count_lines_starting(spilled.out, "spills: attn.nope flash f32"), 1u) << spilled.out;
  EXPECT_NE(spilled.out.find("attn_flash_nope.f32 spills 12 registers"), std::string::npos) << spilled.out;
  EXPECT_NE(spilled.out.find("pipeline statistics that changed (3)"), std::string::npos) << spilled.out;
  // Fewer spills, or spills in BASE already: listed, not gated.
  const GateRun better = gate(compiled_with_spills(12, 256), compiled_with_spills(0, 200));
  EXPECT_EQ(better.exit_code, 0) << better.out;
  EXPECT_NE(better.out.find("spilled VGPRs"), std::string::npos) << better.out;
  EXPECT_EQ(gate(compiled_with_spills(6, 256), compiled_with_spills(280, 256)).exit_code, 0);
  // Unchanged statistics list nothing.
  const GateRun same = gate(compiled_with_spills(0, 200), compiled_with_spills(0, 200));
  EXPECT_EQ(same.exit_code, 0) << same.out;
  EXPECT_EQ(same.out.find("pipeline statistics that changed"), std::string::npos) << same.out;
}

TEST(CompareGate, NoiseIsNotARegression) {
  // Median 30% higher, but three wildly spread samples a side cannot show it.
  CaseSpec b, n;
  b.samples = {100, 400, 1000};
  n.samples = {130, 520, 1300};
  const ReportFile base = parse(report_json({b})), next = parse(report_json({n}));
  const PairComparison p = compare_reports(base, next, kDefaults);
  ASSERT_EQ(p.cases.size(), 1u);
  EXPECT_NEAR(*p.cases[0].ratio, 1.3, 1e-12);
  EXPECT_EQ(p.cases[0].verdict, Verdict::kNoisy);
  EXPECT_GT(*p.cases[0].p_value, 0.01);
  const GateRun r = gate(report_json({b}), report_json({n}));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("noisy"), std::string::npos) << r.out;
}

TEST(CompareGate, FasterIsNotARegression) {
  const GateRun r = gate(report_json(two_cases(1, 1, 1)), report_json(two_cases(0.6, 0.6, 3)));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "abs.learned"), 2u) << r.out;
  EXPECT_NE(r.out.find("2 faster"), std::string::npos) << r.out;
}

TEST(CompareGate, LostCaseFails) {
  auto base = two_cases(1, 1, 1);
  auto next = base;
  next.pop_back();
  const GateRun r = gate(report_json(base), report_json(next));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "missing: abs.learned default f32 seq=1024:"), 1u) << r.out;
  EXPECT_NE(r.out.find("only in BASE (1)"), std::string::npos) << r.out;
  // A case only NEW has is listed but is no reason to fail.
  const GateRun grown = gate(report_json(next), report_json(base));
  EXPECT_EQ(grown.exit_code, 0) << grown.out;
  EXPECT_NE(grown.out.find("only in NEW (1)"), std::string::npos) << grown.out;
}

TEST(CompareGate, ValidationFlipFails) {
  auto base = two_cases(1, 1, 1);
  auto next = base;
  next[0].status = "failed";
  next[0].reason = "nmse 0.5 > tolerance 1e-09";
  next[1].status = "error";
  next[1].reason = "device lost";
  const GateRun r = gate(report_json(base), report_json(next));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "broke:"), 2u) << r.out;
  EXPECT_NE(r.out.find("ok in BASE, failed in NEW: nmse 0.5 > tolerance 1e-09"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok in BASE, error in NEW: device lost"), std::string::npos) << r.out;

  // Already failing in BASE: no news, no failure; fixed in NEW: fine too.
  auto fixed = next;
  fixed[0].status = "ok";
  fixed[1].status = "error";
  const GateRun again = gate(report_json(next), report_json(fixed));
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("fixed"), std::string::npos) << again.out;

  // A case that stops running (skipped/unsupported) is lost.
  auto skipped = base;
  skipped[1].status = "unsupported";
  skipped[1].samples.clear();
  const GateRun lost = gate(report_json(base), report_json(skipped));
  EXPECT_EQ(lost.exit_code, 1) << lost.out;
  EXPECT_EQ(count_lines_starting(lost.out, "lost:"), 1u) << lost.out;
}

// An interrupted case did not run: no evidence either way, which is not the
// same as a case that stopped being supported ("lost").
TEST(CompareGate, InterruptedCaseIsNotRunNotLost) {
  auto base = two_cases(1, 1, 1);
  auto next = base;
  next[1].status = "interrupted";
  next[1].reason = "interrupted";
  next[1].samples.clear();
  next[1].validated = false;
  const GateRun r = gate(report_json(base), report_json(next));
  EXPECT_EQ(r.exit_code, 1) << r.out;  // the gate cannot vouch for a case it never saw run
  EXPECT_EQ(count_lines_starting(r.out, "not run: abs.learned default f32 seq=1024: ok in BASE, interrupted in NEW"),
            1u)
      << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "lost:"), 0u) << r.out;
  const ReportFile b = parse(report_json(base)), n = parse(report_json(next));
  const PairComparison p = compare_reports(b, n, kDefaults);
  ASSERT_EQ(p.cases.size(), 2u);
  EXPECT_EQ(p.cases[1].change, StatusChange::kNotRun);
  EXPECT_STREQ(status_change_name(p.cases[1].change), "not run");
  // Interrupted in BASE and ok now is no fix either, and no reason to fail.
  const PairComparison back = compare_reports(n, b, kDefaults);
  EXPECT_EQ(back.cases[1].change, StatusChange::kNotRun);
  EXPECT_EQ(gate(report_json(next), report_json(base)).exit_code, 0);
}

TEST(CompareGate, CorrectnessGateHoldsWhateverTheThreshold) {
  auto base = two_cases(1, 1, 1);
  auto next = two_cases(3, 3, 9);
  next[0].status = "failed";
  const GateRun r = gate(report_json(base), report_json(next), {"--threshold", "1000"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "broke:"), 1u) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "slower:"), 0u) << r.out;
}

TEST(CompareGate, WithoutGateRegressionsExitZero) {
  const std::string dir = test::temp_dir("nogate");
  const auto r = test::run_pebench({"compare", write_json(dir, "b.json", report_json(two_cases(1, 1, 1))),
                                    write_json(dir, "n.json", report_json(two_cases(2, 2, 5)))});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "abs.learned"), 2u) << r.out;
  EXPECT_EQ(r.out.find("gate:"), std::string::npos) << r.out;
}

// --- output formats -----------------------------------------------------------------

// BASE: the scipy example's males, NEW: its females; a second family whose
// ratio is exactly 2 with separated samples.
std::vector<std::vector<CaseSpec>> scipy_pair() {
  CaseSpec a, r;
  a.params = {{"seq", 128}};
  r.variant = "rope.apply";
  r.params = {{"seq", 256}, {"heads", 4}};
  CaseSpec a2 = a, r2 = r;
  a.samples = {19, 22, 16, 29, 24};
  a2.samples = {20, 11, 17, 12};
  r.samples = samples_around(1000, 30, 0.01, 1);
  r2.samples = r.samples;
  for (auto& s : r2.samples) s *= 2;
  return {{a, r}, {a2, r2}};
}

TEST(CompareOutput, JsonCarriesRatiosTestsAndGeomeans) {
  const std::string dir = test::temp_dir("json");
  const auto pair = scipy_pair();
  const auto r = test::run_pebench({"compare", write_json(dir, "b.json", report_json(pair[0])),
                                    write_json(dir, "n.json", report_json(pair[1])), "--format", "json", "--gate"});
  EXPECT_EQ(r.exit_code, 1);  // rope.apply doubled
  // stdout is pure JSON; the gate lines went to stderr (prefixed "gate: ").
  const auto brace = r.out.find('{');
  ASSERT_NE(brace, std::string::npos) << r.out;
  const json j = json::parse(r.out.substr(brace, r.out.rfind('}') - brace + 1));
  EXPECT_EQ(j["schema"], "pebench.compare/1");
  ASSERT_EQ(j["comparisons"].size(), 1u);
  const json& c = j["comparisons"][0];
  ASSERT_EQ(c["cases"].size(), 2u);
  const json& abs = c["cases"][0];
  EXPECT_EQ(abs["variant"], "abs.learned");
  EXPECT_DOUBLE_EQ(abs["base"]["median_ns"].get<double>(), 22);
  EXPECT_DOUBLE_EQ(abs["new"]["median_ns"].get<double>(), 14.5);
  EXPECT_DOUBLE_EQ(abs["ratio"].get<double>(), 14.5 / 22);
  EXPECT_NEAR(abs["p_value"].get<double>(), 0.1111111111111111, 1e-12);
  EXPECT_EQ(abs["test"], "exact");
  EXPECT_EQ(abs["verdict"], "noisy");
  const json& rope = c["cases"][1];
  EXPECT_NEAR(rope["ratio"].get<double>(), 2.0, 1e-12);
  EXPECT_EQ(rope["verdict"], "slower");
  // Geometric means: per family the one ratio, overall sqrt(14.5/22 * 2).
  const json& fam = c["geomean"]["families"];
  ASSERT_EQ(fam.size(), 2u);
  EXPECT_EQ(fam[0]["family"], "abs");
  EXPECT_NEAR(fam[0]["ratio"].get<double>(), 14.5 / 22, 1e-12);
  EXPECT_EQ(fam[1]["family"], "rope");
  EXPECT_NEAR(fam[1]["ratio"].get<double>(), 2.0, 1e-12);
  EXPECT_NEAR(c["geomean"]["overall"]["ratio"].get<double>(), std::sqrt(14.5 / 22 * 2), 1e-12);
  EXPECT_EQ(j["gate"]["passed"], false);
  ASSERT_EQ(j["gate"]["reasons"].size(), 1u);
  EXPECT_EQ(j["gate"]["reasons"][0].get<std::string>().rfind("slower: rope.apply", 0), 0u);
  EXPECT_NE(r.out.find("gate: slower: rope.apply"), std::string::npos);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(CompareOutput, RooflineFractionsAndSampleCountsOfBothSides) {
  CaseSpec c;
  c.samples = {10, 11, 12};  // 3 samples: too few for alpha 0.01
  json base = report_json({c}), next = report_json({c});
  base["results"][0]["roofline"] = {{"bound", "memory"}, {"fraction", 0.57}};
  next["results"][0]["roofline"] = {{"bound", "memory"}, {"fraction", 0.81}};
  next["results"][0]["time_ns"]["samples"] = {10, 11, 12, 10, 11, 12};
  const std::vector<ReportFile> reports = {parse(base, "b.json"), parse(next, "n.json")};
  const auto result = run_compare(reports, kDefaults, false);
  const std::string md = render_compare_markdown(reports, result);
  EXPECT_NE(md.find(" | 3!/6 | 57% -> 81% | "), std::string::npos) << md;
  EXPECT_NE(md.find("n!: 1 side(s) have fewer than 5 samples"), std::string::npos) << md;
  const json j = compare_json(reports, result);
  const json& jc = j["comparisons"][0]["cases"][0];
  EXPECT_EQ(jc["base"]["roofline"]["fraction"], 0.57);
  EXPECT_EQ(jc["new"]["roofline"]["bound"], "memory");
  EXPECT_EQ(jc["new"]["samples"], 6);
}

TEST(CompareOutput, MarkdownTables) {
  const auto pair = scipy_pair();
  const std::vector<ReportFile> reports = {parse(report_json(pair[0]), "b.json"), parse(report_json(pair[1]), "n.json")};
  const std::string md = render_compare_markdown(reports, run_compare(reports, kDefaults, false));
  const auto lines = lines_of(md);
  const std::string header = "| variant | impl | dtype | case | base | new | ratio | p | n | roofline | verdict |";
  const auto h = std::find(lines.begin(), lines.end(), header);
  ASSERT_NE(h, lines.end()) << md;
  // Separator with right-aligned number columns, then one row per case.
  EXPECT_EQ(*(h + 1), "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
  EXPECT_EQ((h + 2)->rfind("| abs.learned | default | f32 | seq=128 | 22 ns | ", 0), 0u) << *(h + 2);
  EXPECT_NE((h + 2)->find(" | 0.659 | 0.111 | "), std::string::npos) << *(h + 2);  // 14.5/22, scipy's p
  EXPECT_NE((h + 2)->find(" | noisy |"), std::string::npos) << *(h + 2);
  EXPECT_EQ((h + 3)->rfind("| rope.apply | default | f32 | heads=4 seq=256 |", 0), 0u) << *(h + 3);
  EXPECT_NE((h + 3)->find(" | 2.000 | "), std::string::npos) << *(h + 3);
  EXPECT_NE((h + 3)->find(" | slower |"), std::string::npos) << *(h + 3);
  const double overall = std::sqrt(14.5 / 22 * 2);
  EXPECT_NE(md.find(fmt::format("| all | 2 | {:.3f} | +{:.1f}% |", overall, (overall - 1) * 100)), std::string::npos)
      << md;
  // Every table line has as many cells as its header.
  for (const auto& l : lines) {
    if (l.empty() || l[0] != '|') continue;
    EXPECT_EQ(l.back(), '|') << l;
  }
}

TEST(CompareOutput, HugeAndTinyFiniteTimesStayNumbers) {
  CaseSpec huge, tiny, normal;
  huge.samples = samples_around(7e307, 8, 0.1, 1);  // the median of two stays finite
  tiny.samples = samples_around(1e-300, 8, 0.1, 2);
  normal.samples = samples_around(400, 8, 0.1, 3);
  const std::vector<ReportFile> reports = {parse(report_json({huge}), "huge.json"),
                                           parse(report_json({tiny}), "tiny.json"),
                                           parse(report_json({normal}), "normal.json")};
  for (const bool gate : {false, true}) {
    const CompareResult result = run_compare(reports, kDefaults, gate);
    test::expect_plain_numbers(render_compare_text(reports, result));
    test::expect_plain_numbers(render_compare_markdown(reports, result));
    const json j = compare_json(reports, result);
    test::expect_plain_numbers(j.dump());
    // The ratio over 608 decades is out of double range: it is pinned to
    // the largest/smallest positive double, not inf or 0, and still a verdict.
    const json& c = j["comparisons"][0]["cases"][0];
    ASSERT_TRUE(c["ratio"].is_number()) << c;
    EXPECT_GT(c["ratio"].get<double>(), 0);
    EXPECT_EQ(c["verdict"], "faster");
  }
}

TEST(CompareOutput, TextTableIsAligned) {
  const auto pair = scipy_pair();
  const std::vector<ReportFile> reports = {parse(report_json(pair[0]), "b.json"), parse(report_json(pair[1]), "n.json")};
  const std::string text = render_compare_text(reports, run_compare(reports, kDefaults, false));
  const auto lines = lines_of(text);
  auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("variant", 0) == 0; });
  ASSERT_NE(header, lines.end()) << text;
  // Right-aligned "ratio" column: every row's ratio ends where the header's does.
  const size_t end = header->find("ratio") + 5;
  EXPECT_EQ((header + 2)->substr(end - 5, 5), "0.659") << text;
  EXPECT_EQ((header + 3)->substr(end - 5, 5), "2.000") << text;
}

TEST(CompareOutput, ThreeReportsGiveTheVendorMatrix) {
  const std::string data = std::string(PEBENCH_SOURCE_DIR) + "/tests/data/";
  std::vector<ReportFile> reports;
  for (const char* f : {"vendor_a.json", "vendor_b.json", "vendor_c.json"}) reports.push_back(load_report(data + f));
  const CompareResult r = run_compare(reports, kDefaults, false);
  ASSERT_TRUE(r.matrix.has_value());
  ASSERT_EQ(r.matrix->columns.size(), 3u);
  // The fixtures' model: B runs every case in half A's time, C in four times.
  for (const auto& v : r.matrix->variants) {
    SCOPED_TRACE(v.variant);
    if (v.variant == "rope.apply") {  // failed and skipped everywhere: nothing timed
      EXPECT_FALSE(v.ratios[1].has_value());
      continue;
    }
    ASSERT_TRUE(v.ratios[1] && v.ratios[2]);
    EXPECT_NEAR(*v.ratios[1], 0.5, 1e-12);
    EXPECT_NEAR(*v.ratios[2], 4.0, 1e-12);
  }
  for (const auto& row : r.matrix->rows) {
    for (size_t col = 0; col < 3; ++col) EXPECT_NE(row.cells[col], nullptr);  // every case in every report
  }
  const std::string text = render_compare_text(reports, r);
  EXPECT_NE(text.find("R2/R0"), std::string::npos);
  const auto cli = test::run_pebench({"compare", data + "vendor_a.json", data + "vendor_b.json",
                                      data + "vendor_c.json", "--format", "md"});
  EXPECT_EQ(cli.exit_code, 0) << cli.out;
  EXPECT_NE(cli.out.find("| attn.t5 | 0.500 (12) | 4.000 (12) |"), std::string::npos) << cli.out;
}

// --- bad input ---------------------------------------------------------------------

TEST(CompareInput, CorruptAndMismatchedReportsGetAClearError) {
  const std::string dir = test::temp_dir("corrupt");
  CaseSpec c;
  c.samples = {1, 2, 3};
  const std::string good = write_json(dir, "good.json", report_json({c}));
  const std::string full = report_json({c}).dump();

  struct Bad {
    std::string name, text, message;
  };
  json v2 = report_json({c});
  v2["schema"] = "pebench.report/2";
  json no_variant = report_json({c});
  no_variant["results"][0].erase("variant");
  json bad_status = report_json({c});
  bad_status["results"][0]["status"] = "great";
  // A value shown in the error is escaped and clipped: the error stays one short line.
  json long_status = report_json({c});
  long_status["results"][0]["status"] = "two\nlines" + std::string(100000, 'x');
  json bad_device = report_json({c});
  bad_device["results"][0]["device"] = 3;
  json bad_sample = report_json({c});
  bad_sample["results"][0]["time_ns"]["samples"][1] = "fast";
  json duplicate = report_json({c, c});
  json no_results = report_json({c});
  no_results.erase("results");
  // 200,000 nested arrays overflowed the stack of every recursive walk (SIGSEGV).
  json deep_tool = report_json({c});
  deep_tool["tool"]["version"] = "DEEP";
  std::string deep = deep_tool.dump();
  deep.replace(deep.find("\"DEEP\""), 6, std::string(200000, '[') + std::string(200000, ']'));
  // An ok case must have been timed: a zero or missing median would be
  // counted nowhere and pass the gate.
  json ok_zero = report_json({c});
  ok_zero["results"][0]["time_ns"]["median"] = 0;
  json ok_null_median = report_json({c});
  ok_null_median["results"][0]["time_ns"]["median"] = nullptr;
  json ok_untimed = report_json({c});
  ok_untimed["results"][0]["time_ns"] = nullptr;
  json huge_number = report_json({c});
  huge_number["tool"]["version"] = "HUGE";
  std::string overflow = huge_number.dump();
  overflow.replace(overflow.find("\"HUGE\""), 6, "1e400");
  // results[].tuning (run --tune): the value a case ran must be one that ran.
  json tuned = report_json({c});
  tuned["results"][0]["tuning"] = {{"knob", "row_slots"},
                                   {"planned", 8},
                                   {"chosen", 6},
                                   {"candidates", {{{"value", 8}, {"status", "ok"}, {"median_ns", 2.0}}}}};
  json tuning_unlisted = tuned;
  json tuning_no_knob = tuned;
  tuning_no_knob["results"][0]["tuning"].erase("knob");
  json tuning_bad_candidate = tuned;
  tuning_bad_candidate["results"][0]["tuning"]["candidates"][0]["median_ns"] = 0;
  // 2^63 parses as unsigned: read as int64_t it wrapped to a negative tuned
  // value that even matched its own (wrapped) candidate (issue 40).
  json tuning_huge = tuned;
  tuning_huge["results"][0]["tuning"]["chosen"] = uint64_t{1} << 63;
  tuning_huge["results"][0]["tuning"]["candidates"].push_back(
      {{"value", uint64_t{1} << 63}, {"status", "ok"}, {"median_ns", 1.0}});
  json rows_huge = report_json({c});
  rows_huge["results"][0]["validation"] = {{"passed", true}, {"rows_checked", 1e300}};
  // time_ns.started_ns: one start time a sample, none negative.
  json short_starts = report_json({c});
  short_starts["results"][0]["time_ns"]["started_ns"] = {0, 5};
  json negative_start = report_json({c});
  negative_start["results"][0]["time_ns"]["started_ns"] = {0, -5, 9};
  const std::vector<Bad> cases = {
      {"short_starts.json", short_starts.dump(), "results[0].time_ns: \"started_ns\" has 2 values for 3 samples"},
      {"negative_start.json", negative_start.dump(), "results[0].time_ns: \"started_ns\" holds a negative time (-5)"},
      {"tuning_unlisted.json", tuning_unlisted.dump(),
       "results[0].tuning: \"chosen\" 6 is not a candidate that ran"},
      {"tuning_huge.json", tuning_huge.dump(),
       "results[0].tuning: \"chosen\" is 9223372036854775808, past the largest whole number pebench reads "
       "(9223372036854775807)"},
      {"rows_huge.json", rows_huge.dump(), "results[0].validation: \"rows_checked\" is 1e+300, not a count"},
      {"tuning_no_knob.json", tuning_no_knob.dump(), "results[0].tuning: \"knob\" is missing"},
      {"tuning_bad_candidate.json", tuning_bad_candidate.dump(),
       "results[0].tuning.candidates[0]: an ok candidate needs a positive \"median_ns\""},
      {"truncated.json", full.substr(0, full.size() / 2), "not valid JSON"},
      {"empty.json", "", "empty file"},
      {"array.json", "[1, 2]", "not a pebench report"},
      {"other.json", R"({"name": "something else"})", "not a pebench report (no \"schema\" field)"},
      {"v2.json", v2.dump(), "unsupported schema \"pebench.report/2\""},
      {"no_results.json", no_results.dump(), "\"results\" is missing"},
      {"no_variant.json", no_variant.dump(), "results[0]: \"variant\" is missing"},
      {"bad_status.json", bad_status.dump(), "results[0]: unknown status \"great\""},
      {"long_status.json", long_status.dump(),
       "results[0]: unknown status \"two\\nlines" + std::string(46, 'x') + "...\n"},  // 60 characters
      {"bad_device.json", bad_device.dump(), "results[0]: device 3 is not in \"devices\""},
      {"bad_sample.json", bad_sample.dump(), "results[0].time_ns: samples[1] is not a finite number"},
      {"duplicate.json", duplicate.dump(), "results[1]: the same case as results[0]"},
      {"ok_zero.json", ok_zero.dump(), "results[0].time_ns: an ok case needs a positive finite \"median\" (got 0)"},
      {"ok_null_median.json", ok_null_median.dump(),
       "results[0].time_ns: an ok case needs a positive finite \"median\" (got null)"},
      {"ok_untimed.json", ok_untimed.dump(), "results[0]: an ok case needs \"time_ns\" (got null)"},
      {"deep.json", deep, "nested deeper than 100 levels"},
      {"overflow.json", overflow, "not valid JSON (number overflow parsing '1e400' at byte "},
  };
  for (const auto& b : cases) {
    SCOPED_TRACE(b.name);
    const std::string path = write_text(dir, b.name, b.text);
    for (const auto& args : std::vector<std::vector<std::string>>{{"compare", good, path},
                                                                  {"compare", path, good, "--gate"},
                                                                  {"compare", good, path, "--format", "json"},
                                                                  {"report", path, "-o", dir + "/r.html"}}) {
      const auto r = test::run_pebench(args);
      EXPECT_EQ(r.exit_code, 2) << r.out;
      // One line: the command, the file and the problem.
      EXPECT_NE(r.out.find("error: " + path + ": " + b.message), std::string::npos) << r.out;
      EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    }
  }
  const auto directory = test::run_pebench({"compare", good, dir});
  EXPECT_EQ(directory.exit_code, 2);
  EXPECT_NE(directory.out.find("error: " + dir + ": is a directory, not a report file"), std::string::npos)
      << directory.out;
  const auto missing = test::run_pebench({"compare", good, dir + "/nope.json"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.out.find(dir + "/nope.json: cannot read: No such file or directory"), std::string::npos)
      << missing.out;
}

TEST(CompareInput, BadOptionsAreUsageErrors) {
  const std::string dir = test::temp_dir("options");
  CaseSpec c;
  c.samples = {1, 2, 3};
  const std::string good = write_json(dir, "good.json", report_json({c}));
  EXPECT_EQ(test::run_pebench({"compare", good}).exit_code, 2);  // one report
  EXPECT_EQ(test::run_pebench({"compare", good, good, "--format", "xml"}).exit_code, 2);
  const auto neg = test::run_pebench({"compare", good, good, "--threshold", "-0.1"});
  EXPECT_EQ(neg.exit_code, 2);
  EXPECT_NE(neg.out.find("--threshold"), std::string::npos) << neg.out;
  EXPECT_EQ(test::run_pebench({"compare", good, good, "--alpha", "1.5"}).exit_code, 2);
}

TEST(CompareInput, RealReportShapesLoad) {
  // What report.cc writes beyond the minimum: nulls for skipped cases and
  // non-finite validation numbers.
  CaseSpec skipped;
  skipped.status = "skipped";
  skipped.reason = "kernel=4 must be odd";
  CaseSpec failed;
  failed.params = {{"seq", 1}};
  failed.status = "failed";
  failed.samples = {5, 6, 7};
  json j = report_json({skipped, failed});
  j["results"][1]["validation"]["nmse"] = nullptr;  // NaN on disk
  const ReportFile r = parse(j);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_FALSE(r.cases[0].time.has_value());
  EXPECT_FALSE(r.cases[0].validation.has_value());
  ASSERT_TRUE(r.cases[1].validation.has_value());
  EXPECT_FALSE(r.cases[1].validation->nmse.has_value());
  EXPECT_FALSE(r.cases[1].validation->passed);
}

// --- the rule for a shared CPU runner (timing_rule.h, scripts/ci-gate.sh) ------------

// Four variant/impls of four cases each (f32/f16 x seq 128/1024), 10 samples
// a case with +-3% spread, GPU and CPU time alike. `load` scales every case;
// `scale` ("variant/impl" -> factor) scales a variant/impl's CPU time, and
// its GPU time too unless `cpu_only`.
std::vector<CaseSpec> runner_cases(double load, const std::map<std::string, double>& scale = {}, uint32_t seed = 1,
                                   bool cpu_only = false) {
  std::vector<CaseSpec> out;
  const std::vector<std::pair<std::string, std::string>> groups = {
      {"abs.learned", "default"}, {"abs.sinusoidal", "default"}, {"attn.nope", "flash"}, {"attn.nope", "naive"}};
  for (const auto& [variant, impl] : groups) {
    const auto it = scale.find(variant + "/" + impl);
    const double s = it == scale.end() ? 1.0 : it->second;
    for (const char* dtype : {"f32", "f16"}) {
      for (int seq : {128, 1024}) {
        CaseSpec c;
        c.variant = variant;
        c.impl = impl;
        c.dtype = dtype;
        c.params = {{"seq", seq}};
        const double center = 1000.0 * static_cast<double>(seq) / 128 * load;
        c.samples = samples_around(center * (cpu_only ? 1 : s), 10, 0.03, seed++);
        c.cpu_samples = samples_around(2 * center * s, 10, 0.03, seed++);
        out.push_back(c);
      }
    }
  }
  return out;
}

// The number right after `prefix` on the first line that starts with it
// (leading spaces aside); NaN when there is none.
double number_after(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto start = line.find_first_not_of(" ");
    if (start == std::string::npos || line.compare(start, prefix.size(), prefix) != 0) continue;
    try {
      return std::stod(line.substr(start + prefix.size()));
    } catch (const std::exception&) {
      return NAN;
    }
  }
  return NAN;
}

const std::vector<std::string> kRunnerRule = {"--time",          "cpu", "--normalize", "--min-samples", "5",
                                              "--threshold",     "1.5", "--variant-threshold", "0.25"};

// `command` followed by the rule's options.
std::vector<std::string> with_rule(std::vector<std::string> command) {
  command.insert(command.end(), kRunnerRule.begin(), kRunnerRule.end());
  return command;
}

TEST(RunnerRule, LoadOnEveryCaseIsDividedOut) {
  const json base = report_json(runner_cases(1)), busy = report_json(runner_cases(2.5, {}, 99));
  // Without normalising, a machine 2.5x busier fails every case.
  const GateRun raw = gate(base, busy, {"--time", "cpu", "--threshold", "0.25"});
  EXPECT_EQ(raw.exit_code, 1) << raw.out;
  EXPECT_EQ(count_lines_starting(raw.out, "slower:"), 16u) << raw.out;
  const GateRun r = gate(base, busy, kRunnerRule);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const PairComparison p = compare_reports(parse(base), parse(busy), [] {
    CompareOptions o;
    o.series = TimeSeries::kCpu;
    o.normalize = true;
    return o;
  }());
  EXPECT_NEAR(p.load_factor, 2.5, 0.1);
  for (const auto& c : p.cases) EXPECT_NEAR(*c.ratio, 1, 0.1) << c.base->display();
}

TEST(RunnerRule, AVariantSlowerBy50PercentIsTheOnlyOneNamed) {
  for (const std::string target : {"abs.learned/default", "attn.nope/flash"}) {
    SCOPED_TRACE(target);
    const GateRun r = gate(report_json(runner_cases(1)), report_json(runner_cases(2, {{target, 1.5}}, 50)), kRunnerRule);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    const std::string name = target.substr(0, target.find('/')) + " " + target.substr(target.find('/') + 1);
    EXPECT_NEAR(number_after(r.out, "slower: " + name + ": median "), 1.5, 0.06) << r.out;
    EXPECT_NE(r.out.find("of its 4 cases"), std::string::npos) << r.out;
    EXPECT_EQ(count_lines_starting(r.out, "slower:"), 1u) << r.out;  // attn.nope naive stays quiet
    EXPECT_NE(r.out.find("gate: FAILED, 1 reason"), std::string::npos) << r.out;
  }
  // 20% is inside the variant threshold.
  EXPECT_EQ(gate(report_json(runner_cases(1)), report_json(runner_cases(2, {{"abs.learned/default", 1.2}}, 50)),
                 kRunnerRule)
                .exit_code,
            0);
}

TEST(RunnerRule, OneCaseMovesItsVariantOnlyAsTheMedianDoes) {
  // One case of abs.learned 2x: the variant's median stays about 1, and one
  // case needs 2.5x to fail alone.
  auto next = runner_cases(1, {}, 50);
  for (double& s : next[0].cpu_samples) s *= 2;
  EXPECT_EQ(gate(report_json(runner_cases(1)), report_json(next), kRunnerRule).exit_code, 0);
  for (double& s : next[0].cpu_samples) s *= 1.5;  // 3x now
  const GateRun r = gate(report_json(runner_cases(1)), report_json(next), kRunnerRule);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NEAR(number_after(r.out, "slower: abs.learned default f32 seq=128: "), 3, 0.15) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "slower:"), 1u) << r.out;
}

TEST(RunnerRule, TimeCpuReadsTheCpuSamples) {
  // GPU time 1.5x slower for abs.learned, CPU time unchanged.
  const json base = report_json(runner_cases(1));
  const json next = report_json(runner_cases(1, {{"abs.learned/default", 1.5}}, 50, /*cpu_only=*/false));
  const json gpu_only = [&] {
    json j = report_json(runner_cases(1, {}, 50));
    const json slowed = report_json(runner_cases(1, {{"abs.learned/default", 1.5}}, 50));
    for (size_t i = 0; i < 4; ++i) j["results"][i]["time_ns"] = slowed["results"][i]["time_ns"];
    return j;
  }();
  EXPECT_EQ(gate(base, gpu_only, kRunnerRule).exit_code, 0);
  const GateRun gpu = gate(base, gpu_only, {"--time", "gpu", "--normalize", "--variant-threshold", "0.25"});
  EXPECT_EQ(gpu.exit_code, 1) << gpu.out;
  EXPECT_NEAR(number_after(gpu.out, "slower: abs.learned default: median "), 1.5, 0.06) << gpu.out;
  EXPECT_EQ(gate(base, next, kRunnerRule).exit_code, 1);
}

TEST(RunnerRule, TooFewSamplesFailTheGate) {
  auto next = runner_cases(1, {}, 50);
  next[5].samples.resize(3);
  next[5].cpu_samples.resize(3);
  const GateRun r = gate(report_json(runner_cases(1)), report_json(next), kRunnerRule);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "samples: abs.sinusoidal default f32 seq=1024: 10 in BASE and 3 in NEW"),
            1u)
      << r.out;
  // Without a minimum the case is simply not tested.
  EXPECT_EQ(gate(report_json(runner_cases(1)), report_json(next), {"--time", "cpu", "--normalize"}).exit_code, 0);
}

TEST(RunnerRule, ReportsWithoutCpuTimeOrMadeWithInjectionAreRefused) {
  const std::string dir = test::temp_dir("refused");
  const json good = report_json(runner_cases(1));
  json no_cpu = good;
  no_cpu["results"][2]["cpu_ns"] = nullptr;
  json injected = good;
  injected["run"] = {{"inject_slowdown", {{{"variant", "abs.learned"}, {"impl", nullptr}, {"factor", 1.5}}}}};
  const std::string good_path = write_json(dir, "good.json", good);
  const std::string no_cpu_path = write_json(dir, "no_cpu.json", no_cpu);
  const std::string injected_path = write_json(dir, "injected.json", injected);

  const auto cpu = test::run_pebench({"compare", good_path, no_cpu_path, "--time", "cpu"});
  EXPECT_EQ(cpu.exit_code, 2) << cpu.out;
  EXPECT_NE(cpu.out.find("error: " + no_cpu_path + ": abs.learned default f16 seq=128 has no cpu_ns samples"),
            std::string::npos)
      << cpu.out;
  EXPECT_EQ(std::count(cpu.out.begin(), cpu.out.end(), '\n'), 1) << cpu.out;
  EXPECT_EQ(test::run_pebench({"compare", good_path, no_cpu_path}).exit_code, 0);  // GPU time has no such need

  const auto base = test::run_pebench({"compare", injected_path, good_path, "--gate"});
  EXPECT_EQ(base.exit_code, 2) << base.out;
  EXPECT_NE(base.out.find("error: " + injected_path +
                          ": made with --inject-slowdown abs.learned=1.5: a fault-injection report is never a BASE"),
            std::string::npos)
      << base.out;
  EXPECT_EQ(test::run_pebench({"compare", good_path, injected_path, "--gate"}).exit_code, 0);  // as NEW it is fine

  for (const auto& bad : std::vector<std::vector<std::string>>{{"--time", "wall"}, {"--variant-threshold", "-1"},
                                                                {"--min-samples", "many"}}) {
    std::vector<std::string> args = {"compare", good_path, good_path};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto r = test::run_pebench(args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(bad[0]), std::string::npos) << r.out;
  }
}

// Issue 40: a baseline whose medians are 5e-324 ns made the load factor
// infinite, every normalized ratio 0 and the gate pass a 3x slower NEW.
TEST(RunnerRule, NormalizeRefusesATimeNoMachineMeasured) {
  auto all_at = [](double ns) {
    auto cases = runner_cases(1);
    for (auto& c : cases) {
      for (double& s : c.samples) s = ns;
      for (double& s : c.cpu_samples) s = ns;
    }
    return report_json(cases);
  };
  const json tiny = all_at(5e-324), slow = report_json(runner_cases(3, {}, 7));
  for (const std::string series : {"cpu", "gpu"}) {
    SCOPED_TRACE(series);
    const GateRun r = gate(tiny, slow, {"--time", series, "--normalize"});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("base.json: abs.learned default f32 seq=128: a " + series +
                         " median of 4.94066e-324 ns is below 0.001 ns, not a measured time"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
  // Without --normalize nothing is divided: every case is slower and the gate fails.
  EXPECT_EQ(gate(tiny, slow, {"--time", "cpu"}).exit_code, 1);
  // Medians that each pass but overflow their ratio: the load factor is inf.
  const GateRun inf = gate(all_at(2e-3), all_at(1e306), {"--time", "gpu", "--normalize"});
  EXPECT_EQ(inf.exit_code, 2) << inf.out;
  EXPECT_NE(inf.out.find("new.json against "), std::string::npos) << inf.out;
  EXPECT_NE(inf.out.find("base.json: the load factor (the median NEW/BASE ratio) is inf; --normalize cannot divide"),
            std::string::npos)
      << inf.out;
}

TEST(RunnerRule, JsonCarriesTheLoadFactorAndVariants) {
  const std::string dir = test::temp_dir("json");
  const auto r = test::run_pebench(with_rule({"compare", write_json(dir, "b.json", report_json(runner_cases(1))),
                                              write_json(dir, "n.json", report_json(runner_cases(2, {}, 9))),
                                              "--format", "json"}));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["time"], "cpu");
  EXPECT_EQ(j["normalize"], true);
  EXPECT_EQ(j["variant_threshold"], 0.25);
  const json& pair = j["comparisons"][0];
  EXPECT_NEAR(pair["load_factor"].get<double>(), 2, 0.1);
  ASSERT_EQ(pair["variants"].size(), 4u);
  EXPECT_EQ(pair["variants"][2]["variant"], "attn.nope");
  EXPECT_EQ(pair["variants"][2]["impl"], "flash");
  EXPECT_EQ(pair["variants"][2]["cases"], 4);
  EXPECT_EQ(pair["variants"][2]["slower"], false);
}

// Three short variants (CPU time 100-600 us a case, like the quick preset's
// abs.* at seq 128, where a submission's fixed cost is most of the time) and
// three long ones (2-8 ms), four cases each. `short_drift` scales the short
// ones' CPU time, `long_drift` the long ones', `scale` one variant's on top.
std::vector<CaseSpec> short_and_long_cases(double short_drift, double long_drift,
                                           const std::map<std::string, double>& scale = {}, uint32_t seed = 1) {
  std::vector<CaseSpec> out;
  const std::vector<std::pair<std::string, double>> variants = {
      {"abs.learned", 100e3},  {"abs.multiplicative", 250e3}, {"rope.apply", 300e3},
      {"attn.nope", 2000e3}, {"attn.alibi", 2500e3},        {"attn.t5", 3000e3}};
  for (const auto& [variant, base_ns] : variants) {
    const bool is_short = base_ns < 1e6;
    const auto it = scale.find(variant);
    const double s = (is_short ? short_drift : long_drift) * (it == scale.end() ? 1.0 : it->second);
    for (const char* dtype : {"f32", "f16"}) {
      for (int seq : {128, 256}) {
        CaseSpec c;
        c.variant = variant;
        c.impl = variant.rfind("attn.", 0) == 0 ? "flash" : "default";
        c.dtype = dtype;
        c.params = {{"seq", seq}};
        const double center = base_ns * seq / 128;
        c.samples = samples_around(center, 10, 0.03, seed++);
        c.cpu_samples = samples_around(center * s, 10, 0.03, seed++);
        out.push_back(c);
      }
    }
  }
  return out;
}

TEST(RunnerRule, LocalLoadFactorsFollowAFixedCostThatDriftsApartFromSpeed) {
  // The runner's fixed cost per submission grew (short cases 1.6x) while
  // its speed did not (long cases 0.9x): the one load factor (1.25) leaves
  // every short variant slower, the local ones divide the drift out.
  const json base = report_json(short_and_long_cases(1, 1));
  const json drifted = report_json(short_and_long_cases(1.6, 0.9, {}, 77));
  const GateRun one = gate(base, drifted, kRunnerRule);
  EXPECT_EQ(one.exit_code, 1) << one.out;
  EXPECT_EQ(count_lines_starting(one.out, "slower:"), 3u) << one.out;
  EXPECT_NE(one.out.find("over load factor 1.2"), std::string::npos) << one.out;
  const GateRun local = gate(base, drifted, with_rule({"--load-neighbours", "4"}));
  EXPECT_EQ(local.exit_code, 0) << local.out;

  // A short variant 1.5x slower on top of the drift is still named, alone:
  // its own cases, though nearest in time, never set its factor.
  const json slowed = report_json(short_and_long_cases(1.6, 0.9, {{"abs.learned", 1.5}}, 77));
  const GateRun r = gate(base, slowed, with_rule({"--load-neighbours", "4"}));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NEAR(number_after(r.out, "slower: abs.learned default: median "), 1.5, 0.08) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "slower:"), 1u) << r.out;
  EXPECT_NE(r.out.find("over local load factor"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(4 nearest cases)"), std::string::npos) << r.out;

  // Each case's factor is in the JSON, and the pair's one factor stays.
  const std::string dir = test::temp_dir("local");
  const std::string base_path = write_json(dir, "b.json", base), new_path = write_json(dir, "n.json", drifted);
  const auto j = test::run_pebench(
      with_rule({"compare", base_path, new_path, "--load-neighbours", "4", "--format", "json"}));
  ASSERT_EQ(j.exit_code, 0) << j.out;
  const json out = json::parse(j.out);
  EXPECT_EQ(out["load_neighbours"], 4);
  const json& pair = out["comparisons"][0];
  EXPECT_NEAR(pair["load_factor"].get<double>(), 1.25, 0.05);
  for (const auto& c : pair["cases"]) {
    const bool is_short = c["variant"].get<std::string>().rfind("attn.", 0) != 0;
    EXPECT_NEAR(c["load_factor"].get<double>(), is_short ? 1.6 : 0.9, 0.05) << c.dump();
  }

  // Without --normalize the option has nothing to act on.
  const auto bad = test::run_pebench({"compare", base_path, new_path, "--load-neighbours", "4"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--load-neighbours 4 needs --normalize"), std::string::npos) << bad.out;
}

// Cases whose tuning ran another value on each side are listed with both
// values; a side without tuning ran the planner's.
TEST(CompareNotes, CasesTunedToAnotherValueAreListed) {
  const std::string dir = test::temp_dir("tuned_values");
  const json plain = report_json(runner_cases(1));
  auto tuned_to = [&](int64_t chosen) {
    json j = plain;
    j["run"] = {{"tune", true}};
    json candidates = json::array();
    for (const int64_t v : {int64_t{8}, int64_t{6}, int64_t{4}}) {
      candidates.push_back({{"value", v}, {"status", "ok"}, {"median_ns", 100.0 * static_cast<double>(v)}});
    }
    j["results"][0]["tuning"] = {{"knob", "row_slots"}, {"planned", 8}, {"chosen", chosen}, {"candidates", candidates}};
    return j;
  };
  const std::string variant = plain["results"][0]["variant"];
  const std::string six = write_json(dir, "six.json", tuned_to(6)), four = write_json(dir, "four.json", tuned_to(4)),
                    eight = write_json(dir, "eight.json", tuned_to(8)), untuned = write_json(dir, "plain.json", plain);
  const auto differ = test::run_pebench({"compare", six, four});
  EXPECT_EQ(differ.exit_code, 0) << differ.out;
  EXPECT_NE(differ.out.find("tuned plans that differ (1)"), std::string::npos) << differ.out;
  const std::regex row(variant + " +[^\n]*row_slots +6 +4\n");
  EXPECT_TRUE(std::regex_search(differ.out, row)) << differ.out;
  // Against an untuned run the planner's 8 is the other side's value.
  const auto against_plain = test::run_pebench({"compare", untuned, six});
  EXPECT_TRUE(std::regex_search(against_plain.out, std::regex(variant + " +[^\n]*row_slots +8 +6\n")))
      << against_plain.out;
  for (const auto& [base, next] : {std::pair{six, six}, std::pair{untuned, eight}}) {
    const auto same = test::run_pebench({"compare", base, next});
    EXPECT_EQ(same.out.find("tuned plans that differ"), std::string::npos) << same.out;
  }
  // The JSON carries the same: each side's value, and each report's run.tune.
  auto tuning_json = [](const std::string& base, const std::string& next) {
    const auto r = test::run_pebench({"compare", base, next, "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(r.out);
  };
  const json j = tuning_json(untuned, six);
  EXPECT_EQ(j["reports"][0]["tuned"], false);
  EXPECT_EQ(j["reports"][1]["tuned"], true);
  const json& cases = j["comparisons"][0]["cases"];
  EXPECT_EQ(cases[0]["tuning"], json({{"knob", "row_slots"}, {"base", 8}, {"new", 6}, {"differs", true}}));
  EXPECT_EQ(tuning_json(six, six)["comparisons"][0]["cases"][0]["tuning"]["differs"], false);
  EXPECT_TRUE(cases[1]["tuning"].is_null()) << "an untuned case on both sides";
}

TEST(CompareNotes, ATunedRunAgainstAnUntunedOneIsSaid) {
  const std::string dir = test::temp_dir("tuned");
  const json plain = report_json(runner_cases(1));
  json tuned = plain;
  tuned["run"] = {{"tune", true}};
  const ReportFile copied = parse(tuned);  // the flag survives a copy (cases re-pointed)
  EXPECT_TRUE(ReportFile(copied).tuned);
  EXPECT_FALSE(parse(plain).tuned);
  const std::string plain_path = write_json(dir, "plain.json", plain), tuned_path = write_json(dir, "tuned.json", tuned);
  const auto differ = test::run_pebench({"compare", plain_path, tuned_path});
  EXPECT_EQ(differ.exit_code, 0) << differ.out;
  EXPECT_NE(differ.out.find("tuning differs: BASE without, NEW ran with --tune"), std::string::npos) << differ.out;
  const auto same = test::run_pebench({"compare", tuned_path, tuned_path});
  EXPECT_EQ(same.out.find("tuning differs"), std::string::npos) << same.out;
}

// `report` as run on a CPU device (lavapipe) on the host CPU `cpu_id`
// (empty: a report from before host.cpu_id).
json on_cpu_host(json report, const std::string& cpu_id, const std::string& device_type = "cpu") {
  report["devices"][0]["device_type"] = device_type;
  report["host"]["cpu"] = "Test CPU";
  if (!cpu_id.empty()) report["host"]["cpu_id"] = cpu_id;
  return report;
}

TEST(RunnerRule, ACpuDeviceTimedOnAnotherHostFailsOrGatesCorrectnessOnly) {
  const json base = on_cpu_host(report_json(runner_cases(1)), "GenuineIntel family 6 model 167");
  auto slow_cases = runner_cases(1, {{"attn.nope/flash", 1.5}}, 50);
  const json other_host = on_cpu_host(report_json(slow_cases), "AuthenticAMD family 26 model 2");

  // By default another host fails like another device, whatever the times.
  const GateRun fails = gate(base, on_cpu_host(report_json(runner_cases(1, {}, 50)), "AuthenticAMD family 26 model 2"),
                             kRunnerRule);
  EXPECT_EQ(fails.exit_code, 1) << fails.out;
  EXPECT_EQ(count_lines_starting(fails.out, "host: BASE ran Test GPU on Test CPU (GenuineIntel family 6 model 167), "
                                            "2 logical cores, NEW on Test CPU (AuthenticAMD family 26 model 2)"),
            1u)
      << fails.out;
  EXPECT_NE(fails.out.find("host CPUs differ: "), std::string::npos) << fails.out;

  // --cross-host correctness: the slower variant is not a reason, a note says why.
  auto rule = kRunnerRule;
  rule.insert(rule.end(), {"--cross-host", "correctness"});
  const GateRun timing_only = gate(base, other_host, rule);
  EXPECT_EQ(timing_only.exit_code, 0) << timing_only.out;
  EXPECT_EQ(count_lines_starting(timing_only.out, "timing not gated: BASE ran Test GPU on Test CPU"), 1u)
      << timing_only.out;
  EXPECT_EQ(count_lines_starting(timing_only.out, "slower:"), 0u) << timing_only.out;
  // ... while correctness still fails it.
  slow_cases[3].status = "failed";
  const GateRun broke = gate(base, on_cpu_host(report_json(slow_cases), "AuthenticAMD family 26 model 2"), rule);
  EXPECT_EQ(broke.exit_code, 1) << broke.out;
  EXPECT_EQ(count_lines_starting(broke.out, "broke: abs.learned default f16 seq=1024: ok in BASE, failed in NEW"), 1u)
      << broke.out;
  EXPECT_EQ(count_lines_starting(broke.out, "slower:"), 0u) << broke.out;

  // The same host, or a report without host.cpu_id on the same CPU model, gates timing as always.
  for (const std::string id : {"GenuineIntel family 6 model 167", ""}) {
    SCOPED_TRACE(id);
    const GateRun same = gate(base, on_cpu_host(report_json(runner_cases(1, {{"attn.nope/flash", 1.5}}, 50)), id), rule);
    EXPECT_EQ(same.exit_code, 1) << same.out;
    EXPECT_EQ(count_lines_starting(same.out, "slower: attn.nope flash: median "), 1u) << same.out;
    EXPECT_EQ(same.out.find("host"), std::string::npos) << same.out;
  }
  // A GPU's times do not depend on the host CPU.
  const GateRun gpu = gate(on_cpu_host(report_json(runner_cases(1)), "GenuineIntel family 6 model 167", "discrete-gpu"),
                           on_cpu_host(report_json(runner_cases(1, {}, 50)), "AuthenticAMD family 26 model 2",
                                       "discrete-gpu"),
                           kRunnerRule);
  EXPECT_EQ(gpu.exit_code, 0) << gpu.out;

  // JSON: the pair names both hosts; the option in force is written out.
  const std::string dir = test::temp_dir("cross-host");
  std::vector<std::string> args = {"compare", write_json(dir, "b.json", base), write_json(dir, "n.json", other_host),
                                   "--format", "json", "--gate"};
  args.insert(args.end(), rule.begin(), rule.end());
  const auto r = test::run_pebench(args);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out.substr(0, r.out.rfind("}") + 1));
  EXPECT_EQ(j["cross_host"], "correctness");
  EXPECT_EQ(j["comparisons"][0]["cross_host"]["devices"], json::array({"Test GPU"}));
  EXPECT_EQ(j["comparisons"][0]["cross_host"]["new"], "Test CPU (AuthenticAMD family 26 model 2), 2 logical cores");
  EXPECT_EQ(j["gate"]["notes"].size(), 1u);
}

TEST(RunnerRule, AConfirmingRunKeepsOnlyTimingReasonsThatRepeat) {
  const std::string dir = test::temp_dir("confirm");
  const std::string base = write_json(dir, "base.json", report_json(runner_cases(1)));
  const std::string slow = write_json(dir, "slow.json", report_json(runner_cases(1.3, {{"abs.learned/default", 1.5}}, 5)));
  const std::string slow2 =
      write_json(dir, "slow2.json", report_json(runner_cases(1.6, {{"abs.learned/default", 1.5}}, 9)));
  const std::string clean = write_json(dir, "clean.json", report_json(runner_cases(1.6, {}, 9)));

  const auto repeated = test::run_pebench(with_rule({"compare", base, slow, "--gate", "--confirm", slow2}));
  EXPECT_EQ(repeated.exit_code, 1) << repeated.out;
  EXPECT_EQ(count_lines_starting(repeated.out, "slower: abs.learned default: median "), 1u) << repeated.out;
  EXPECT_NE(repeated.out.find("x in a second run"), std::string::npos) << repeated.out;

  const auto once = test::run_pebench(with_rule({"compare", base, slow, "--gate", "--confirm", clean}));
  EXPECT_EQ(once.exit_code, 0) << once.out;
  EXPECT_NE(once.out.find("not confirmed by the second run (" + clean + "), so not counted:"), std::string::npos)
      << once.out;
  EXPECT_EQ(count_lines_starting(once.out, "slower: abs.learned default: median "), 1u) << once.out;

  // Correctness needs no confirming: a case lost in NEW fails whatever the second run says.
  auto lost = runner_cases(1.3, {}, 5);
  lost[3].status = "unsupported";
  lost[3].samples.clear();
  lost[3].cpu_samples.clear();
  const auto broke = test::run_pebench(
      with_rule({"compare", base, write_json(dir, "lost.json", report_json(lost)), "--gate", "--confirm", clean}));
  EXPECT_EQ(broke.exit_code, 1) << broke.out;
  EXPECT_EQ(count_lines_starting(broke.out, "lost: abs.learned default f16 seq=1024"), 1u) << broke.out;

  const auto no_gate = test::run_pebench(with_rule({"compare", base, slow, "--confirm", clean}));
  EXPECT_EQ(no_gate.exit_code, 2) << no_gate.out;
  EXPECT_NE(no_gate.out.find("--confirm " + clean + " needs --gate"), std::string::npos) << no_gate.out;
}

TEST(CiGate, PassesFailsWithOneLinePerReasonAndRefusesBadInput) {
  const std::string dir = test::temp_dir("ci-gate");
  const std::string script = std::string(PEBENCH_SOURCE_DIR) + "/scripts/ci-gate.sh";
  const std::vector<std::string> env = {std::string("PEBENCH=") + PEBENCH_EXE};
  const std::string base = write_json(dir, "base.json", report_json(runner_cases(1)));
  const std::string busy = write_json(dir, "busy.json", report_json(runner_cases(1.8, {}, 7)));
  const auto pass = test::run_program(script, {base, busy}, env);
  EXPECT_EQ(pass.exit_code, 0) << pass.out;
  EXPECT_EQ(pass.out, "ci-gate: passed\n");

  auto next = runner_cases(1.8, {{"attn.nope/flash", 1.5}}, 7);
  next.pop_back();  // attn.nope naive f16 seq=1024: missing
  const auto fail = test::run_program(script, {base, write_json(dir, "slow.json", report_json(next))}, env);
  EXPECT_EQ(fail.exit_code, 1) << fail.out;
  EXPECT_EQ(std::count(fail.out.begin(), fail.out.end(), '\n'), 2) << fail.out;
  EXPECT_NEAR(number_after(fail.out, "slower: attn.nope flash: median "), 1.5, 0.06) << fail.out;
  EXPECT_EQ(count_lines_starting(fail.out, "missing: attn.nope naive f16 seq=1024"), 1u) << fail.out;

  // Only timing failed: a second run decides (here an existing one, as measure-gate.sh gives it).
  const std::string slow = write_json(dir, "slow-only.json", report_json(runner_cases(1.8, {{"attn.nope/flash", 1.5}}, 7)));
  const std::string again = write_json(dir, "again.json", report_json(runner_cases(1.2, {{"attn.nope/flash", 1.5}}, 3)));
  auto confirm_env = env;
  confirm_env.push_back("CI_GATE_CONFIRM_WITH=" + again);
  const auto confirmed = test::run_program(script, {base, slow}, confirm_env);
  EXPECT_EQ(confirmed.exit_code, 1) << confirmed.out;
  EXPECT_NE(confirmed.out.find("confirming with a second run (" + again + ")"), std::string::npos) << confirmed.out;
  EXPECT_EQ(count_lines_starting(confirmed.out, "slower: attn.nope flash: median "), 1u) << confirmed.out;
  confirm_env.back() = "CI_GATE_CONFIRM_WITH=" + busy;
  const auto unconfirmed = test::run_program(script, {base, slow}, confirm_env);
  EXPECT_EQ(unconfirmed.exit_code, 0) << unconfirmed.out;
  EXPECT_NE(unconfirmed.out.find("ci-gate: passed\n"), std::string::npos) << unconfirmed.out;
  EXPECT_NE(unconfirmed.out.find("ci-gate: not confirmed: slower: attn.nope flash"), std::string::npos)
      << unconfirmed.out;

  // Another host CPU: timing is not gated, and a line says so.
  const auto host_base = write_json(dir, "host-base.json", on_cpu_host(report_json(runner_cases(1)), "A family 1 model 1"));
  const auto host_slow = write_json(dir, "host-slow.json",
                                    on_cpu_host(report_json(runner_cases(1, {{"attn.nope/flash", 1.5}}, 7)),
                                                "B family 2 model 2"));
  const auto cross = test::run_program(script, {host_base, host_slow}, env);
  EXPECT_EQ(cross.exit_code, 0) << cross.out;
  EXPECT_NE(cross.out.find("ci-gate: passed\n"), std::string::npos) << cross.out;
  EXPECT_NE(cross.out.find("ci-gate: timing not gated: BASE ran Test GPU on Test CPU (A family 1 model 1)"),
            std::string::npos)
      << cross.out;

  // Baselines of other hosts sit next to BASE as BASE.TAG.json: the one made on NEW's host is gated
  // against (timing included), one of a third host is passed over, and a line names the one taken.
  write_json(dir, "host-base.a.json", on_cpu_host(report_json(runner_cases(1)), "C family 3 model 3"));
  const auto own_base =
      write_json(dir, "host-base.b.json", on_cpu_host(report_json(runner_cases(1)), "B family 2 model 2"));
  const auto own = test::run_program(script, {host_base, host_slow}, env);
  EXPECT_EQ(own.exit_code, 1) << own.out;
  EXPECT_NE(own.out.find("ci-gate: baseline " + own_base + ", made on this host's CPU\n"), std::string::npos)
      << own.out;
  EXPECT_EQ(count_lines_starting(own.out, "slower: attn.nope flash: median "), 1u) << own.out;
  EXPECT_EQ(own.out.find("timing not gated"), std::string::npos) << own.out;
  // BASE itself on NEW's host: the siblings are not looked at.
  const auto same = test::run_program(script, {own_base, host_slow}, env);
  EXPECT_EQ(same.exit_code, 1) << same.out;
  EXPECT_EQ(same.out.find("ci-gate: baseline "), std::string::npos) << same.out;

  const auto bad = test::run_program(script, {base, dir + "/nope.json"}, env);
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("nope.json: cannot read"), std::string::npos) << bad.out;
  EXPECT_EQ(test::run_program(script, {base}, env).exit_code, 2);
}

}  // namespace
}  // namespace pebench

namespace pebench {
namespace {

// --- on a real report from the test device --------------------------------------------

TEST(CompareEndToEnd, RealReportAgainstItselfAndAsAPage) {
  const std::string dir = test::temp_dir("e2e");
  const std::string report = dir + "/run.json";
  const auto run = test::run_pebench({"run", "--variant", "abs.learned", "--seq", "16,64", "--dtype", "f32",
                                      "--benchmark_min_time=0.01", "--out", report});
  ASSERT_EQ(run.exit_code, 0) << run.out;
  // Each sample's start time, in measurement order, as many as samples.
  std::ifstream written(report);
  const json parsed = json::parse(written);
  for (const auto& result : parsed["results"]) {
    const json& t = result["time_ns"];
    ASSERT_EQ(t["started_ns"].size(), t["samples"].size()) << result["id"];
    for (size_t i = 1; i < t["started_ns"].size(); ++i) {
      EXPECT_GT(t["started_ns"][i].get<double>(), t["started_ns"][i - 1].get<double>()) << result["id"];
    }
  }
  const auto same = test::run_pebench({"compare", report, report, "--gate", "--format", "md"});
  EXPECT_EQ(same.exit_code, 0) << same.out;
  EXPECT_EQ(count_lines_starting(same.out, "| abs.learned | default | f32 |"), 2u) << same.out;
  EXPECT_NE(same.out.find("| 1.000 | 1.000 | "), std::string::npos) << same.out;  // ratio 1, p 1
  EXPECT_NE(same.out.find(" | unchanged |"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("gate: passed"), std::string::npos) << same.out;
  const auto page = test::run_pebench({"report", report, "-o", dir + "/report.html"});
  EXPECT_EQ(page.exit_code, 0) << page.out;
  std::ifstream in(dir + "/report.html");
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_NE(html.str().find("data-chart=\"seq-abs.learned\""), std::string::npos);
}

}  // namespace
}  // namespace pebench

// --- compare --over: each case against a baseline variant of its own report ---

namespace pebench {
namespace {

// Every pairwise log difference log y_j - log x_i, sorted.
std::vector<double> sorted_log_differences(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> d;
  for (double xi : x) {
    for (double yj : y) d.push_back(std::log(yj) - std::log(xi));
  }
  std::sort(d.begin(), d.end());
  return d;
}

std::vector<double> scaled(std::vector<double> v, double factor) {
  for (double& s : v) s *= factor;
  return v;
}

TEST(RatioInterval, AScaledCopyGivesItsFactorInsideTheInterval) {
  const std::vector<double> x = samples_around(100, 10, 0.2, 1);
  const auto r = ratio_interval(x, scaled(x, 2), 0.99);
  ASSERT_TRUE(r.has_value());
  // Pairwise log ratios of x with itself are symmetric about 0: the estimate is the factor.
  EXPECT_NEAR(r->estimate, 2.0, 1e-12);
  EXPECT_LT(r->lo, 2.0);
  EXPECT_GT(r->hi, 2.0);
  EXPECT_TRUE(r->exact);
  EXPECT_DOUBLE_EQ(r->confidence, 0.99);
  // Reversed, the interval is the reciprocal one.
  const auto back = ratio_interval(scaled(x, 2), x, 0.99);
  ASSERT_TRUE(back.has_value());
  EXPECT_NEAR(back->lo, 1 / r->hi, 1e-12);
  EXPECT_NEAR(back->hi, 1 / r->lo, 1e-12);
}

// The interval is the set of factors f for which the two-sided U test of x
// against y / f does not reject at alpha: checked at the geometric
// midpoints around each end, inside and outside, against mann_whitney_u.
TEST(RatioInterval, EndsAreWhereTheUTestStartsToReject) {
  const std::vector<double> x = samples_around(100, 8, 0.3, 3), y = samples_around(150, 9, 0.3, 7);
  for (double confidence : {0.9, 0.95, 0.99}) {
    const auto r = ratio_interval(x, y, confidence);
    ASSERT_TRUE(r.has_value()) << confidence;
    const std::vector<double> d = sorted_log_differences(x, y);
    const auto lo_at = std::find_if(d.begin(), d.end(), [&](double v) { return std::fabs(v - std::log(r->lo)) < 1e-12; });
    const auto hi_at = std::find_if(d.begin(), d.end(), [&](double v) { return std::fabs(v - std::log(r->hi)) < 1e-12; });
    ASSERT_NE(lo_at, d.end());
    ASSERT_NE(hi_at, d.end());
    ASSERT_GT(lo_at, d.begin());
    ASSERT_LT(hi_at + 1, d.end());
    EXPECT_EQ(lo_at - d.begin(), d.end() - 1 - hi_at) << "symmetric ranks";
    const double alpha = 1 - confidence;
    auto p_at = [&](double log_factor) { return mann_whitney_u(x, scaled(y, std::exp(-log_factor))).p_value; };
    EXPECT_GT(p_at(0.5 * (lo_at[0] + lo_at[1])), alpha) << confidence;
    EXPECT_LE(p_at(0.5 * (lo_at[-1] + lo_at[0])), alpha) << confidence;
    EXPECT_GT(p_at(0.5 * (hi_at[-1] + hi_at[0])), alpha) << confidence;
    EXPECT_LE(p_at(0.5 * (hi_at[0] + hi_at[1])), alpha) << confidence;
  }
}

TEST(RatioInterval, TooFewSamplesOrBadValuesGiveNone) {
  const std::vector<double> three = {10, 11, 12};
  // 3 and 3 samples: the smallest two-sided p is 2 / C(6, 3) = 0.1.
  EXPECT_FALSE(ratio_interval(three, scaled(three, 2), 0.99).has_value());
  const auto ninety = ratio_interval(three, scaled(three, 2), 0.9);
  ASSERT_TRUE(ninety.has_value());
  EXPECT_DOUBLE_EQ(ninety->lo, 20.0 / 12);  // the extreme pairs
  EXPECT_DOUBLE_EQ(ninety->hi, 24.0 / 10);
  EXPECT_FALSE(ratio_interval({}, three, 0.9).has_value());
  EXPECT_FALSE(ratio_interval({10, 0, 12}, three, 0.9).has_value());
  EXPECT_FALSE(ratio_interval({10, std::nan(""), 12}, three, 0.9).has_value());
  EXPECT_FALSE(ratio_interval(three, three, 1.0).has_value());
}

TEST(RatioInterval, LargeSamplesUseTheNormalApproximation) {
  const std::vector<double> x = samples_around(100, 60, 0.2, 5);
  const auto wide = ratio_interval(samples_around(100, 10, 0.2, 5), scaled(samples_around(100, 10, 0.2, 5), 1.5), 0.99);
  const auto r = ratio_interval(x, scaled(x, 1.5), 0.99);
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(wide.has_value());
  EXPECT_FALSE(r->exact);
  EXPECT_NEAR(r->estimate, 1.5, 1e-12);
  EXPECT_LT(r->lo, 1.5);
  EXPECT_GT(r->hi, 1.5);
  EXPECT_LT(r->hi / r->lo, wide->hi / wide->lo);  // more samples, a narrower interval
}

// A machine whose speed drops by 1.7x halfway through: y runs 1.3x x's time
// at every moment, but most of y's samples came in the slow half (as a
// random interleaving can place them). The pooled samples mix the two
// speeds unevenly; paired by start time, each sample meets one of its own
// moment.
TEST(RatioInterval, PairedByStartTimeSeesThroughADriftingMachine) {
  std::vector<double> x, x_at, y, y_at;
  const std::vector<double> noise_x = samples_around(1, 20, 0.02, 21), noise_y = samples_around(1, 20, 0.02, 22);
  for (size_t i = 0; i < 20; ++i) {
    const double speed = i < 10 ? 1.0 : 1.7;
    x.push_back(100 * speed * noise_x[i]);
    x_at.push_back(2.0 * static_cast<double>(i));
    if (i < 8) continue;  // y: 2 samples in the fast half, 10 in the slow one
    y.push_back(130 * speed * noise_y[i]);
    y_at.push_back(2.0 * static_cast<double>(i) + 0.5);  // 0.5 after an x sample, 1.5 before the next
  }
  const auto pooled = ratio_interval(x, y, 0.99);
  const auto paired = paired_ratio_interval(x, x_at, y, y_at, 0.99);
  ASSERT_TRUE(pooled.has_value());
  ASSERT_TRUE(paired.has_value());
  EXPECT_TRUE(paired->paired);
  EXPECT_FALSE(pooled->paired);
  EXPECT_DOUBLE_EQ(paired->median_gap_ns, 0.5);
  EXPECT_LT(paired->lo, 1.3);
  EXPECT_GT(paired->hi, 1.3);
  EXPECT_NEAR(paired->estimate, 1.3, 0.03);
  EXPECT_LT(paired->hi / paired->lo, 1.1);
  EXPECT_GT(pooled->hi / pooled->lo, 1.5) << "the pooled interval spans both speeds";
  // A start-time list that does not match its samples: no interval.
  EXPECT_FALSE(paired_ratio_interval(x, {0, 1}, y, y_at, 0.99).has_value());
}

// The sign test's ends are order statistics of the log ratios: with 10
// pairs at 95%, P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024 for
// B ~ Binomial(10, 1/2), so the 2nd smallest and the 2nd largest.
TEST(RatioInterval, PairedEndsAreTheSignTestsOrderStatistics) {
  const std::vector<double> factors = {1.31, 1.12, 1.45, 1.2, 1.05, 1.38, 1.27, 1.5, 1.18, 1.33};
  std::vector<double> x, y, at;
  for (size_t i = 0; i < factors.size(); ++i) {
    x.push_back(100);
    y.push_back(100 * factors[i]);
    at.push_back(static_cast<double>(i));
  }
  const auto r = paired_ratio_interval(x, at, y, at, 0.95);
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->lo, 1.12, 1e-12);
  EXPECT_NEAR(r->hi, 1.45, 1e-12);
  EXPECT_NEAR(r->estimate, std::sqrt(1.27 * 1.31), 1e-12);  // the median of the logs
  EXPECT_DOUBLE_EQ(r->median_gap_ns, 0);
  // 5 pairs: P(B = 0) = 1/32 > 0.025, so no 95% interval; 90% has one.
  const std::vector<double> five(x.begin(), x.begin() + 5), five_y(y.begin(), y.begin() + 5),
      five_at(at.begin(), at.begin() + 5);
  EXPECT_FALSE(paired_ratio_interval(five, five_at, five_y, five_at, 0.95).has_value());
  EXPECT_TRUE(paired_ratio_interval(five, five_at, five_y, five_at, 0.9).has_value());
}

// A flash attention case of `variant` for compare --over's tests.
CaseSpec attn_case(const std::string& variant, const json& params, std::vector<double> samples) {
  CaseSpec c;
  c.variant = variant;
  c.impl = "flash";
  c.params = params;
  c.samples = std::move(samples);
  return c;
}

// compare --over: a case with start times but too few samples for the sign
// test at the level takes the pooled interval, and says so (gap "-").
TEST(CompareOver, TooFewSamplesToPairFallBackToThePooledInterval) {
  const std::string dir = test::temp_dir("over_pool");
  auto attn = [](const std::string& variant, double center, size_t n) {
    return attn_case(variant, {{"seq", 128}}, samples_around(center, n, 0.05, 4));
  };
  json j = report_json({attn("attn.nope", 100, 5), attn("attn.t5", 150, 5), attn("attn.xl", 150, 12)});
  j["results"][0]["time_ns"]["started_ns"] = {0, 10, 20, 30, 40};
  j["results"][1]["time_ns"]["started_ns"] = {5, 15, 25, 35, 45};
  j["results"][2]["time_ns"]["started_ns"] = {1, 2, 3, 11, 12, 13, 21, 22, 23, 31, 32, 33};
  const auto r = test::run_pebench({"compare", "--over", "attn.nope", write_json(dir, "r.json", j), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json rows = json::parse(r.out)["reports"][0]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["interval"]["paired"], false);  // 5 pairs cannot reach 99%: pooled 5 and 5 can
  EXPECT_TRUE(rows[0]["interval"]["median_gap_ns"].is_null());
  EXPECT_EQ(rows[1]["interval"]["paired"], true);  // 12 pairs can
  EXPECT_DOUBLE_EQ(rows[1]["interval"]["median_gap_ns"].get<double>(), 2.0);
}

TEST(CompareOver, EachCaseMeetsTheBaselinesCaseOfItsShape) {
  const std::string dir = test::temp_dir("over");
  const json small = {{"batch", 1}, {"heads", 8}, {"kv_heads", 8}, {"seq", 128}, {"kv_seq", 128}, {"dim", 64},
                      {"causal", false}};
  json large = small;
  large["seq"] = large["kv_seq"] = 256;
  auto with = [](json shape, const json& own) {
    for (const auto& [k, v] : own.items()) shape[k] = v;
    return shape;
  };
  const std::vector<double> base_small = samples_around(100, 8, 0.1, 11), base_large = samples_around(400, 8, 0.1, 12);
  CaseSpec failed = attn_case("attn.xl", small, scaled(base_small, 3));
  failed.status = "failed";
  CaseSpec other_family;
  other_family.samples = {1, 2, 3};
  const std::vector<CaseSpec> cases = {
      attn_case("attn.nope", with(small, {{"scale", 0.125}}), base_small),
      attn_case("attn.t5", with(small, {{"scale", 1.0}, {"num_buckets", 32}}), scaled(base_small, 1.25)),
      attn_case("attn.nope", with(large, {{"scale", 0.125}}), base_large),
      attn_case("attn.t5", with(large, {{"scale", 1.0}, {"num_buckets", 32}}), scaled(base_large, 1.5)),
      attn_case("attn.rope", with(small, {{"scaling", "none"}, {"base", 10000}}), scaled(base_small, 1.1)),
      attn_case("attn.rope", with(small, {{"scaling", "yarn"}, {"base", 10000}}), scaled(base_small, 1.2)),
      attn_case("attn.tupe", with(small, {{"seq", 512}, {"kv_seq", 512}}), base_small),  // no nope at seq 512
      failed,
      other_family,
  };
  const std::string path = write_json(dir, "run.json", report_json(cases));

  const auto text = test::run_pebench({"compare", "--over", "attn.nope", path});
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_EQ(text.out.find("abs.learned"), std::string::npos) << "another family: " << text.out;
  EXPECT_NE(text.out.find("6 cases over attn.nope"), std::string::npos) << text.out;
  // The rope rows are told apart by their own differing parameter only.
  EXPECT_NE(text.out.find("dim=64 causal=false scaling=none "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("dim=64 causal=false scaling=yarn "), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("num_buckets="), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1 case had no attn.nope case at its shape."), std::string::npos) << text.out;
  // attn.t5 has two cases: the summary's geometric mean of 1.25 and 1.5.
  EXPECT_NE(text.out.find(fmt::format("{}", format_percent(std::sqrt(1.25 * 1.5) - 1))), std::string::npos)
      << text.out;

  const auto js = test::run_pebench({"compare", "--over", "attn.nope", path, "--format", "json", "--alpha", "0.05"});
  ASSERT_EQ(js.exit_code, 0) << js.out;
  const json j = json::parse(js.out);
  EXPECT_EQ(j["schema"], "pebench.overhead/1");
  EXPECT_EQ(j["over"], "attn.nope");
  const json& rows = j["reports"][0]["rows"];
  ASSERT_EQ(rows.size(), 6u);
  const std::vector<std::pair<std::string, double>> expected = {
      {"attn.t5", 1.25}, {"attn.t5", 1.5}, {"attn.rope", 1.1}, {"attn.rope", 1.2}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(rows[i]["variant"], expected[i].first);
    EXPECT_NEAR(rows[i]["ratio"].get<double>(), expected[i].second, 1e-12) << i;
    EXPECT_NEAR(rows[i]["interval"]["estimate"].get<double>(), expected[i].second, 1e-12) << i;
    EXPECT_LT(rows[i]["interval"]["lo"].get<double>(), expected[i].second);
    EXPECT_GT(rows[i]["interval"]["hi"].get<double>(), expected[i].second);
    EXPECT_DOUBLE_EQ(rows[i]["interval"]["confidence"].get<double>(), 0.95);
  }
  EXPECT_EQ(rows[1]["base"]["id"], "c2");  // the t5 case at seq 256 met the nope case at seq 256
  EXPECT_TRUE(rows[4]["base"].is_null());  // tupe at seq 512
  EXPECT_TRUE(rows[4]["ratio"].is_null());
  EXPECT_EQ(rows[5]["case"]["status"], "failed");  // xl: no ratio from a case that failed validation
  EXPECT_TRUE(rows[5]["ratio"].is_null());
  EXPECT_TRUE(rows[5]["interval"].is_null());
}

// Two baseline cases of one shape: each case meets the one whose other
// parameters differ least from its own, and the differences are said.
TEST(CompareOver, OfSeveralBaselineCasesTheClosestIsTaken) {
  const std::string dir = test::temp_dir("over_twins");
  auto attn = [](const std::string& variant, double scale, double center) {
    return attn_case(variant, {{"seq", 128}, {"scale", scale}}, samples_around(center, 6, 0.05, 3));
  };
  const std::string path = write_json(
      dir, "twins.json",
      report_json({attn("attn.nope", 0.125, 100), attn("attn.nope", 1.0, 200), attn("attn.t5", 1.0, 300),
                   attn("attn.alibi", 0.5, 150)}));
  const auto r = test::run_pebench({"compare", "--over", "attn.nope", path, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json rows = json::parse(r.out)["reports"][0]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["base"]["id"], "c1");  // t5's scale 1 is nope's second case's
  EXPECT_TRUE(rows[0]["differs"].empty());
  EXPECT_NEAR(rows[0]["ratio"].get<double>(), 1.5, 1e-12);
  EXPECT_EQ(rows[1]["base"]["id"], "c0");  // alibi's 0.5 differs from both: the first
  EXPECT_EQ(rows[1]["differs"], json({"scale 0.5 (attn.nope 0.125)"}));
  const auto text = test::run_pebench({"compare", "--over", "attn.nope", path});
  EXPECT_NE(text.out.find("parameters that differ from attn.nope's case (matched all the same):"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("attn.alibi: scale 0.5 (attn.nope 0.125)"), std::string::npos) << text.out;
}

TEST(CompareOver, BadUsageGetsOneLineAndExit2) {
  const std::string dir = test::temp_dir("over_bad");
  CaseSpec nope;
  nope.variant = "attn.nope";
  nope.impl = "flash";
  nope.params = {{"seq", 128}, {"scale", 0.125}};
  nope.samples = {1, 2, 3};
  const std::string one = write_json(dir, "one.json", report_json({nope}));
  struct Bad {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {{"compare", "--over", "attn.alibi", one}, "one.json: --over attn.alibi: the report has no attn.alibi case"},
      {{"compare", "--over", "attn.nope", "--gate", one}, "--gate does not apply"},
      {{"compare", "--over", "attn.nope", "--normalize", one}, "--normalize does not apply"},
      {{"compare", one}, "compare needs BASE.json and NEW.json"},
  };
  for (const auto& b : bad) {
    const auto r = test::run_pebench(b.args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(b.message), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
}

}  // namespace
}  // namespace pebench
