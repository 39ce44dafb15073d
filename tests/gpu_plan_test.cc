// The planner's GPU branches, validated on the test device: every variant
// runs under --emulate desktop-gpu (a discrete GPU's limits: one row per
// flash invocation, GPU tiles, GPU grid sizes) while lavapipe executes and
// checks it. Attention covers both impls and dtypes, causal, GQA, M != N and
// decode (direct mode with key splits).
#include <gtest/gtest.h>

#include "harness/contract/registry.h"
#include "test_util.h"

namespace pebench {
namespace {

GpuContext& desktop() { return test::gpu_as("desktop-gpu"); }

// desktop-gpu without subgroup shuffles (basic, vote and arithmetic only):
// the GPU flash kernel reduces its split dots through shared memory instead
// (the attn_flash_gpusm_* builds).
GpuContext& desktop_without_shuffles() {
  DeviceProfile profile = load_profile("desktop-gpu");
  profile.name = "desktop-gpu without shuffles";
  profile.subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT |
                                VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  return test::gpu_as(profile);
}

std::vector<std::string> variant_ids(const std::string& family) {
  std::vector<std::string> out;
  for (const Variant* v : Registry::instance().variants()) {
    if (v->family() == family) out.push_back(v->id());
  }
  return out;
}

// Every case ran and validated, or was rejected for its parameters.
void expect_validated(const std::vector<CaseResult>& results) {
  size_t ran = 0;
  for (const auto& r : results) {
    SCOPED_TRACE(r.variant + " " + r.impl + " " + r.dtype + " " + r.label);
    if (r.status == CaseStatus::kSkipped) continue;
    ++ran;
    EXPECT_EQ(r.status, CaseStatus::kOk) << status_name(r.status) << ": " << r.reason;
    EXPECT_TRUE(r.validation.ran && r.validation.passed) << r.validation.detail;
    EXPECT_EQ(r.vk_validation_errors, 0u);
  }
  EXPECT_GT(ran, 0u);
}

class AttnGpuPlan : public ::testing::TestWithParam<std::string> {};

TEST_P(AttnGpuPlan, ValidatesWithGqaCausalAndKvLongerThanQueries) {
  const auto results = test::run_cases(GetParam(), {{"impl", "naive,flash"}, {"dtype", "f32,f16"}, {"causal", "0,1"},
                                                    {"heads", "4"}, {"kv_heads", "2"}, {"seq", "24"},
                                                    {"kv_seq", "40"}, {"dim", "32"}},
                                       {}, &desktop());
  EXPECT_EQ(results.size(), 8u);
  expect_validated(results);
}

TEST_P(AttnGpuPlan, ValidatesDecodeWithKeySplits) {
  const auto results = test::run_cases(GetParam(), {{"impl", "flash"}, {"dtype", "f32,f16"}, {"heads", "4"},
                                                    {"kv_heads", "1"}, {"seq", "1"}, {"kv_seq", "200"},
                                                    {"dim", "64"}},
                                       {}, &desktop());
  expect_validated(results);
}

// The shared-memory reduction: staged (several rows per workgroup) and
// decode, and every case really ran the gpusm build.
TEST_P(AttnGpuPlan, ValidatesWithSharedMemoryReductionWithoutShuffles) {
  auto results = test::run_cases(GetParam(), {{"impl", "flash"}, {"dtype", "f32,f16"}, {"causal", "0,1"},
                                              {"heads", "4"}, {"kv_heads", "2"}, {"seq", "24"}, {"kv_seq", "40"},
                                              {"dim", "32"}},
                                 {}, &desktop_without_shuffles());
  const auto decode = test::run_cases(GetParam(), {{"impl", "flash"}, {"dtype", "f32"}, {"heads", "4"},
                                                   {"kv_heads", "1"}, {"seq", "1"}, {"kv_seq", "200"}, {"dim", "64"}},
                                      {}, &desktop_without_shuffles());
  results.insert(results.end(), decode.begin(), decode.end());
  expect_validated(results);
  for (const auto& r : results) {
    if (r.status != CaseStatus::kOk) continue;
    bool gpusm = false;
    for (const auto& p : r.pipelines) gpusm = gpusm || p.shader.rfind("attn_flash_gpusm_", 0) == 0;
    EXPECT_TRUE(gpusm) << r.dtype << " " << r.label << ": no attn_flash_gpusm_ pipeline ran";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryAttentionVariant, AttnGpuPlan, ::testing::ValuesIn(variant_ids("attn")),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '.' ? '_' : c;
                           return name;
                         });

TEST(GpuPlan, EveryInputSideVariantValidates) {
  for (const std::string family : {"abs", "rope"}) {
    for (const auto& id : variant_ids(family)) {
      expect_validated(test::run_cases(id, {{"dtype", "f32,f16"}, {"seq", "64"}, {"heads", "2"}, {"dim", "16"}}, {},
                                       &desktop()));
    }
  }
}

TEST(GpuPlan, DiffersFromTheCpuPlan) {
  const std::map<std::string, std::string> axes = {{"impl", "flash"}, {"seq", "64"}, {"heads", "4"}, {"dim", "32"}};
  const CaseResult cpu = test::run_case("attn.nope", axes);
  const auto gpu = test::run_cases("attn.nope", axes, {}, &desktop());
  ASSERT_EQ(cpu.status, CaseStatus::kOk) << cpu.reason;
  ASSERT_EQ(gpu.size(), 1u);
  ASSERT_EQ(gpu[0].status, CaseStatus::kOk) << gpu[0].reason;
  ASSERT_FALSE(cpu.pipelines.empty());
  ASSERT_FALSE(gpu[0].pipelines.empty());
  EXPECT_FALSE(cpu.pipelines.front() == gpu[0].pipelines.front())
      << "the desktop-gpu plan built the same flash pipeline and grid as lavapipe's own plan";
}

}  // namespace
}  // namespace pebench
