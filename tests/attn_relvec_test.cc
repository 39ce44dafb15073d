// attn.shaw, attn.xl, attn.complex: the float64 reference against
// hand-computed known answers (Shaw's clip at +-K in both terms, XL's u and
// vb terms and rk row indexing, complex's |q.k| with zero imaginary parts
// and a two-element case without conjugate), parameter defaults and
// rejections, the cost model, the flash plan (llvmpipe's loop budget with
// the hooks' own loops, complex's two-part rows in registers and shared
// memory), and on the GPU: both impls x dtypes x causal on GQA, M != N and
// decode shapes, Shaw distances past K, key splits, naive and flash on the
// same inputs, and outputs that measurably differ from attn.nope's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "attn_test_util.h"
#include "harness/contract/registry.h"
#include "harness/engine/sweep.h"
#include "suites/attn/attn_common.h"
#include "test_util.h"

namespace pebench {
namespace {

using Axes = std::map<std::string, std::string>;
using test::expect_all_validate;
using test::nmse;
using test::softmax_mean;
using test::run_on_gpu;
using test::set_all;

// Row `row` of output `name` of a reference.
const std::vector<double>& ref_row(const Reference& ref, const std::string& name, int64_t row) {
  for (const auto& out : ref.outputs()) {
    if (out.desc.name == name) return out.rows.at(row);
  }
  ADD_FAILURE() << "no output " << name;
  static const std::vector<double> kNone;
  return kNone;
}


// Shaw's idx as encodings.md writes it: clip(j - i', -K, K) + K.
int64_t spec_shaw_idx(int64_t j, int64_t qpos, int64_t k) { return std::min(std::max(j - qpos, -k), k) + k; }

// ---- reference known answers (no GPU) ------------------------------------------

TEST(RelVecReference, ShawValueTermClipsAtK) {
  // q = 0: every visible key weighs the same; v = 0 and rel_v[idx] = (idx, 1)
  // make o = (mean idx over the visible keys, 1). K = 2, N = 3, M = 9: the
  // rows see j - i' from -8 to 2, clipped at both ends.
  for (const char* causal : {"0", "1"}) {
    SCOPED_TRACE(std::string("causal=") + causal);
    auto c = test::build_case("attn.shaw", {{"impl", "naive"},
                                            {"heads", "1"},
                                            {"seq", "3"},
                                            {"kv_seq", "9"},
                                            {"dim", "2"},
                                            {"max_rel", "2"},
                                            {"causal", causal}});
    set_all(c.tensors.at("q"), [](int64_t) { return 0.0; });
    set_all(c.tensors.at("v"), [](int64_t) { return 0.0; });
    set_all(c.tensors.at("rel_v"), [](int64_t e) { return e % 2 == 0 ? static_cast<double>(e / 2) : 1.0; });
    const Reference ref = c.reference();
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t qpos = i + 6, visible = causal[0] == '1' ? qpos + 1 : 9;
      double sum = 0;
      for (int64_t j = 0; j < visible; ++j) sum += static_cast<double>(spec_shaw_idx(j, qpos, 2));
      EXPECT_NEAR(ref_row(ref, "o", i)[0], sum / static_cast<double>(visible), 1e-12) << i;
      EXPECT_NEAR(ref_row(ref, "o", i)[1], 1.0, 1e-12) << i;
    }
    // By hand, row 0 (i' = 6): j - i' = -6..2 gives idx 0 0 0 0 0 1 2 3 4
    // (sum 10 over 9 keys); causal, j <= 6: 0 0 0 0 0 1 2 (sum 3 over 7).
    EXPECT_NEAR(ref_row(ref, "o", 0)[0], causal[0] == '1' ? 3.0 / 7 : 10.0 / 9, 1e-12);
  }
}

TEST(RelVecReference, ShawKeyAndValueTermsByHand) {
  // K = 1, D = 1, N = 1, M = 3 (i' = 2), scale 1: q = 1, k = 0, rel_k =
  // (0, 1, 0), so the scores are q.rel_k[idx] with idx = 0, 0, 1 (j - i' =
  // -2 clipped to -1, -1, 0): 0, 0, 1. v = (1, 2, 3), rel_v = (10, 20, 30):
  // o = (1 (1 + 10) + 1 (2 + 10) + e (3 + 20)) / (2 + e).
  auto c = test::build_case("attn.shaw", {{"impl", "flash"},
                                          {"heads", "1"},
                                          {"seq", "1"},
                                          {"kv_seq", "3"},
                                          {"dim", "1"},
                                          {"max_rel", "1"},
                                          {"scale", "1"}});
  set_all(c.tensors.at("q"), [](int64_t) { return 1.0; });
  set_all(c.tensors.at("k"), [](int64_t) { return 0.0; });
  set_all(c.tensors.at("rel_k"), [](int64_t e) { return e == 1 ? 1.0 : 0.0; });
  set_all(c.tensors.at("v"), [](int64_t j) { return static_cast<double>(j + 1); });
  set_all(c.tensors.at("rel_v"), [](int64_t e) { return 10.0 * static_cast<double>(e + 1); });
  const double e = std::exp(1.0);
  EXPECT_NEAR(ref_row(c.reference(), "o", 0)[0], (11 + 12 + e * 23) / (2 + e), 1e-12);
  // max_rel = 0: every key has idx 0, so only rel_k[0] = 0 and rel_v[0] = 10
  // count: uniform weights, o = mean(v) + 10.
  auto c0 = test::build_case("attn.shaw", {{"impl", "naive"},
                                           {"heads", "1"},
                                           {"seq", "1"},
                                           {"kv_seq", "3"},
                                           {"dim", "1"},
                                           {"max_rel", "0"},
                                           {"scale", "1"}});
  set_all(c0.tensors.at("q"), [](int64_t) { return 1.0; });
  set_all(c0.tensors.at("k"), [](int64_t) { return 0.0; });
  set_all(c0.tensors.at("rel_k"), [](int64_t) { return 0.0; });
  set_all(c0.tensors.at("v"), [](int64_t j) { return static_cast<double>(j + 1); });
  set_all(c0.tensors.at("rel_v"), [](int64_t) { return 10.0; });
  EXPECT_NEAR(ref_row(c0.reference(), "o", 0)[0], 12.0, 1e-12);
}

TEST(RelVecReference, XlContentAndPositionTermsWithUAndVb) {
  // H = 2 on one kv head, D = 1, N = 2, M = 3 (i' = i + 1), scale 1.
  // q_i = g(h, i), k_j = b(j), u_h = a(h), vb_h = c(h), rk[h, row] =
  // e(h, row): s = (g + a) b + (g + c) e(h, i' - j + N - 1) with row =
  // i - j + 2 in [0, 3] (4 = M+N-1 rows). v_j = j. Every value is exact in
  // f32.
  auto c = test::build_case("attn.xl", {{"impl", "naive"},
                                        {"heads", "2"},
                                        {"kv_heads", "1"},
                                        {"seq", "2"},
                                        {"kv_seq", "3"},
                                        {"dim", "1"},
                                        {"scale", "1"}});
  auto g = [](int64_t h, int64_t i) { return 0.25 * static_cast<double>(i + 1) - 0.5 * static_cast<double>(h); };
  auto b = [](int64_t j) { return 0.5 * static_cast<double>(j) - 0.25; };
  auto a = [](int64_t h) { return h == 0 ? 0.75 : -0.5; };
  auto cc = [](int64_t h) { return h == 0 ? -0.25 : 1.0; };
  auto e = [](int64_t h, int64_t row) { return 0.125 * static_cast<double>((row + 1) * (h + 1)) - 0.25; };
  set_all(c.tensors.at("q"), [&](int64_t x) { return g(x / 2, x % 2); });
  set_all(c.tensors.at("k"), [&](int64_t j) { return b(j); });
  set_all(c.tensors.at("v"), [](int64_t j) { return static_cast<double>(j); });
  set_all(c.tensors.at("u"), [&](int64_t h) { return a(h); });
  set_all(c.tensors.at("vb"), [&](int64_t h) { return cc(h); });
  set_all(c.tensors.at("rk"), [&](int64_t x) { return e(x / 4, x % 4); });
  const Reference ref = c.reference();
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < 2; ++i) {
      std::vector<double> s, v;
      for (int64_t j = 0; j < 3; ++j) {
        s.push_back((g(h, i) + a(h)) * b(j) + (g(h, i) + cc(h)) * e(h, i - j + 2));
        v.push_back(static_cast<double>(j));
      }
      EXPECT_NEAR(ref_row(ref, "o", h * 2 + i)[0], softmax_mean(s, v), 1e-12) << "h=" << h << " i=" << i;
    }
  }
  // By hand, h = 0, i = 1 (i' = 2): g = 0.5, g + a = 1.25, g + c = 0.25;
  // rows 3, 2, 1 for j = 0, 1, 2: e = 0.25, 0.125, 0; b = -0.25, 0.25, 0.75:
  // s = -0.25, 0.34375, 0.9375.
  const double s0 = -0.25, s1 = 0.34375, s2 = 0.9375;
  EXPECT_NEAR(ref_row(ref, "o", 1)[0], (std::exp(s1) + 2 * std::exp(s2)) / (std::exp(s0) + std::exp(s1) + std::exp(s2)),
              1e-12);
}

