// common/grid.glsl on the device: one_pass_div against integer division.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "harness/contract/launch.h"
#include "runtime/buffer.h"
#include "runtime/command_buffer.h"
#include "runtime/pipeline.h"
#include "test_util.h"

namespace pebench {
namespace {

std::vector<uint32_t> run_div_probe(const std::vector<uint32_t>& pairs) {
  Device& dev = test::gpu().device();
  const uint32_t items = static_cast<uint32_t>(pairs.size() / 2);
  const uint32_t wg = test::gpu().launch().workgroup_size(64);
  const ComputePipeline& pipeline = test::probe_pipeline("one_pass_div_probe", 2, 4, wg);
  auto in = Buffer::Create(dev, pairs.size() * 4, MemoryUse::kDevice).value();
  auto out = Buffer::Create(dev, size_t{items} * 4, MemoryUse::kDevice).value();
  EXPECT_TRUE(upload(dev, *in, pairs.data(), pairs.size() * 4).ok());
  auto pool = DescriptorPool::Create(dev, 1, 2).value();
  VkDescriptorSet set = pool->allocate(pipeline, {in.get(), out.get()}).value();
  auto cmd = CommandBuffer::Create(dev).value();
  EXPECT_TRUE(cmd->begin().ok());
  cmd->bind(pipeline, set);
  cmd->push_constants(pipeline, &items, 4);
  cmd->dispatch(test::gpu().launch().groups(items, wg));
  EXPECT_TRUE(cmd->end().ok());
  EXPECT_TRUE(cmd->submit_and_wait().ok());
  std::vector<uint32_t> q(items);
  EXPECT_TRUE(download(dev, *out, q.data(), size_t{items} * 4).ok());
  return q;
}

// a < 2^24, as a one-pass launch's items are (LaunchPlanner::kOnePassMaxItems),
// where a float estimate goes wrong: next to multiples of b, near 2^24, for
// small, odd, power-of-two and large divisors, exact multiples of divisors
// whose reciprocal rounds down; and random pairs.
TEST(GridGpu, OnePassDivEqualsIntegerDivision) {
  const uint32_t top = static_cast<uint32_t>(LaunchPlanner::kOnePassMaxItems) - 1;
  std::vector<uint32_t> pairs;
  const auto add = [&](uint32_t a, uint32_t b) {
    if (a > top) return;
    pairs.push_back(a);
    pairs.push_back(b);
  };
  for (const uint32_t b : {1u, 2u, 3u, 5u, 7u, 16u, 96u, 127u, 128u, 1000u, 4095u, 65535u, 65536u, 1u << 20,
                           (1u << 23) + 1, top}) {
    for (const uint32_t a : {0u, 1u, b - 1, b, b + 1, top, top - 1, top - b, top / b * b, top / b * b - 1}) add(a, b);
    for (uint32_t m = 1; m < 2000; m += 7) {
      const uint64_t base = uint64_t{m} * (top / 2000 / b + 1) * b;
      if (base > top) break;
      add(static_cast<uint32_t>(base), b);
      add(static_cast<uint32_t>(base - 1), b);
    }
  }
  // Divisors whose float reciprocal is below 1/b: there the estimate of an
  // exact multiple truncates one low.
  for (uint32_t b = 2, found = 0; b < 100000 && found < 200; ++b) {
    if (static_cast<double>(1.0f / static_cast<float>(b)) < 1.0 / b) {
      ++found;
      add(top / b * b, b);
      add(top / b / 3 * b, b);
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) add(rng() % (top + 1), 1 + rng() % 100000);
  const std::vector<uint32_t> q = run_div_probe(pairs);
  size_t wrong = 0;
  for (size_t k = 0; k < q.size(); ++k) {
    const uint32_t a = pairs[2 * k], b = pairs[2 * k + 1];
    if (q[k] != a / b && ++wrong <= 5) ADD_FAILURE() << a << " / " << b << ": " << q[k] << ", want " << a / b;
  }
  EXPECT_EQ(wrong, 0u) << "of " << q.size();
}

}  // namespace
}  // namespace pebench
