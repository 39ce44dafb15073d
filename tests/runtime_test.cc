// The Vulkan layer on the test device: buffers, a real dispatch, timestamps.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>

#include "harness/contract/dtype.h"
#include "runtime/buffer.h"
#include "runtime/command_buffer.h"
#include "runtime/instance.h"
#include "runtime/embedded_shaders.h"
#include "runtime/pipeline.h"
#include "runtime/shader_module.h"
#include "runtime/timestamp_query_pool.h"
#include "test_util.h"

namespace pebench {
namespace {

TEST(Runtime, VkResultNames) {
  EXPECT_STREQ(vk_result_name(VK_ERROR_DEVICE_LOST), "VK_ERROR_DEVICE_LOST");
  const Status s = vk_error("vkCreateBuffer(device, &info, nullptr, &buffer)", VK_ERROR_OUT_OF_DEVICE_MEMORY);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "vkCreateBuffer: VK_ERROR_OUT_OF_DEVICE_MEMORY");
  EXPECT_EQ(s.vk_result(), VK_ERROR_OUT_OF_DEVICE_MEMORY);
}

TEST(Runtime, DeviceInfoIsPlausible) {
  const PhysicalDeviceInfo& info = test::gpu().info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.api_version, VK_API_VERSION_1_1);
  EXPECT_GE(info.limits.max_compute_work_group_invocations, 128u);
  EXPECT_GE(info.limits.max_compute_shared_memory_size, 16384u);
  EXPECT_GT(info.subgroup.size, 0u);
  EXPECT_LE(info.subgroup.min_size, info.subgroup.size);
  EXPECT_GE(info.subgroup.max_size, info.subgroup.size);
  // What the device enabled is a subset of what it offers.
  const DeviceFeatures& on = test::gpu().device().enabled();
  EXPECT_TRUE(!on.storage_buffer_16bit || info.features.storage_buffer_16bit);
  EXPECT_TRUE(!on.shader_float16 || info.features.shader_float16);
  EXPECT_TRUE(!on.subgroup_size_control || info.features.subgroup_size_control);
}

TEST(Runtime, BufferRoundTripThroughEveryPath) {
  const uint64_t before = test::instance().validation_error_count();
  Device& dev = test::gpu().device();
  std::vector<uint32_t> data(10007);
  std::iota(data.begin(), data.end(), 0xabc00000u);
  const size_t bytes = data.size() * 4;
  for (MemoryUse use : {MemoryUse::kDevice, MemoryUse::kStaging, MemoryUse::kReadback}) {
    auto buf = Buffer::Create(dev, bytes, use).value();
    ASSERT_TRUE(upload(dev, *buf, data.data(), bytes).ok());
    std::vector<uint32_t> back(data.size(), 0);
    ASSERT_TRUE(download(dev, *buf, back.data(), bytes).ok());
    EXPECT_EQ(back, data);
  }
  // A device-side copy between two buffers (the staging path of discrete GPUs).
  auto src = Buffer::Create(dev, bytes, MemoryUse::kStaging).value();
  auto dst = Buffer::Create(dev, bytes, MemoryUse::kReadback).value();
  std::memcpy(src->mapped(), data.data(), bytes);
  auto cmd = CommandBuffer::Create(dev).value();
  ASSERT_TRUE(cmd->begin().ok());
  cmd->copy(*src, *dst, bytes);
  ASSERT_TRUE(cmd->end().ok());
  ASSERT_TRUE(cmd->submit_and_wait().ok());
  EXPECT_EQ(std::memcmp(dst->mapped(), data.data(), bytes), 0);
  // Over-long transfers are refused, not performed.
  EXPECT_FALSE(upload(dev, *dst, data.data(), bytes + 4).ok());
  test::expect_no_validation_errors(before);
}

