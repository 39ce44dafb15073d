// `pebench peak [--device ...] [--json]`: the device's measured roofs (copy
// bandwidth, f32 and f16 FMA throughput), as `run` records them in the
// report's devices[].peak (harness/engine/peak.h).
#include <fmt/format.h>

#include <iostream>

#include "analysis/text_table.h"
#include "cli/command.h"
#include "cli/vulkan_session.h"
#include "harness/engine/peak.h"
#include "harness/output/report.h"

namespace pebench {
namespace {

std::string gflops_text(const std::optional<double>& v, const std::string& reason) {
  return v ? fmt::format("{:.1f} GFLOP/s", *v) : "- (" + reason + ")";
}

void print_peak(const PhysicalDeviceInfo& d, const DevicePeak& peak) {
  std::cout << fmt::format("[{}] {}\n", d.index, d.name);
  double best_bytes = 0;
  for (const auto& c : peak.copy_configs) {
    if (c.gbps == peak.roofs.copy_gbps) best_bytes = c.buffer_bytes;
  }
  std::cout << fmt::format("    copy (read+write)  {:.2f} GB/s  (best at {:.0f} MiB buffers, {})\n",
                           peak.roofs.copy_gbps, best_bytes / (1024.0 * 1024.0), peak.timing);
  std::cout << fmt::format("    f32 FMA            {}\n", gflops_text(peak.roofs.f32_gflops, ""));
  std::cout << fmt::format("    f16 FMA            {}\n", gflops_text(peak.roofs.f16_gflops, peak.f16_reason));
  TextTable t({"copy MiB", "unroll", "vec4s per invocation", "groups", "loop", "GB/s"});
  for (size_t c : {0, 1, 2, 3, 5}) t.align_right(c);
  for (const auto& c : peak.copy_configs) {
    t.add_row({fmt::format("{:.0f}", c.buffer_bytes / (1024.0 * 1024.0)), std::to_string(c.unroll),
               std::to_string(c.items_per_invocation), std::to_string(c.groups), c.one_pass ? "no" : "yes",
               fmt::format("{:.2f}", c.gbps)});
  }
  std::cout << t.text();
}

class PeakCommand : public Command {
 public:
  std::string name() const override { return "peak"; }
  std::string description() const override {
    return "measure the device's roofs: copy bandwidth, f32 and f16 FMA throughput (clpeak/vkpeak style)";
  }
  void configure(CLI::App& app) override {
    app.add_option("--device", device_, "all | INDEX | NAME-SUBSTRING (default: first discrete GPU, else first device)");
    app.add_flag("--json", json_, "print JSON: the report's device objects with their \"peak\"");
  }

  int run(CLI::App&) override {
    VulkanSession vk = open_vulkan(false);
    const auto selected = select_devices(vk.devices, device_);
    nlohmann::json all = nlohmann::json::array();
    for (uint32_t idx : selected) {
      auto ctx = GpuContext::Create(*vk.instance, vk.devices[idx]);
      if (!ctx.ok()) {
        throw std::runtime_error(
            fmt::format("cannot open device {} ({}): {}", idx, vk.devices[idx].name, ctx.status().message()));
      }
      const DevicePeak peak = measure_peak(*ctx.value());
      if (json_) {
        nlohmann::json d = device_json(vk.devices[idx]);
        d["peak"] = peak_to_json(peak);
        all.push_back(std::move(d));
      } else {
        print_peak(vk.devices[idx], peak);
      }
    }
    if (json_) std::cout << all.dump(2) << "\n";
    return 0;
  }

 private:
  std::string device_;
  bool json_ = false;
};

PEBENCH_REGISTER_COMMAND(PeakCommand);

}  // namespace
}  // namespace pebench
