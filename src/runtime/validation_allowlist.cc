#include "runtime/validation_allowlist.h"

namespace pebench {

const std::vector<AllowedWarning>& validation_allowlist() {
  // Measured with Debian 12's layer (1.3.239) on lavapipe, --validate=best-practices.
  // Not here any more: vkAllocateMemory-small-allocation,
  // vkBindMemory-small-dedicated-allocation and NVIDIA's
  // AllocateMemory-ReuseAllocations (buffers are sub-allocated from blocks
  // kept for the device's life: runtime/memory_arena.h).
  static const std::vector<AllowedWarning> list = {
      {"UNASSIGNED-BestPractices-AllocateMemory-SetPriority",
       "[NVIDIA] VkMemoryPriorityAllocateInfoEXT needs VK_EXT_memory_priority, which lavapipe and many devices do "
       "not offer; the check fires whatever the device (now once per memory block, not per buffer)"},
      {"UNASSIGNED-BestPractices-vkBeginCommandBuffer-one-time-submit",
       "[Arm] the timed command buffer is recorded once and submitted for every sample (re-recording would be "
       "timed); uploads, readbacks and fills are one-time-submit"},
      {"UNASSIGNED-BestPractices-SpirvDeprecated_WorkgroupSize",
       "workgroup sizes are specialization constants (local_size_x_id): before SPIR-V 1.6 (LocalSizeId, Vulkan "
       "1.3 or VK_KHR_maintenance4) glslang can only express them through the WorkgroupSize built-in, and "
       "pebench targets Vulkan 1.1 (the Android baseline)"},
      {"UNASSIGNED-BestPractices-vkCreateComputePipelines-compute-thread-group-alignment",
       "[Arm] the layer reads the workgroup size before specialization: it checks (1, 1, 1), the shaders' "
       "default, not the size each pipeline is created with"},
      {"UNASSIGNED-BestPractices-vkCreateComputePipelines-compute-spatial-locality",
       "[Arm] the same misreading, (1, 1, 1): pebench's kernels access no images"},
      {"UNASSIGNED-BestPractices-CreatePipelinesLayout-KeepLayoutSmall",
       "[AMD] a layout past 13 DWORDs: push constants count a DWORD per 4 bytes, and a kernel's carry its shape "
       "and strides; a uniform buffer instead would take a binding where the Android baseline allows 4"},
      {"UNASSIGNED-BestPractices-Pipeline-SortAndBind",
       "[AMD, NVIDIA] 'bound twice in the frame': the layer's frame ends at vkQueuePresentKHR, and a compute "
       "benchmark never presents, so every pipeline that a second command buffer binds (the validation run, "
       "then the timed one) counts; a command buffer must bind its own pipelines, and passes that depend on "
       "each other (naive attention's score, softmax and PV per group of slices) cannot be sorted"},
      {"UNASSIGNED-BestPractices-CmdBuffer-highBarrierCount",
       "[AMD] barriers counted per frame, which ends at vkQueuePresentKHR: without presents the count is "
       "the process's, every case's uploads and passes together (seen under --emulate desktop-gpu, whose "
       "staging copies add barriers); one command buffer's barriers are the passes' real dependencies"},
  };
  return list;
}

const char* allowlist_reason(const std::string& id) {
  for (const AllowedWarning& a : validation_allowlist()) {
    if (id == a.id) return a.reason;
  }
  return nullptr;
}

}  // namespace pebench
