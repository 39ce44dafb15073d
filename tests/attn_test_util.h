// Test plumbing shared by the attention variants' tests.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "suites/attn/attn_common.h"
#include "test_util.h"

namespace pebench::test {

// lavapipe's limits as the flash planner sees them (32 KiB shared memory,
// 1024 invocations, subgroup 8, shuffles).
inline const FlashDevice kLavapipe{32768, 1024, 8, true};

// One row's attention output for scalar values: softmax(s) . v.
inline double softmax_mean(const std::vector<double>& s, const std::vector<double>& v) {
  const double mx = *std::max_element(s.begin(), s.end());
  double num = 0, den = 0;
  for (size_t j = 0; j < s.size(); ++j) {
    const double w = std::exp(s[j] - mx);
    num += w * v[j];
    den += w;
  }
  return num / den;
}

// The shape `c` declares for its tensor `name` (empty: no such tensor).
inline std::vector<int64_t> tensor_shape(const Case& c, const std::string& name) {
  for (const TensorDesc& t : c.tensors()) {
    if (t.name == name) return t.shape;
  }
  return {};
}

// For each variant and shape (axes; heads 4 on kv_heads 2 and dim 64 unless
// the shape says otherwise), naive and flash fed the same inputs agree within
// 4x the f32 error model of the reference, over all their outputs.
inline void expect_naive_and_flash_agree(const std::vector<std::string>& variants,
                                         const std::vector<std::map<std::string, std::string>>& shapes) {
  const uint64_t before = instance().validation_error_count();
  for (const auto& variant : variants) {
    for (const auto& shape : shapes) {
      std::map<std::string, std::string> axes{{"heads", "4"}, {"kv_heads", "2"}, {"dim", "64"}};
      for (const auto& [k, v] : shape) axes[k] = v;
      axes["impl"] = "naive";
      const auto naive = build_case(variant, axes);
      axes["impl"] = "flash";
      const auto flash = build_case(variant, axes);
      SCOPED_TRACE(variant + " " + flash.params.canonical());
      EXPECT_LE(nmse(run_on_gpu(flash), run_on_gpu(naive)), 4 * naive.impl->tolerance().nmse);
    }
  }
  expect_no_validation_errors(before);
}

// The same q, k, v (and scale) through attn.nope and each variant, in both
// impls: the position terms must move o far beyond the variant's tolerance
// (random tables at their default scale).
inline void expect_differs_from_nope(const std::vector<std::string>& variants) {
  const uint64_t before = instance().validation_error_count();
  for (const auto& variant : variants) {
    for (const char* impl : {"naive", "flash"}) {
      std::map<std::string, std::string> axes{{"heads", "4"},    {"kv_heads", "2"}, {"seq", "40"},
                                              {"kv_seq", "200"}, {"dim", "32"},     {"impl", impl}};
      auto pos = build_case(variant, axes, 7);
      axes["scale"] = fmt::format("{:.17g}", pos.params.f("scale"));
      auto nope = build_case("attn.nope", axes, 7);
      for (const char* name : {"q", "k", "v"}) nope.tensors.at(name) = pos.tensors.at(name);
      SCOPED_TRACE(variant + " " + impl);
      const double diff = nmse(run_on_gpu(pos, "o"), run_on_gpu(nope, "o"));
      EXPECT_GT(diff, 1e4 * pos.impl->tolerance().nmse);
      EXPECT_GT(diff, 1e-3);
    }
  }
  expect_no_validation_errors(before);
}

// The known-answer case of tests/data/{kerple,fire,cope}_facts.py: B 1, H 2
// on Hkv 1, N 3, M 5, D 2; q [H][N][D], k and v [M][D] (the scripts' values).
inline void fill_facts_qkv(BuiltCase& c) {
  static const double q[2][3][2] = {{{0.5, -1.0}, {0.25, 0.75}, {-0.5, 0.5}}, {{1.0, 0.25}, {-0.75, -0.25}, {0.0, 1.0}}};
  static const double k[5][2] = {{1.0, 0.0}, {0.5, 0.5}, {-1.0, 0.25}, {0.0, -0.5}, {0.75, 1.0}};
  static const double v[5][2] = {{1.0, 2.0}, {-1.0, 0.5}, {0.25, -2.0}, {3.0, 1.0}, {-0.5, -1.5}};
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t d = 0; d < 2; ++d) c.tensors.at("q").set((h * 3 + i) * 2 + d, q[h][i][d]);
    }
  }
  for (int64_t j = 0; j < 5; ++j) {
    for (int64_t d = 0; d < 2; ++d) {
      c.tensors.at("k").set(j * 2 + d, k[j][d]);
      c.tensors.at("v").set(j * 2 + d, v[j][d]);
    }
  }
}

}  // namespace pebench::test