// A discrete GPU's path on any device: kernel operands never mapped, every
// transfer through staging, whatever memory types the device offers.
TEST(Runtime, DiscreteMemoryModeNeverMapsKernelOperands) {
  const uint64_t before = test::instance().validation_error_count();
  Device& dev = test::gpu().device();
  const MemoryMode was = dev.memory_mode();
  EXPECT_EQ(was == MemoryMode::kDiscrete, dev.info().type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU);
  dev.set_memory_mode(MemoryMode::kDiscrete);
  std::vector<uint32_t> data(4099);
  std::iota(data.begin(), data.end(), 0x5eed0000u);
  const size_t bytes = data.size() * 4;
  auto buf = Buffer::Create(dev, bytes, MemoryUse::kDevice).value();
  EXPECT_EQ(buf->mapped(), nullptr);
  ASSERT_TRUE(upload(dev, *buf, data.data(), bytes).ok());
  std::vector<uint32_t> back(data.size(), 0);
  ASSERT_TRUE(download(dev, *buf, back.data(), bytes).ok());
  EXPECT_EQ(back, data);
  // Staging and readback buffers stay mapped in either mode.
  EXPECT_NE(Buffer::Create(dev, bytes, MemoryUse::kStaging).value()->mapped(), nullptr);
  EXPECT_NE(Buffer::Create(dev, bytes, MemoryUse::kReadback).value()->mapped(), nullptr);
  dev.set_memory_mode(MemoryMode::kHost);
  // kHost maps exactly where memory is unified (lavapipe, integrated GPUs).
  EXPECT_EQ(Buffer::Create(dev, bytes, MemoryUse::kDevice).value()->mapped() != nullptr,
            dev.info().has_unified_memory);
  dev.set_memory_mode(was);
  EXPECT_STREQ(memory_mode_name(MemoryMode::kDiscrete), "discrete");
  EXPECT_STREQ(memory_mode_name(MemoryMode::kHost), "host");
  test::expect_no_validation_errors(before);
}

// What the memory properties say, from facts read on real devices.
TEST(MemoryModel, ADiscreteGpusWholeHeapBarWindowIsNotUnifiedMemory) {
  constexpr uint32_t kLocal = VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
  constexpr uint32_t kDev = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, kVis = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                     kCoh = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, kCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  // NVIDIA H100 80GB HBM3, driver 580.159.04 (pebench devices --json,
  // reports/samples/h100-smoke-devices.json): resizable BAR makes type 4
  // device-local, host-visible and coherent across the whole 85.5 GB heap.
  const std::vector<MemoryHeap> h100_heaps = {{85520809984ull, kLocal}, {101361423360ull, 0}};
  const std::vector<MemoryType> h100_types = {
      {1, 0}, {0, kDev}, {1, kVis | kCoh}, {1, kVis | kCoh | kCached}, {0, kDev | kVis | kCoh}};
  EXPECT_EQ(largest_device_local_heap(h100_heaps), 85520809984ull);
  EXPECT_FALSE(is_unified_memory(VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, h100_heaps, h100_types));
  // The same memory on an integrated GPU is unified: the type decides.
  EXPECT_TRUE(is_unified_memory(VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, h100_heaps, h100_types));
  // lavapipe: one heap, one type with every flag.
  EXPECT_TRUE(is_unified_memory(VK_PHYSICAL_DEVICE_TYPE_CPU, {{2ull << 30, kLocal}},
                                {{0, kDev | kVis | kCoh | kCached}}));
  // A 256 MiB window beside the main heap is not unified memory either.
  EXPECT_FALSE(is_unified_memory(VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
                                 {{8ull << 30, kLocal}, {16ull << 30, 0}, {256ull << 20, kLocal}},
                                 {{0, kDev}, {1, kVis | kCoh}, {2, kDev | kVis | kCoh}}));
  EXPECT_EQ(largest_device_local_heap({{1, 0}}), 0u);
}

