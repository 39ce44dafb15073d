// `pebench devices [--json]`: every Vulkan physical device and what pebench
// needs to know about it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "analysis/format_units.h"
#include "cli/command.h"
#include "cli/vulkan_session.h"
#include "harness/engine/device_profile.h"
#include "harness/output/report.h"

namespace pebench {
namespace {

class DevicesCommand : public Command {
 public:
  std::string name() const override { return "devices"; }
  std::string description() const override { return "list every Vulkan device and its relevant properties"; }
  void configure(CLI::App& app) override {
    app.add_flag("--json", json_, "print JSON (the report's device objects)");
    app.add_option("--emulate", emulate_, "show every device as a profile makes the planner see it");
    app.add_flag("--profiles", list_profiles_, "list the built-in device profiles for --emulate");
  }

  int run(CLI::App&) override {
    if (list_profiles_) return print_profiles();
    VulkanSession s = open_vulkan(false);
    if (!emulate_.empty()) {
      const DeviceProfile profile = load_profile(emulate_);
      for (auto& d : s.devices) d = apply_profile(d, profile);
    }
    if (json_) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& d : s.devices) all.push_back(device_json(d));
      std::cout << all.dump(2) << "\n";
      return 0;
    }
    for (const auto& d : s.devices) {
      const auto& l = d.limits;
      std::cout << fmt::format("[{}] {}{}\n", d.index, d.name,
                               d.profile.empty() ? "" : fmt::format("  (as profile {})", d.profile));
      std::cout << fmt::format("    vendor {} (0x{:04x})  device 0x{:04x}  type {}\n", vendor_name(d.vendor_id),
                               d.vendor_id, d.device_id, device_type_name(d.type));
      std::cout << fmt::format("    device uuid {}  driver uuid {}\n", uuid_string(d.device_uuid),
                               uuid_string(d.driver_uuid));
      std::cout << fmt::format("    driver {} ({}), version {}\n", d.driver_name.empty() ? "?" : d.driver_name,
                               d.driver_info, driver_version_string(d.vendor_id, d.driver_id, d.driver_version_raw));
      std::cout << fmt::format("    Vulkan {}  conformance {}  subgroup {} (range {}-{}): {}\n",
                               api_version_string(d.api_version),
                               d.conformance_version.empty() ? "?" : d.conformance_version, d.subgroup.size,
                               d.subgroup.min_size, d.subgroup.max_size,
                               fmt::join(subgroup_operation_names(d.subgroup.supported_operations), " "));
      std::cout << fmt::format("    fp16 storage {}  fp16 math {}  int8 {}\n", d.features.storage_buffer_16bit ? "yes" : "no",
                               d.features.shader_float16 ? "yes" : "no", d.features.shader_int8 ? "yes" : "no");
      std::cout << fmt::format("    integer dot product {}  cooperative matrix {}  bfloat16 {}\n",
                               d.features.integer_dot_product ? "yes" : "no",
                               d.features.cooperative_matrix ? "yes" : "no", d.features.bfloat16 ? "yes" : "no");
      std::cout << fmt::format("    shared memory {} KiB  max invocations {} ({}x{}x{})  max storage buffer {}\n",
                               l.max_compute_shared_memory_size / 1024, l.max_compute_work_group_invocations,
                               l.max_compute_work_group_size[0], l.max_compute_work_group_size[1],
                               l.max_compute_work_group_size[2],
                               format_bytes(static_cast<double>(l.max_storage_buffer_range)));
      std::cout << fmt::format("    storage buffers per stage {}  push constants {} B  descriptor sets {}\n",
                               l.max_per_stage_descriptor_storage_buffers, l.max_push_constants_size,
                               l.max_bound_descriptor_sets);
      for (size_t h = 0; h < d.memory_heaps.size(); ++h) {
        std::vector<std::string> types;
        for (size_t t = 0; t < d.memory_types.size(); ++t) {
          if (d.memory_types[t].heap != h) continue;
          const auto names = memory_property_names(d.memory_types[t].flags);
          types.push_back(fmt::format("[{}]", names.empty() ? "-" : fmt::format("{}", fmt::join(names, ","))));
        }
        const auto flags = memory_heap_flag_names(d.memory_heaps[h].flags);
        std::cout << fmt::format("    heap {}: {} MiB {}  types {}\n", h, d.memory_heaps[h].size >> 20,
                                 flags.empty() ? "host" : fmt::format("{}", fmt::join(flags, ",")),
                                 fmt::join(types, " "));
      }
      if (d.timestamps_supported()) {
        std::cout << fmt::format("    timestamps yes: {} valid bits, period {} ns\n", d.timestamp_valid_bits,
                                 l.timestamp_period);
      } else {
        std::cout << "    timestamps no (wall-clock timing)\n";
      }
    }
    return 0;
  }

 private:
  int print_profiles() const {
    for (const auto& p : builtin_profiles()) {
      if (json_) continue;
      std::cout << fmt::format("{:<24} {}\n", p.name, p.summary);
    }
    if (json_) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& p : builtin_profiles()) all.push_back({{"name", p.name}, {"summary", p.summary}});
      std::cout << all.dump(2) << "\n";
    }
    return 0;
  }

  std::string emulate_;
  bool json_ = false, list_profiles_ = false;
};

PEBENCH_REGISTER_COMMAND(DevicesCommand);

}  // namespace
}  // namespace pebench
