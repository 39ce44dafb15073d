// Sweep expansion: precedence of axes, derived defaults, rejection and
// de-duplication (no GPU needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "harness/contract/errors.h"
#include "harness/contract/registry.h"
#include "harness/engine/presets.h"
#include "harness/engine/sweep.h"
#include "harness/engine/validate.h"

namespace pebench {
namespace {

std::vector<PlannedCase> expand(const std::string& variant, AxisSet axes, AxisSet preset = {}) {
  SweepSpec spec;
  spec.variant_globs = {variant};
  spec.axes = std::move(axes);
  spec.preset_axes = std::move(preset);
  return expand_sweep(Registry::instance(), spec);
}

TEST(Sweep, CrossProductOfAxesWithEveryParameterWrittenOut) {
  const auto cases = expand("abs.learned", {{"seq", {"8", "16", "32"}}, {"dtype", {"f32", "f16"}}});
  ASSERT_EQ(cases.size(), 6u);
  for (const auto& c : cases) {
    EXPECT_TRUE(c.rejected.empty());
    for (const char* k : {"batch", "seq", "d_model", "offset", "table_len", "dtype", "impl"}) {
      EXPECT_TRUE(c.params.has(k)) << k;
    }
    EXPECT_EQ(c.params.i("table_len"), c.params.i("offset") + c.params.i("seq"));  // derived default
    EXPECT_EQ(c.params.i("d_model"), 8 * 64);  // heads * dim defaults
  }
}

TEST(Sweep, DModelIsEveryHeadsTimesDimProduct) {
  const auto cases = expand("abs.learned", {{"heads", {"2", "4"}}, {"dim", {"32", "64"}}});
  std::set<int64_t> dims;
  for (const auto& c : cases) dims.insert(c.params.i("d_model"));
  EXPECT_EQ(dims, (std::set<int64_t>{64, 128, 256}));  // 2*64 == 4*32 appears once
  EXPECT_EQ(cases.size(), 3u);
}

TEST(Sweep, CommandLineBeatsPresetBeatsDefault) {
  auto cases = expand("rope.apply", {{"seq", {"5"}}}, {{"seq", {"9"}}, {"dim", {"16"}}});
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].params.i("seq"), 5);
  EXPECT_EQ(cases[0].params.i("dim"), 16);
  EXPECT_EQ(cases[0].params.i("heads"), 8);
  EXPECT_EQ(cases[0].params.i("rotary_dim"), 16);  // derived from dim
}

TEST(Sweep, RejectedCombinationsArePlannedAsSkippedWithTheReason) {
  const auto cases = expand("rope.apply", {{"dim", {"16", "64"}}, {"rotary_dim", {"32"}}});
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_NE(cases[0].rejected.find("rotary_dim=32 exceeds the head dim 16"), std::string::npos);
  EXPECT_TRUE(cases[1].rejected.empty());
}

TEST(Sweep, UnknownNamesAreUsageErrors) {
  EXPECT_THROW(expand("nothing.*", {}), UsageError);
  EXPECT_THROW(expand("abs.learned", {{"colour", {"red"}}}), UsageError);
  EXPECT_THROW(expand("abs.learned", {{"seq", {"1.5"}}}), UsageError);
  EXPECT_THROW(split_list("1,,2", "--seq"), UsageError);
  EXPECT_THROW(split_list("", "--seq"), UsageError);
  EXPECT_EQ(split_list(" 1, 2 ,3", "--seq"), (std::vector<std::string>{"1", "2", "3"}));
  // A preset key a variant lacks is ignored, not an error.
  EXPECT_NO_THROW(expand("abs.learned", {}, {{"causal", {"1"}}}));
}

TEST(Sweep, RepeatedValuesGiveOneCase) {
  EXPECT_EQ(expand("abs.learned", {{"seq", {"8", "8"}}}).size(), 1u);
}

TEST(Sweep, CaseIdsAreStableAndDistinct) {
  const auto cases = expand("abs.learned", {{"seq", {"8", "16"}}});
  const std::string a = case_id(0, *cases[0].variant, cases[0].params);
  EXPECT_EQ(a, case_id(0, *cases[0].variant, cases[0].params));
  EXPECT_NE(a, case_id(0, *cases[1].variant, cases[1].params));
  EXPECT_NE(a, case_id(1, *cases[0].variant, cases[0].params));
  EXPECT_EQ(a.rfind("d0-abs.learned-default-f32-", 0), 0u);
}

