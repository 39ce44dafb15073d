#include "harness/engine/peak.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "harness/contract/errors.h"
#include "runtime/buffer.h"
#include "runtime/command_buffer.h"
#include "runtime/timestamp_query_pool.h"

namespace pebench {
namespace {

constexpr double kFlopsPerVec4Fma = 8;
constexpr uint64_t kMaxCopyBufferBytes = 64ull << 20;  // past a CPU's L3 or a GPU's L2, twice over
// A CPU device also copies buffers its last-level cache holds: a kernel's
// working set of tens of MB is served from there, and a roof measured only
// past the cache would be one such kernels run above (measured on the 2-core
// VM, 32 MB L3, while loaded: abs.learned at 24 MB moved 1.6-2x the 64 MiB
// copy's GB/s). GPUs keep the large size only: an L2-resident copy would be
// a roof no large kernel could approach.
constexpr uint64_t kCpuCacheCopyBufferBytes = 8ull << 20;
constexpr uint32_t kMaxRepeats = 64;
// Enough to fill a large GPU; a CPU device runs groups a thread at a time,
// and a few per thread keep it busy without a long first measurement.
constexpr uint32_t kFmaGroupsGpu = 4096, kFmaGroupsCpu = 256;
// (unroll, vec4s per invocation): what saturates differs by device. On a GPU
// more invocations hide latency; on lavapipe each loop iteration costs, so
// a few vec4s per invocation, unrolled or not, did best (measured: 1 per
// invocation 0.4-0.7x of 4; 16 or more, 0.7-0.8x). Where the two are equal
// and the grid covers the buffer, the kernel has no loop (copy_one_pass).
constexpr std::pair<uint32_t, uint32_t> kCopyConfigs[] = {{1, 1}, {1, 4}, {4, 4}, {8, 8}};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One pipeline dispatched `repeats` times in one submission, between two
// GPU timestamps (wall-clock around submit and wait without them).
class Timer {
 public:
  explicit Timer(GpuContext& ctx) : ctx_(ctx), pool_(DescriptorPool::Create(ctx.device(), 16, 32).value()) {
    if (ctx.info().timestamps_supported()) timestamps_ = TimestampQueryPool::Create(ctx.device(), 2).value();
  }
  bool gpu_timed() const { return timestamps_ != nullptr; }

  VkDescriptorSet bind(const ComputePipeline& p, const std::vector<const Buffer*>& buffers) {
    return pool_->allocate(p, buffers).value();
  }

  // Median ns of `samples` submissions.
  double median_ns(const ComputePipeline& p, VkDescriptorSet set, const PushConstants& push, uint32_t groups,
                   uint32_t repeats, int samples) {
    auto cmd = record(p, set, push, groups, repeats);
    std::vector<double> ns;
    for (int i = 0; i < samples; ++i) ns.push_back(time_once(*cmd));
    return median_of(ns);
  }

