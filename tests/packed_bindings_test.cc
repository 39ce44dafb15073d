// Packed bindings (tensor_layout, shaders/attn/attn_pack.glsl): where a
// device allows 4 storage buffers per stage (Android's baseline), every
// attention kernel reaches its output, partials and the variant's tensors
// through one binding, and still validates: on the GPU kernel with and
// without subgroup shuffles, on the CPU kernel, naive and flash, f32 and
// f16, causal, GQA and decode with key splits (attn_combine then binds
// members of the pack alone). Where the device allows more, nothing is packed.
#include <gtest/gtest.h>

#include <stdexcept>

#include "harness/contract/registry.h"
#include "harness/engine/device_profile.h"
#include "test_util.h"

namespace pebench {
namespace {

TEST(PackLayout, MembersShareABufferAtAlignedOffsetsInOrder) {
  std::vector<TensorDesc> t(4);
  t[0] = {"q", TensorRole::kInput, DType::kF16, {3, 5}};
  t[1] = {"o", TensorRole::kOutput, DType::kF16, {3, 5}, "", "pack"};
  t[2] = {"slopes", TensorRole::kConstant, DType::kF32, {3}, "", "pack"};
  t[3] = {"part", TensorRole::kScratch, DType::kF32, {1000}, "", "pack"};
  const TensorLayout layout = tensor_layout(t);
  EXPECT_EQ(layout.at("q").buffer, "q");
  EXPECT_EQ(layout.at("q").offset, 0u);
  EXPECT_EQ(layout.at("o").buffer, "pack");
  EXPECT_EQ(layout.at("o").offset, 0u);
  EXPECT_EQ(layout.at("slopes").offset, kPackAlignment);
  EXPECT_EQ(layout.at("part").offset, 2 * kPackAlignment);
  EXPECT_EQ(layout.at("part").bytes, 4000u);
  ASSERT_EQ(layout.buffers.size(), 2u);
  EXPECT_EQ(layout.at("q").bytes, 30u);
  EXPECT_EQ(layout.at("q").span(), 32u);  // whole words
  EXPECT_EQ(layout.buffers.at("q"), 32u);
  EXPECT_EQ(layout.buffers.at("pack"), 2 * kPackAlignment + 4000u);
  EXPECT_THROW(layout.at("k"), std::logic_error);

  t[2].pack = "q";  // a pack named like a tensor
  EXPECT_THROW(tensor_layout(t), std::logic_error);
}

DeviceProfile four_buffers(const std::string& base, bool shuffles, VkPhysicalDeviceType type) {
  DeviceProfile p = load_profile(base);
  // gpu_as keeps one context per name.
  p.name = base + (type == VK_PHYSICAL_DEVICE_TYPE_CPU ? " as a CPU" : "") + " with 4 storage buffers" +
           (shuffles ? "" : ", no shuffles");
  p.type = type;
  p.limits["maxPerStageDescriptorStorageBuffers"] = {4};
  if (!shuffles) {
    p.subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT |
                            VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  }
  return p;
}

std::vector<std::string> attention_variants() {
  std::vector<std::string> out;
  for (const Variant* v : Registry::instance().variants()) {
    if (v->family() == "attn") out.push_back(v->id());
  }
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Every case validated, and every flash case ran the packed build of the
// kernel family the device gets (`flash_prefix`: attn_flash_gpu_,
// attn_flash_gpusm_ or the CPU kernel's attn_flash_<variant>).
void expect_packed_and_validated(const std::vector<CaseResult>& results, const std::string& device,
                                 const std::string& flash_prefix) {
  size_t ran = 0;
  for (const auto& r : results) {
    SCOPED_TRACE(device + ": " + r.variant + " " + r.impl + " " + r.dtype + " " + r.label);
    if (r.status == CaseStatus::kSkipped) continue;
    ++ran;
    EXPECT_EQ(r.status, CaseStatus::kOk) << status_name(r.status) << ": " << r.reason;
    EXPECT_TRUE(r.validation.ran && r.validation.passed) << r.validation.detail;
    EXPECT_EQ(r.vk_validation_errors, 0u);
    bool packed = false;
    for (const auto& p : r.pipelines) packed = packed || (p.shader.rfind(flash_prefix, 0) == 0 && ends_with(p.shader, "_packed"));
    if (r.impl == "flash") {
      EXPECT_TRUE(packed) << "no " << flash_prefix << "..._packed pipeline ran";
    }
  }
  EXPECT_GT(ran, 0u);
}

class PackedBindings : public ::testing::TestWithParam<std::string> {};

TEST_P(PackedBindings, ValidateWithinFourStorageBuffers) {
  const std::map<std::string, std::string> prefill = {{"impl", "naive,flash"}, {"dtype", "f32,f16"},
                                                      {"causal", "0,1"},        {"heads", "4"},
                                                      {"kv_heads", "2"},        {"seq", "24"},
                                                      {"kv_seq", "40"},         {"dim", "32"}};
  const std::map<std::string, std::string> decode = {{"impl", "flash"}, {"dtype", "f32"},   {"heads", "4"},
                                                     {"kv_heads", "1"}, {"seq", "1"},       {"kv_seq", "200"},
                                                     {"dim", "64"}};
  // The CPU kernel of attn.rope f32 is attn_flash_nope on pre-rotated q and k.
  const std::string cpu_kernel = GetParam() == "attn.rope" ? "attn_flash_" : "attn_flash_" + GetParam().substr(5);
  const std::pair<DeviceProfile, std::string> devices[] = {
      {four_buffers("desktop-gpu", true, VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU), "attn_flash_gpu_"},
      {four_buffers("desktop-gpu", false, VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU), "attn_flash_gpusm_"},
      {four_buffers("desktop-gpu", true, VK_PHYSICAL_DEVICE_TYPE_CPU), cpu_kernel}};
  for (const auto& [p, flash_prefix] : devices) {
    GpuContext& ctx = test::gpu_as(p);
    auto results = test::run_cases(GetParam(), prefill, {}, &ctx);
    EXPECT_EQ(results.size(), 8u) << p.name;
    const auto dec = test::run_cases(GetParam(), decode, {}, &ctx);
    results.insert(results.end(), dec.begin(), dec.end());
    expect_packed_and_validated(results, p.name, flash_prefix);
  }
}

// With the test device's own limits every tensor is bound alone.
TEST_P(PackedBindings, NothingIsPackedWhereTheDeviceAllowsEnoughBuffers) {
  const auto results = test::run_cases(GetParam(), {{"impl", "naive,flash"}, {"seq", "16"}, {"heads", "2"},
                                                    {"dim", "16"}});
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    ASSERT_EQ(r.status, CaseStatus::kOk) << r.impl << ": " << r.reason;
    for (const auto& p : r.pipelines) EXPECT_EQ(p.shader.find("_packed"), std::string::npos) << p.shader;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryAttentionVariant, PackedBindings, ::testing::ValuesIn(attention_variants()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '.' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace pebench