TEST(RelVecReference, XlRkIsBoundedAndVariesWithTheDistance) {
  // The suite's rk: |rk| <= 1 (the error model's assumption), rows differ
  // (a projected sinusoid of r, not a constant), and the heads differ.
  auto c =
      test::build_case("attn.xl", {{"impl", "flash"}, {"heads", "2"}, {"seq", "5"}, {"kv_seq", "9"}, {"dim", "8"}});
  const HostTensor& rk = c.tensors.at("rk");
  ASSERT_EQ(rk.numel(), 2 * 13 * 8);
  double peak = 0, row_diff = 0, head_diff = 0;
  for (int64_t x = 0; x < rk.numel(); ++x) peak = std::max(peak, std::fabs(rk.get(x)));
  for (int64_t c8 = 0; c8 < 8; ++c8) {
    row_diff = std::max(row_diff, std::fabs(rk.get(c8) - rk.get(8 + c8)));
    head_diff = std::max(head_diff, std::fabs(rk.get(c8) - rk.get(13 * 8 + c8)));
  }
  EXPECT_LE(peak, 1.0);
  EXPECT_GT(peak, 0.05);
  EXPECT_GT(row_diff, 1e-3);
  EXPECT_GT(head_diff, 1e-3);
}

TEST(RelVecReference, ComplexWithZeroImaginaryPartsScoresByAbsQK) {
  // qi = ki = 0: re = q.k, im = 0, so s = scale |q.k|; o = p.v, oi = p.vi.
  auto c = test::build_case("attn.complex", {{"impl", "naive"},
                                             {"heads", "2"},
                                             {"kv_heads", "1"},
                                             {"seq", "3"},
                                             {"kv_seq", "5"},
                                             {"dim", "4"},
                                             {"causal", "1"}});
  set_all(c.tensors.at("qi"), [](int64_t) { return 0.0; });
  set_all(c.tensors.at("ki"), [](int64_t) { return 0.0; });
  const HostTensor &q = c.tensors.at("q"), &k = c.tensors.at("k"), &v = c.tensors.at("v"), &vi = c.tensors.at("vi");
  const double scale = 1 / std::sqrt(8.0);
  EXPECT_DOUBLE_EQ(c.params.f("scale"), scale);
  const Reference ref = c.reference();
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t qpos = i + 2;
      for (int64_t d = 0; d < 4; ++d) {
        std::vector<double> s, vr, vm;
        for (int64_t j = 0; j <= qpos; ++j) {  // causal
          double dot = 0;
          for (int64_t x = 0; x < 4; ++x) dot += q.get((h * 3 + i) * 4 + x) * k.get(j * 4 + x);
          s.push_back(scale * std::fabs(dot));
          vr.push_back(v.get(j * 4 + d));
          vm.push_back(vi.get(j * 4 + d));
        }
        EXPECT_NEAR(ref_row(ref, "o", h * 3 + i)[static_cast<size_t>(d)], softmax_mean(s, vr), 1e-12);
        EXPECT_NEAR(ref_row(ref, "oi", h * 3 + i)[static_cast<size_t>(d)], softmax_mean(s, vm), 1e-12);
      }
    }
  }
}

