// attn.nope, attn.rope, attn.alibi: known answers of the float64 reference,
// ALiBi's slopes, the flash plan against device limits and llvmpipe's loop
// budget, validation of both impls on the shapes that stress them (decode,
// M != N, GQA/MQA, odd head dims, key splits, causal), naive and flash on
// the same inputs, and clean rejection of bad shapes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn_test_util.h"
#include "harness/contract/registry.h"
#include "harness/engine/sweep.h"
#include "suites/attn/attn_common.h"
#include "test_util.h"

namespace pebench {
namespace {

using Axes = std::map<std::string, std::string>;
using test::expect_all_validate;
using test::set_all;

// ---- reference known answers (no GPU) ---------------------------------------

TEST(AttnReference, ZeroQueriesAverageTheVisibleValues) {
  // q = 0: every visible key scores 0, so o_i is the mean of v over the keys
  // visible to i' = i + M - N, read from kv head h / (H / Hkv).
  for (const char* causal : {"0", "1"}) {
    SCOPED_TRACE(std::string("causal=") + causal);
    auto c = test::build_case("attn.nope", {{"impl", "naive"},
                                            {"batch", "2"},
                                            {"heads", "4"},
                                            {"kv_heads", "2"},
                                            {"seq", "5"},
                                            {"kv_seq", "9"},
                                            {"dim", "3"},
                                            {"causal", causal}});
    set_all(c.tensors.at("q"), [](int64_t) { return 0.0; });
    const HostTensor& v = c.tensors.at("v");
    const Reference ref = c.reference();
    const auto& rows = ref.outputs().at(0).rows;
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t h = 0; h < 4; ++h) {
        for (int64_t i = 0; i < 5; ++i) {
          const int64_t visible = causal[0] == '1' ? i + 9 - 5 + 1 : 9;
          for (int64_t d = 0; d < 3; ++d) {
            double mean = 0;
            for (int64_t j = 0; j < visible; ++j) mean += v.get(((b * 2 + h / 2) * 9 + j) * 3 + d);
            mean /= static_cast<double>(visible);
            EXPECT_NEAR(rows.at((b * 4 + h) * 5 + i)[static_cast<size_t>(d)], mean, 1e-12);
          }
        }
      }
    }
  }
}

TEST(AttnReference, RopeScoresDependOnTheDistance) {
  // D = 2, neox, theta_0 = base^0 = 1: q = k = (1, 0) rotated to i' and j
  // score scale * cos(i' - j). With v_j = (j, 1), o = (sum p_j j, 1).
  auto c =
      test::build_case("attn.rope", {{"impl", "naive"}, {"heads", "1"}, {"seq", "3"}, {"kv_seq", "7"}, {"dim", "2"}});
  set_all(c.tensors.at("q"), [](int64_t i) { return i % 2 == 0 ? 1.0 : 0.0; });
  set_all(c.tensors.at("k"), [](int64_t i) { return i % 2 == 0 ? 1.0 : 0.0; });
  set_all(c.tensors.at("v"), [](int64_t i) { return i % 2 == 0 ? static_cast<double>(i / 2) : 1.0; });
  const double scale = 1 / std::sqrt(2.0);
  const Reference ref = c.reference();
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t qpos = i + 4;
    double num = 0, den = 0;
    for (int64_t j = 0; j < 7; ++j) {
      const double w = std::exp(scale * std::cos(static_cast<double>(qpos - j)));
      num += w * static_cast<double>(j);
      den += w;
    }
    const auto& row = ref.outputs().at(0).rows.at(i);
    EXPECT_NEAR(row[0], num / den, 1e-12);
    EXPECT_NEAR(row[1], 1.0, 1e-12);
  }
}

