// run --tune: the CPU flash kernel's row slots and the GPU decode plan's
// keys per split, timed on the device.
//
// Which count of query rows per invocation runs fastest depends on the host
// CPU, not only on the case (docs/attention-kernels.md, "Row slots on CPU
// devices"), so `run --tune` times each count and keeps the fastest.
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/html_report.h"
#include "analysis/report_file.h"
#include "suites/attn/attn_common.h"
#include "attn_test_util.h"
#include "test_util.h"

namespace pebench {
namespace {

using test::kLavapipe;

// The choices for a case on an 8-lane CPU device, each checked to give the
// flash kernel that many row slots.
std::vector<int64_t> slot_choices(const std::string& variant, std::map<std::string, std::string> axes) {
  axes["impl"] = "flash";
  auto c = test::build_case(variant, axes);
  const auto& attn = dynamic_cast<const AttnCase&>(*c.impl);
  const std::vector<int64_t> choices = flash_cpu_slot_choices(attn.shape(), attn.flash_plan(), 8);
  for (const int64_t slots : choices) {
    FlashPlan plan = attn.flash_plan();
    plan.cpu_row_slots = slots;
    EXPECT_EQ(flash_tiles(attn.shape(), plan, kLavapipe).row_slots, static_cast<uint32_t>(slots));
  }
  return choices;
}

TEST(AttnTuningPlan, RowSlotChoicesStartWithThePlannersAndSpanHalfToTwiceIt) {
  using V = std::vector<int64_t>;
  // N = M = 2048, H 8, D 64: the larger budget's 8 slots, then 4 to 7.
  EXPECT_EQ(slot_choices("attn.nope", {{"seq", "2048"}, {"heads", "8"}, {"dim", "64"}}),
            (V{8, 4, 5, 6, 7}));
  // D 128 below 2^30 multiply-adds: 4 slots, then 2 to 8.
  EXPECT_EQ(slot_choices("attn.tupe", {{"seq", "512"}, {"heads", "8"}, {"dim", "128"}}),
            (V{4, 2, 3, 5, 6, 7, 8}));
  // Two parts a row (complex at D 64): 4, then 2 to 8.
  EXPECT_EQ(slot_choices("attn.complex", {{"seq", "2048"}, {"heads", "8"}, {"dim", "64"}}),
            (V{4, 2, 3, 5, 6, 7, 8}));
  // 20 rows of a kv head fill 3 slots of 8 lanes: nothing to choose.
  EXPECT_EQ(slot_choices("attn.nope", {{"seq", "20"}, {"heads", "1"}, {"dim", "64"}}), (V{3}));
  // Decode (direct): 4 rows a kv head, only counts up to 4 differ; 12 rows.
  EXPECT_EQ(slot_choices("attn.xl", {{"seq", "1"}, {"kv_seq", "300"}, {"heads", "8"}, {"kv_heads", "2"},
                          {"dim", "64"}}),
            (V{4}));
  EXPECT_EQ(slot_choices("attn.nope", {{"seq", "3"}, {"kv_seq", "300"}, {"heads", "4"}, {"kv_heads", "1"},
                          {"dim", "64"}}),
            (V{8, 4, 5, 6, 7}));
}

// GPU decode, untuned: the fewest keys per split (a power of two from 64)
// that make at most 256 splits: the H100's fastest at M 8K, 32K and 64K.
TEST(AttnTuningPlan, GpuDecodeSplitsAtMost256WithPowerOfTwoKeys) {
  EXPECT_EQ(flash_gpu_direct_split_keys(300), 64);
  EXPECT_EQ(flash_gpu_direct_split_keys(8192), 64);
  EXPECT_EQ(flash_gpu_direct_split_keys(16384), 64);
  EXPECT_EQ(flash_gpu_direct_split_keys(16385), 128);
  EXPECT_EQ(flash_gpu_direct_split_keys(32768), 128);
  EXPECT_EQ(flash_gpu_direct_split_keys(65536), 256);
  EXPECT_EQ(flash_gpu_direct_split_keys(int64_t{1} << 20), 4096);
}

// The flash pipeline of a result (attn_flash_*).
const PipelineRecord* flash_pipeline(const CaseResult& r) {
  const PipelineRecord* found = nullptr;
  for (const PipelineRecord& p : r.pipelines) {
    if (p.shader.rfind("attn_flash_", 0) != 0) continue;
    EXPECT_EQ(found, nullptr) << "a second flash pipeline: " << p.shader;
    found = &p;
  }
  return found;
}

// GPU decode with GQA (issue 45): the workgroup of a kv head's key split
// stages each K/V tile once for all G query heads (staged mode, G clusters),
// so K and V are read once per kv head, not once per query head as in the
// direct mode (a workgroup per query row); MHA keeps the direct mode.
TEST(AttnTuningGpu, GpuGqaDecodeSharesEachKvTileAmongTheGroupsHeads) {
  GpuContext& desktop = test::gpu_as("desktop-gpu");
  struct Shape {
    const char* heads;
    const char* kv_heads;
    const char* dim;
    bool shared;
  };
  for (const Shape& sh : {Shape{"8", "2", "64", true}, Shape{"8", "1", "128", true}, Shape{"6", "2", "48", true},
                          Shape{"4", "4", "64", false}}) {
    SCOPED_TRACE(fmt::format("H {} Hkv {} D {}", sh.heads, sh.kv_heads, sh.dim));
    const std::vector<CaseResult> rs = test::run_cases(
        "attn.nope",
        {{"impl", "flash"}, {"seq", "1"}, {"kv_seq", "1000"}, {"heads", sh.heads}, {"kv_heads", sh.kv_heads},
         {"dim", sh.dim}, {"dtype", "f32"}},
        {}, &desktop);
    ASSERT_EQ(rs.size(), 1u);
    const CaseResult& r = rs[0];
    ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
    EXPECT_TRUE(r.validation.ran && r.validation.passed);
    const PipelineRecord* flash = flash_pipeline(r);
    ASSERT_NE(flash, nullptr);
    const uint32_t group = static_cast<uint32_t>(std::stoi(sh.heads) / std::stoi(sh.kv_heads));
    const uint32_t kv_heads = static_cast<uint32_t>(std::stoi(sh.kv_heads));
    EXPECT_EQ(test::spec_constant(*flash, "DIRECT"), sh.shared ? 0u : 1u);
    const uint32_t rows_wg = flash->local_size[0] / *test::spec_constant(*flash, "LANES");
    if (sh.shared) {
      // One workgroup of rows per kv head and split, holding all G heads.
      EXPECT_EQ(flash->groups[0], 1u);
      EXPECT_GE(rows_wg, group);
      EXPECT_EQ(flash->groups[1], kv_heads);
      EXPECT_GT(flash->groups[2], 1u);  // split over the keys
    } else {
      EXPECT_EQ(flash->groups[0], group);  // a workgroup per query row
    }
  }
}

TEST(AttnTuningGpu, TimesEveryChoiceThenValidatesAndTimesTheFastest) {
  RunOptions tune;
  tune.tune = true;
  // XL: slots by head (ATTN_SLOTS_BY_HEAD) pad each head's rows to them.
  for (const char* variant : {"attn.tupe", "attn.xl"}) {
    SCOPED_TRACE(variant);
    const std::map<std::string, std::string> axes{{"impl", "flash"}, {"seq", "64"}, {"heads", "2"}, {"dim", "16"}};
    const CaseResult r = test::run_case(variant, axes, tune);
    ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
    EXPECT_TRUE(r.validation.ran && r.validation.passed);
    ASSERT_TRUE(r.tuning.has_value());
    const CaseResult::Tuning& t = *r.tuning;
    EXPECT_EQ(t.knob, "row_slots");
    const auto built = test::build_case(variant, axes);
    const auto& attn = dynamic_cast<const AttnCase&>(*built.impl);
    const std::vector<int64_t> choices =
        flash_cpu_slot_choices(attn.shape(), attn.flash_plan(), test::gpu().info().subgroup.size);
    ASSERT_GE(choices.size(), 2u);
    ASSERT_EQ(t.candidates.size(), choices.size());
    EXPECT_EQ(t.planned, choices.front());
    double best = 0;
    int64_t fastest = 0;
    for (size_t i = 0; i < choices.size(); ++i) {
      const auto& c = t.candidates[i];
      EXPECT_EQ(c.value, choices[i]);
      ASSERT_EQ(c.status, CaseStatus::kOk) << c.reason;
      EXPECT_GT(c.median_ns, 0);
      if (best == 0 || c.median_ns < best) {
        best = c.median_ns;
        fastest = c.value;
      }
    }
    // The fastest, unless it is within the margin of the planner's count.
    const double planned_ns = t.candidates.front().median_ns;
    EXPECT_EQ(t.chosen, best < planned_ns * (1 - CaseRun::kTuningMargin) ? fastest : t.planned)
        << "fastest " << fastest << " " << best << " ns, planned " << planned_ns << " ns";
    // Only the chosen plan was recorded, validated and timed.
    const PipelineRecord* flash = flash_pipeline(r);
    ASSERT_NE(flash, nullptr);
    EXPECT_EQ(test::spec_constant(*flash, "ROWS"), static_cast<uint32_t>(t.chosen));

    // Without --tune: the planner's count, no tuning record.
    const CaseResult plain = test::run_case(variant, axes);
    ASSERT_EQ(plain.status, CaseStatus::kOk) << plain.reason;
    EXPECT_FALSE(plain.tuning.has_value());
    ASSERT_NE(flash_pipeline(plain), nullptr);
    EXPECT_EQ(test::spec_constant(*flash_pipeline(plain), "ROWS"), static_cast<uint32_t>(t.planned));
  }
}

TEST(AttnTuningGpu, NothingToTuneWithoutACpuFlashKernel) {
  RunOptions tune;
  tune.tune = true;
  // Naive, a variant without choices, and the GPU plan (--emulate desktop-gpu).
  const CaseResult naive = test::run_case("attn.nope", {{"impl", "naive"}, {"seq", "100"}, {"dim", "32"}}, tune);
  ASSERT_EQ(naive.status, CaseStatus::kOk) << naive.reason;
  EXPECT_FALSE(naive.tuning.has_value());
  const CaseResult rope = test::run_case("rope.apply", {{"seq", "100"}, {"dim", "32"}}, tune);
  ASSERT_EQ(rope.status, CaseStatus::kOk) << rope.reason;
  EXPECT_FALSE(rope.tuning.has_value());
  const auto gpu_plan = test::run_cases("attn.nope", {{"impl", "flash"}, {"seq", "100"}, {"dim", "32"}}, tune,
                                        &test::gpu_as("desktop-gpu"));
  ASSERT_EQ(gpu_plan.size(), 1u);
  ASSERT_EQ(gpu_plan[0].status, CaseStatus::kOk) << gpu_plan[0].reason;
  EXPECT_FALSE(gpu_plan[0].tuning.has_value());
}

TEST(AttnTuningCli, TuneWritesEachCandidateAndRefusesCompileOnly) {
  const std::string dir = test::temp_dir("tune");
  const auto r = test::run_pebench({"run", "--tune", "--variant", "attn.tupe,rope.apply", "--impl", "flash,default",
                                    "--seq", "64", "--heads", "2", "--dim", "16", "--benchmark_min_time=0.01",
                                    "--out", dir + "/r.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("tuned row_slots="), std::string::npos) << r.out;
  std::ifstream in(dir + "/r.json");
  const auto rep = nlohmann::json::parse(in);
  EXPECT_EQ(rep["run"]["tune"], true);
  ASSERT_EQ(rep["results"].size(), 2u);
  for (const auto& c : rep["results"]) {
    ASSERT_EQ(c["status"], "ok") << c.dump();
    if (c["variant"] == "rope.apply") {
      EXPECT_FALSE(c.contains("tuning")) << c.dump();
      continue;
    }
    const auto& t = c["tuning"];
    EXPECT_EQ(t["knob"], "row_slots");
    ASSERT_GE(t["candidates"].size(), 2u) << t.dump();
    bool chosen_listed = false;
    for (const auto& cand : t["candidates"]) {
      EXPECT_EQ(cand["status"], "ok") << cand.dump();
      EXPECT_GT(cand["median_ns"].get<double>(), 0) << cand.dump();
      chosen_listed = chosen_listed || cand["value"] == t["chosen"];
    }
    EXPECT_TRUE(chosen_listed) << t.dump();
    EXPECT_EQ(t["candidates"][0]["value"], t["planned"]);
  }

  // The reader gives compare and the HTML report what the writer wrote.
  const ReportFile read = load_report(dir + "/r.json");
  EXPECT_TRUE(read.tuned);
  for (size_t i = 0; i < read.cases.size(); ++i) {
    const auto& c = read.cases[i];
    const auto& written = rep["results"][i];
    ASSERT_EQ(c.tuning.has_value(), written.contains("tuning")) << c.variant;
    if (!c.tuning) continue;
    EXPECT_EQ(c.tuning->knob, written["tuning"]["knob"]);
    EXPECT_EQ(c.tuning->planned, written["tuning"]["planned"]);
    EXPECT_EQ(c.tuning->chosen, written["tuning"]["chosen"]);
    ASSERT_EQ(c.tuning->candidates.size(), written["tuning"]["candidates"].size());
    for (size_t k = 0; k < c.tuning->candidates.size(); ++k) {
      EXPECT_EQ(c.tuning->candidates[k].value, written["tuning"]["candidates"][k]["value"]);
      EXPECT_EQ(*c.tuning->candidates[k].median_ns, written["tuning"]["candidates"][k]["median_ns"].get<double>());
    }
  }
  const std::string html = html_report({read});
  const auto section = html.substr(html.find("id=\"tuning\""));
  EXPECT_NE(section.find("<td>attn.tupe</td><td>flash</td>"), std::string::npos) << section;
  EXPECT_EQ(section.find("rope.apply"), std::string::npos) << section;

  const auto bad = test::run_pebench({"run", "--tune", "--compile-only", "--variant", "attn.nope", "--out",
                                      dir + "/bad.json"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--compile-only runs nothing, so it has nothing to --tune"), std::string::npos) << bad.out;
}

// --tune-from REPORT: a case REPORT tuned takes its choice without timing
// candidates; one whose choice the case no longer offers is timed anew.
TEST(AttnTuningCli, TuneFromTakesAnEarlierReportsChoices) {
  const std::string dir = test::temp_dir("tune_from");
  const std::vector<std::string> sweep = {"--variant", "attn.tupe,attn.xl", "--impl", "flash", "--seq", "64",
                                          "--heads", "2", "--dim", "16", "--benchmark_min_time=0.01"};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    args.insert(args.end(), sweep.begin(), sweep.end());
    return test::run_pebench(args);
  };
  const std::string first = dir + "/first.json";
  ASSERT_EQ(run({"--tune", "--out", first}).exit_code, 0);
  std::ifstream in(first);
  nlohmann::json tuned = nlohmann::json::parse(in);
  ASSERT_EQ(tuned["results"].size(), 2u);

  // Give the first case a value no case offers (the way a planner change
  // would): that case is timed, the other takes the report's value.
  tuned["results"][0]["tuning"]["chosen"] = 99;
  tuned["results"][0]["tuning"]["from"] = "older.json";
  const std::string edited = dir + "/edited.json";
  std::ofstream(edited) << tuned.dump();
  const std::string second = dir + "/second.json";
  const auto r = run({"--tune-from", edited, "--out", second});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(", from " + edited + ")"), std::string::npos) << r.out;
  const ReportFile out = load_report(second);
  EXPECT_TRUE(out.tuned);
  ASSERT_EQ(out.cases.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const auto& c = out.cases[i];
    ASSERT_TRUE(c.tuning) << c.variant;
    ASSERT_EQ(c.ok(), true) << c.reason;
    ASSERT_TRUE(c.validation && c.validation->passed) << c.variant;
    if (i == 0) {
      EXPECT_TRUE(c.tuning->from.empty()) << c.variant;  // 99 is no choice: timed
      EXPECT_GE(c.tuning->candidates.size(), 2u) << c.variant;
    } else {
      EXPECT_EQ(c.tuning->from, edited) << c.variant;
      EXPECT_TRUE(c.tuning->candidates.empty()) << c.variant;
      EXPECT_EQ(c.tuning->chosen, tuned["results"][1]["tuning"]["chosen"].get<int64_t>()) << c.variant;
    }
  }
  std::ifstream second_in(second);
  EXPECT_EQ(nlohmann::json::parse(second_in)["run"]["tune_from"], edited);
  const std::string html = html_report({out});
  EXPECT_NE(html.find("chosen in " + edited + " (--tune-from), not timed here"), std::string::npos);

  // Bad input: one line, exit 2, nothing run.
  const std::string untuned = dir + "/untuned.json";
  ASSERT_EQ(run({"--out", untuned}).exit_code, 0);
  struct Bad {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Bad& b : std::vector<Bad>{
           {{"--tune-from", untuned}, "--tune-from " + untuned + ": no case in it was tuned"},
           {{"--tune-from", dir + "/missing.json"}, dir + "/missing.json: cannot read"},
           {{"--tune-from", second, "--compile-only"}, "--compile-only runs nothing, so it has nothing to --tune-from"},
       }) {
    auto args = b.args;
    args.insert(args.end(), {"--out", dir + "/bad.json"});
    const auto bad = run(args);
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find(b.message), std::string::npos) << bad.out;
    EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '\n'), 1) << bad.out;
  }
}


// GPU decode (the direct plan): `run --tune` times the keys per split,
// kFlashDirectSplitKeys first, then each larger choice below the key count;
// every choice validates (taken one by one through --tune-from), and fewer
// splits keep the partials' scratch as it was (tensors do not change).
TEST(AttnTuningCli, GpuDecodeTunesKeysPerSplitAndEveryChoiceValidates) {
  const std::string dir = test::temp_dir("tune_split_keys");
  const std::vector<std::string> sweep = {"--emulate", "desktop-gpu", "--variant", "attn.nope,attn.rope,attn.xl",
                                          "--impl", "flash", "--seq", "1", "--kv-seq", "300", "--heads", "4",
                                          "--kv-heads", "2", "--dim", "32", "--dtype", "f32,f16",
                                          "--benchmark_min_time=0.001", "--no-peak"};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    args.insert(args.end(), sweep.begin(), sweep.end());
    return test::run_pebench(args);
  };
  const std::string first = dir + "/first.json";
  const auto r = run({"--tune", "--out", first});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(first);
  nlohmann::json tuned = nlohmann::json::parse(in);
  ASSERT_EQ(tuned["results"].size(), 6u);
  // The planner's (flash_gpu_direct_split_keys), then the others below kv_seq 300.
  const std::vector<int64_t> offered{kFlashDirectSplitKeys, 128, 256};
  for (const auto& c : tuned["results"]) {
    ASSERT_EQ(c["status"], "ok") << c.dump();
    ASSERT_TRUE(c.contains("tuning")) << c.dump();
    const auto& t = c["tuning"];
    EXPECT_EQ(t["knob"], "split_keys");
    EXPECT_EQ(t["planned"], kFlashDirectSplitKeys);
    ASSERT_EQ(t["candidates"].size(), offered.size()) << t.dump();
    for (size_t i = 0; i < offered.size(); ++i) {
      EXPECT_EQ(t["candidates"][i]["value"], offered[i]);
      EXPECT_EQ(t["candidates"][i]["status"], "ok") << t.dump();
    }
  }
  for (const int64_t keys : offered) {
    SCOPED_TRACE(keys);
    nlohmann::json forced = tuned;
    for (auto& c : forced["results"]) c["tuning"]["chosen"] = keys;
    const std::string edited = dir + "/forced-" + std::to_string(keys) + ".json";
    std::ofstream(edited) << forced.dump();
    const std::string out = dir + "/out-" + std::to_string(keys) + ".json";
    const auto f = run({"--tune-from", edited, "--out", out});
    ASSERT_EQ(f.exit_code, 0) << f.out;
    const ReportFile rep = load_report(out);
    ASSERT_EQ(rep.cases.size(), 6u);
    for (const auto& c : rep.cases) {
      ASSERT_TRUE(c.ok()) << c.variant << ": " << c.reason;
      ASSERT_TRUE(c.tuning) << c.variant;
      EXPECT_EQ(c.tuning->chosen, keys) << c.variant;
      ASSERT_TRUE(c.validation && c.validation->passed) << c.variant << " " << c.dtype;
    }
  }
}

}  // namespace
}  // namespace pebench
