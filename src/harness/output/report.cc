#include "harness/output/report.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

#include "harness/contract/errors.h"
#include "harness/output/build_info.h"

namespace pebench {

nlohmann::json tool_json() {
  const BuildInfo& b = build_info();
  return {{"version", b.version}, {"git_commit", b.git_commit}, {"build_type", b.build_type}, {"compiler", b.compiler}};
}

namespace {

std::string read_os_pretty_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  }
  return "";
}

// The first value of each /proc/cpuinfo field (the fields of CPU 0).
std::map<std::string, std::string> read_cpuinfo() {
  std::ifstream in("/proc/cpuinfo");
  std::map<std::string, std::string> fields;
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    const auto value = line.find_first_not_of(" \t", colon + 1);
    fields.emplace(key, value == std::string::npos ? "" : line.substr(value));
  }
  return fields;
}

std::string field(const std::map<std::string, std::string>& fields, const std::string& key) {
  const auto it = fields.find(key);
  return it == fields.end() ? "" : it->second;
}

// Which CPU this is, beyond its often generic model name (a VM's "Intel(R)
// Xeon(R) Processor"): x86's vendor, family and model, or Arm's implementer
// and part. On lavapipe the device is this CPU, so `pebench compare` times a
// CPU device only against the same host.
std::string cpu_id(const std::map<std::string, std::string>& fields) {
  if (!field(fields, "vendor_id").empty()) {
    return fmt::format("{} family {} model {}", field(fields, "vendor_id"), field(fields, "cpu family"),
                       field(fields, "model"));
  }
  if (!field(fields, "CPU implementer").empty()) {
    return fmt::format("implementer {} part {}", field(fields, "CPU implementer"), field(fields, "CPU part"));
  }
  return "unknown";
}

}  // namespace

nlohmann::json host_json() {
  struct utsname u {};
  std::string os = "unknown";
  if (uname(&u) == 0) os = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  const std::string pretty = read_os_pretty_name();
  if (!pretty.empty()) os = pretty + " (" + os + ")";
  const auto cpuinfo = read_cpuinfo();
  const std::string model = field(cpuinfo, "model name");
  return {{"os", os},
          {"cpu", model.empty() ? "unknown" : model},
          {"cpu_id", cpu_id(cpuinfo)},
          {"logical_cores", std::thread::hardware_concurrency()}};
}