TEST(Sweep, EveryPresetExpandsWithoutErrors) {
  for (const auto& p : presets()) {
    SCOPED_TRACE(p.name);
    SweepSpec spec;
    spec.variant_globs = p.variants;
    spec.preset_axes = p.axes;
    spec.preset_overrides = p.overrides;
    EXPECT_FALSE(expand_preset_sweep(spec, &p).empty());
  }
  for (const char* name : {"quick", "standard", "llm", "mobile", "gpu"}) EXPECT_NE(find_preset(name), nullptr) << name;
}

namespace {

// The value of `key` in a planned case, as text.
std::string value_of(const PlannedCase& pc, const std::string& key) { return param_to_string(pc.params.get(key)); }

}  // namespace

// A preset of parts is the union of its sweeps: each part's shapes for its
// own variants only, each case once, the command line over every part.
TEST(Sweep, PresetPartsAreAUnionOfSweeps) {
  const Preset* gpu = find_preset("gpu");
  ASSERT_NE(gpu, nullptr);
  ASSERT_GE(gpu->parts.size(), 2u);
  const auto cases = expand_preset_sweep(SweepSpec{}, gpu);
  std::set<std::string> seen;
  size_t nope_8192 = 0, decode = 0;
  for (const auto& pc : cases) {
    EXPECT_TRUE(seen.insert(pc.variant->id() + "|" + pc.params.canonical()).second) << pc.params.canonical();
    const std::string id = pc.variant->id();
    if (id.rfind("attn.", 0) == 0) {
      EXPECT_EQ(value_of(pc, "impl"), "flash") << pc.params.canonical();
    }
    EXPECT_NE(id, "abs.floater");  // in no part
    if (id == "attn.nope" && value_of(pc, "seq") == "8192") ++nope_8192;
    if (value_of(pc, "seq") == "1") {
      ++decode;
      EXPECT_TRUE(id == "attn.nope" || id == "attn.rope") << id;  // decode's part names these two only
    }
    // 4096 is the overhead part's length: attention alone, never rope.apply.
    if (value_of(pc, "seq") == "4096") {
      EXPECT_EQ(id.rfind("attn.", 0), 0u) << id;
    }
  }
  EXPECT_EQ(nope_8192, 16u);  // MHA/GQA x D 64/128 x causal 0/1 x f32/f16
  EXPECT_EQ(decode, 8u);      // nope x 3 key lengths and rope x 1, x 2 dtypes
  // The command line narrows every part.
  SweepSpec f32;
  f32.axes["dtype"] = {"f32"};
  const auto narrowed = expand_preset_sweep(f32, gpu);
  EXPECT_FALSE(narrowed.empty());
  EXPECT_LT(narrowed.size(), cases.size());
  for (const auto& pc : narrowed) EXPECT_EQ(value_of(pc, "dtype"), "f32");
  // A key only some parts' variants have leaves the others out...
  SweepSpec kv;
  kv.axes["kv_seq"] = {"16384"};
  for (const auto& pc : expand_preset_sweep(kv, gpu)) EXPECT_EQ(pc.variant->family(), "attn");
  // ...and one that none has is the usual usage error.
  SweepSpec bad;
  bad.axes["no_such_key"] = {"1"};
  EXPECT_THROW(expand_preset_sweep(bad, gpu), UsageError);
}

TEST(Validation, SampleRowsIsDeterministicAndCoversTheEnds) {
  EXPECT_EQ(sample_rows(10, 1, 1e9).size(), 10u);
  const auto s = sample_rows(1000000, 1000, 1e6);
  EXPECT_EQ(s, sample_rows(1000000, 1000, 1e6));
  EXPECT_EQ(s.front(), 0);
  EXPECT_EQ(s.back(), 999999);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_GE(s.size(), 8u);
  EXPECT_LE(s.size(), 1000u);
}

TEST(Validation, MetricsFollowTheSpec) {
  TensorDesc y{"y", TensorRole::kOutput, DType::kF32, {2, 2}, ""};
  Reference ref({y});
  double* r0 = ref.row("y", 0);
  r0[0] = 1;
  r0[1] = -2;
  TensorMap out;
  out.emplace("y", HostTensor(y));
  out.at("y").set(0, 1.5);
  out.at("y").set(1, -2);
  const auto v = compare_outputs(ref, out, Tolerance{1e-6, 0, ""});
  EXPECT_DOUBLE_EQ(v.nmse, 0.25 / 5);
  EXPECT_DOUBLE_EQ(v.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(v.max_rel, 0.25);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.elements_checked, 2);  // row 1 was not computed, so not compared
  out.at("y").set(0, std::nan(""));
  const auto bad = compare_outputs(ref, out, Tolerance{1.0, 0, ""});
  EXPECT_FALSE(bad.passed);
  EXPECT_NE(bad.detail.find("non-finite"), std::string::npos);
}

}  // namespace
}  // namespace pebench
