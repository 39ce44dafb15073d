// Subgroup sizes (issue 41): every kernel that uses subgroup operations
// validates at lavapipe's 4-wide subgroups (LP_NATIVE_VECTOR_WIDTH=128; the
// rest of the tests run at the default 8), and its plan takes the width
// from the device, never a baked-in 32 or 64. The subgroup kernels: the CPU
// flash kernels' shuffled K/V tiles (TILE_SHUFFLE, every attn variant; the
// near window of T5, DeBERTa, KERPLE and FIRE), DeBERTa's shuffled table
// build (attn_deberta_rel_shuffle, SHUFFLE) and the GPU flash kernels'
// lane clusters (subgroupShuffleXor over LANES, --emulate desktop-gpu).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace pebench {
namespace {

// The spec constant `name` of every pipeline whose shader has `part` in it.
std::vector<int> constants(const nlohmann::json& result, const std::string& part, const std::string& name) {
  std::vector<int> out;
  for (const auto& p : result["pipelines"]) {
    if (p["shader"].get<std::string>().find(part) == std::string::npos) continue;
    if (p["spec_constants"].contains(name)) out.push_back(p["spec_constants"][name].get<int>());
  }
  return out;
}

TEST(SubgroupWidths, ShuffleKernelsValidateAtFourWideSubgroups) {
  const std::string dir = test::temp_dir("sg4");
  const std::vector<std::string> env = {"LP_NATIVE_VECTOR_WIDTH=128"};
  // The CPU plan: staged flash (N 36 is past the direct plan); M 37 makes
  // DeBERTa's table width 72, a multiple of 4 (its shuffle build). NoPE and
  // DeBERTa only: the other variants' flash kernels shuffle their tiles
  // through the same code (flash_decl.glsl), and each kernel costs a
  // second or more of compiling with a cold shader cache (every attn
  // variant at both widths: docs/gpu-readiness.md).
  const std::string cpu_out = dir + "/cpu.json";
  const auto cpu = test::run_pebench({"run", "--variant", "attn.nope,attn.deberta",
                                      "--impl", "flash", "--seq", "36", "--kv-seq", "37", "--heads", "2",
                                      "--kv-heads", "2", "--dim", "16", "--dtype", "f32", "--validate", "--quiet",
                                      "--benchmark_min_time=0.001", "--out", cpu_out},
                                     env);
  ASSERT_EQ(cpu.exit_code, 0) << cpu.out;
  const auto rep = nlohmann::json::parse(test::read_file(cpu_out));
  ASSERT_EQ(rep["devices"][0]["subgroup_size"], 4) << "LP_NATIVE_VECTOR_WIDTH=128 no longer gives 4-wide subgroups";
  ASSERT_EQ(rep["results"].size(), 2u);
  bool rel_shuffle = false;
  for (const auto& c : rep["results"]) {
    SCOPED_TRACE(c["variant"].get<std::string>());
    EXPECT_EQ(c["status"], "ok") << c.dump();
    EXPECT_EQ(c["vk_validation_errors"], 0);
    EXPECT_EQ(constants(c, "attn_flash", "TILE_SHUFFLE"), std::vector<int>{4}) << c["pipelines"].dump();
    for (int s : constants(c, "attn_deberta_rel_shuffle", "SHUFFLE")) {
      EXPECT_EQ(s, 4);
      rel_shuffle = true;
    }
  }
  EXPECT_TRUE(rel_shuffle) << "no case ran DeBERTa's shuffle build";

  // The GPU plan on the same 4-wide device: D 128 wants 8 lanes a row, the
  // device's subgroup allows 4 (8 at the default width).
  const std::string gpu_out = dir + "/gpu.json";
  const auto gpu = test::run_pebench({"run", "--emulate", "desktop-gpu", "--variant", "attn.nope", "--impl", "flash",
                                      "--seq", "36", "--heads", "2", "--kv-heads", "2", "--dim", "128", "--dtype",
                                      "f32", "--validate", "--quiet", "--benchmark_min_time=0.001", "--out", gpu_out},
                                     env);
  ASSERT_EQ(gpu.exit_code, 0) << gpu.out;
  const auto grep = nlohmann::json::parse(test::read_file(gpu_out));
  ASSERT_EQ(grep["results"].size(), 1u);
  const auto& g = grep["results"][0];
  EXPECT_EQ(g["status"], "ok") << g.dump();
  EXPECT_EQ(constants(g, "attn_flash_gpu", "LANES"), std::vector<int>{4}) << g["pipelines"].dump();
}

}  // namespace
}  // namespace pebench