// y = x + table[offset + n] with the abs_learned shader, dispatched by hand.
TEST(Runtime, DispatchComputesAndTimestampsAreMonotonic) {
  const uint64_t before = test::instance().validation_error_count();
  Device& dev = test::gpu().device();
  const uint32_t seq = 512, d = 1024;  // 512K elements: long enough to time
  const size_t n = size_t{seq} * d, bytes = n * 4;
  std::vector<float> x(n), table(n), y(n, -1.0f);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 97);
    table[i] = static_cast<float>(i % 13) * 0.5f;
  }
  auto bx = Buffer::Create(dev, bytes, MemoryUse::kDevice).value();
  auto bt = Buffer::Create(dev, bytes, MemoryUse::kDevice).value();
  auto by = Buffer::Create(dev, bytes, MemoryUse::kDevice).value();
  ASSERT_TRUE(upload(dev, *bx, x.data(), bytes).ok());
  ASSERT_TRUE(upload(dev, *bt, table.data(), bytes).ok());

  const EmbeddedShader* spv = find_embedded_shader("abs_learned", "f32");
  ASSERT_NE(spv, nullptr);
  auto module = ShaderModule::Create(dev, spv->words, spv->word_count).value();
  PipelineDesc desc;
  desc.name = "abs_learned";
  desc.buffer_count = 3;
  desc.push_constant_bytes = 16;
  desc.spec_constants = {64, 1, 0, 1};  // workgroup size, VEC4, ONE_PASS (the grid-stride loop), UNROLL
  auto pipeline = ComputePipeline::Create(dev, *module, desc).value();
  auto pool = DescriptorPool::Create(dev, 1, 3).value();
  VkDescriptorSet set = pool->allocate(*pipeline, {bx.get(), bt.get(), by.get()}).value();

  ASSERT_TRUE(dev.info().timestamps_supported()) << "the test device has no timestamps";
  auto ts = TimestampQueryPool::Create(dev, 2).value();
  auto cmd = CommandBuffer::Create(dev).value();
  const uint32_t push[4] = {1, seq, d, 0};
  ASSERT_TRUE(cmd->begin().ok());
  cmd->reset_queries(*ts);
  cmd->write_timestamp(*ts, 0, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
  cmd->bind(*pipeline, set);
  cmd->push_constants(*pipeline, push, sizeof push);
  cmd->dispatch((seq * d / 4 + 63) / 64);
  cmd->write_timestamp(*ts, 1, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
  ASSERT_TRUE(cmd->end().ok());

  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(cmd->submit_and_wait().ok());
    const double wall_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    const auto ticks = ts->results().value();
    EXPECT_GE(ticks[1], ticks[0]) << "timestamps went backwards";
    const double gpu_ns = ts->elapsed_ns(ticks, 0, 1);
    EXPECT_GT(gpu_ns, 0.0);
    // The GPU interval lies inside the host's submit-to-fence interval.
    EXPECT_LT(gpu_ns, wall_ns * 1.05 + 1000.0) << "gpu " << gpu_ns << " ns, wall " << wall_ns << " ns";
  }
  ASSERT_TRUE(download(dev, *by, y.data(), bytes).ok());
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] + table[i]) << "element " << i;
  test::expect_no_validation_errors(before);
}

// The loader reports an ICD it cannot load (another architecture's manifest
// on a multiarch system) as a general-type error through the same
// messenger; only validation-type errors may fail a run.
TEST(Runtime, OnlyValidationMessagesCountAsValidationErrors) {
  InstanceOptions options;
  options.validation = true;
  auto created = Instance::Create(options);
  ASSERT_TRUE(created.ok()) << created.status().message();
  Instance& inst = *created.value();
  ASSERT_TRUE(inst.validation_enabled());
  VkDebugUtilsMessengerCallbackDataEXT data{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT};
  data.pMessageIdName = "Loader Message";
  data.pMessage = "loader_icd_scan: Failed loading library (a message this test sends)";
  vkSubmitDebugUtilsMessageEXT(inst.handle(), VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                               VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT, &data);
  EXPECT_EQ(inst.validation_error_count(), 0u);
  data.pMessageIdName = "VUID-pebench-test";
  data.pMessage = "a validation error this test sends";
  vkSubmitDebugUtilsMessageEXT(inst.handle(), VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT, &data);
  EXPECT_EQ(inst.validation_error_count(), 1u);
  ASSERT_EQ(inst.validation_messages().size(), 1u);
  EXPECT_EQ(inst.validation_messages().front(), "a validation error this test sends");
}

TEST(Runtime, TimestampClockMasksAndWraps) {
  TimestampClock clock{32, 1.5};
  EXPECT_EQ(clock.mask(), 0xffffffffull);
  // One wrap-around between the two stamps: 0xfffffff0 -> 0x10 is 32 ticks.
  EXPECT_DOUBLE_EQ(clock.elapsed_ns(0xfffffff0ull, 0x10ull), 32 * 1.5);
  // Bits above the valid ones are ignored.
  EXPECT_DOUBLE_EQ(clock.elapsed_ns(0xabc00000100ull, 0x12300000200ull), 256 * 1.5);
  TimestampClock full{64, 0.25};
  EXPECT_EQ(full.mask(), ~0ull);
  EXPECT_DOUBLE_EQ(full.elapsed_ns(~0ull - 3, 4), 8 * 0.25);
  // The period is kept as a double, not truncated to whole nanoseconds.
  TimestampClock fractional{64, 52.08333333};
  EXPECT_NEAR(fractional.elapsed_ns(0, 1000000), 52083333.33, 1e-2);
}

TEST(Runtime, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even (down)
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie to even (up)
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
  // Every finite half survives a round trip through float.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;
    ASSERT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
}

}  // namespace
}  // namespace pebench