TEST(AttnReference, AlibiBiasIsLinearInTheDistance) {
  // q = 0 leaves only the bias: weights exp(-m |i' - j|) (H = 1: m = 2^-8),
  // causal keeps j <= i'.
  for (const char* causal : {"0", "1"}) {
    SCOPED_TRACE(std::string("causal=") + causal);
    auto c = test::build_case(
        "attn.alibi",
        {{"impl", "naive"}, {"heads", "1"}, {"seq", "4"}, {"kv_seq", "6"}, {"dim", "1"}, {"causal", causal}});
    set_all(c.tensors.at("q"), [](int64_t) { return 0.0; });
    set_all(c.tensors.at("v"), [](int64_t j) { return static_cast<double>(j * j); });
    const Reference ref = c.reference();
    const double m = std::exp2(-8.0);
    for (int64_t i = 0; i < 4; ++i) {
      const int64_t qpos = i + 2;
      double num = 0, den = 0;
      for (int64_t j = 0; j < 6; ++j) {
        if (causal[0] == '1' && j > qpos) continue;
        const double w = std::exp(-m * std::fabs(static_cast<double>(qpos - j)));
        num += w * static_cast<double>(j * j);
        den += w;
      }
      EXPECT_NEAR(ref.outputs().at(0).rows.at(i)[0], num / den, 1e-12);
    }
  }
}

TEST(AttnAlibi, SlopesFollowGetSlopes) {
  // encodings.md: H = 8 -> 2^-1..2^-8; H = 12 -> 2^-1..2^-8, 2^-0.5, 2^-1.5,
  // 2^-2.5, 2^-3.5; H = 6 -> get_slopes(4) then get_slopes(8)[0], [2].
  const std::map<int64_t, std::vector<double>> expected_log2{
      {8, {-1, -2, -3, -4, -5, -6, -7, -8}},
      {12, {-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5}},
      {6, {-2, -4, -6, -8, -1, -3}},
      {1, {-8}},
  };
  for (const auto& [heads, logs] : expected_log2) {
    const std::vector<double> slopes = alibi_slopes(heads);
    ASSERT_EQ(slopes.size(), logs.size()) << "H=" << heads;
    for (size_t h = 0; h < logs.size(); ++h)
      EXPECT_DOUBLE_EQ(slopes[h], std::exp2(logs[h])) << "H=" << heads << " h=" << h;
  }
  // What the kernels read: the uploaded table, as f32.
  auto c = test::build_case("attn.alibi", {{"impl", "naive"}, {"heads", "12"}, {"dim", "8"}, {"seq", "4"}});
  const HostTensor& t = c.tensors.at("slopes");
  ASSERT_EQ(t.numel(), 12);
  for (int64_t h = 0; h < 12; ++h) {
    EXPECT_EQ(t.get(h),
              static_cast<double>(static_cast<float>(std::exp2(expected_log2.at(12)[static_cast<size_t>(h)]))));
  }
}

TEST(AttnCost, CountsTheDefinitionsMultiplyAdds) {
  auto full = test::build_case(
      "attn.nope", {{"impl", "naive"}, {"heads", "2"}, {"seq", "10"}, {"kv_seq", "30"}, {"dim", "8"}, {"causal", "1"}});
  EXPECT_DOUBLE_EQ(full.impl->cost().flops, 4.0 * 2 * 10 * 30 * 8);  // causal with N != M: not halved
  auto half =
      test::build_case("attn.nope", {{"impl", "naive"}, {"heads", "2"}, {"seq", "30"}, {"dim", "8"}, {"causal", "1"}});
  EXPECT_DOUBLE_EQ(half.impl->cost().flops, 4.0 * 2 * 30 * 30 * 8 / 2);
  auto alibi = test::build_case("attn.alibi", {{"impl", "naive"}, {"heads", "2"}, {"seq", "30"}, {"dim", "8"}});
  EXPECT_DOUBLE_EQ(alibi.impl->cost().flops, 4.0 * 2 * 30 * 30 * 8 + 2.0 * 2 * 30 * 30);
  // bytes: q, k, v read and o written once, at the storage dtype.
  auto f16 = test::build_case("attn.nope", {{"impl", "naive"},
                                            {"heads", "4"},
                                            {"kv_heads", "2"},
                                            {"seq", "3"},
                                            {"kv_seq", "5"},
                                            {"dim", "8"},
                                            {"dtype", "f16"}});
  EXPECT_DOUBLE_EQ(f16.impl->cost().bytes, 2.0 * (2 * 4 * 3 * 8 + 2 * 2 * 5 * 8));
}

// ---- the flash plan ---------------------------------------------------------

const AttnCase& attn_case(const test::BuiltCase& c) { return dynamic_cast<const AttnCase&>(*c.impl); }

