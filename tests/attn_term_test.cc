// Attention variants as AttnCase plus terms (suites/attn/attn_term.h): the
// reference terms compose, a case sums what its terms add, and the terms'
// spec constants reach the pipelines under the shaders' names.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "suites/attn/attn_common.h"
#include "suites/attn/attn_term.h"
#include "test_util.h"

namespace pebench {
namespace {

TEST(AttnTerms, ReferenceTermsComposeInOrder) {
  AttnRefTerms terms;
  terms.add_q([](int64_t, int64_t, double* q) { q[0] *= 2; });
  terms.add_q([](int64_t, int64_t, double* q) { q[0] += 1; });
  double q = 1;
  terms.q(0, 0, &q);
  EXPECT_EQ(q, 3.0);  // (1 * 2) + 1: the first term's transform first
  EXPECT_FALSE(terms.k);

  terms.add_score([](int64_t h, int64_t, int64_t, const double*, const double*) { return 0.5 + h; });
  terms.add_score([](int64_t, int64_t qpos, int64_t kpos, const double*, const double*) {
    return static_cast<double>(qpos - kpos);
  });
  EXPECT_EQ(terms.score(2, 7, 3, nullptr, nullptr), 2.5 + 4.0);

  terms.add_value([](int64_t, int64_t, int64_t, double w, double* acc) { acc[0] += w; });
  terms.add_value([](int64_t, int64_t, int64_t, double w, double* acc) { acc[0] += 10 * w; });
  double acc = 0;
  terms.value(0, 0, 0, 0.5, &acc);
  EXPECT_EQ(acc, 5.5);
}

TEST(AttnTerms, HookLoopsAdd) {
  FlashHookLoops a;
  a.per_row = 1;
  a.per_key = 2;
  FlashHookLoops b;
  b.per_key = 3;
  b.per_invocation = 4;
  a += b;
  EXPECT_EQ(a.per_row, 1u);
  EXPECT_EQ(a.per_key, 5u);
  EXPECT_EQ(a.per_invocation, 4u);
  EXPECT_EQ(a.per_chunk, 0u);
}

// attn.tupe is the T5 bias and the untied term: tensors, cost and error
// model are the sums of both terms', in that order.
TEST(AttnTerms, TupeIsTheT5BiasThenTheUntiedTerm) {
  const std::map<std::string, std::string> axes{{"impl", "flash"}, {"seq", "64"}, {"heads", "2"}, {"dim", "16"}};
  const auto tupe = test::make_case("attn.tupe", axes);
  const auto nope = test::make_case("attn.nope", axes);
  std::vector<std::string> names;
  for (const TensorDesc& t : tupe->tensors()) names.push_back(t.name);
  const auto at = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  for (const char* n : {"bias_table", "t5_thresholds", "rel_bias", "pq", "pk"}) {
    EXPECT_LT(at(n), static_cast<long>(names.size())) << n;
  }
  EXPECT_LT(at("rel_bias"), at("pq"));
  EXPECT_LT(at("pq"), at("pk"));

  const double scores = 2.0 * 64 * 64, D = 16;
  // The untied dot (D multiply-adds) and adding it, then adding the bias.
  EXPECT_DOUBLE_EQ(tupe->cost().flops - nope->cost().flops, (2 * D + 1) * scores + scores);

  const std::string model = tupe->tolerance().model;
  EXPECT_NE(model.find("(bias sum"), std::string::npos) << model;
  EXPECT_NE(model.find("(untied dot"), std::string::npos) << model;
  EXPECT_LT(model.find("(bias sum"), model.find("(untied dot")) << model;
}

// Each term's spec constants arrive at the ids the shader declares them at,
// under its names (the pipeline checks the names against the SPIR-V).
TEST(AttnTermConstants, ReachThePipelinesByName) {
  struct Want {
    std::string variant, impl, shader, constant;
    uint32_t value;
  };
  const std::vector<Want> wants{
      {"attn.tupe", "flash", "attn_flash_tupe", "GROUP", 2},
      {"attn.shaw", "naive", "attn_scores_shaw", "SHAW_K", 16},
      {"attn.shaw", "naive", "attn_pv_shaw", "SHAW_K", 16},
      // lavapipe: tables (attn_deberta.cc), read as texels (the texel build)
      {"attn.deberta", "flash", "attn_flash_deberta_texel", "DEB_C2P_TABLE", 1},
  };
  for (const Want& w : wants) {
    const CaseResult r = test::run_case(
        w.variant, {{"impl", w.impl}, {"seq", "16"}, {"heads", "4"}, {"kv_heads", "2"}, {"dim", "16"}});
    ASSERT_EQ(r.status, CaseStatus::kOk) << w.variant << ": " << r.reason;
    bool found = false;
    for (const PipelineRecord& p : r.pipelines) {
      found = found || (p.shader == w.shader && test::spec_constant(p, w.constant) == w.value);
    }
    EXPECT_TRUE(found) << w.variant << " " << w.impl << ": " << w.shader << " without " << w.constant << " = "
                       << w.value;
  }
}

}  // namespace
}  // namespace pebench
