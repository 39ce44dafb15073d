// Phone profiles, the mobile preset's f32 fallback and the device facts a
// vendor comparison needs (issue 13).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#include "harness/contract/registry.h"
#include "harness/engine/device_profile.h"
#include "harness/engine/presets.h"
#include "runtime/physical_device.h"
#include "test_util.h"

namespace pebench {
namespace {

std::vector<double> lim(const DeviceProfile& p, const std::string& key) {
  auto it = p.limits.find(key);
  if (it == p.limits.end()) {
    ADD_FAILURE() << p.name << " names no " << key;
    return {};
  }
  return it->second;
}
bool feat(const DeviceProfile& p, const std::string& key) { return p.features.count(key) && p.features.at(key); }

TEST(Mobile, PhoneProfilesKeepTheAndroidBaselineFloor) {
  for (const char* name : {"android-baseline-2022", "mali-valhall", "adreno-6xx-7xx", "powervr-rogue"}) {
    const DeviceProfile p = load_profile(name);
    EXPECT_EQ(p.name, name);
    EXPECT_EQ(lim(p, "maxPerStageDescriptorStorageBuffers"), std::vector<double>{4}) << name;
    EXPECT_EQ(lim(p, "maxPushConstantsSize"), std::vector<double>{128}) << name;
    EXPECT_EQ(lim(p, "maxBoundDescriptorSets"), std::vector<double>{4}) << name;
    EXPECT_EQ(lim(p, "maxStorageBufferRange"), std::vector<double>{134217728}) << name;
  }
  const DeviceProfile mali = load_profile("mali-valhall");
  EXPECT_EQ(lim(mali, "maxComputeWorkGroupInvocations"), std::vector<double>{512});
  EXPECT_EQ(lim(mali, "maxComputeSharedMemorySize"), std::vector<double>{32768});
  EXPECT_TRUE(feat(mali, "storageBuffer16BitAccess"));
  const DeviceProfile adreno = load_profile("adreno-6xx-7xx");
  EXPECT_EQ(lim(adreno, "maxComputeWorkGroupInvocations"), std::vector<double>{1024});
  const DeviceProfile pvr = load_profile("powervr-rogue");
  EXPECT_EQ(lim(pvr, "maxComputeWorkGroupInvocations"), std::vector<double>{128});
  EXPECT_EQ(lim(pvr, "maxComputeSharedMemorySize"), std::vector<double>{16384});
  EXPECT_FALSE(feat(pvr, "storageBuffer16BitAccess"));
}

TEST(Mobile, ProfilesClampTheNewLimitsAndFeatures) {
  PhysicalDeviceInfo real;
  real.limits.max_bound_descriptor_sets = 32;
  real.limits.max_per_stage_descriptor_storage_buffers = 1000;
  real.features.storage_buffer_16bit = real.features.integer_dot_product = real.features.cooperative_matrix = true;
  const PhysicalDeviceInfo e = apply_profile(real, load_profile("android-baseline-2022"));
  EXPECT_EQ(e.limits.max_bound_descriptor_sets, 4u);
  EXPECT_EQ(e.limits.max_per_stage_descriptor_storage_buffers, 4u);
  EXPECT_FALSE(e.features.storage_buffer_16bit);
  EXPECT_FALSE(e.features.integer_dot_product);
  EXPECT_FALSE(e.features.cooperative_matrix);
}

TEST(Mobile, MobilePresetRunsF32WithoutSixteenBitStorage) {
  const Preset* mobile = find_preset("mobile");
  ASSERT_NE(mobile, nullptr);
  SweepSpec spec;
  spec.preset_axes = mobile->axes;
  spec.preset_overrides = mobile->overrides;
  const auto planned = expand_sweep(Registry::instance(), spec);
  PhysicalDeviceInfo dev;
  dev.features.storage_buffer_16bit = true;
  std::string note;
  EXPECT_EQ(plan_for_device(mobile, spec, planned, dev, note).size(), planned.size());
  EXPECT_TRUE(note.empty());

  dev.features.storage_buffer_16bit = false;
  const auto f32 = plan_for_device(mobile, spec, planned, dev, note);
  EXPECT_EQ(f32.size(), planned.size());
  EXPECT_NE(note.find("runs f32"), std::string::npos) << note;
  for (const auto& c : f32) EXPECT_EQ(c.params.s("dtype"), "f32") << c.variant->id();

  // An explicit --dtype wins: f16 asked for is f16 (and reported unsupported).
  spec.axes["dtype"] = {"f16"};
  const auto asked = expand_sweep(Registry::instance(), spec);
  for (const auto& c : plan_for_device(mobile, spec, asked, dev, note)) EXPECT_EQ(c.params.s("dtype"), "f16");
  EXPECT_TRUE(note.empty());
  // Other presets keep their dtypes.
  spec.axes.clear();
  EXPECT_EQ(plan_for_device(find_preset("quick"), spec, planned, dev, note).size(), planned.size());
  EXPECT_TRUE(note.empty());
}

TEST(Mobile, VendorNamesUuidsAndSubgroupOperations) {
  EXPECT_STREQ(vendor_name(0x10DE), "NVIDIA");
  EXPECT_STREQ(vendor_name(0x1002), "AMD");
  EXPECT_STREQ(vendor_name(0x13B5), "ARM");
  EXPECT_STREQ(vendor_name(0x5143), "Qualcomm");
  EXPECT_STREQ(vendor_name(0x1010), "Imagination");
  EXPECT_STREQ(vendor_name(0x10005), "Mesa software");
  EXPECT_STREQ(vendor_name(0x4242), "unknown");
  uint8_t u[VK_UUID_SIZE];
  for (uint32_t i = 0; i < VK_UUID_SIZE; ++i) u[i] = static_cast<uint8_t>(i * 17);
  EXPECT_EQ(uuid_string(u), "00112233-4455-6677-8899-aabbccddeeff");
  EXPECT_EQ(subgroup_operation_names(VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT),
            (std::vector<std::string>{"basic", "shuffle"}));
  EXPECT_EQ(memory_property_names(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT),
            (std::vector<std::string>{"device_local", "host_visible"}));
}

TEST(Mobile, DevicesJsonHasTheVendorFacts) {
  const auto r = test::run_pebench({"devices", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto d = nlohmann::json::parse(r.out).at(0);
  EXPECT_FALSE(d.at("vendor").get<std::string>().empty());
  EXPECT_EQ(d.at("device_uuid").get<std::string>().size(), 36u);
  EXPECT_EQ(d.at("driver_uuid").get<std::string>().size(), 36u);
  EXPECT_NE(d.at("device_uuid"), d.at("pipeline_cache_uuid"));
  ASSERT_FALSE(d.at("memory_heaps").empty());
  EXPECT_GT(d["memory_heaps"][0].at("size").get<uint64_t>(), 0u);
  ASSERT_FALSE(d.at("memory_types").empty());
  EXPECT_TRUE(d["features"].at("subgroup_operation_names").is_array());
  for (const char* k : {"integer_dot_product", "cooperative_matrix", "bfloat16"}) {
    EXPECT_TRUE(d["features"].at(k).is_boolean()) << k;
  }
  EXPECT_GT(d["limits"].at("max_bound_descriptor_sets").get<int>(), 0);
}

// Every kernel runs within the Android baseline: 4 storage buffers, 128
// bytes of push constants, 128 invocations, no 16-bit storage. The split
// complex_order path, the packed floater/recurrent buffers and attention's
// packed builds (naive and flash; deberta binds the most tensors) validate.
TEST(Mobile, EveryKernelRunsWithinTheAndroidBaseline) {
  const std::string dir = test::temp_dir("android_baseline");
  const auto r = test::run_pebench(
      {"run", "--emulate", "android-baseline-2022", "--variant",
       "abs.complex_order,abs.recurrent,abs.floater,abs.conv,abs.sinusoidal,rope.apply,attn.nope,attn.deberta",
       "--impl", "default,sequential,naive,flash", "--batch", "1", "--heads", "1", "--dim", "64", "--seq", "64",
       "--quiet", "--benchmark_min_time=0.001", "--out", dir + "/a.json"});
  std::ifstream in(dir + "/a.json");
  const auto rep = nlohmann::json::parse(in);
  EXPECT_EQ(rep["devices"][0]["profile"], "android-baseline-2022");
  int ok = 0, packed = 0;
  for (const auto& res : rep["results"]) {
    const std::string v = res["variant"];
    EXPECT_EQ(res["dtype"], "f32") << v;  // the default dtype
    for (const auto& p : res["pipelines"]) {
      EXPECT_LE(p["local_size"][0].get<int>() * p["local_size"][1].get<int>() * p["local_size"][2].get<int>(), 128)
          << v << " " << p["shader"];
      packed += p["shader"].get<std::string>().find("_packed") != std::string::npos;
    }
    EXPECT_EQ(res["status"], "ok") << v << ": " << res["reason"];
    ok += res["status"] == "ok";
    if (v == "abs.complex_order") {
      ASSERT_EQ(res["pipelines"].size(), 3u) << "the split path (3 passes of 4 buffers)";
      EXPECT_EQ(res["pipelines"][0]["shader"].get<std::string>().rfind("abs_complex_order_split", 0), 0u);
    }
  }
  EXPECT_GE(ok, 10) << r.out;
  EXPECT_GE(packed, 3) << "attention ran no packed build: flash nope, flash and naive deberta need one";
}

}  // namespace
}  // namespace pebench