FlashTiles tiles_for(const test::BuiltCase& c, const FlashDevice& dev) {
  return flash_tiles(attn_case(c).shape(), attn_case(c).flash_plan(), dev);
}

using test::kLavapipe;
const FlashDevice kPhone{16384, 128, 16, false};

TEST(AttnFlashPlan, DecodeSplitsTheKeysAcrossInvocations) {
  auto c = test::build_case("attn.nope", {{"impl", "flash"}, {"seq", "1"}, {"kv_seq", "8192"}, {"heads", "8"}});
  const FlashPlan& p = attn_case(c).flash_plan();
  EXPECT_TRUE(p.direct);
  EXPECT_GT(p.splits, 8);
  EXPECT_GE(p.splits * p.keys_per_split, 8192);
  EXPECT_LT((p.splits - 1) * p.keys_per_split, 8192);
  // Prefill with many rows: staged, one pass.
  auto big = test::build_case("attn.nope", {{"impl", "flash"}, {"seq", "4096"}, {"heads", "8"}});
  EXPECT_FALSE(attn_case(big).flash_plan().direct);
  EXPECT_EQ(attn_case(big).flash_plan().splits, 1);
}

TEST(AttnFlashPlan, StaysUnderLlvmpipesLoopBudget) {
  // Every invocation must stay under LaunchPlanner's 60000 loop iterations
  // at N = M = 4096 and at decode M = 16384, for every head dim and variant.
  for (const char* variant : {"attn.nope", "attn.rope", "attn.alibi"}) {
    for (const char* dim : {"32", "64", "80", "96", "128", "256"}) {
      for (const Axes& shape :
           {Axes{{"seq", "4096"}}, Axes{{"seq", "1"}, {"kv_seq", "16384"}}, Axes{{"seq", "64"}, {"kv_seq", "65536"}}}) {
        Axes axes = shape;
        axes["impl"] = "flash";
        axes["dim"] = dim;
        const auto c = test::make_case(variant, axes);
        const auto& a = dynamic_cast<const AttnCase&>(*c);
        SCOPED_TRACE(std::string(variant) + " dim=" + dim + " kv_seq=" + std::to_string(a.shape().kv_seq));
        const FlashTiles t = flash_tiles(a.shape(), a.flash_plan(), kLavapipe);
        EXPECT_LE(flash_loop_iterations(a.flash_plan(), t, {}), kFlashLoopBudget);
        // The GPU kernel as lavapipe runs it under --emulate desktop-gpu.
        const FlashTiles g = flash_tiles(a.shape(), a.flash_plan(), FlashDevice{49152, 1024, 8, false, true});
        EXPECT_LE(flash_loop_iterations(a.flash_plan(), g, {}), kFlashLoopBudget);
      }
    }
  }
}

TEST(AttnFlashPlan, TilesFitThePhonesLimits) {
  for (const char* dim : {"32", "64", "128", "256"}) {
    auto c = test::build_case("attn.nope", {{"impl", "flash"}, {"seq", "512"}, {"dim", dim}});
    const FlashTiles t = tiles_for(c, kPhone);
    SCOPED_TRACE(std::string("dim=") + dim);
    EXPECT_LE(t.invocations, 128u);
    EXPECT_EQ(t.invocations % 16, 0u);
    EXPECT_EQ(t.row_slots, 1u);  // a GPU: one row per invocation
    EXPECT_GE(t.keys, 4u);
    EXPECT_LE(2ull * t.keys * t.d4 * 16, 16384u);
  }
  // A device whose shared memory cannot hold a 4-key tile gets a reason.
  auto c = test::build_case("attn.nope", {{"impl", "flash"}, {"seq", "512"}, {"dim", "256"}});
  try {
    tiles_for(c, FlashDevice{4096, 128, 32, false});
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("dim=256"), std::string::npos) << e.what();
  }
}

