// Every registered variant, every impl, both dtypes, on small shapes that
// include odd sizes, validated against its float64 reference on the test
// device. New variants are covered without editing this file.
#include <gtest/gtest.h>

#include <set>

#include "harness/contract/registry.h"
#include "harness/engine/sweep.h"
#include "test_util.h"

namespace pebench {
namespace {

class EveryVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryVariant, ValidatesInBothDtypesOnOddShapes) {
  const std::string id = GetParam();
  // Axes a variant lacks are dropped, so one axis set serves every family.
  const Variant* v = Registry::instance().find(id);
  ASSERT_NE(v, nullptr);
  std::map<std::string, std::string> axes{{"dtype", "f32,f16"}, {"batch", "2"}, {"seq", "1,37"},
                                          {"heads", "3"},       {"dim", "8,64"}};
  std::set<std::string> keys;
  for (const auto& s : all_params(*v)) keys.insert(s.key);
  if (keys.count("d_model")) axes["d_model"] = "6,24";
  if (keys.count("kv_seq")) axes["kv_seq"] = "37,50";
  if (keys.count("causal")) axes["causal"] = "0,1";
  if (keys.count("groups")) axes["groups"] = "2";  // the default 16 divides neither d_model
  for (auto it = axes.begin(); it != axes.end();) it = keys.count(it->first) ? std::next(it) : axes.erase(it);

  const auto results = test::run_cases(id, axes);
  std::set<std::string> validated;  // impl/dtype pairs that ran
  for (const auto& r : results) {
    SCOPED_TRACE(r.id + " " + r.label);
    if (r.status == CaseStatus::kSkipped) continue;  // a combination the variant rejects (e.g. kv_seq < seq)
    EXPECT_EQ(r.status, CaseStatus::kOk) << status_name(r.status) << ": " << r.reason;
    EXPECT_TRUE(r.validation.ran);
    EXPECT_TRUE(r.validation.passed) << r.validation.detail;
    EXPECT_EQ(r.vk_validation_errors, 0u);
    ASSERT_TRUE(r.time.has_value());
    EXPECT_GT(r.time->median, 0.0);
    EXPECT_GT(r.cost.bytes, 0.0);
    validated.insert(r.impl + "/" + r.dtype);
  }
  for (const auto& impl : v->impls()) {
    for (const char* dtype : {"f32", "f16"}) {
      EXPECT_TRUE(validated.count(impl + "/" + dtype)) << "no " << impl << " " << dtype << " case validated";
    }
  }
}

std::vector<std::string> variant_ids() {
  std::vector<std::string> ids;
  for (const Variant* v : Registry::instance().variants()) ids.push_back(v->id());
  return ids;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryVariant, ::testing::ValuesIn(variant_ids()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = (c == '.') ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace pebench
