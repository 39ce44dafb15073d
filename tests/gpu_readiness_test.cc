// The instruments that show a GPU without one (issue: GPU-readiness):
// SPIR-V reflection and the spec-constant check, device profiles
// (--emulate), --compile-only with pipeline statistics, and a device that
// cannot execute (RADV's null hardware device, where Mesa ships it).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness/contract/errors.h"
#include "harness/engine/device_profile.h"
#include "runtime/embedded_shaders.h"
#include "runtime/spirv_reflect.h"
#include "test_util.h"

namespace pebench {
namespace {

using nlohmann::json;

SpirvReflection reflect(const std::string& shader, const std::string& build = "f32") {
  const EmbeddedShader* spv = find_embedded_shader(shader, build);
  EXPECT_NE(spv, nullptr) << shader;
  auto r = reflect_spirv(spv->words, spv->word_count);
  EXPECT_TRUE(r.has_value());
  return r.value_or(SpirvReflection{});
}

TEST(SpirvReflect, FlashKernelNamesItsSpecConstantsAndSizesItsWorkgroupFromConstant0) {
  const SpirvReflection r = reflect("attn_flash_nope");
  ASSERT_TRUE(r.spec_constants.count(1));
  EXPECT_EQ(r.spec_constants.at(1).name, "HEAD_DIM");
  EXPECT_EQ(r.spec_name(2), "BC");
  EXPECT_EQ(r.spec_name(4), "ROWS");
  ASSERT_TRUE(r.local_size[0].spec_id.has_value());
  EXPECT_EQ(*r.local_size[0].spec_id, 0u);
  EXPECT_EQ(r.spec_name(0), "local_size_x");
  EXPECT_EQ(r.local_size[1].literal, 1u);
  EXPECT_EQ(r.local_size_with({96, 64, 32}), (std::array<uint32_t, 3>{96, 1, 1}));
  // A bool constant keeps its kind and default (VEC4 = true).
  ASSERT_TRUE(r.spec_constants.count(3));
  EXPECT_TRUE(r.spec_constants.at(3).is_bool);
  EXPECT_EQ(r.spec_constants.at(3).default_value, 1u);
}

TEST(SpirvReflect, TexelBuildsDeclareTheirTexelBuffersInTheirFormats) {
  // The CPU kernels' texel builds read k and v (bindings 1 and 2) as vec4
  // texels of the storage dtype (issue 45: decode), and, after q, k, v, o
  // and the two partials (6): attn.xl's rk (its first extra) as vec4 texels
  // of the storage dtype; attn.deberta's c2p and p2c (its fourth and fifth)
  // as r32f in both builds. The plain builds declare none.
  using Texels = std::map<uint32_t, uint32_t>;
  const uint32_t f32 = kSpirvImageFormatRgba32f, f16 = kSpirvImageFormatRgba16f;
  EXPECT_EQ(reflect("attn_flash_nope_texel").texel_buffers, (Texels{{1, f32}, {2, f32}}));
  EXPECT_EQ(reflect("attn_flash_nope_texel", "f16").texel_buffers, (Texels{{1, f16}, {2, f16}}));
  EXPECT_EQ(reflect("attn_flash_xl_texel").texel_buffers, (Texels{{1, f32}, {2, f32}, {6, f32}}));
  EXPECT_EQ(reflect("attn_flash_xl_texel", "f16").texel_buffers, (Texels{{1, f16}, {2, f16}, {6, f16}}));
  for (const char* build : {"f32", "f16"}) {
    const uint32_t kv = std::string(build) == "f16" ? f16 : f32;
    EXPECT_EQ(reflect("attn_flash_deberta_texel", build).texel_buffers,
              (Texels{{1, kv}, {2, kv}, {9, kSpirvImageFormatR32f}, {10, kSpirvImageFormatR32f}}));
  }
  EXPECT_TRUE(reflect("attn_flash_xl").texel_buffers.empty());
  EXPECT_TRUE(reflect("attn_flash_deberta").texel_buffers.empty());
  EXPECT_TRUE(reflect("attn_flash_nope").texel_buffers.empty());
  EXPECT_TRUE(reflect("attn_flash_nope").texel_buffers.empty());
}

TEST(SpirvReflect, RejectsWhatIsNotAModule) {
  const uint32_t garbage[] = {1, 2, 3, 4, 5, 6};
  EXPECT_FALSE(reflect_spirv(garbage, 6).has_value());
  EXPECT_FALSE(reflect_spirv(nullptr, 0).has_value());
  // A truncated module: the last instruction claims more words than there are.
  const EmbeddedShader* spv = find_embedded_shader("attn_softmax", "f32");
  ASSERT_NE(spv, nullptr);
  std::vector<uint32_t> cut(spv->words, spv->words + spv->word_count);
  cut.resize(cut.size() - 1);
  cut.back() = (50u << 16) | 43u;  // an OpConstant of 50 words at the end
  EXPECT_FALSE(reflect_spirv(cut.data(), cut.size()).has_value());
}

TEST(Pipeline, AMissingSpecConstantIsAClearErrorNamingIt) {
  PipelineDesc desc;
  desc.buffer_count = 6;
  desc.push_constant_bytes = 36;
  desc.spec_constants = {64, 64};  // the shader declares ids up to 5 at least
  try {
    test::gpu().pipeline("attn_flash_nope", DType::kF32, desc);
    FAIL() << "a pipeline without the shader's spec constants was created";
  } catch (const StatusError& e) {
    EXPECT_NE(std::string(e.what()).find("spec constant 2 (BC)"), std::string::npos) << e.what();
  }
}

TEST(Pipeline, AMisnamedSpecConstantIsAClearErrorNamingBoth) {
  PipelineDesc desc;
  desc.buffer_count = 1;
  desc.push_constant_bytes = 8;
  desc.spec_constants = {64, 1};
  desc.spec_names = {{1, "VEC4_M"}};  // attn_softmax calls constant 1 VEC4
  try {
    test::gpu().pipeline("attn_softmax", DType::kF32, desc);
    FAIL() << "a pipeline whose spec constant the host names differently was created";
  } catch (const StatusError& e) {
    EXPECT_NE(std::string(e.what()).find("spec constant 1 as VEC4_M, the shader declares it as VEC4"),
              std::string::npos)
        << e.what();
  }
  // The right name, and a name for an id the shader does not declare, are fine.
  desc.spec_names = {{1, "VEC4"}, {7, "ANYTHING"}};
  EXPECT_NO_THROW(test::gpu().pipeline("attn_softmax", DType::kF32, desc));
}

TEST(Pipeline, AWorkgroupPastTheDeviceLimitIsUnsupported) {
  GpuContext& phone = test::gpu_as("android-baseline-2022");
  PipelineDesc desc;
  desc.buffer_count = 3;
  desc.push_constant_bytes = 0;
  desc.spec_constants = {256, 1};  // local_size_x 256 > 128; VEC4
  try {
    phone.pipeline("attn_softmax", DType::kF32, desc);
    FAIL() << "a 256-invocation pipeline was created under a 128-invocation profile";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("maxComputeWorkGroupInvocations (128)"), std::string::npos) << e.what();
  } catch (const StatusError& e) {
    // Another check may come first on this shader's interface; it must still name a limit.
    ADD_FAILURE() << e.what();
  }
}

TEST(Pipeline, RecordsNamedSpecConstantsAndLocalSize) {
  const CaseResult r = test::run_case("attn.nope", {{"impl", "flash"}, {"seq", "16"}, {"dim", "32"}, {"heads", "2"}});
  ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
  ASSERT_FALSE(r.pipelines.empty());
  const PipelineRecord& p = r.pipelines.front();
  // 16 query rows per kv head: direct mode, which on lavapipe runs the texel
  // build (k and v as texels: issue 45).
  EXPECT_EQ(p.shader, "attn_flash_nope_texel");
  EXPECT_EQ(p.storage, "f32");
  EXPECT_EQ(test::spec_constant(p, "HEAD_DIM"), 32u);
  EXPECT_EQ(p.local_size[0], p.spec_constants.front().second);  // local_size_x_id = 0
  EXPECT_GE(p.groups[0], 1u);
}

// --- device profiles ----------------------------------------------------------

TEST(DeviceProfile, AndroidBaselineCarriesTheKhronosNumbersAndNeverExceedsTheDevice) {
  const PhysicalDeviceInfo& real = test::gpu().info();
  const PhysicalDeviceInfo phone = apply_profile(real, load_profile("android-baseline-2022"));
  EXPECT_EQ(phone.profile, "android-baseline-2022");
  EXPECT_EQ(phone.type, VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU);
  EXPECT_EQ(phone.limits.max_compute_work_group_invocations, std::min(128u, real.limits.max_compute_work_group_invocations));
  EXPECT_EQ(phone.limits.max_compute_shared_memory_size, std::min(16384u, real.limits.max_compute_shared_memory_size));
  EXPECT_EQ(phone.limits.max_per_stage_descriptor_storage_buffers,
            std::min(4u, real.limits.max_per_stage_descriptor_storage_buffers));
  EXPECT_EQ(phone.limits.max_push_constants_size, std::min(128u, real.limits.max_push_constants_size));
  EXPECT_EQ(phone.limits.max_compute_work_group_size[2], std::min(64u, real.limits.max_compute_work_group_size[2]));
  EXPECT_GE(phone.limits.min_storage_buffer_offset_alignment, 256u);
  EXPECT_FALSE(phone.features.storage_buffer_16bit);  // not required by the profile
  EXPECT_FALSE(phone.features.shader_float16);
  EXPECT_EQ(phone.subgroup.size, real.subgroup.size);  // the hardware's own
  EXPECT_EQ(phone.subgroup.supported_operations, real.subgroup.supported_operations & VK_SUBGROUP_FEATURE_BASIC_BIT);
}

TEST(DeviceProfile, DesktopGpuIsDiscreteAndClampedToTheDevice) {
  const PhysicalDeviceInfo& real = test::gpu().info();
  const PhysicalDeviceInfo desk = apply_profile(real, load_profile("desktop-gpu"));
  EXPECT_EQ(desk.type, VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU);
  EXPECT_LE(desk.limits.max_compute_shared_memory_size, real.limits.max_compute_shared_memory_size);
  EXPECT_LE(desk.limits.max_compute_shared_memory_size, 49152u);
  EXPECT_EQ(desk.limits.max_storage_buffer_range, real.limits.max_storage_buffer_range);  // 4 GiB > lavapipe's
  EXPECT_EQ(desk.features.storage_buffer_16bit, real.features.storage_buffer_16bit);
  EXPECT_EQ(desk.driver_id, real.driver_id);  // llvmpipe's loop budget still applies
}

TEST(DeviceProfile, VulkanProfilesFilesAreTheUnionOfTheirCapabilities) {
  const DeviceProfile p = parse_profile_json(R"({
    "capabilities": {
      "a": {"properties": {"VkPhysicalDeviceProperties": {"deviceType": "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU",
              "limits": {"maxComputeSharedMemorySize": 16384, "minStorageBufferOffsetAlignment": 256,
                         "maxComputeWorkGroupSize": [64, 64, 64]}}},
            "features": {"VkPhysicalDevice16BitStorageFeatures": {"storageBuffer16BitAccess": false}}},
      "b": {"properties": {"VkPhysicalDeviceProperties": {"limits": {"maxComputeSharedMemorySize": 32768,
              "minStorageBufferOffsetAlignment": 64, "maxComputeWorkGroupSize": [256, 32, 64]}}},
            "features": {"VkPhysicalDeviceVulkan11Features": {"storageBuffer16BitAccess": true}}}},
    "profiles": {"VP_TEST_phone": {"capabilities": ["a", "b"]}}})",
                                                  "test.json");
  EXPECT_EQ(p.name, "VP_TEST_phone");
  EXPECT_EQ(p.type, VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU);
  EXPECT_EQ(p.limits.at("maxComputeSharedMemorySize"), std::vector<double>{32768});
  EXPECT_EQ(p.limits.at("minStorageBufferOffsetAlignment"), std::vector<double>{64});
  EXPECT_EQ(p.limits.at("maxComputeWorkGroupSize"), (std::vector<double>{256, 64, 64}));
  EXPECT_TRUE(p.features.at("storageBuffer16BitAccess"));
}