// GPU plans (flash_gpu_decl.glsl): a row's head dim over `lanes` invocations
// of one subgroup (with shuffles), at most kFlashGpuLaneChunks chunks each;
// whole clusters per workgroup; tiles of whole 4-key steps within the budget.
TEST(AttnFlashPlan, GpuTilesSplitTheHeadDimWithinTheDevicesLimits) {
  const FlashDevice navi21{65536, 1024, 64, false, true};
  const FlashDevice emulated{49152, 1024, 8, false, true};  // desktop-gpu on lavapipe
  // (16 KiB would not hold complex's 4-key tile at D = 256 next to the
  // reduction's buffer: unsupported there, with the sizes in the reason.)
  const FlashDevice no_shuffle{32768, 128, 16, false, false};
  // Intel-like: reports 32 but may compile the pipeline for 8 lanes.
  const FlashDevice variable{65536, 1024, 32, false, true, 8};
  for (const FlashDevice& dev : {navi21, emulated, no_shuffle, variable}) {
    const uint32_t cap = dev.min_subgroup > 0 ? dev.min_subgroup : dev.subgroup;
    for (const char* variant : {"attn.nope", "attn.complex"}) {
      for (const char* dim : {"4", "60", "64", "128", "256"}) {
        for (const char* seq : {"1", "512"}) {
          auto c = test::build_case(variant, {{"impl", "flash"}, {"seq", seq}, {"dim", dim}, {"heads", "8"}});
          const FlashTiles t = tiles_for(c, dev);
          SCOPED_TRACE(fmt::format("{} dim={} seq={} subgroup={} (min {}) shuffle={}", variant, dim, seq,
                                   dev.subgroup, dev.min_subgroup, dev.shuffle));
          ASSERT_GT(t.lanes, 0u);
          EXPECT_EQ(t.lanes & (t.lanes - 1), 0u);
          if (dev.shuffle) {
            EXPECT_LE(t.lanes, cap);
          }
          // More chunks per lane only where the subgroup caps the lanes.
          if (!dev.shuffle || t.lanes < cap) {
            EXPECT_LE((t.d4 + t.lanes - 1) / t.lanes, kFlashGpuLaneChunks) << "lanes " << t.lanes;
          }
          EXPECT_EQ(t.shared_reduce, !dev.shuffle);
          EXPECT_EQ(t.invocations % t.lanes, 0u);
          EXPECT_LE(t.invocations, dev.max_invocations);
          EXPECT_EQ(t.row_slots, 1u);
          if (attn_case(c).flash_plan().direct) continue;
          EXPECT_EQ(t.keys % 4, 0u);
          const uint64_t tile = 2ull * t.keys * t.d4 * t.parts * 16;
          EXPECT_LE(tile, kFlashGpuTileBytes);
          EXPECT_LE(tile + (t.shared_reduce ? 16ull * t.invocations : 0), dev.shared_bytes);
        }
      }
    }
  }
}