nlohmann::json device_json(const PhysicalDeviceInfo& d) {
  const auto& l = d.limits;
  const auto& f = d.features;
  nlohmann::json limits = {
      {"max_compute_shared_memory_size", l.max_compute_shared_memory_size},
      {"max_compute_work_group_invocations", l.max_compute_work_group_invocations},
      {"max_compute_work_group_size", {l.max_compute_work_group_size[0], l.max_compute_work_group_size[1],
                                       l.max_compute_work_group_size[2]}},
      {"max_compute_work_group_count", {l.max_compute_work_group_count[0], l.max_compute_work_group_count[1],
                                        l.max_compute_work_group_count[2]}},
      {"max_storage_buffer_range", l.max_storage_buffer_range},
      {"max_push_constants_size", l.max_push_constants_size},
      {"max_per_stage_descriptor_storage_buffers", l.max_per_stage_descriptor_storage_buffers},
      {"max_bound_descriptor_sets", l.max_bound_descriptor_sets},
      {"max_uniform_buffer_range", l.max_uniform_buffer_range},
      {"max_per_stage_resources", l.max_per_stage_resources},
      {"max_per_stage_descriptor_storage_images", l.max_per_stage_descriptor_storage_images},
      {"max_texel_buffer_elements", l.max_texel_buffer_elements},
      {"min_texel_buffer_offset_alignment", l.min_texel_buffer_offset_alignment},
      {"min_storage_buffer_offset_alignment", l.min_storage_buffer_offset_alignment},
      {"max_memory_allocation_size", l.max_memory_allocation_size},
      {"device_local_heap_bytes", d.device_local_heap_bytes},
      {"subgroup_size_min", d.subgroup.min_size},
      {"subgroup_size_max", d.subgroup.max_size},
      {"timestamp_valid_bits", d.timestamp_valid_bits},
  };
  nlohmann::json features = {
      {"storage_buffer_16bit", f.storage_buffer_16bit},   {"shader_float16", f.shader_float16},
      {"shader_int8", f.shader_int8},                     {"storage_buffer_8bit", f.storage_buffer_8bit},
      {"subgroup_size_control", f.subgroup_size_control}, {"compute_full_subgroups", f.compute_full_subgroups},
      {"shader_int64", f.shader_int64},                   {"shader_float64", f.shader_float64},
      {"unified_memory", d.has_unified_memory},           {"timestamps", d.timestamps_supported()},
      {"subgroup_operations", d.subgroup.supported_operations},
      {"pipeline_executable_info", f.pipeline_executable_info},
      {"subgroup_operation_names", subgroup_operation_names(d.subgroup.supported_operations)},
      {"integer_dot_product", f.integer_dot_product},
      {"integer_dot_product_4x8_accelerated", f.integer_dot_product_4x8_accelerated},
      {"cooperative_matrix", f.cooperative_matrix},
      {"storage_texel_rgba32f", f.storage_texel_rgba32f},
      {"storage_texel_rgba16f", f.storage_texel_rgba16f},
      {"storage_texel_r32f", f.storage_texel_r32f},
      {"bfloat16", f.bfloat16},
  };
  nlohmann::json heaps = nlohmann::json::array();
  for (size_t h = 0; h < d.memory_heaps.size(); ++h) {
    heaps.push_back({{"index", h}, {"size", d.memory_heaps[h].size},
                     {"flags", memory_heap_flag_names(d.memory_heaps[h].flags)}});
  }
  nlohmann::json types = nlohmann::json::array();
  for (size_t t = 0; t < d.memory_types.size(); ++t) {
    types.push_back({{"index", t}, {"heap", d.memory_types[t].heap},
                     {"flags", memory_property_names(d.memory_types[t].flags)}});
  }
  return {{"index", d.index},
          {"name", d.name},
          {"profile", d.profile.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.profile)},
          {"vendor_id", d.vendor_id},
          {"vendor", vendor_name(d.vendor_id)},
          {"device_uuid", uuid_string(d.device_uuid)},
          {"driver_uuid", uuid_string(d.driver_uuid)},
          {"pipeline_cache_uuid", uuid_string(d.pipeline_cache_uuid)},
          {"conformance_version", d.conformance_version.empty() ? nlohmann::json(nullptr)
                                                                 : nlohmann::json(d.conformance_version)},
          {"memory_heaps", heaps},
          {"memory_types", types},
          {"device_id", d.device_id},
          {"device_type", device_type_name(d.type)},
          {"driver_id", static_cast<int>(d.driver_id)},
          {"driver_name", d.driver_name},
          {"driver_info", d.driver_info},
          {"driver_version", driver_version_string(d.vendor_id, d.driver_id, d.driver_version_raw)},
          {"api_version", api_version_string(d.api_version)},
          {"subgroup_size", d.subgroup.size},
          {"timestamp_period_ns", static_cast<double>(d.limits.timestamp_period)},
          {"limits", limits},
          {"features", features}};
}

std::string iso8601_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ReportWriter::ReportWriter(std::string path, nlohmann::json header)
    : path_(std::move(path)), header_(std::move(header)) {}

void ReportWriter::add(const CaseResult& result) {
  results_.push_back(result);
  results_json_.push_back(result_to_json(result));
}

void ReportWriter::flush() const {
  nlohmann::json j = header_;
  j[report_key::kResults] = results_json_;
  write_file_atomic(path_, j.dump(1) + "\n");
}

}  // namespace pebench
