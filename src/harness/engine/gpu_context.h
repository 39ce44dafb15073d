// GpuContext: one device as the harness uses it: the logical device, its
// launch planner, and every pipeline built so far (each shader build and
// interface is compiled once per run and reused by every case).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "harness/contract/dtype.h"
#include "harness/contract/launch.h"
#include "runtime/device.h"
#include "runtime/instance.h"
#include "runtime/pipeline.h"
#include "runtime/shader_module.h"

namespace pebench {

class GpuContext {
 public:
  static StatusOr<std::unique_ptr<GpuContext>> Create(const Instance& instance, const PhysicalDeviceInfo& info);

  Device& device() { return *device_; }
  const PhysicalDeviceInfo& info() const { return device_->info(); }
  const LaunchPlanner& launch() const { return launch_; }

  // The pipeline for `shader` (file stem) built for `storage` with `desc`'s
  // interface. Throws Unsupported when the device cannot build it (e.g. a
  // required subgroup size), std::logic_error for an unknown shader.
  const ComputePipeline& pipeline(const std::string& shader, DType storage, const PipelineDesc& desc);

 private:
  GpuContext(std::unique_ptr<Device> device) : device_(std::move(device)), launch_(device_->info()) {}
  std::unique_ptr<Device> device_;
  LaunchPlanner launch_;
  std::map<std::string, std::unique_ptr<ShaderModule>> modules_;
  std::map<std::string, std::unique_ptr<ComputePipeline>> pipelines_;
};

}  // namespace pebench