// CPU kernel, staged: a key's tile chunks go one a lane and reach the other
// lanes by shuffles only where every subgroup is full and of a size the
// shader can know; the terms' staged chunks (MHA) take their share of the tile.
TEST(AttnFlashPlan, CpuTilesShuffleOnlyFullFixedSubgroups) {
  const FlashDevice shuffles{32768, 1024, 8, true, true};
  const FlashDevice variable{32768, 1024, 8, true, true, 4};
  auto c = test::build_case("attn.nope", {{"impl", "flash"}, {"seq", "512"}, {"heads", "8"}});
  const FlashTiles t = tiles_for(c, shuffles);
  EXPECT_EQ(t.tile_shuffle, 8u);
  EXPECT_EQ(t.invocations % 8, 0u);
  EXPECT_EQ(tiles_for(c, kLavapipe).tile_shuffle, 0u);  // no shuffles
  EXPECT_EQ(tiles_for(c, variable).tile_shuffle, 0u);
  EXPECT_EQ(tiles_for(c, FlashDevice{65536, 1024, 64, false, true}).tile_shuffle, 0u);  // the GPU kernel
  // Terms that run slower with them keep every lane reading the tile.
  for (const auto& [variant, dtype, seq, shuffled] :
       {std::tuple{"attn.deberta", "f32", "128", false}, std::tuple{"attn.deberta", "f32", "512", true},
        std::tuple{"attn.rope", "f16", "512", true}, std::tuple{"attn.rope", "f32", "512", true}}) {
    auto v = test::build_case(variant, {{"impl", "flash"}, {"seq", seq}, {"heads", "4"}, {"dtype", dtype}});
    EXPECT_EQ(tiles_for(v, shuffles).tile_shuffle, shuffled ? 8u : 0u) << variant << " " << dtype << " seq=" << seq;
  }
  // MHA only: TUPE's pk rows, DeBERTa's far p2c entry (one chunk a key).
  for (const char* kv_heads : {"8", "2"}) {
    for (const char* variant : {"attn.tupe", "attn.deberta"}) {
      auto v = test::build_case(variant, {{"impl", "flash"}, {"seq", "1024"}, {"heads", "8"}, {"kv_heads", kv_heads}});
      const FlashPlan& p = attn_case(v).flash_plan();
      const FlashTiles tt = tiles_for(v, shuffles);
      SCOPED_TRACE(std::string(variant) + " kv_heads=" + kv_heads);
      const uint32_t per_key = std::string(variant) == "attn.tupe" ? tt.d4 : 1;
      EXPECT_EQ(p.cpu_staged_chunks, std::string(kv_heads) == "8" ? per_key : 0);
      // As many whole 4-key steps as fit, not the power of two below (a
      // staged chunk a key left DeBERTa 32 keys of a possible 60).
      const uint64_t per_key_bytes = (2ull * tt.d4 + p.cpu_staged_chunks) * 16;
      EXPECT_LE(per_key_bytes * tt.keys, shuffles.shared_bytes);
      EXPECT_EQ(tt.keys % 4, 0u);
      EXPECT_TRUE(tt.keys == kFlashMaxTileKeys || per_key_bytes * (tt.keys + 4) > shuffles.shared_bytes) << tt.keys;
    }
  }
}

// The CPU kernel's far ranges: the terms' distances (the widest on each side),
// none where no key of the case is that far or no term has them.
TEST(AttnFlashPlan, FarDistancesComeFromTheTerms) {
  const RelFarDistances t5 = t5_far_distances(true, 32, 128);
  struct Want {
    const char* variant;
    const char* seq;
    uint32_t left, right;
  };
  for (const Want& w : {Want{"attn.t5", "300", t5.left, t5.right}, Want{"attn.tupe", "300", t5.left, t5.right},
                        Want{"attn.t5", "64", kRelFarNone, kRelFarNone}, Want{"attn.shaw", "300", 16, 16},
                        Want{"attn.shaw", "16", 16, kRelFarNone}, Want{"attn.nope", "300", kRelFarNone, kRelFarNone},
                        Want{"attn.alibi", "300", kRelFarNone, kRelFarNone},
                        // Both tables at 2048; at 300 no p2c table (a row per distance costs more).
                        Want{"attn.deberta", "2048", 506, 512}, Want{"attn.deberta", "300", kRelFarNone, kRelFarNone}}) {
    SCOPED_TRACE(std::string(w.variant) + " seq=" + w.seq);
    // seq 16 with kv_seq 40: keys reach 39 before a row, 15 after it.
    auto c = test::build_case(w.variant, {{"impl", "flash"}, {"seq", w.seq}, {"kv_seq", std::string(w.seq) == "16" ? "40" : w.seq},
                                          {"heads", "4"}});
    const FlashPlan& p = attn_case(c).flash_plan();
    EXPECT_EQ(p.cpu_far_left, w.left);
    EXPECT_EQ(p.cpu_far_right, w.right);
  }
  // Shaw at K = 0 clips every distance, but a far range after the rows
  // starts 1 after them: a causal mask then hides it whole, since the kernel
  // folds far keys without the mask.
  auto k0 = test::build_case("attn.shaw", {{"impl", "flash"}, {"seq", "300"}, {"heads", "4"}, {"max_rel", "0"}});
  EXPECT_EQ(attn_case(k0).flash_plan().cpu_far_left, 0u);
  EXPECT_EQ(attn_case(k0).flash_plan().cpu_far_right, 1u);
  EXPECT_GT(t5.left, 64u);  // 91: the bucket saturates before max_distance
  EXPECT_LE(t5.left, 128u);
}

// ---- GPU: validation against the float64 reference ----------------------------