TEST(RelVecReference, ComplexTwoElementsByHandWithoutConjugate) {
  // D = 2, N = 1, M = 2, scale 1. q = (1, 2), qi = (0.5, -1).
  // Key 0: k = (2, 0), ki = (1, 1): re = q.k - qi.ki = 2 - (0.5 - 1) = 2.5,
  //   im = q.ki + qi.k = 3 + 1 = 4: s0 = sqrt(22.25).
  // Key 1: k = (0, 1), ki = (0, 0): re = 2, im = -1: s1 = sqrt(5).
  // (With a conjugate, re = q.k + qi.ki, im = q.ki - qi.k, key 0 would give
  // sqrt(1.5^2 + 2^2) = 2.5.) v = (1, 0), (0, 1); vi = (3, 0), (0, -3):
  // o = (p0, p1), oi = (3 p0, -3 p1).
  auto c = test::build_case(
      "attn.complex", {{"impl", "flash"}, {"heads", "1"}, {"seq", "1"}, {"kv_seq", "2"}, {"dim", "2"}, {"scale", "1"}});
  const std::vector<double> q{1, 2}, qi{0.5, -1}, k{2, 0, 0, 1}, ki{1, 1, 0, 0}, v{1, 0, 0, 1}, vi{3, 0, 0, -3};
  set_all(c.tensors.at("q"), [&](int64_t x) { return q[static_cast<size_t>(x)]; });
  set_all(c.tensors.at("qi"), [&](int64_t x) { return qi[static_cast<size_t>(x)]; });
  set_all(c.tensors.at("k"), [&](int64_t x) { return k[static_cast<size_t>(x)]; });
  set_all(c.tensors.at("ki"), [&](int64_t x) { return ki[static_cast<size_t>(x)]; });
  set_all(c.tensors.at("v"), [&](int64_t x) { return v[static_cast<size_t>(x)]; });
  set_all(c.tensors.at("vi"), [&](int64_t x) { return vi[static_cast<size_t>(x)]; });
  const double w0 = std::exp(std::sqrt(22.25)), w1 = std::exp(std::sqrt(5.0));
  const double p0 = w0 / (w0 + w1), p1 = w1 / (w0 + w1);
  const Reference ref = c.reference();
  EXPECT_NEAR(ref_row(ref, "o", 0)[0], p0, 1e-12);
  EXPECT_NEAR(ref_row(ref, "o", 0)[1], p1, 1e-12);
  EXPECT_NEAR(ref_row(ref, "oi", 0)[0], 3 * p0, 1e-12);
  EXPECT_NEAR(ref_row(ref, "oi", 0)[1], -3 * p1, 1e-12);
}