 private:
  std::unique_ptr<CommandBuffer> record(const ComputePipeline& p, VkDescriptorSet set, const PushConstants& push,
                                        uint32_t groups, uint32_t repeats) {
    auto cmd = CommandBuffer::Create(ctx_.device()).value();
    throw_if_error(cmd->begin());
    if (timestamps_) {
      cmd->reset_queries(*timestamps_);
      cmd->write_timestamp(*timestamps_, 0, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
    }
    cmd->bind(p, set);
    cmd->push_constants(p, push.words().data(), static_cast<uint32_t>(push.words().size() * 4));
    for (uint32_t r = 0; r < repeats; ++r) {
      if (r > 0) cmd->compute_barrier();
      cmd->dispatch(groups);
    }
    if (timestamps_) cmd->write_timestamp(*timestamps_, 1, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    throw_if_error(cmd->end());
    return cmd;
  }

  double time_once(const CommandBuffer& cmd) {
    const auto start = std::chrono::steady_clock::now();
    throw_if_error(cmd.submit_and_wait());
    const auto end = std::chrono::steady_clock::now();
    if (!timestamps_) return std::chrono::duration<double, std::nano>(end - start).count();
    return timestamps_->elapsed_ns(timestamps_->results().value(), 0, 1);
  }

  GpuContext& ctx_;
  std::unique_ptr<DescriptorPool> pool_;
  std::unique_ptr<TimestampQueryPool> timestamps_;
};

// Dispatches per submission so that one takes about `target_s`, from the
// time of one dispatch.
uint32_t repeats_for(double one_ns, double target_s) {
  const double r = std::ceil(target_s * 1e9 / std::max(one_ns, 1.0));
  return static_cast<uint32_t>(std::clamp(r, 1.0, static_cast<double>(kMaxRepeats)));
}

uint64_t copy_buffer_bytes(const PhysicalDeviceInfo& info) {
  uint64_t bytes = std::min<uint64_t>(kMaxCopyBufferBytes, info.limits.max_storage_buffer_range);
  if (info.limits.max_memory_allocation_size) bytes = std::min(bytes, info.limits.max_memory_allocation_size);
  if (info.device_local_heap_bytes) bytes = std::min(bytes, info.device_local_heap_bytes / 8);
  return bytes / 16 * 16;
}

uint32_t copy_groups(GpuContext& ctx, uint32_t n, uint32_t items_per_invocation) {
  const uint64_t wg = ctx.launch().workgroup_size(256);
  const uint64_t invocations = (uint64_t{n} + items_per_invocation - 1) / items_per_invocation;
  return static_cast<uint32_t>(std::clamp<uint64_t>((invocations + wg - 1) / wg, 1, ctx.launch().max_groups()));
}

// Whether the grid of copy_groups() covers the copy with one unrolled body
// per invocation, so the kernel needs no loop (shaders/peak/peak_copy.comp).
bool copy_one_pass(GpuContext& ctx, uint32_t n, uint32_t unroll, uint32_t items_per_invocation) {
  const int64_t invocations = (int64_t{n} + items_per_invocation - 1) / items_per_invocation;
  return unroll == items_per_invocation &&
         ctx.launch().one_pass_groups(invocations, ctx.launch().workgroup_size(256)) != 0;
}

const ComputePipeline& copy_pipeline(GpuContext& ctx, uint32_t unroll, bool one_pass) {
  PipelineDesc desc;
  desc.buffer_count = 2;
  desc.push_constant_bytes = 4;
  desc.spec_constants = {ctx.launch().workgroup_size(256), unroll, one_pass ? 1u : 0u};
  return ctx.pipeline("peak_copy", DType::kF32, desc);
}

const ComputePipeline& fma_pipeline(GpuContext& ctx, DType arithmetic) {
  PipelineDesc desc;
  desc.buffer_count = 1;
  desc.push_constant_bytes = 12;
  desc.spec_constants = {ctx.launch().workgroup_size(256)};
  return ctx.pipeline("peak_fma", arithmetic, desc);
}

PushConstants fma_push(uint32_t iters) {
  PushConstants push;
  push.u32(iters).f32(kPeakFmaB).f32(kPeakFmaC);
  return push;
}

// The copy through every configuration at one buffer size.
void measure_copy_size(GpuContext& ctx, Timer& timer, const PeakOptions& options, uint64_t bytes, DevicePeak& peak) {
  auto src = Buffer::Create(ctx.device(), bytes, MemoryUse::kDevice).value();
  auto dst = Buffer::Create(ctx.device(), bytes, MemoryUse::kDevice).value();
  const uint32_t n = static_cast<uint32_t>(bytes / 16);
  PushConstants push;
  push.u32(n);
  for (const auto& [unroll, items] : kCopyConfigs) {
    const bool one_pass = copy_one_pass(ctx, n, unroll, items);
    const ComputePipeline& p = copy_pipeline(ctx, unroll, one_pass);
    const VkDescriptorSet set = timer.bind(p, {src.get(), dst.get()});
    const uint32_t groups = copy_groups(ctx, n, items);
    const uint32_t repeats = repeats_for(timer.median_ns(p, set, push, groups, 1, 1), options.target_s);
    const double ns = timer.median_ns(p, set, push, groups, repeats, options.samples) / repeats;
    peak.copy_configs.push_back(
        {unroll, items, groups, static_cast<double>(bytes), 2.0 * static_cast<double>(bytes) / ns, one_pass});
    peak.roofs.copy_gbps = std::max(peak.roofs.copy_gbps, peak.copy_configs.back().gbps);
  }
}

void measure_copy(GpuContext& ctx, Timer& timer, const PeakOptions& options, DevicePeak& peak) {
  const uint64_t bytes = copy_buffer_bytes(ctx.info());
  peak.copy_buffer_bytes = static_cast<double>(bytes);
  measure_copy_size(ctx, timer, options, bytes, peak);
  if (ctx.launch().is_cpu() && kCpuCacheCopyBufferBytes < bytes) {
    measure_copy_size(ctx, timer, options, kCpuCacheCopyBufferBytes, peak);
  }
}

// GFLOP/s of the FMA kernel, its loop grown until one submission takes the target time.
double measure_fma(GpuContext& ctx, Timer& timer, const PeakOptions& options, DType arithmetic) {
  const uint32_t wg = ctx.launch().workgroup_size(256);
  const uint32_t groups = std::min(ctx.launch().is_cpu() ? kFmaGroupsCpu : kFmaGroupsGpu, ctx.launch().max_groups());
  auto result = Buffer::Create(ctx.device(), uint64_t{groups} * wg * 16, MemoryUse::kDevice).value();
  const ComputePipeline& p = fma_pipeline(ctx, arithmetic);
  const VkDescriptorSet set = timer.bind(p, {result.get()});
  // The loop's iterations count against llvmpipe's per-invocation budget.
  const uint64_t max_iters = std::min<uint64_t>(ctx.launch().max_loop_iterations() - 2, 1u << 20);
  uint32_t iters = 1;
  double ns = timer.median_ns(p, set, fma_push(iters), groups, 1, 1);
  while (ns < options.target_s * 1e9 && iters < max_iters) {
    const double grow = std::clamp(std::ceil(options.target_s * 1e9 / std::max(ns, 1.0)), 2.0, 64.0);
    iters = static_cast<uint32_t>(std::min(iters * grow, static_cast<double>(max_iters)));
    ns = timer.median_ns(p, set, fma_push(iters), groups, 1, 1);
  }
  ns = timer.median_ns(p, set, fma_push(iters), groups, 1, options.samples);
  const double flops = static_cast<double>(groups) * wg * iters * kPeakFmaSteps * kPeakFmaChains * kFlopsPerVec4Fma;
  return flops / ns;
}

}  // namespace

DevicePeak measure_peak(GpuContext& ctx, const PeakOptions& options) {
  DevicePeak peak;
  Timer timer(ctx);
  peak.timing = timer.gpu_timed() ? "gpu-timestamp" : "wall-clock";
  measure_copy(ctx, timer, options, peak);
  peak.roofs.f32_gflops = measure_fma(ctx, timer, options, DType::kF32);
  if (ctx.device().enabled().shader_float16) {
    peak.roofs.f16_gflops = measure_fma(ctx, timer, options, DType::kF16);
  } else {
    peak.f16_reason = "the device has no f16 arithmetic (shaderFloat16)";
  }
  return peak;
}

std::vector<float> peak_copy_output(GpuContext& ctx, const std::vector<float>& src, uint32_t unroll,
                                    uint32_t items_per_invocation) {
  const uint32_t n = static_cast<uint32_t>(src.size() / 4);
  const size_t bytes = size_t{n} * 16;
  auto in = Buffer::Create(ctx.device(), bytes, MemoryUse::kDevice).value();
  auto out = Buffer::Create(ctx.device(), bytes, MemoryUse::kDevice).value();
  throw_if_error(upload(ctx.device(), *in, src.data(), bytes));
  Timer timer(ctx);
  const ComputePipeline& p = copy_pipeline(ctx, unroll, copy_one_pass(ctx, n, unroll, items_per_invocation));
  PushConstants push;
  push.u32(n);
  timer.median_ns(p, timer.bind(p, {in.get(), out.get()}), push, copy_groups(ctx, n, items_per_invocation), 1, 1);
  std::vector<float> result(size_t{n} * 4);
  throw_if_error(download(ctx.device(), *out, result.data(), bytes));
  return result;
}

std::vector<float> peak_fma_output(GpuContext& ctx, DType arithmetic, uint32_t groups, uint32_t iters) {
  const size_t invocations = size_t{groups} * ctx.launch().workgroup_size(256);
  auto out = Buffer::Create(ctx.device(), invocations * 16, MemoryUse::kDevice).value();
  Timer timer(ctx);
  const ComputePipeline& p = fma_pipeline(ctx, arithmetic);
  timer.median_ns(p, timer.bind(p, {out.get()}), fma_push(iters), groups, 1, 1);
  std::vector<float> result(invocations * 4);
  throw_if_error(download(ctx.device(), *out, result.data(), invocations * 16));
  return result;
}

nlohmann::json peak_to_json(const DevicePeak& peak) {
  nlohmann::json configs = nlohmann::json::array();
  for (const auto& c : peak.copy_configs) {
    configs.push_back(
        {{"unroll", c.unroll}, {"items_per_invocation", c.items_per_invocation}, {"groups", c.groups},
         {"buffer_bytes", c.buffer_bytes}, {"gbps", c.gbps}, {"one_pass", c.one_pass}});
  }
  nlohmann::json j = {{"copy_gbps", peak.roofs.copy_gbps},
                      {"f32_gflops", peak.roofs.f32_gflops},
                      {"f16_gflops", peak.roofs.f16_gflops ? nlohmann::json(*peak.roofs.f16_gflops) : nullptr},
                      {"copy_buffer_bytes", peak.copy_buffer_bytes},
                      {"copy_configs", configs},
                      {"timing", peak.timing}};
  if (!peak.f16_reason.empty()) j["f16_reason"] = peak.f16_reason;
  return j;
}

}  // namespace pebench