TEST(AttnGpu, ValidatesDecodeGqaMqaAndOddShapes) {
  // Both impls, both dtypes, causal and not, on: decode (N = 1) with MHA,
  // M != N with GQA and with MQA (M = 50: not a multiple of any tile), a
  // head dim that is not a multiple of 16 and one that is not a multiple of 4.
  for (const char* variant : {"attn.nope", "attn.rope", "attn.alibi"}) {
    SCOPED_TRACE(variant);
    for (const Axes& shape : {Axes{{"seq", "1"}, {"kv_heads", "8"}}, Axes{{"seq", "37"}, {"kv_heads", "2"}},
                              Axes{{"seq", "37"}, {"kv_heads", "1"}}}) {
      Axes axes = shape;
      axes.insert({{"impl", "naive,flash"},
                   {"dtype", "f32,f16"},
                   {"causal", "0,1"},
                   {"heads", "8"},
                   {"kv_seq", "50"},
                   {"dim", "80"}});
      expect_all_validate(variant, axes, 2 * 2 * 2);
    }
    expect_all_validate(
        variant,
        {{"impl", "naive,flash"}, {"dtype", "f32"}, {"causal", "1"}, {"heads", "3"}, {"seq", "19"}, {"dim", "6"}}, 2);
  }
}

// The CPU kernel's two ways of reading a staged key (TILE_SHUFFLE 8 on
// lavapipe, 0 under a CPU profile without shuffles), for the variants whose
// hooks read the key's chunks (TUPE's staged pk with MHA), at D 60: the
// last chunk group of a row is not full.
TEST(AttnGpu, TileShufflesAndTileReadsBothValidate) {
  const std::string dir = test::temp_dir("tile_shuffle");
  std::ofstream(dir + "/cpu-basic.json") << R"({
    "capabilities": { "c": { "properties": {
      "VkPhysicalDeviceProperties": { "deviceType": "VK_PHYSICAL_DEVICE_TYPE_CPU",
        "limits": { "maxComputeSharedMemorySize": 32768 } },
      "VkPhysicalDeviceSubgroupProperties": { "supportedOperations": ["VK_SUBGROUP_FEATURE_BASIC_BIT"] } } } },
    "profiles": { "cpu-basic-subgroups": { "capabilities": ["c"] } } })";
  for (const bool shuffles : {true, false}) {
    SCOPED_TRACE(shuffles ? "lavapipe" : "no shuffles");
    std::vector<std::string> args{"run", "--variant", "attn.nope,attn.tupe,attn.complex,attn.deberta", "--impl", "flash",
                                  "--seq", "40", "--heads", "2", "--kv-heads", "2,1", "--dim", "60", "--causal", "1",
                                  "--benchmark_min_time=0.001", "--out", dir + "/r.json"};
    if (!shuffles) args.insert(args.end(), {"--emulate", dir + "/cpu-basic.json"});
    const auto r = test::run_pebench(args);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto rep = nlohmann::json::parse(std::ifstream(dir + "/r.json"));
    ASSERT_EQ(rep["results"].size(), 8u);
    for (const auto& c : rep["results"]) {
      EXPECT_EQ(c["status"], "ok") << c.dump();
      const auto& p = c["pipelines"].back();
      EXPECT_EQ(p["spec_constants"]["DIRECT"], 0) << p.dump();
      // (DeBERTa's veto where it has no p2c table:
      // RelBiasGpu.DebertaCpuKernelValidatesWithAndWithoutTables.)
      EXPECT_EQ(p["spec_constants"]["TILE_SHUFFLE"], shuffles ? 8 : 0) << p.dump();
    }
  }
}

TEST(AttnGpu, ValidatesEveryHeadDimTheIssueNames) {
  // 32, 64, 80 and 96 are multiples of 16 or of 4 only; 128 and 256 halve
  // the row slots and tile keys (registers and shared memory per row).
  for (const char* dim : {"32", "96", "128", "256"}) {
    SCOPED_TRACE(std::string("dim=") + dim);
    expect_all_validate("attn.nope",
                        {{"impl", "naive,flash"},
                         {"dtype", "f32,f16"},
                         {"causal", "1"},
                         {"heads", "4"},
                         {"kv_heads", "2"},
                         {"seq", "20"},
                         {"kv_seq", "70"},
                         {"dim", dim}},
                        4);
  }
}

