// `pebench peak` and the roofline model: the peak kernels do the work they
// are credited with (a broken copy or a short FMA chain would inflate the
// roofs), measure_peak gives plausible roofs, and roofline() picks the bound
// and the fraction the model defines. No assertion here is about speed.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/engine/peak.h"
#include "harness/output/roofline.h"
#include "test_util.h"

namespace pebench {
namespace {

TEST(Roofline, MemoryBoundCaseIsItsBytesOverTheCopyBandwidth) {
  const Roofs roofs{10.0, 100.0, std::nullopt};  // 10 GB/s, 100 GFLOP/s: ridge at 10 flops per byte
  const Cost cost{1e6, 2e6};                     // 2 flops per byte: under the ridge
  const auto r = roofline(cost, 2e5, roofs);     // the model allows 1e5 ns; the case took 2e5
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->bound, "memory");
  EXPECT_DOUBLE_EQ(r->model_ns, 1e5);
  EXPECT_DOUBLE_EQ(r->fraction, 0.5);
}

TEST(Roofline, ComputeBoundCaseIsItsFlopsOverTheFmaThroughput) {
  const Roofs roofs{10.0, 100.0, 50.0};
  const Cost cost{1e6, 1e8};  // 100 flops per byte: past the ridge
  const auto r = roofline(cost, 4e6, roofs);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->bound, "compute");
  EXPECT_DOUBLE_EQ(r->model_ns, 1e6);
  EXPECT_DOUBLE_EQ(r->fraction, 0.25);
}

TEST(Roofline, AbsentWithoutRoofsOrTime) {
  EXPECT_FALSE(roofline({1e6, 0}, 0, {10, 100, std::nullopt}).has_value());
  EXPECT_FALSE(roofline({1e6, 0}, 1e5, {0, 100, std::nullopt}).has_value());
  EXPECT_FALSE(roofline({1e6, 0}, 1e5, {10, 0, std::nullopt}).has_value());
}

TEST(PeakKernels, CopyMovesEveryVec4InEveryConfiguration) {
  // An odd number of vec4s, so no configuration divides it evenly.
  std::vector<float> src(4 * 10007);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f - 3.0f;
  for (const auto& [unroll, items] : {std::pair<uint32_t, uint32_t>{1, 1}, {4, 4}, {4, 16}, {16, 16}}) {
    SCOPED_TRACE(::testing::Message() << "unroll " << unroll << ", vec4s per invocation " << items);
    const auto out = peak_copy_output(test::gpu(), src, unroll, items);
    ASSERT_EQ(out.size(), src.size());
    size_t wrong = 0;
    for (size_t i = 0; i < src.size(); ++i) wrong += out[i] != src[i];
    EXPECT_EQ(wrong, 0u);
  }
}

// The chains' sum the FMA kernel must produce for invocation `gid` after
// `iters` loop iterations of kPeakFmaSteps FMAs: a_k = b^K a0 + c (1 - b^K) / (1 - b).
double expected_fma_sum(uint32_t gid, uint32_t iters) {
  const double b = kPeakFmaB, c = kPeakFmaC;
  const double bk = std::pow(b, static_cast<double>(iters) * kPeakFmaSteps);
  double sum = 0;
  for (uint32_t k = 0; k < kPeakFmaChains; ++k) {
    const double a0 = static_cast<double>((gid + k) & 255u) / 256.0;
    sum += bk * a0 + c * (1 - bk) / (1 - b);
  }
  return sum;
}

void expect_fma_chains(DType arithmetic, uint32_t iters, double rel_tol) {
  const uint32_t groups = 2;
  const auto out = peak_fma_output(test::gpu(), arithmetic, groups, iters);
  ASSERT_EQ(out.size() % 4, 0u);
  // One FMA step fewer per chain would change the sum by about
  // (1 - b) * (a0 - 0.5) per chain: far above rel_tol for these a0.
  for (uint32_t gid = 0; gid < out.size() / 4; gid += 37) {
    const double want = expected_fma_sum(gid, iters);
    for (int lane = 0; lane < 4; ++lane) {
      EXPECT_NEAR(out[4 * gid + lane], want, rel_tol * want) << "invocation " << gid << " lane " << lane;
    }
  }
  const double fewer = expected_fma_sum(0, iters - 1);  // a whole loop iteration less
  EXPECT_GT(std::fabs(fewer - expected_fma_sum(0, iters)), 4 * rel_tol * expected_fma_sum(0, iters));
}

TEST(PeakKernels, F32FmaChainsRunTheCreditedNumberOfSteps) { expect_fma_chains(DType::kF32, 24, 1e-5); }

TEST(PeakKernels, F16FmaChainsRunTheCreditedNumberOfSteps) {
  if (!test::gpu().device().enabled().shader_float16) GTEST_SKIP() << "no shaderFloat16 on the test device";
  // f16 rounds every step (2^-11 relative): few steps, a loose tolerance,
  // still far tighter than one loop iteration's worth of steps.
  expect_fma_chains(DType::kF16, 2, 0.03);
}

TEST(Peak, MeasuresEveryRoofAndEveryCopyConfiguration) {
  PeakOptions options;
  options.target_s = 0.002;  // plausibility only: short
  options.samples = 1;
  const DevicePeak peak = measure_peak(test::gpu(), options);
  EXPECT_GT(peak.roofs.copy_gbps, 0);
  EXPECT_GT(peak.roofs.f32_gflops, 0);
  EXPECT_EQ(peak.roofs.f16_gflops.has_value(), test::gpu().device().enabled().shader_float16);
  ASSERT_FALSE(peak.copy_configs.empty());
  double best = 0;
  for (const auto& c : peak.copy_configs) best = std::max(best, c.gbps);
  EXPECT_DOUBLE_EQ(peak.roofs.copy_gbps, best);
  // Configurations with as many vec4s per invocation as they unroll run
  // without the loop where one grid covers the buffer; the others loop.
  for (const auto& c : peak.copy_configs) {
    const bool covers = uint64_t{c.groups} * test::gpu().launch().workgroup_size(256) * c.unroll * 16 >=
                        static_cast<uint64_t>(c.buffer_bytes);
    EXPECT_EQ(c.one_pass, c.unroll == c.items_per_invocation && covers)
        << c.unroll << " x " << c.items_per_invocation << ", " << c.groups << " groups";
  }
  const auto j = peak_to_json(peak);
  EXPECT_TRUE(j["copy_configs"][0].contains("one_pass"));
  for (const char* key : {"copy_gbps", "f32_gflops", "f16_gflops"}) EXPECT_TRUE(j.contains(key)) << key;
}

}  // namespace
}  // namespace pebench
