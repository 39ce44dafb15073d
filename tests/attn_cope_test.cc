// attn.cope (encodings.md section 3): the float64 reference against the
// known answers of tests/data/cope_facts.py (computed from the spec alone:
// GQA, N != M, clamped and interpolated positions, causal and not,
// cope_nodiv true and false), the spec's constraints one by one (the clamp
// at npos - 1, interpolation, the suffix sum's end causal and not), and
// validation of the kernels in both dtypes, causal and not, MHA/GQA,
// N != M and decode.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attn_test_util.h"
#include "harness/contract/registry.h"
#include "harness/engine/presets.h"
#include "suites/attn/attn_common.h"
#include "test_util.h"

namespace pebench::cope_test {  // names of its own: the unity build compiles test files together
namespace {

using Axes = std::map<std::string, std::string>;

// The impls attn.cope offers (a kernel it lacks is not advertised).
std::vector<std::string> cope_impls() { return Registry::instance().find("attn.cope")->impls(); }
std::string joined_impls() {
  std::string s;
  for (const std::string& i : cope_impls()) s += (s.empty() ? "" : ",") + i;
  return s;
}

// tests/data/cope_facts.py's case: B 1, H 2, Hkv 1, N 3, M 5, D 2, npos 3.
const std::vector<std::vector<double>> kPos{{0.5, -0.25}, {-1.0, 0.75}, {0.25, 1.5}};

// Printed by `python3 tests/data/cope_facts.py`: o [h][i][c] for
// (causal, cope_nodiv).
const std::map<std::pair<bool, bool>, std::vector<double>> kO{
    {{true, true},
     {0.154860340010331, -0.063185965254513796, 0.41124959155854962, 0.84349765322554782, 0.55051337622699803,
      -0.31580655735635815, 0.4595335466547929, 1.0743920884060276, 0.86793697173296747, -0.53914919034925435,
      0.11802406843986588, 0.052336097252232545}},
    {{true, false},
     {0.17723482503464563, 0.18965226359726392, 0.42962841025801751, 0.72714700246514363, 0.50576939625346651,
      -0.33464957170294041, 0.37869395210647283, 1.0344660939005501, 0.87722769121768496, -0.43447111145834039,
      0.13453209881247741, -0.048395867492343134}},
    {{false, true},
     {0.69945915970264505, 0.07536954561106958, 0.14301729025855764, 0.24174785649678393, 0.55051337622699803,
      -0.31580655735635815, 0.20232300607386822, 0.72866461918780356, 1.1094019315182064, -0.31382183676552833,
      0.11802406843986588, 0.052336097252232545}},
    {{false, false},
     {0.79706969367506864, 0.23179562102771895, 0.16638572694272172, 0.13175287930400956, 0.50576939625346651,
      -0.33464957170294041, 0.23058450951286116, 0.59582456325448785, 0.98894251279579559, -0.33459758294206587,
      0.13453209881247741, -0.048395867492343134}}};

test::BuiltCase facts_case(const std::string& impl, bool causal, bool nodiv, const std::string& dtype = "f32") {
  auto c = test::build_case("attn.cope", {{"impl", impl},
                                          {"dtype", dtype},
                                          {"heads", "2"},
                                          {"kv_heads", "1"},
                                          {"seq", "3"},
                                          {"kv_seq", "5"},
                                          {"dim", "2"},
                                          {"npos", "3"},
                                          {"causal", causal ? "1" : "0"},
                                          {"cope_nodiv", nodiv ? "1" : "0"}});
  test::fill_facts_qkv(c);
  for (int64_t t = 0; t < 3; ++t) {
    for (int64_t d = 0; d < 2; ++d) c.tensors.at("pos_emb").set(t * 2 + d, kPos[t][d]);
  }
  return c;
}

std::vector<double> reference_o(const test::BuiltCase& c) {
  const Reference ref = c.reference();
  std::vector<double> o;
  const auto& rows = ref.outputs().at(0).rows;
  for (int64_t r = 0; r < static_cast<int64_t>(rows.size()); ++r) {
    const std::vector<double>& row = rows.at(r);
    o.insert(o.end(), row.begin(), row.end());
  }
  return o;
}

TEST(CopeReference, MatchesTheFloat64KnownAnswers) {
  for (const auto& [key, want] : kO) {
    SCOPED_TRACE(testing::Message() << "causal " << key.first << " cope_nodiv " << key.second);
    const std::vector<double> o = reference_o(facts_case("naive", key.first, key.second));
    ASSERT_EQ(o.size(), want.size());
    for (size_t e = 0; e < o.size(); ++e) EXPECT_NEAR(o[e], want[e], 1e-14) << "element " << e;
  }
}

// One head, q = (1, q1) in every row and pos_emb[t] = (t, 0): q.pos_emb[t] = t,
// so interpolation between integer positions gives e = p exactly, and the
// score is scale q.k + p_ij with p_ij formed here from the gates directly.
struct LinearCase {
  bool causal;
  int64_t npos;
};
std::vector<double> linear_expected(const test::BuiltCase& c, const LinearCase& lc) {
  const int64_t N = c.params.i("seq"), M = c.params.i("kv_seq");
  const double scale = c.params.f("scale");
  const HostTensor &q = c.tensors.at("q"), &k = c.tensors.at("k"), &v = c.tensors.at("v");
  std::vector<double> out;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t qpos = i + M - N, last = lc.causal ? qpos : M - 1;
    std::vector<double> s(static_cast<size_t>(last + 1));
    double sum = 0;
    for (int64_t j = last; j >= 0; --j) {
      const double qk = scale * (q.get(i * 2) * k.get(j * 2) + q.get(i * 2 + 1) * k.get(j * 2 + 1));
      sum += 1 / (1 + std::exp(-qk));
      s[static_cast<size_t>(j)] = qk + std::min(sum, static_cast<double>(lc.npos - 1));
    }
    for (int64_t d = 0; d < 2; ++d) {
      std::vector<double> vd;
      for (int64_t j = 0; j <= last; ++j) vd.push_back(v.get(j * 2 + d));
      out.push_back(test::softmax_mean(s, vd));
    }
  }
  return out;
}

test::BuiltCase linear_case(const LinearCase& lc) {
  auto c = test::build_case("attn.cope", {{"impl", "naive"},
                                          {"heads", "1"},
                                          {"seq", "3"},
                                          {"kv_seq", "7"},
                                          {"dim", "2"},
                                          {"npos", std::to_string(lc.npos)},
                                          {"causal", lc.causal ? "1" : "0"}});
  for (int64_t i = 0; i < 3; ++i) c.tensors.at("q").set(i * 2, 1.0);
  for (int64_t t = 0; t < lc.npos; ++t) {
    c.tensors.at("pos_emb").set(t * 2, static_cast<double>(t));
    c.tensors.at("pos_emb").set(t * 2 + 1, 0.0);
  }
  return c;
}

TEST(CopeReference, InterpolatesBetweenIntegerPositionsAndClampsAtNposMinusOne) {
  // npos 3: most rows' sums pass 2 and clamp; npos 16: no sum of at most 7
  // gates reaches 15, so every position interpolates. Causal rows sum to
  // i', non-causal rows to the last key.
  for (const LinearCase lc : {LinearCase{true, 3}, LinearCase{false, 3}, LinearCase{true, 16}, LinearCase{false, 16}}) {
    SCOPED_TRACE(testing::Message() << "causal " << lc.causal << " npos " << lc.npos);
    const auto c = linear_case(lc);
    const std::vector<double> o = reference_o(c), want = linear_expected(c, lc);
    ASSERT_EQ(o.size(), want.size());
    for (size_t e = 0; e < o.size(); ++e) EXPECT_NEAR(o[e], want[e], 1e-13) << "element " << e;
  }
}

TEST(CopeReference, NposOneIsOneShiftPerRowSoNopesOutput) {
  // npos 1: every position clamps to 0, e = q.pos_emb[0] for every key of a
  // row, which the softmax cancels (cope_nodiv): attn.nope's output.
  Axes axes{{"impl", "naive"}, {"heads", "4"}, {"kv_heads", "2"}, {"seq", "5"}, {"kv_seq", "9"}, {"dim", "8"}};
  for (const char* causal : {"0", "1"}) {
    axes["causal"] = causal;
    axes["npos"] = "1";
    const auto cope = test::build_case("attn.cope", axes, 3);
    axes.erase("npos");
    auto nope = test::build_case("attn.nope", axes, 3);
    for (const char* name : {"q", "k", "v"}) nope.tensors.at(name) = cope.tensors.at(name);
    const std::vector<double> a = reference_o(cope), b = reference_o(nope);
    for (size_t e = 0; e < a.size(); ++e) EXPECT_NEAR(a[e], b[e], 1e-13) << "causal " << causal << " element " << e;
  }
}

TEST(CopeReference, CostCountsTheGatesAndThePrepass) {
  const auto c = test::make_case("attn.cope", {{"impl", "naive"}, {"seq", "64"}, {"dim", "16"}, {"heads", "2"}});
  const auto n = test::make_case("attn.nope", {{"impl", "naive"}, {"seq", "64"}, {"dim", "16"}, {"heads", "2"},
                                               {"causal", "1"}});
  // 12 flops a score (2 H N M / 2 = 4096 scores) and 2 D npos a query row (128 rows).
  EXPECT_DOUBLE_EQ(c->cost().flops - n->cost().flops, 12.0 * 4096 + 2.0 * 16 * 64 * 128);
}

TEST(CopeParams, DefaultsAndBadValuesSkippedWithTheirValue) {
  const auto c = test::build_case("attn.cope", {{"impl", "naive"}, {"seq", "4"}, {"dim", "16"}});
  EXPECT_TRUE(c.params.b("causal"));
  EXPECT_TRUE(c.params.b("cope_nodiv"));
  EXPECT_EQ(c.params.i("npos"), 64);
  EXPECT_EQ(test::tensor_shape(*c.impl, "pos_emb"), (std::vector<int64_t>{64, 16}));
  for (int64_t e = 0; e < 64 * 16; ++e) EXPECT_LE(std::fabs(c.tensors.at("pos_emb").get(e)), 0.25);
  const std::vector<std::pair<Axes, std::string>> bad{{{{"npos", "0"}}, "npos=0"},
                                                      {{{"npos", "70000"}}, "npos=70000"},
                                                      {{{"window", "4"}}, "window=4"},
                                                      {{{"chunk", "4"}}, "chunk=4"},
                                                      {{{"sink_tokens", "2"}}, "sink_tokens=2"}};
  for (const auto& [axes, reason] : bad) {
    Axes a = axes;
    a["seq"] = "8";
    const auto results = test::run_cases("attn.cope", a);
    ASSERT_FALSE(results.empty()) << reason;
    for (const CaseResult& r : results) {
      EXPECT_EQ(r.status, CaseStatus::kSkipped) << reason;
      EXPECT_NE(r.reason.find(reason), std::string::npos) << r.reason;
    }
  }
}

TEST(CopeGpu, KernelsMatchTheKnownAnswers) {
  const uint64_t before = test::instance().validation_error_count();
  for (const auto& [key, want] : kO) {
    for (const std::string& impl : cope_impls()) {
      for (const char* dtype : {"f32", "f16"}) {
        SCOPED_TRACE(testing::Message() << impl << " " << dtype << " causal " << key.first << " nodiv "
                                        << key.second);
        const std::vector<double> o = test::run_on_gpu(facts_case(impl, key.first, key.second, dtype), "o");
        ASSERT_EQ(o.size(), want.size());
        const double tol = std::string(dtype) == "f16" ? 2e-3 : 2e-6;
        for (size_t e = 0; e < o.size(); ++e) EXPECT_NEAR(o[e], want[e], tol) << "element " << e;
      }
    }
  }
  test::expect_no_validation_errors(before);
}

TEST(CopeGpu, ValidatesCausalAndNotPrefillDecodeAndNNotM) {
  // GQA 4:2 prefill 37 x 50 (npos 8: most rows clamp; staged flash) in both
  // dtypes and MHA decode 1 x 300 (direct flash, one key split) in f32
  // (KernelsMatchTheKnownAnswers runs decode-sized rows in f16), each causal
  // and not, both impls. D 16: the CPU flash pipelines compile in seconds.
  for (const Axes& shape : {Axes{{"seq", "37"}, {"kv_seq", "50"}, {"kv_heads", "2"}, {"npos", "8"}},
                            Axes{{"seq", "1"}, {"kv_seq", "300"}, {"kv_heads", "4"}, {"dtype", "f32"}}}) {
    Axes axes{{"impl", joined_impls()}, {"dtype", "f32,f16"}, {"heads", "4"}, {"dim", "16"}, {"causal", "0,1"}};
    for (const auto& [k, v] : shape) axes[k] = v;
    test::expect_all_validate("attn.cope", axes, (shape.count("dtype") ? 2 : 4) * cope_impls().size());
  }
}

TEST(CopeGpu, SoftcapCapsTheContentScoreNotTheGates) {
  // encodings.md: CoPE takes softcap and sink_logits; the gates read the
  // uncapped scale q.k, e_ij is added after the cap. The naive score pass
  // leaves its scores uncapped and the row pass caps them (a capped score
  // pass gave the gates capped scores: nmse 2e-3). Both plans.
  Axes axes{{"impl", joined_impls()}, {"dtype", "f32"},  {"heads", "4"},      {"kv_heads", "2"},
            {"dim", "16"},            {"seq", "37"},     {"kv_seq", "50"},    {"causal", "0,1"},
            {"softcap", "0.5"},       {"sink_logits", "true"}};
  test::expect_all_validate("attn.cope", axes, 2 * cope_impls().size());
  axes["impl"] = "flash";
  axes["causal"] = "1";
  test::expect_all_validate("attn.cope", axes, 1, {}, &test::gpu_as("desktop-gpu"));
}

TEST(CopeFlashPlan, EveryRowsKeysInOneSplit) {
  // The suffix sums run over a row's keys in one pass (last to first), so
  // no shape splits the keys: decode and few query groups would otherwise
  // (flash-decoding), and the planner keeps the loop budget.
  for (const Axes& shape : {Axes{{"seq", "1"}, {"kv_seq", "4096"}}, Axes{{"seq", "64"}, {"kv_seq", "4096"}},
                            Axes{{"seq", "2048"}}}) {
    Axes axes = shape;
    axes["impl"] = "flash";
    axes["dim"] = "64";
    const auto c = test::make_case("attn.cope", axes);
    const auto& a = dynamic_cast<const AttnCase&>(*c);
    EXPECT_EQ(a.flash_plan().splits, 1) << shape.at("seq");
    EXPECT_EQ(a.flash_plan().scratch_splits, 1) << shape.at("seq");
    const FlashTiles t = flash_tiles(a.shape(), a.flash_plan(), test::kLavapipe);
    EXPECT_LE(flash_loop_iterations(a.flash_plan(), t, a.hook_loops()), kFlashLoopBudget) << shape.at("seq");
  }
}

TEST(CopeGpu, GpuPlanValidatesUnderDesktopGpu) {
  // The GPU kernel (groups of four keys from the last down), staged and
  // direct, both dtypes, causal and not.
  for (const Axes& shape : {Axes{{"seq", "37"}, {"kv_seq", "50"}}, Axes{{"seq", "1"}, {"kv_seq", "300"}}}) {
    Axes axes{{"impl", "flash"}, {"dtype", "f32,f16"}, {"heads", "8"}, {"kv_heads", "2"}, {"causal", "0,1"}};
    axes.insert(shape.begin(), shape.end());
    test::expect_all_validate("attn.cope", axes, 4, {}, &test::gpu_as("desktop-gpu"));
  }
}

TEST(CopeGpu, NaiveAndFlashAgreeOnTheSameInputs) {
  test::expect_naive_and_flash_agree({"attn.cope"},
                                     {Axes{{"seq", "45"}, {"kv_seq", "130"}, {"causal", "0"}, {"dim", "16"}}});
}

// quick holds attn.cope in three cases: f32 naive and flash and f16 naive,
// GQA 4:2, 128 queries against 512 keys, causal (one flash pipeline:
// each costs seconds to compile on llvmpipe).
TEST(CopeQuick, QuickCoversCopeInThreeCases) {
  std::multiset<std::string> seen;
  for (const auto& pc : expand_preset_sweep(SweepSpec{}, find_preset("quick"))) {
    if (pc.variant->id() != "attn.cope") continue;
    const Params& p = pc.params;
    seen.insert(p.impl() + " " + dtype_name(p.dtype()) + " H" + std::to_string(p.i("heads")) + ":" +
                std::to_string(p.i("kv_heads")) + " N" + std::to_string(p.i("seq")) + " M" +
                std::to_string(p.i("kv_seq")) + (p.b("causal") ? " causal" : ""));
  }
  EXPECT_EQ(seen, (std::multiset<std::string>{"naive f32 H4:2 N128 M512 causal", "flash f32 H4:2 N128 M512 causal",
                                              "naive f16 H4:2 N128 M512 causal"}));
}

}  // namespace
}  // namespace pebench::cope_test