TEST(AttnGpu, ValidatesLongKeysWithSplits) {
  // Decode over 16k keys (direct splits + combine), and a staged prefill over
  // 8k keys split for parallelism: a silently truncated loop would fail here.
  expect_all_validate("attn.nope",
                      {{"impl", "naive,flash"},
                       {"dtype", "f16"},
                       {"heads", "4"},
                       {"kv_heads", "1"},
                       {"seq", "1"},
                       {"kv_seq", "16384"},
                       {"dim", "64"},
                       {"causal", "1"}},
                      2);
  auto c = test::build_case("attn.alibi",
                            {{"impl", "flash"}, {"heads", "2"}, {"seq", "64"}, {"kv_seq", "8192"}, {"dim", "32"}});
  ASSERT_GT(attn_case(c).flash_plan().splits, 1);
  EXPECT_FALSE(attn_case(c).flash_plan().direct);
  expect_all_validate("attn.alibi",
                      {{"impl", "flash"},
                       {"dtype", "f32"},
                       {"heads", "2"},
                       {"seq", "64"},
                       {"kv_seq", "8192"},
                       {"dim", "32"},
                       {"causal", "0,1"}},
                      2);
}

TEST(AttnGpu, FullyMaskedSplitsGiveNoNaN) {
  // Causal N = M with key splits: the first rows see no key of the later
  // splits (partials with l = 0), and their workgroups skip masked tiles.
  auto c = test::build_case("attn.rope",
                            {{"impl", "flash"}, {"heads", "1"}, {"seq", "1024"}, {"dim", "32"}, {"causal", "1"}});
  ASSERT_GT(attn_case(c).flash_plan().splits, 1);
  expect_all_validate(
      "attn.rope",
      {{"impl", "flash"}, {"dtype", "f32,f16"}, {"heads", "1"}, {"seq", "1024"}, {"dim", "32"}, {"causal", "1"}}, 2);
}

TEST(AttnGpu, RopeScalingsValidate) {
  for (const char* scaling : {"linear", "ntk", "yarn", "llama3"}) {
    SCOPED_TRACE(scaling);
    expect_all_validate("attn.rope",
                        {{"impl", "naive,flash"},
                         {"heads", "4"},
                         {"kv_heads", "2"},
                         {"seq", "40"},
                         {"kv_seq", "3000"},
                         {"dim", "64"},
                         {"scaling", scaling},
                         {"max_pos", "1024"},
                         {"orig_max_pos", "1024"},
                         {"style", "neox,gptj"},
                         {"rotary_dim", "48"}},
                        4);
  }
}

// CPU devices rotate q and k once into f32 copies where many rows share
// each key (staged): f32 then runs nope's kernel on them, f16 the rope kernel
// reading them (rope_hooks.glsl). Decode (direct) rotates in the rope kernel
// as it loads, with no pre-pass. GQA, partial rotary dims, both styles.
TEST(AttnGpu, RopeOnCpuDevicesReadsTheRotatedCopiesWhenStaged) {
  for (const char* dtype : {"f16", "f32"}) {
    for (const char* seq : {"1", "300"}) {
      for (const char* style : {"neox", "gptj"}) {
        SCOPED_TRACE(std::string(dtype) + " seq=" + seq + " " + style);
        const CaseResult r = test::run_case("attn.rope", {{"impl", "flash"},  {"dtype", dtype},  {"heads", "4"},
                                                          {"kv_heads", "2"},  {"seq", seq},      {"kv_seq", "333"},
                                                          {"dim", "64"},      {"causal", "1"},   {"style", style},
                                                          {"rotary_dim", "48"}});
        ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
        std::vector<std::string> shaders;
        for (const PipelineRecord& p : r.pipelines) shaders.push_back(p.shader);
        const bool staged = std::string(seq) != "1";
        EXPECT_EQ(std::count(shaders.begin(), shaders.end(), "attn_rope_qk"), staged ? 2 : 0);  // q, then k
        // Decode on lavapipe: the texel build (k and v as texels, issue 45).
        const std::string fused = !staged ? "attn_flash_rope_texel"
                                  : std::string(dtype) == "f32" ? "attn_flash_nope" : "attn_flash_rope";
        EXPECT_NE(std::find(shaders.begin(), shaders.end(), fused), shaders.end());
      }
    }
  }
}