TEST(DeviceProfile, BadProfilesAreUsageErrorsNamingTheValue) {
  auto message = [](const std::string& what) {
    try {
      load_profile(what);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message("pixel-9000").find("'pixel-9000': no such built-in profile (desktop-gpu, android-baseline-2022"),
            std::string::npos)
      << message("pixel-9000");
  const std::string dir = test::temp_dir("profiles");
  std::ofstream(dir + "/broken.json") << "{ \"capabilities\": ";
  EXPECT_NE(message(dir + "/broken.json").find("broken.json': not JSON"), std::string::npos);
  std::ofstream(dir + "/nolimits.json") << R"({"capabilities": {"x": {"features": {}}}})";
  EXPECT_NE(message(dir + "/nolimits.json").find("holds no limits"), std::string::npos);
  EXPECT_NE(message(dir).find("a directory"), std::string::npos);
}

// --- the command line ---------------------------------------------------------

TEST(CompileOnly, BuildsEveryPipelineRunsNothingAndSaysSo) {
  const std::string out = test::temp_dir("compile") + "/r.json";
  const auto r = test::run_pebench({"run", "--compile-only", "--variant", "attn.nope,rope.apply", "--seq", "32",
                                    "--dim", "64", "--heads", "2", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("spilled VGPRs"), std::string::npos) << r.out;  // the table's statistics columns
  EXPECT_NE(r.out.find("attn_flash_nope"), std::string::npos) << r.out;
  const json rep = json::parse(std::ifstream(out));
  EXPECT_TRUE(rep["run"]["compile_only"].get<bool>());
  ASSERT_EQ(rep["results"].size(), 3u);  // rope.apply, attn.nope naive and flash
  for (const auto& c : rep["results"]) {
    EXPECT_EQ(c["status"], "compiled") << c.dump();
    EXPECT_TRUE(c["time_ns"].is_null());
    EXPECT_TRUE(c["validation"].is_null());
    ASSERT_FALSE(c["pipelines"].empty()) << c.dump();
    for (const auto& p : c["pipelines"]) {
      EXPECT_EQ(p["local_size"].size(), 3u);
      EXPECT_GE(p["local_size"][0].get<int>(), 1);
      EXPECT_FALSE(p["spec_constants"].empty());
    }
  }
}

TEST(CompileOnly, BadCombinationsAndProfilesGetOneLineAndExit2) {
  const std::string dir = test::temp_dir("bad");
  auto r = test::run_pebench({"run", "--compile-only", "--dump", dir, "--variant", "rope.apply", "--out",
                              dir + "/r.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--compile-only runs nothing, so it has nothing to --dump"), std::string::npos) << r.out;
  r = test::run_pebench({"run", "--emulate", "nokia-3310", "--variant", "rope.apply", "--out", dir + "/r.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("'nokia-3310'"), std::string::npos) << r.out;
  std::ofstream(dir + "/p.json") << "not json";
  r = test::run_pebench({"devices", "--emulate", dir + "/p.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("not JSON"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json"));  // nothing was run or written
}

TEST(Emulate, TheReportRecordsTheProfileAndTheLimitsInForce) {
  const std::string out = test::temp_dir("emulate") + "/r.json";
  const auto r = test::run_pebench({"run", "--emulate", "android-baseline-2022", "--variant", "rope.apply", "--seq",
                                    "16", "--dtype", "f32,f16", "--out", out, "--benchmark_min_time=0.001"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json rep = json::parse(std::ifstream(out));
  const json& dev = rep["devices"][0];
  EXPECT_EQ(dev["profile"], "android-baseline-2022");
  EXPECT_EQ(dev["device_type"], "integrated");
  EXPECT_LE(dev["limits"]["max_compute_work_group_invocations"].get<int>(), 128);
  EXPECT_LE(dev["limits"]["max_per_stage_descriptor_storage_buffers"].get<int>(), 4);
  EXPECT_FALSE(dev["features"]["storage_buffer_16bit"].get<bool>());
  ASSERT_EQ(rep["results"].size(), 2u);
  for (const auto& c : rep["results"]) {
    if (c["dtype"] == "f16") {
      EXPECT_EQ(c["status"], "unsupported");
      EXPECT_NE(c["reason"].get<std::string>().find("16-bit storage"), std::string::npos);
    } else {
      EXPECT_EQ(c["status"], "ok") << c.dump();
      for (const auto& p : c["pipelines"]) EXPECT_LE(p["local_size"][0].get<int>(), 128);
    }
  }
  const auto listed = test::run_pebench({"devices", "--profiles"});
  EXPECT_EQ(listed.exit_code, 0);
  EXPECT_NE(listed.out.find("desktop-gpu"), std::string::npos);
  EXPECT_NE(listed.out.find("android-baseline-2022"), std::string::npos);
}

// --- RADV's null hardware device (AMD's compiler, no execution) ---------------

const char* kRadvIcd = "/usr/share/vulkan/icd.d/radeon_icd.x86_64.json";

std::vector<std::string> navi21_env() {
  const std::string xdg = test::temp_dir("xdg");
  return {"RADV_FORCE_FAMILY=navi21", std::string("VK_DRIVER_FILES=") + kRadvIcd, "XDG_RUNTIME_DIR=" + xdg};
}

TEST(NullDevice, ATimedRunStopsWithOneLineSuggestingCompileOnly) {
  if (!std::filesystem::exists(kRadvIcd)) GTEST_SKIP() << "Mesa's RADV is not installed";
  const std::string out = test::temp_dir("null") + "/r.json";
  const auto r = test::run_pebench({"run", "--variant", "abs.learned", "--seq", "64", "--out", out}, navi21_env());
  EXPECT_EQ(r.exit_code, 2) << r.out;  // not a crash
  EXPECT_NE(r.out.find("cannot execute"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--compile-only"), std::string::npos) << r.out;
}

TEST(NullDevice, CompileOnlyReportsTheCompilersStatistics) {
  if (!std::filesystem::exists(kRadvIcd)) GTEST_SKIP() << "Mesa's RADV is not installed";
  const std::string out = test::temp_dir("null") + "/r.json";
  const auto r = test::run_pebench(
      {"run", "--compile-only", "--variant", "attn.nope", "--impl", "flash", "--dim", "64", "--seq", "256", "--out", out},
      navi21_env());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json rep = json::parse(std::ifstream(out));
  EXPECT_EQ(rep["devices"][0]["device_type"], "discrete");
  EXPECT_TRUE(rep["devices"][0]["features"]["pipeline_executable_info"].get<bool>());
  const json& stats = rep["results"][0]["pipelines"][0]["stats"];
  for (const char* s : {"VGPRs", "SGPRs", "Spilled VGPRs", "Spilled SGPRs", "Scratch size", "Subgroups per SIMD"}) {
    EXPECT_TRUE(stats.contains(s)) << s << " in " << stats.dump();
  }
  EXPECT_GT(stats["VGPRs"].get<double>(), 0);
}

}  // namespace
}  // namespace pebench