// ---- parameters and cost ----------------------------------------------------------

std::vector<int64_t> shape_of(const test::BuiltCase& c, const std::string& name) {
  return test::tensor_shape(*c.impl, name);
}

TEST(RelVecParams, DefaultsTensorsAndTheScaleWrittenOut) {
  auto shaw = test::build_case("attn.shaw", {{"impl", "flash"}, {"heads", "4"}, {"dim", "48"}, {"seq", "5"}});
  EXPECT_EQ(shaw.params.i("max_rel"), 16);
  EXPECT_DOUBLE_EQ(shaw.params.f("scale"), 1 / std::sqrt(48.0));
  EXPECT_EQ(shape_of(shaw, "rel_k"), (std::vector<int64_t>{33, 48}));
  EXPECT_EQ(shape_of(shaw, "rel_v"), (std::vector<int64_t>{33, 48}));
  auto xl =
      test::build_case("attn.xl", {{"impl", "naive"}, {"heads", "4"}, {"dim", "16"}, {"seq", "5"}, {"kv_seq", "12"}});
  EXPECT_DOUBLE_EQ(xl.params.f("scale"), 0.25);
  EXPECT_EQ(shape_of(xl, "rk"), (std::vector<int64_t>{4, 16, 16}));  // [H, M+N-1, D]
  EXPECT_EQ(shape_of(xl, "u"), (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(shape_of(xl, "vb"), (std::vector<int64_t>{4, 16}));
  auto cx = test::build_case(
      "attn.complex",
      {{"impl", "flash"}, {"heads", "4"}, {"kv_heads", "2"}, {"dim", "32"}, {"seq", "5"}, {"kv_seq", "7"}});
  EXPECT_DOUBLE_EQ(cx.params.f("scale"), 0.125);  // 1/sqrt(2D)
  EXPECT_EQ(shape_of(cx, "qi"), (std::vector<int64_t>{1, 4, 5, 32}));
  EXPECT_EQ(shape_of(cx, "ki"), (std::vector<int64_t>{1, 2, 7, 32}));
  EXPECT_EQ(shape_of(cx, "vi"), (std::vector<int64_t>{1, 2, 7, 32}));
  EXPECT_EQ(shape_of(cx, "oi"), (std::vector<int64_t>{1, 4, 5, 32}));
  std::vector<std::string> outputs;
  for (const auto& t : cx.impl->tensors()) {
    if (t.role == TensorRole::kOutput) outputs.push_back(t.name);
  }
  EXPECT_EQ(outputs, (std::vector<std::string>{"o", "oi"}));
}

TEST(RelVecCost, CountsEachTermWhereItIsCheapest) {
  // N = M = 3, H = 1, D = 2, not causal: 9 scores; attention 4 * 9 * 2 = 72.
  const Axes axes{{"impl", "naive"}, {"heads", "1"}, {"seq", "3"}, {"dim", "2"}};
  // Shaw, K = 1: the rows reach idx {1, 2}, {0, 1, 2}, {0, 1} (7 in all),
  // q.rel_k and W rel_v once each, D multiply-adds: 2 * 2 * 2 * 7 = 56; per
  // score two adds: 18.
  Axes shaw_axes = axes;
  shaw_axes["max_rel"] = "1";
  EXPECT_DOUBLE_EQ(test::build_case("attn.shaw", shaw_axes).impl->cost().flops, 72.0 + 56 + 18);
  // XL: (q + vb).rk per score (2 * 9 * 2) and q + u, q + vb per row (2 * 3 * 2).
  auto xl = test::build_case("attn.xl", axes);
  EXPECT_DOUBLE_EQ(xl.impl->cost().flops, 72.0 + 36 + 12);
  // bytes: q, k, v, o (6 floats each), rk [1, 5, 2], u and vb [1, 2].
  EXPECT_DOUBLE_EQ(xl.impl->cost().bytes, 4.0 * (4 * 6 + 10 + 2 + 2));
  // Complex: three more dots and the second P.V (4 D) and re^2 + im^2 (2) per
  // score, 2 flops per multiply-add: (8 * 2 + 4) * 9 = 180; 8 tensors of 6.
  auto cx = test::build_case("attn.complex", axes);
  EXPECT_DOUBLE_EQ(cx.impl->cost().flops, 72.0 + 180);
  EXPECT_DOUBLE_EQ(cx.impl->cost().bytes, 4.0 * 8 * 6);
}

// ---- the flash plan ----------------------------------------------------------------

using test::kLavapipe;

TEST(RelVecFlashPlan, StaysUnderLlvmpipesLoopBudgetWithTheHookLoops) {
  // Shaw adds two rolled loops over up to 2K+1 idx per invocation, XL the
  // ROWS - 1 priming steps of its queues: counted by the case's own hook
  // loops, at long prefill, long decode and long keys for few rows.
  for (const char* variant : {"attn.shaw", "attn.xl", "attn.complex"}) {
    for (const char* dim : {"32", "64", "128", "256"}) {
      for (const Axes& shape : {Axes{{"seq", "4096"}}, Axes{{"seq", "1"}, {"kv_seq", "16384"}},
                                Axes{{"seq", "64"}, {"kv_seq", "65536"}, {"heads", "2"}}}) {
        Axes axes = shape;
        axes["impl"] = "flash";
        axes["dim"] = dim;
        if (std::string(variant) == "attn.shaw") axes["max_rel"] = "64";
        const auto p = test::plan_one(variant, axes);
        ASSERT_EQ(p.rejected, "");
        const auto c = p.variant->make(p.params);
        const auto& a = dynamic_cast<const AttnCase&>(*c);
        SCOPED_TRACE(std::string(variant) + " " + p.params.canonical());
        const FlashTiles t = flash_tiles(a.shape(), a.flash_plan(), kLavapipe);
        EXPECT_LE(flash_loop_iterations(a.flash_plan(), t, a.hook_loops()), kFlashLoopBudget);
        if (std::string(variant) == "attn.shaw") {
          EXPECT_GE(a.hook_loops().per_invocation, 2u * 129);
        }
      }
    }
  }
}

TEST(RelVecFlashPlan, ComplexRowsHoldBothPartsInRegistersAndSharedMemory) {
  // Two parts per row: row slots x chunks of both parts within the CPU
  // register budget (half attn.nope's slots where those are not capped at
  // 8), and K/V tiles of both parts within shared memory.
  for (const char* dim : {"32", "64", "128", "256"}) {
    SCOPED_TRACE(std::string("dim=") + dim);
    auto cx = test::build_case("attn.complex", {{"impl", "flash"}, {"seq", "512"}, {"dim", dim}});
    auto nope = test::build_case("attn.nope", {{"impl", "flash"}, {"seq", "512"}, {"dim", dim}});
    const auto& a = dynamic_cast<const AttnCase&>(*cx.impl);
    const auto& b = dynamic_cast<const AttnCase&>(*nope.impl);
    EXPECT_EQ(a.flash_plan().parts, 2);
    const FlashTiles t = flash_tiles(a.shape(), a.flash_plan(), kLavapipe);
    const FlashTiles tn = flash_tiles(b.shape(), b.flash_plan(), kLavapipe);
    EXPECT_LT(a.shape().score_work(), kFlashCpuLargeWork);  // the cheap-compile budget
    EXPECT_LE(t.row_slots * 2 * t.d4, static_cast<uint32_t>(kFlashCpuRowChunks));
    EXPECT_EQ(t.row_slots, std::clamp<uint32_t>(static_cast<uint32_t>(kFlashCpuRowChunks) / (2 * t.d4), 1, 8));
    if (tn.row_slots < 8) {
      EXPECT_EQ(t.row_slots, std::max(1u, tn.row_slots / 2));
    }
    EXPECT_LE(2ull * t.keys * 2 * t.d4 * 16, 32768u);
  }
}

TEST(RelVecFlashPlan, LargeCasesGetTheLargerCpuRowBudget) {
  // At 2^30 q.k multiply-adds and more, CPU plans of one part a row hold up
  // to kFlashCpuRowChunksLarge chunks per invocation: D 128 gets 8 slots (4
  // below it). complex (two parts) keeps kFlashCpuRowChunks: 4 slots at D 64.
  const auto slots = [](const char* variant, const char* seq, const char* dim) {
    auto c = test::build_case(variant, {{"impl", "flash"}, {"seq", seq}, {"heads", "8"}, {"dim", dim}});
    const auto& a = dynamic_cast<const AttnCase&>(*c.impl);
    const FlashTiles t = flash_tiles(a.shape(), a.flash_plan(), kLavapipe);
    EXPECT_LE(t.row_slots * t.parts * t.d4,
              static_cast<uint32_t>(a.shape().score_work() >= kFlashCpuLargeWork && t.parts == 1
                                        ? kFlashCpuRowChunksLarge
                                        : kFlashCpuRowChunks));
    return t.row_slots;
  };
  EXPECT_EQ(slots("attn.complex", "512", "64"), 4u);
  EXPECT_EQ(slots("attn.complex", "2048", "64"), 4u);
  EXPECT_EQ(slots("attn.complex", "1024", "128"), 2u);
  EXPECT_EQ(slots("attn.nope", "2048", "64"), 8u);
  EXPECT_EQ(slots("attn.nope", "512", "128"), 4u);
  EXPECT_EQ(slots("attn.nope", "1024", "128"), 8u);
  EXPECT_EQ(slots("attn.deberta", "1024", "128"), 8u);
  EXPECT_EQ(slots("attn.nope", "1024", "256"), 4u);
}

// ---- GPU: validation against the float64 reference ------------------------------

// Both impls, both dtypes, causal and not, GQA (8 heads on 2), on M != N
// (37 x 50: no tile multiple, Shaw distances to 49 past K = 16) and decode
// over 700 keys (key splits and attn_combine, both outputs for complex).
const Axes kRelVecMatrix{{"impl", "naive,flash"}, {"dtype", "f32,f16"}, {"causal", "0,1"},
                   {"heads", "8"},          {"kv_heads", "2"},    {"dim", "64"}};

class RelVecGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(RelVecGpu, ValidatesOnGqaMNotNAndDecode) {
  for (const Axes& shape : {Axes{{"seq", "37"}, {"kv_seq", "50"}}, Axes{{"seq", "1"}, {"kv_seq", "700"}}}) {
    Axes axes = kRelVecMatrix;
    axes.insert(shape.begin(), shape.end());
    expect_all_validate(GetParam(), axes, 2 * 2 * 2);
  }
  // 3 heads per kv head, an odd head dim (scalar path), rows that fill
  // neither an invocation's slots (XL: padded per head) nor a workgroup, in
  // both flash modes (5 x 3 = 15 rows: direct; 13 x 3: staged).
  expect_all_validate(GetParam(),
                      {{"impl", "naive,flash"},
                       {"dtype", "f32"},
                       {"heads", "6"},
                       {"kv_heads", "2"},
                       {"seq", "5,13"},
                       {"kv_seq", "90"},
                       {"dim", "6"},
                       {"causal", "0,1"}},
                      8);
}

INSTANTIATE_TEST_SUITE_P(Variants, RelVecGpu, ::testing::Values("attn.shaw", "attn.xl", "attn.complex"),
                         [](const auto& info) { return info.param.substr(5); });

TEST(RelVecGpuShaw, DistancesPastKAndSmallAndLargeK) {
  // N = M = 100: |j - i'| up to 99, far past K in both directions; K = 0
  // (one idx for every key), 3, and flash's largest, 64.
  expect_all_validate("attn.shaw",
                      {{"impl", "naive,flash"},
                       {"dtype", "f32"},
                       {"heads", "2"},
                       {"seq", "100"},
                       {"dim", "16"},
                       {"causal", "0,1"},
                       {"max_rel", "0,3,64"}},
                      12);
}

TEST(RelVecGpuShaw, FarRangesValidate) {
  // N = 300 rows in workgroups of up to 128: keys K or more before or after
  // every row of a workgroup are folded in far ranges (ATTN_FAR_SCORE_TERM,
  // ATTN_KEY_FOLDED's far: q.rel_k and the weight sum of the clipped distance);
  // K = 0 (every key clipped, the two sides' sums meet at one idx), 3, 40;
  // GQA, M > N. A key on the wrong side, or a far range one key too wide,
  // weighs the wrong rel_v row.
  expect_all_validate("attn.shaw",
                      {{"impl", "flash"},
                       {"dtype", "f32"},
                       {"heads", "4"},
                       {"kv_heads", "2"},
                       {"seq", "300"},
                       {"kv_seq", "300,333"},
                       {"dim", "16"},
                       {"causal", "0,1"},
                       {"max_rel", "0,3,40"}},
                      12);
}

TEST(RelVecGpu, LongUnsplitKeyRangesValidate) {
  // Enough rows that keys are split only for llvmpipe's loop budget, so an
  // invocation walks a long key range: XL's per-slot queue loops, left rolled
  // by llvmpipe, once cut this short silently (H 8, N 2048, D 64 wrong). Its
  // queue shift is now unrolled, so XL declares no per-key loops and these
  // 2048 keys are one range.
  for (const std::string variant : {"attn.shaw", "attn.xl", "attn.complex"}) {
    const Axes axes{{"impl", "flash"}, {"dtype", "f32"},   {"heads", "8"},
                    {"seq", "1024"},   {"kv_seq", "2048"}, {"dim", "32"}};
    auto c = test::build_case(variant, axes);
    const auto& plan = dynamic_cast<const AttnCase&>(*c.impl).flash_plan();
    EXPECT_GE(plan.keys_per_split, 1024);
    if (variant == "attn.xl") {
      EXPECT_EQ(plan.splits, 1);
    }
    expect_all_validate(variant, axes, 1);
  }
}

// The flash shaders the one XL case of `axes` ran on `ctx` (default: gpu()).
std::vector<std::string> xl_flash_shaders(const Axes& axes, GpuContext* ctx = nullptr) {
  const auto results = test::run_cases("attn.xl", axes, {}, ctx);
  EXPECT_EQ(results.size(), 1u);
  std::vector<std::string> names;
  for (const CaseResult& r : results) {
    EXPECT_EQ(r.status, CaseStatus::kOk) << r.reason;
    for (const PipelineRecord& p : r.pipelines) {
      if (p.shader.rfind("attn_flash_", 0) == 0) names.push_back(p.shader);
    }
  }
  return names;
}

TEST(RelVecGpu, XlCpuKernelReadsRkAsTexelsWhereTheDeviceAllows) {
  // lavapipe binds rk (H 4 x 86 distances x D 64: 5504 vec4 texels) as a
  // storage texel buffer: the CPU kernel's texel build, staged (37 x 50) and
  // direct (decode). A head dim that is no multiple of 4 (rows are not whole
  // texels), and a CPU device whose texel buffers hold fewer texels than rk,
  // run the storage-buffer build; all of them validate.
  using Shaders = std::vector<std::string>;
  const Axes staged{{"impl", "flash"}, {"heads", "4"}, {"seq", "37"}, {"kv_seq", "50"}, {"dim", "64"}};
  EXPECT_EQ(xl_flash_shaders(staged), Shaders{"attn_flash_xl_texel"});
  Axes odd = staged;
  odd["dim"] = "6";
  EXPECT_EQ(xl_flash_shaders(odd), Shaders{"attn_flash_xl"});
  Axes both = staged;
  both["dtype"] = "f32,f16";
  both["causal"] = "0,1";
  expect_all_validate("attn.xl", both, 4);
  Axes decode = both;
  decode["seq"] = "1";
  decode["kv_seq"] = "700";
  expect_all_validate("attn.xl", decode, 4);
  EXPECT_EQ(xl_flash_shaders({{"impl", "flash"}, {"seq", "1"}, {"kv_seq", "700"}}),
            Shaders{"attn_flash_xl_texel"});

  DeviceProfile small = load_profile("desktop-gpu");
  small.name = "desktop-gpu as a CPU with 4096-texel buffers";
  small.type = VK_PHYSICAL_DEVICE_TYPE_CPU;
  small.limits["maxTexelBufferElements"] = {4096};
  GpuContext& ctx = test::gpu_as(small);
  EXPECT_EQ(xl_flash_shaders(staged, &ctx), Shaders{"attn_flash_xl"});
  Axes shorter = staged;
  shorter["seq"] = "20";  // 4 x 56 x 16 = 3584 texels
  shorter["kv_seq"] = "37";
  EXPECT_EQ(xl_flash_shaders(shorter, &ctx), Shaders{"attn_flash_xl_texel"});
  expect_all_validate("attn.xl", both, 4, {}, &ctx);
}

TEST(RelVecGpu, LongKeysWithSplits) {
  // A staged prefill over 4k keys split for parallelism (Shaw: only the
  // splits near the diagonal reach idx > 0; XL: queues primed per split),
  // and decode over 4k keys in f16 (64 direct splits).
  for (const char* variant : {"attn.shaw", "attn.xl", "attn.complex"}) {
    auto c = test::build_case(variant,
                              {{"impl", "flash"}, {"heads", "2"}, {"seq", "64"}, {"kv_seq", "4096"}, {"dim", "32"}});
    const auto& a = dynamic_cast<const AttnCase&>(*c.impl);
    ASSERT_GT(a.flash_plan().splits, 1);
    ASSERT_FALSE(a.flash_plan().direct);
    expect_all_validate(variant,
                        {{"impl", "flash"},
                         {"dtype", "f32"},
                         {"heads", "2"},
                         {"seq", "64"},
                         {"kv_seq", "4096"},
                         {"dim", "32"},
                         {"causal", "0,1"}},
                        2);
    expect_all_validate(variant,
                        {{"impl", "flash"},
                         {"dtype", "f16"},
                         {"heads", "4"},
                         {"kv_heads", "1"},
                         {"seq", "1"},
                         {"kv_seq", "4096"},
                         {"dim", "32"},
                         {"causal", "1"}},
                        1);
  }
}

// ---- GPU: the same inputs through two cases ----------------------------------------

TEST(RelVecGpu, NaiveAndFlashAgreeOnTheSameInputs) {
  test::expect_naive_and_flash_agree(
      {"attn.shaw", "attn.xl", "attn.complex"},
      {{{"seq", "45"}, {"kv_seq", "300"}, {"causal", "1"}}, {{"seq", "3"}, {"kv_seq", "300"}, {"causal", "0"}}});
}

TEST(RelVecGpu, ThePositionTermsChangeTheOutputVersusNope) {
  // Complex: the score |q.k| of the complex rows moves o.
  test::expect_differs_from_nope({"attn.shaw", "attn.xl", "attn.complex"});
}

TEST(RelVecGpu, ComplexImaginaryOutputFollowsVi) {
  // vi = v: oi must equal o (the same weights on the same values), and
  // vi = -v: oi = -o; any mix-up of the parts (k for ki, v for vi, a
  // swapped store) breaks one of them.
  const uint64_t before = test::instance().validation_error_count();
  for (const char* impl : {"naive", "flash"}) {
    for (const char* seq : {"1", "40"}) {
      SCOPED_TRACE(std::string(impl) + " seq=" + seq);
      auto c = test::build_case("attn.complex", {{"impl", impl},
                                                 {"heads", "4"},
                                                 {"kv_heads", "2"},
                                                 {"seq", seq},
                                                 {"kv_seq", "300"},
                                                 {"dim", "32"},
                                                 {"causal", "1"}});
      for (const double sign : {1.0, -1.0}) {
        const HostTensor& v = c.tensors.at("v");
        set_all(c.tensors.at("vi"), [&](int64_t e) { return sign * v.get(e); });
        const std::vector<double> out = run_on_gpu(c);
        const size_t half = out.size() / 2;
        double o2 = 0, diff2 = 0;
        for (size_t e = 0; e < half; ++e) {
          o2 += out[e] * out[e];
          diff2 += (out[half + e] - sign * out[e]) * (out[half + e] - sign * out[e]);
        }
        EXPECT_GT(o2, 0.0);
        EXPECT_LE(diff2, 1e-12 * o2) << "sign " << sign;
      }
    }
  }
  test::expect_no_validation_errors(before);
}

// ---- bad parameters ------------------------------------------------------------

TEST(RelVecRejects, BadParametersFailCleanlyWithTheirValue) {
  struct Bad {
    std::string variant;
    Axes axes;
    std::string reason_has;
  };
  std::vector<Bad> bad{
      {"attn.shaw", {{"max_rel", "-1"}}, "max_rel=-1"},
      {"attn.shaw", {{"max_rel", "65"}, {"impl", "flash"}}, "max_rel=65"},  // flash's register tables
      {"attn.xl", {{"heads", "3"}, {"dim", "3"}}, "heads*dim=9"},           // rk's sinusoid needs d even
  };
  for (const char* variant : {"attn.shaw", "attn.xl", "attn.complex"}) {
    bad.push_back({variant, {{"seq", "50"}, {"kv_seq", "40"}}, "kv_seq=40"});
    bad.push_back({variant, {{"heads", "6"}, {"kv_heads", "4"}}, "kv_heads=4"});
    bad.push_back({variant, {{"dim", "512"}, {"impl", "flash"}}, "dim=512"});
  }
  for (const auto& b : bad) {
    SCOPED_TRACE(b.variant + " " + b.reason_has);
    // Without an impl axis both impls are swept: each is skipped alone.
    const auto results = test::run_cases(b.variant, b.axes);
    ASSERT_EQ(results.size(), b.axes.count("impl") ? 1u : 2u);
    for (const auto& r : results) {
      EXPECT_EQ(r.status, CaseStatus::kSkipped) << r.label;
      EXPECT_NE(r.reason.find(b.reason_has), std::string::npos) << r.reason;
    }
  }
  // Naive has no cap on max_rel (beyond 2^20).
  EXPECT_EQ(test::plan_one("attn.shaw", {{"impl", "naive"}, {"max_rel", "65"}, {"seq", "8"}}).rejected, "");
  // From the command line: the reason, naming the value.
  const auto out = test::run_pebench({"run", "--variant", "attn.shaw", "--param", "max_rel=-3", "--seq", "8", "--out",
                                      test::temp_dir("relvec-bad") + "/r.json", "--quiet"});
  EXPECT_NE(out.out.find("max_rel=-3"), std::string::npos) << out.out;
}

}  // namespace
}  // namespace pebench