TEST(AttnGpu, RopeDeclaresItsRotatedCopiesOnlyWhereTheRunReadsThem) {
  // Full size where the run rotates q and k into f32 copies first (naive;
  // flash staged on a CPU device), one element where the fused kernel
  // rotates them itself (decode; GPUs); declared full size until configured.
  GpuContext& desktop = test::gpu_as("desktop-gpu");
  for (const char* impl : {"flash", "naive"}) {
    for (const char* seq : {"1", "300"}) {
      const Axes axes{{"impl", impl}, {"seq", seq}, {"kv_seq", "333"}, {"heads", "4"}, {"kv_heads", "2"}, {"dim", "64"}};
      const int64_t n = std::stoll(seq);
      const std::vector<int64_t> q_full{1, 4, n, 64}, k_full{1, 2, 333, 64}, one{1};
      for (const auto& [device, cpu] : {std::make_pair(&test::gpu(), true), std::make_pair(&desktop, false)}) {
        SCOPED_TRACE(fmt::format("{} seq={} {}", impl, seq, cpu ? "lavapipe" : "desktop-gpu"));
        auto c = test::make_case("attn.rope", axes);
        EXPECT_EQ(test::tensor_shape(*c, "q_rot"), q_full);
        c->configure(device->launch());
        const bool copies = std::string(impl) == "naive" || (cpu && n > 1);
        EXPECT_EQ(test::tensor_shape(*c, "q_rot"), copies ? q_full : one);
        EXPECT_EQ(test::tensor_shape(*c, "k_rot"), copies ? k_full : one);
      }
    }
  }
  // The GPU kernel runs with the one-element copies bound.
  const auto results = test::run_cases(
      "attn.rope", {{"impl", "flash"}, {"seq", "1,300"}, {"kv_seq", "333"}, {"heads", "4"}, {"kv_heads", "2"}}, {},
      &desktop);
  ASSERT_EQ(results.size(), 2u);
  for (const CaseResult& r : results) EXPECT_EQ(r.status, CaseStatus::kOk) << r.reason;
}

// ---- GPU: naive and flash on the same inputs ---------------------------------

TEST(AttnGpu, NaiveAndFlashAgreeOnTheSameInputs) {
  test::expect_naive_and_flash_agree(
      {"attn.nope", "attn.rope", "attn.alibi"},
      {{{"seq", "45"}, {"kv_seq", "130"}, {"causal", "1"}}, {{"seq", "3"}, {"kv_seq", "300"}, {"causal", "0"}}});
}

// ---- bad shapes ---------------------------------------------------------------

TEST(AttnRejects, BadShapesWithTheirReason) {
  struct Bad {
    Axes axes;
    std::string reason_has;
  };
  const std::vector<Bad> bad{
      {{{"heads", "6"}, {"kv_heads", "4"}}, "kv_heads=4"},
      {{{"seq", "50"}, {"kv_seq", "40"}}, "kv_seq=40"},
      {{{"impl", "flash"}, {"dim", "512"}}, "dim=512"},
      {{{"scaling", "ntk"}, {"rotary_dim", "7"}}, "rotary_dim=7"},
  };
  for (const auto& b : bad) {
    const std::string variant = b.axes.count("scaling") ? "attn.rope" : "attn.nope";
    // Without an impl axis both impls are swept: each must be skipped alone.
    const auto results = test::run_cases(variant, b.axes);
    ASSERT_EQ(results.size(), b.axes.count("impl") ? 1u : 2u);
    for (const auto& r : results) {
      EXPECT_EQ(r.status, CaseStatus::kSkipped) << r.label;
      EXPECT_NE(r.reason.find(b.reason_has), std::string::npos) << r.reason;
    }
  }
  // From the command line: one clear line and, inside a sweep, the case skipped.
  const auto out = test::run_pebench({"run", "--variant", "attn.alibi", "--impl", "flash", "--dim", "512", "--seq", "8",
                                      "--out", test::temp_dir("bad") + "/r.json", "--quiet"});
  EXPECT_NE(out.out.find("dim=512"), std::string::npos) << out.out;
}

}  // namespace
}  // namespace pebench
