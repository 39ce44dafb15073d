#include "harness/engine/gpu_context.h"

#include <fmt/format.h>

#include <stdexcept>

#include "harness/contract/errors.h"
#include "runtime/embedded_shaders.h"

namespace pebench {

StatusOr<std::unique_ptr<GpuContext>> GpuContext::Create(const Instance& instance, const PhysicalDeviceInfo& info) {
  auto device = Device::Create(instance, info);
  if (!device.ok()) return device.status();
  return std::unique_ptr<GpuContext>(new GpuContext(std::move(device).value()));
}

const ComputePipeline& GpuContext::pipeline(const std::string& shader, DType storage, const PipelineDesc& desc) {
  const char* build = storage == DType::kF16 ? "f16" : "f32";
  std::string key = fmt::format("{}.{}|b{}|p{}|sg{}|fs{}|", shader, build, desc.buffer_count,
                                desc.push_constant_bytes, desc.required_subgroup_size, desc.full_subgroups);
  for (uint32_t c : desc.spec_constants) key += fmt::format("{},", c);
  // Names are checked when the pipeline is created: a request naming them
  // differently is another request.
  for (const auto& [id, name] : desc.spec_names) key += fmt::format("|{}={}", id, name);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return *it->second;

  const std::string module_key = fmt::format("{}.{}", shader, build);
  auto mod = modules_.find(module_key);
  if (mod == modules_.end()) {
    const EmbeddedShader* spv = find_embedded_shader(shader, build);
    if (!spv) throw std::logic_error("no embedded shader named " + module_key);
    auto created = ShaderModule::Create(*device_, spv->words, spv->word_count);
    mod = modules_.emplace(module_key, std::move(created).value()).first;
  }
  PipelineDesc named = desc;
  named.name = module_key;
  auto created = ComputePipeline::Create(*device_, *mod->second, named);
  if (!created.ok()) {
    if (created.status().vk_result() == VK_ERROR_FEATURE_NOT_PRESENT) throw Unsupported(created.status().message());
    throw StatusError(created.status());
  }
  return *pipelines_.emplace(key, std::move(created).value()).first->second;
}

}  // namespace pebench
