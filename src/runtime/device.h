// Device: a logical VkDevice with one compute queue, the optional features
// pebench's kernels use enabled explicitly, a command pool and a pipeline
// cache.
//
// Contract: Create() enables exactly these features when the physical device
// has them: storageBuffer16BitAccess (f16 storage), shaderFloat16 and
// shaderInt8, storageBuffer8BitAccess, subgroupSizeControl and
// computeFullSubgroups, shaderInt64, pipelineExecutableInfo. A device whose
// driver compiles but cannot execute (no fence: Mesa's null hardware) is
// still created: can_execute() says so and every submission fails. Nothing
// ever calls into the driver to wait on a device that never ran work, so a
// failure part-way through Create() releases what was made safely. It works on Vulkan 1.1 devices (the
// 1.2/1.3 features come from their KHR/EXT extensions there). enabled()
// reports what was enabled; kernels must check it. The Device must outlive
// every object created from it.
#pragma once

#include <volk.h>

#include <memory>
#include <string>

#include "runtime/instance.h"
#include "runtime/memory_arena.h"
#include "runtime/physical_device.h"
#include "runtime/status.h"

namespace pebench {

// Where kernel operands live (run --memory; interface.md).
enum class MemoryMode {
  // Device-local memory that the host also maps where the main device-local
  // heap is host-visible and coherent (integrated GPUs, lavapipe): uploads
  // and readbacks are a memcpy.
  kHost,
  // Device-local memory the host never maps, as on a discrete GPU: every
  // upload and readback goes through a staging buffer and a copy on the
  // queue, also where the memory could be mapped (lavapipe runs a discrete
  // GPU's path this way).
  kDiscrete,
};
const char* memory_mode_name(MemoryMode mode);

class Device {
 public:
  static StatusOr<std::unique_ptr<Device>> Create(const Instance& instance, const PhysicalDeviceInfo& info);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  VkDevice handle() const { return device_; }
  VkQueue queue() const { return queue_; }
  VkCommandPool command_pool() const { return command_pool_; }
  VkPipelineCache pipeline_cache() const { return pipeline_cache_; }
  const PhysicalDeviceInfo& info() const { return info_; }
  const DeviceFeatures& enabled() const { return enabled_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_; }
  // Where every Buffer's memory comes from (memory_arena.h); its blocks are
  // freed when the device is destroyed.
  MemoryArena& arena() const { return *arena_; }
  // kDiscrete for a discrete GPU (also one a device profile describes:
  // Create() gets the profile's view), else kHost; set before any buffer.
  MemoryMode memory_mode() const { return memory_mode_; }
  void set_memory_mode(MemoryMode mode) { memory_mode_ = mode; }
  // Test hook (issue 41): every host-visible memory type is taken as not
  // coherent, so each host write is flushed and each host read invalidated
  // explicitly, as on a GPU whose host memory is not coherent; set before
  // any buffer.
  bool force_non_coherent() const { return force_non_coherent_; }
  void set_force_non_coherent(bool on) { force_non_coherent_ = on; }
  // Host writes to non-coherent memory not yet flushed (Buffer); a
  // submission while any is pending is an error, not a silent race.
  void note_unflushed(int delta) const { unflushed_writes_ += delta; }
  int unflushed_writes() const { return unflushed_writes_; }
  TimestampClock timestamp_clock() const {
    return TimestampClock{info_.timestamp_valid_bits, static_cast<double>(info_.limits.timestamp_period)};
  }

  // A memory type allowed by `type_bits` with all of `required` (and, if
  // possible, all of `preferred`) property flags; UINT32_MAX if none.
  uint32_t find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                            VkMemoryPropertyFlags preferred = 0) const;

  // Submits one command buffer and blocks until it completes (fence), at
  // most submit_timeout seconds. A timeout or VK_ERROR_DEVICE_LOST marks the
  // device lost: later submissions fail at once, and destruction leaks the
  // device's objects rather than destroying them under running work.
  //
  // A timeout first waits up to kDrainS more for the work to end: if it
  // does, the submission still fails (VK_TIMEOUT) but the device stays
  // usable, so that one slow case does not end every later one.
  Status submit_and_wait(VkCommandBuffer cmd) const;
  // While one lives, submissions wait up to kFirstRunWaitS instead of the
  // submit timeout: a pipeline's first run includes the driver's lazy
  // compilation (llvmpipe: 30-100 s for the largest flash kernels), which
  // --timeout does not bound.
  class FirstRun {
   public:
    explicit FirstRun(const Device& d) : d_(d) { ++d_.first_runs_; }
    ~FirstRun() { --d_.first_runs_; }
    FirstRun(const FirstRun&) = delete;
    FirstRun& operator=(const FirstRun&) = delete;

   private:
    const Device& d_;
  };
  static constexpr double kFirstRunWaitS = 3600;
  static constexpr double kDrainS = 600;
  void set_submit_timeout(double seconds) { submit_timeout_s_ = seconds; }
  double submit_timeout() const { return submit_timeout_s_; }
  bool lost() const { return lost_; }
  bool can_execute() const { return cannot_execute_.empty(); }
  // Why it cannot execute ("it cannot execute work (vkCreateFence: ...)"); empty when it can.
  const std::string& cannot_execute_reason() const { return cannot_execute_; }
  // vkDeviceWaitIdle, where work was ever submitted and the device is not lost.
  void wait_idle() const;

 private:
  explicit Device(const PhysicalDeviceInfo& info) : info_(info) {}
  PhysicalDeviceInfo info_;
  DeviceFeatures enabled_;
  VkPhysicalDeviceMemoryProperties memory_{};
  std::unique_ptr<MemoryArena> arena_;
  MemoryMode memory_mode_ = MemoryMode::kHost;
  bool force_non_coherent_ = false;
  mutable int unflushed_writes_ = 0;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  double submit_timeout_s_ = 120.0;
  mutable int first_runs_ = 0;  // FirstRun windows open
  mutable bool lost_ = false;
  mutable bool submitted_ = false;
  std::string cannot_execute_;
};

}  // namespace pebench
