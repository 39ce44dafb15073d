// attn.t5, attn.tupe, attn.deberta: the float64 reference against the
// spec's bucket facts and hand-built known answers, parameter defaults and
// rejections, DeBERTa's table choice and the flash plan against llvmpipe's
// loop budget, and on the GPU: both impls x dtypes x causal on GQA, M != N
// and decode shapes, shapes past the exact bucket ranges (T5 distances past
// max_distance in both bucket modes, DeBERTa |delta| > 256 and the clamp),
// naive and flash on the same inputs, and outputs that measurably differ
// from attn.nope's on the same q, k, v.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "attn_test_util.h"
#include "harness/contract/registry.h"
#include "harness/engine/device_profile.h"
#include "harness/engine/sweep.h"
#include "suites/attn/attn_common.h"
#include "suites/common/rel_buckets.h"
#include "test_util.h"

namespace pebench {
namespace {

using Axes = std::map<std::string, std::string>;
using test::expect_all_validate;
using test::nmse;
using test::softmax_mean;
using test::run_on_gpu;
using test::set_all;
using test::tensor_shape;

// ---- T5 buckets as encodings.md states them (nb 32, max_distance 128) ----------

// First n of each log bucket, from the spec's facts.
const std::vector<int> kT5BiFirsts{8, 12, 16, 23, 32, 46, 64, 91};  // buckets 8..15 (24..31)
const std::vector<int> kT5UniFirsts{16, 19, 21, 24, 27, 31, 35, 40, 46, 52, 59, 67, 77, 87, 99, 113};  // 16..31

int spec_t5_bucket(int64_t rp, bool bidirectional) {
  const std::vector<int>& firsts = bidirectional ? kT5BiFirsts : kT5UniFirsts;
  int base = 0;
  int64_t n;
  if (bidirectional) {
    base = rp > 0 ? 16 : 0;
    n = rp < 0 ? -rp : rp;
  } else {
    n = rp < 0 ? -rp : 0;
  }
  if (n < firsts.front()) return base + static_cast<int>(n);
  const int above = static_cast<int>(std::upper_bound(firsts.begin(), firsts.end(), n) - firsts.begin());
  return base + firsts.front() - 1 + above;
}

TEST(RelBiasSpec, TranscribedT5FactsAgree) {
  // The rp = -40..40 table of encodings.md against spec_t5_bucket, so the
  // tests below rest on the spec's own words.
  std::vector<int> table;
  auto repeat = [&](int bucket, int times) { table.insert(table.end(), times, bucket); };
  repeat(12, 9), repeat(11, 9), repeat(10, 7), repeat(9, 4), repeat(8, 4);
  for (int b = 7; b >= 0; --b) table.push_back(b);
  for (int b = 17; b <= 23; ++b) table.push_back(b);
  repeat(24, 4), repeat(25, 4), repeat(26, 7), repeat(27, 9), repeat(28, 9);
  ASSERT_EQ(table.size(), 81u);
  for (int rp = -40; rp <= 40; ++rp) EXPECT_EQ(spec_t5_bucket(rp, true), table[static_cast<size_t>(rp + 40)]) << rp;
  const std::vector<int> before{0,  1,  2,  3,  4,  5,  6,  7,  8,  8,  8,  8,  9,  9,  9, 9,
                                10, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 11, 11};
  for (int d = 0; d <= 30; ++d) EXPECT_EQ(spec_t5_bucket(-d, true), before[static_cast<size_t>(d)]) << d;
  EXPECT_EQ(spec_t5_bucket(5, false), 0);
  EXPECT_EQ(spec_t5_bucket(-15, false), 15);
  EXPECT_EQ(spec_t5_bucket(-1000, false), 31);
}

// ---- reference known answers (no GPU) ------------------------------------------


TEST(RelBiasReference, T5BiasFollowsTheSpecBucketsInBothModes) {
  // q = 0 leaves only the bias: s_ij = bias_table[bucket(j - i'), 0] =
  // bucket / 16, so with v_j = j, o_i is a bucket-weighted mean of j.
  // N = 41, M = 300: row 0 sees rp = -40..259, the last row rp = -299..40.
  for (const char* bidirectional : {"true", "false"}) {
    SCOPED_TRACE(std::string("bidirectional=") + bidirectional);
    const bool bi = bidirectional[0] == 't';
    auto c = test::build_case("attn.t5", {{"impl", "naive"},
                                          {"heads", "1"},
                                          {"seq", "41"},
                                          {"kv_seq", "300"},
                                          {"dim", "1"},
                                          {"bidirectional", bidirectional}});
    set_all(c.tensors.at("q"), [](int64_t) { return 0.0; });
    set_all(c.tensors.at("v"), [](int64_t j) { return static_cast<double>(j); });
    set_all(c.tensors.at("bias_table"), [](int64_t b) { return 0.0625 * static_cast<double>(b); });
    const Reference ref = c.reference();
    for (int64_t i = 0; i < 41; ++i) {
      std::vector<double> s, v;
      for (int64_t j = 0; j < 300; ++j) {
        s.push_back(0.0625 * spec_t5_bucket(j - (i + 259), bi));
        v.push_back(static_cast<double>(j));
      }
      EXPECT_NEAR(ref.outputs().at(0).rows.at(i)[0], softmax_mean(s, v), 1e-9) << i;
    }
  }
}

TEST(RelBiasReference, TupeAddsTheUntiedTermAndTheBias) {
  // q = 0; pq[h, p] = (a(h,p), 0), pk[h, p] = (b(p), 0): s = scale a(h,i') b(j)
  // + bias_table[bucket(j - i'), h], scale = 1/sqrt(2D). GQA: 2 heads, 1 kv head.
  auto c = test::build_case(
      "attn.tupe", {{"impl", "naive"}, {"heads", "2"}, {"kv_heads", "1"}, {"seq", "3"}, {"kv_seq", "6"}, {"dim", "2"}});
  auto a = [](int64_t h, int64_t p) { return 0.5 * static_cast<double>((p + 1) * (h + 1)); };
  auto b = [](int64_t p) { return static_cast<double>(p) - 2.5; };
  set_all(c.tensors.at("q"), [](int64_t) { return 0.0; });
  set_all(c.tensors.at("pq"), [&](int64_t e) { return e % 2 == 0 ? a(e / 12, (e / 2) % 6) : 0.0; });
  set_all(c.tensors.at("pk"), [&](int64_t e) { return e % 2 == 0 ? b((e / 2) % 6) : 0.0; });
  set_all(c.tensors.at("bias_table"), [](int64_t e) { return 0.1 * static_cast<double>(e % 7) - 0.3; });
  set_all(c.tensors.at("v"), [](int64_t e) { return e % 2 == 0 ? static_cast<double>(e / 2) : 1.0; });
  const HostTensor& bias = c.tensors.at("bias_table");  // [32, 2], as stored
  const Reference ref = c.reference();
  const double scale = 0.5;  // 1/sqrt(2*2)
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t qpos = i + 3;
      std::vector<double> s, v;
      for (int64_t j = 0; j < 6; ++j) {
        s.push_back(scale * a(h, qpos) * b(j) + bias.get(spec_t5_bucket(j - qpos, true) * 2 + h));
        v.push_back(static_cast<double>(j));
      }
      const auto& row = ref.outputs().at(0).rows.at(h * 3 + i);
      EXPECT_NEAR(row[0], softmax_mean(s, v), 1e-12) << "h=" << h << " i=" << i;
      EXPECT_NEAR(row[1], 1.0, 1e-12);
    }
  }
}

TEST(RelBiasReference, DebertaTermsShareOneIdxAndReadTheKvHeadsKeys) {
  // 2 query heads on 1 kv head, D = 2, |delta| <= 3 (exact buckets: idx =
  // delta + S). q_i = (qa(h,i), 0), k_j = (0, kk(j)), kr[h, r] = (r al(h), 0),
  // qr[h, r] = (0, r be(h)): q.k = 0, c2p = qa al idx, p2c = kk be idx, and
  // s = (c2p + p2c) / sqrt(3D).
  auto c = test::build_case("attn.deberta", {{"impl", "naive"},
                                             {"heads", "2"},
                                             {"kv_heads", "1"},
                                             {"seq", "2"},
                                             {"kv_seq", "4"},
                                             {"dim", "2"},
                                             {"position_buckets", "8"}});
  // Every value exact in f32.
  auto qa = [](int64_t h, int64_t i) { return 0.25 * static_cast<double>(h + 1) - 0.125 * static_cast<double>(i); };
  auto kk = [](int64_t j) { return 0.25 * static_cast<double>(j) - 0.5; };
  auto al = [](int64_t h) { return h == 0 ? 0.125 : -0.25; };
  auto be = [](int64_t h) { return h == 0 ? 0.375 : 0.0625; };
  set_all(c.tensors.at("q"), [&](int64_t e) { return e % 2 == 0 ? qa(e / 4, (e / 2) % 2) : 0.0; });
  set_all(c.tensors.at("k"), [&](int64_t e) { return e % 2 == 1 ? kk(e / 2) : 0.0; });
  set_all(c.tensors.at("kr"),
          [&](int64_t e) { return e % 2 == 0 ? static_cast<double>((e / 2) % 16) * al(e / 32) : 0.0; });
  set_all(c.tensors.at("qr"),
          [&](int64_t e) { return e % 2 == 1 ? static_cast<double>((e / 2) % 16) * be(e / 32) : 0.0; });
  set_all(c.tensors.at("v"), [](int64_t e) { return e % 2 == 0 ? static_cast<double>(e / 2) : 1.0; });
  const Reference ref = c.reference();
  const double scale = 1 / std::sqrt(6.0);
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < 2; ++i) {
      const int64_t qpos = i + 2;
      std::vector<double> s, v;
      for (int64_t j = 0; j < 4; ++j) {
        const double idx = static_cast<double>(qpos - j + 8);
        s.push_back(scale * (qa(h, i) * al(h) * idx + kk(j) * be(h) * idx));
        v.push_back(static_cast<double>(j));
      }
      EXPECT_NEAR(ref.outputs().at(0).rows.at(h * 2 + i)[0], softmax_mean(s, v), 1e-12) << "h=" << h << " i=" << i;
    }
  }
}

// ---- parameters ------------------------------------------------------------------

TEST(RelBiasParams, DefaultsAndTheScaleWrittenOut) {
  auto t5 = test::build_case("attn.t5", {{"impl", "flash"}, {"dim", "64"}, {"seq", "4"}});
  EXPECT_EQ(t5.params.f("scale"), 1.0);
  EXPECT_EQ(t5.params.i("num_buckets"), 32);
  EXPECT_EQ(t5.params.i("max_distance"), 128);
  EXPECT_TRUE(t5.params.b("bidirectional"));
  auto t5c = test::build_case("attn.t5", {{"impl", "flash"}, {"dim", "64"}, {"seq", "4"}, {"causal", "1"}});
  EXPECT_FALSE(t5c.params.b("bidirectional"));
  auto t5u = test::build_case(
      "attn.t5", {{"impl", "flash"}, {"dim", "64"}, {"seq", "4"}, {"causal", "1"}, {"bidirectional", "1"}});
  EXPECT_TRUE(t5u.params.b("bidirectional"));
  auto tupe = test::build_case("attn.tupe", {{"impl", "flash"}, {"dim", "32"}, {"seq", "4"}, {"causal", "1"}});
  EXPECT_DOUBLE_EQ(tupe.params.f("scale"), 1 / std::sqrt(64.0));
  EXPECT_FALSE(tupe.params.b("bidirectional"));
  auto deberta = test::build_case("attn.deberta", {{"impl", "flash"}, {"dim", "48"}, {"seq", "4"}});
  EXPECT_DOUBLE_EQ(deberta.params.f("scale"), 1 / std::sqrt(144.0));
  EXPECT_EQ(deberta.params.i("position_buckets"), 256);
  EXPECT_EQ(deberta.params.i("max_relative_positions"), 512);
  EXPECT_FALSE(deberta.params.b("causal"));
  // Tensors with the spec's names and shapes.
  auto shape_of = [](const test::BuiltCase& c, const std::string& name) { return tensor_shape(*c.impl, name); };
  EXPECT_EQ(shape_of(t5, "bias_table"), (std::vector<int64_t>{32, 8}));
  EXPECT_EQ(shape_of(tupe, "pq"), (std::vector<int64_t>{8, 4, 32}));
  EXPECT_EQ(shape_of(tupe, "pk"), (std::vector<int64_t>{8, 4, 32}));
  EXPECT_EQ(shape_of(deberta, "kr"), (std::vector<int64_t>{8, 512, 48}));
  EXPECT_EQ(shape_of(deberta, "qr"), (std::vector<int64_t>{8, 512, 48}));
}


TEST(DebertaTables, FlashUsesATableWhereItIsCheaperNaiveAlways) {
  // R = kr/qr rows in use. N = M = 600: R = 512 < 600, both tables.
  // Decode N = 1, M = 700: R = 256 (delta 0..699) < 700 keys: c2p table, but
  // p2c per score (a table would hold 256 entries per key for 1 query).
  // N = 37, M = 50: R = 86 >= M: both per score.
  struct Want {
    Axes axes;
    std::vector<int64_t> c2p, p2c;
  };
  const std::vector<Want> wants{
      {{{"seq", "600"}, {"heads", "2"}}, {1, 2, 600, 512}, {1, 2, 600, 512}},
      {{{"seq", "1"}, {"kv_seq", "700"}, {"heads", "2"}}, {1, 2, 1, 256}, {1}},
      {{{"seq", "37"}, {"kv_seq", "50"}, {"heads", "2"}}, {1}, {1}},
  };
  for (const auto& w : wants) {
    Axes axes = w.axes;
    axes["impl"] = "flash";
    const auto flash = test::plan_one("attn.deberta", axes);
    ASSERT_EQ(flash.rejected, "");
    const auto fc = flash.variant->make(flash.params);
    EXPECT_EQ(tensor_shape(*fc, "c2p"), w.c2p) << flash.params.canonical();
    EXPECT_EQ(tensor_shape(*fc, "p2c"), w.p2c) << flash.params.canonical();
    axes["impl"] = "naive";
    const auto naive = test::plan_one("attn.deberta", axes);
    ASSERT_EQ(naive.rejected, "");
    const auto nc = naive.variant->make(naive.params);
    const int64_t n = naive.params.i("seq"), m = naive.params.i("kv_seq");
    EXPECT_EQ(tensor_shape(*nc, "c2p").at(2), n);
    EXPECT_EQ(tensor_shape(*nc, "p2c").at(2), m);
  }
  // A table past one storage buffer: naive is rejected with the reason,
  // flash computes that term per score instead.
  const auto naive = test::plan_one("attn.deberta", {{"impl", "naive"}, {"seq", "8192"}, {"heads", "16"}});
  EXPECT_NE(naive.rejected.find("c2p"), std::string::npos) << naive.rejected;
  const auto flash = test::plan_one("attn.deberta", {{"impl", "flash"}, {"seq", "8192"}, {"heads", "16"}});
  EXPECT_EQ(flash.rejected, "");
  EXPECT_EQ(tensor_shape(*flash.variant->make(flash.params), "c2p"), (std::vector<int64_t>{1}));
}

// desktop-gpu's limits on a CPU device (the CPU plans) whose storage
// buffers hold `bytes`.
DeviceProfile cpu_with_storage_range(uint32_t bytes) {
  DeviceProfile p = load_profile("desktop-gpu");
  p.name = "desktop-gpu as a CPU with " + std::to_string(bytes) + "-byte storage buffers";  // gpu_as: one per name
  p.type = VK_PHYSICAL_DEVICE_TYPE_CPU;
  p.limits["maxStorageBufferRange"] = {static_cast<double>(bytes)};
  return p;
}

// The c2p and p2c shapes of the planned case once told its device.
std::pair<std::vector<int64_t>, std::vector<int64_t>> configured_tables(const PlannedCase& plan,
                                                                        const LaunchPlanner& launch) {
  const auto c = plan.variant->make(plan.params);
  c->configure(launch);
  return {tensor_shape(*c, "c2p"), tensor_shape(*c, "p2c")};
}

TEST(RelBiasGpu, DebertaCpuDevicesTakeATableWhereItSavesADotAScoreOrMore) {
  // On a CPU device a table may hold up to 8 dots for each score's one
  // (kCpuTableDotsPerScore): N = M = 128, R = 255 > M, both tables (a GPU:
  // neither); N = 20 against M = 700, R = 275: c2p (R < 8 M) but p2c per
  // score (R >= 8 N); decode as on a GPU. A table past the device's storage
  // range is computed per score there too.
  struct Want {
    Axes axes;
    std::vector<int64_t> cpu_c2p, cpu_p2c, gpu_c2p, gpu_p2c;
  };
  const std::vector<Want> wants{
      {{{"seq", "128"}, {"heads", "2"}}, {1, 2, 128, 255}, {1, 2, 128, 255}, {1}, {1}},
      {{{"seq", "20"}, {"kv_seq", "700"}, {"heads", "2"}}, {1, 2, 20, 275}, {1}, {1, 2, 20, 275}, {1}},
      {{{"seq", "1"}, {"kv_seq", "700"}, {"heads", "2"}}, {1, 2, 1, 256}, {1}, {1, 2, 1, 256}, {1}},
  };
  const DeviceProfile small = cpu_with_storage_range(65536);
  for (const auto& w : wants) {
    Axes axes = w.axes;
    axes["impl"] = "flash";
    const auto plan = test::plan_one("attn.deberta", axes);
    ASSERT_EQ(plan.rejected, "");
    const auto cpu = configured_tables(plan, test::gpu().launch());
    EXPECT_EQ(cpu.first, w.cpu_c2p) << plan.params.canonical();
    EXPECT_EQ(cpu.second, w.cpu_p2c) << plan.params.canonical();
    const auto gpu = configured_tables(plan, test::gpu_as("desktop-gpu").launch());
    EXPECT_EQ(gpu.first, w.gpu_c2p) << plan.params.canonical();
    EXPECT_EQ(gpu.second, w.gpu_p2c) << plan.params.canonical();
    const auto limited = configured_tables(plan, test::gpu_as(small).launch());
    for (const std::vector<int64_t>& shape : {limited.first, limited.second}) {
      int64_t bytes = 4;
      for (int64_t d : shape) bytes *= d;
      EXPECT_TRUE(shape == std::vector<int64_t>{1} || bytes <= 65536) << plan.params.canonical();
    }
  }
  const auto big = test::plan_one("attn.deberta", {{"impl", "flash"}, {"seq", "128"}, {"heads", "64"}});
  // 64 x 128 x 255 x 4 bytes
  EXPECT_EQ(configured_tables(big, test::gpu_as(small).launch()).first, (std::vector<int64_t>{1}));
}

TEST(RelBiasGpu, DebertaCpuKernelValidatesWithAndWithoutTables) {
  // The CPU kernel's per-score terms: N = 20 against M = 700 on lavapipe
  // (staged, p2c per score: no p2c table, so the key's chunks are read in
  // every lane, TILE_SHUFFLE 0) and, under a CPU profile whose storage
  // buffers hold 8 KiB, N = 37 against M = 50 with both terms per score
  // (c2p 9.5 KiB, p2c 12.8 KiB); lavapipe validates both.
  const CaseResult r = test::run_case(
      "attn.deberta",
      {{"impl", "flash"}, {"seq", "20"}, {"kv_seq", "700"}, {"heads", "2"}, {"kv_heads", "1"}, {"dim", "16"}});
  ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
  // lavapipe binds the tables as r32f texel buffers: the texel build.
  const auto flash = std::find_if(r.pipelines.begin(), r.pipelines.end(),
                                  [](const PipelineRecord& p) { return p.shader == "attn_flash_deberta_texel"; });
  ASSERT_NE(flash, r.pipelines.end());
  for (const auto& [name, value] : std::vector<std::pair<std::string, uint32_t>>{
           {"DEB_C2P_TABLE", 1}, {"DEB_P2C_TABLE", 0}, {"DIRECT", 0}, {"TILE_SHUFFLE", 0}}) {
    EXPECT_EQ(test::spec_constant(*flash, name), value) << name;
  }
  expect_all_validate("attn.deberta",
                      {{"impl", "flash"},
                       {"dtype", "f32,f16"},
                       {"causal", "0,1"},
                       {"heads", "2"},
                       {"kv_heads", "1"},
                       {"seq", "20"},
                       {"kv_seq", "700"},
                       {"dim", "16"}},
                      4);
  GpuContext& ctx = test::gpu_as(cpu_with_storage_range(8192));
  const Axes axes{{"impl", "flash"},         {"dtype", "f32,f16"},
                  {"causal", "0,1"},         {"heads", "4"},
                  {"kv_heads", "1"},         {"seq", "37"},
                  {"kv_seq", "50"},          {"dim", "8"},
                  {"position_buckets", "8"}, {"max_relative_positions", "16"}};
  expect_all_validate("attn.deberta", axes, 4, {}, &ctx);
  Axes one = axes;
  one["dtype"] = "f32";
  one["causal"] = "0";
  const auto tables = configured_tables(test::plan_one("attn.deberta", one), ctx.launch());
  EXPECT_EQ(tables.first, (std::vector<int64_t>{1}));
  EXPECT_EQ(tables.second, (std::vector<int64_t>{1}));
}

TEST(RelBiasGpu, DebertaCpuKernelReadsItsTablesAsTexelsWhereTheDeviceAllows) {
  // N = M = 64, H 2: c2p and p2c hold 2 x 64 x 127 floats (16256 r32f
  // texels) each. lavapipe binds them as texel buffers (the texel build);
  // a CPU device whose texel buffers hold 4096 texels runs the
  // storage-buffer build. Both validate, f32 and f16, causal and not.
  DeviceProfile small = load_profile("desktop-gpu");
  small.name = "desktop-gpu as a CPU with 4096-texel buffers";
  small.type = VK_PHYSICAL_DEVICE_TYPE_CPU;
  small.limits["maxTexelBufferElements"] = {4096};
  const Axes axes{{"impl", "flash"}, {"heads", "2"}, {"seq", "64"}, {"dim", "32"}};
  const auto tables = configured_tables(test::plan_one("attn.deberta", axes), test::gpu().launch());
  EXPECT_EQ(tables.first, (std::vector<int64_t>{1, 2, 64, 127}));
  EXPECT_EQ(tables.second, (std::vector<int64_t>{1, 2, 64, 127}));
  for (GpuContext* ctx : {&test::gpu(), &test::gpu_as(small)}) {
    const auto results = test::run_cases("attn.deberta", axes, {}, ctx);
    ASSERT_EQ(results.size(), 1u);
    ASSERT_EQ(results[0].status, CaseStatus::kOk) << results[0].reason;
    std::vector<std::string> flash;
    for (const PipelineRecord& p : results[0].pipelines) {
      if (p.shader.rfind("attn_flash_", 0) == 0) flash.push_back(p.shader);
    }
    const std::string want = ctx == &test::gpu() ? "attn_flash_deberta_texel" : "attn_flash_deberta";
    EXPECT_EQ(flash, std::vector<std::string>{want});
    Axes all = axes;
    all["dtype"] = "f32,f16";
    all["causal"] = "0,1";
    expect_all_validate("attn.deberta", all, 4, {}, ctx);
  }
}

TEST(RelBiasGpu, DebertaCpuPrePassHoldsAsManyRowsOfXAsFlashHoldsOfQ) {
  // The pre-pass keeps only rows of x in registers, so on lavapipe it takes
  // the flash kernel's whole chunk budget for them (128 vec4 chunks below
  // 2^30 multiply-adds), at most 16 rows: D 16 -> 16, D 64 -> 8, D 128 -> 4.
  // position_buckets 8 keeps R = 16 < M = 64, so both tables are used.
  for (const auto& [dim, rows] : std::vector<std::pair<const char*, uint32_t>>{{"16", 16}, {"64", 8}, {"128", 4}}) {
    SCOPED_TRACE(std::string("dim=") + dim);
    const CaseResult r = test::run_case(
        "attn.deberta", {{"impl", "flash"}, {"seq", "64"}, {"heads", "2"}, {"dim", dim}, {"position_buckets", "8"}});
    ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
    int prepasses = 0;
    for (const PipelineRecord& p : r.pipelines) {
      if (p.shader.rfind("attn_deberta_rel", 0) != 0) continue;
      ++prepasses;  // both tables share one pipeline
      EXPECT_EQ(test::spec_constant(p, "ROWS"), rows);
    }
    EXPECT_EQ(prepasses, 1);
  }
}

TEST(RelBiasGpu, DebertaPrePassStoresFourColumnsWhereTheWidthAllows) {
  // S 8 at N = M = 40: P 16 saturates idx at both ends (R = 2S = 16 kr/qr
  // rows, vec4 stores, and on lavapipe the shuffle build that reads each rel
  // chunk in one lane); P 64 does not (R = 15, odd: one column a store, the
  // plain build). Both validate, MHA and GQA. A GPU plan keeps the plain
  // build either way.
  for (const auto& [max_pos, cols4] : std::vector<std::pair<const char*, uint32_t>>{{"16", 1}, {"64", 0}}) {
    for (const char* kv_heads : {"4", "2"}) {
      for (const bool gpu_plan : {false, true}) {
        SCOPED_TRACE(std::string("max_relative_positions=") + max_pos + " kv_heads=" + kv_heads +
                     (gpu_plan ? " desktop-gpu" : " lavapipe"));
        const std::vector<CaseResult> results =
            test::run_cases("attn.deberta",
                            {{"impl", "flash"},
                             {"seq", "40"},
                             {"heads", "4"},
                             {"kv_heads", kv_heads},
                             {"dim", "16"},
                             {"position_buckets", "8"},
                             {"max_relative_positions", max_pos}},
                            {}, gpu_plan ? &test::gpu_as("desktop-gpu") : nullptr);
        ASSERT_EQ(results.size(), 1u);
        const CaseResult& r = results[0];
        ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
        const bool shuffle = cols4 == 1 && !gpu_plan;
        int prepasses = 0;
        for (const PipelineRecord& p : r.pipelines) {
          if (p.shader.rfind("attn_deberta_rel", 0) != 0) continue;
          ++prepasses;
          EXPECT_EQ(p.shader, shuffle ? "attn_deberta_rel_shuffle" : "attn_deberta_rel");
          EXPECT_EQ(test::spec_constant(p, "COLS4"), cols4);
          if (shuffle) {
            EXPECT_EQ(test::spec_constant(p, "SHUFFLE"), test::gpu().info().subgroup.size);
          }
        }
        EXPECT_EQ(prepasses, 1);
      }
    }
  }
}

TEST(RelBiasFlashPlan, StaysUnderLlvmpipesLoopBudget) {
  // The hooks add no rolled loops (everything per key is unrolled), so the
  // core's accounting holds; checked at long prefill and long decode.
  const FlashDevice lavapipe{32768, 1024, 8, true};
  for (const char* variant : {"attn.t5", "attn.tupe", "attn.deberta"}) {
    for (const char* dim : {"32", "64", "128", "256"}) {
      for (const Axes& shape : {Axes{{"seq", "4096"}}, Axes{{"seq", "1"}, {"kv_seq", "16384"}},
                                Axes{{"seq", "64"}, {"kv_seq", "65536"}, {"heads", "2"}}}) {
        Axes axes = shape;
        axes["impl"] = "flash";
        axes["dim"] = dim;
        const auto p = test::plan_one(variant, axes);
        ASSERT_EQ(p.rejected, "");
        const auto c = p.variant->make(p.params);
        const auto& a = dynamic_cast<const AttnCase&>(*c);
        SCOPED_TRACE(std::string(variant) + " " + p.params.canonical());
        const FlashTiles t = flash_tiles(a.shape(), a.flash_plan(), lavapipe);
        EXPECT_LE(flash_loop_iterations(a.flash_plan(), t, {}), kFlashLoopBudget);
      }
    }
  }
}

// ---- GPU: validation against the float64 reference ------------------------------

// Both impls, both dtypes, causal and not, GQA (8 heads on 2), M != N and
// decode over 700 keys.
const Axes kRelBiasMatrix{{"impl", "naive,flash"}, {"dtype", "f32,f16"}, {"causal", "0,1"},
                   {"heads", "8"},          {"kv_heads", "2"},    {"dim", "64"}};

TEST(RelBiasGpu, T5ValidatesInBothBucketModes) {
  for (const Axes& shape : {Axes{{"seq", "37"}, {"kv_seq", "50"}}, Axes{{"seq", "1"}, {"kv_seq", "700"}}}) {
    Axes axes = kRelBiasMatrix;
    axes.insert(shape.begin(), shape.end());
    axes["bidirectional"] = "true,false";
    expect_all_validate("attn.t5", axes, 2 * 2 * 2 * 2);
  }
}

TEST(RelBiasGpu, TupeValidates) {
  for (const Axes& shape : {Axes{{"seq", "37"}, {"kv_seq", "50"}}, Axes{{"seq", "1"}, {"kv_seq", "700"}}}) {
    Axes axes = kRelBiasMatrix;
    axes.insert(shape.begin(), shape.end());
    expect_all_validate("attn.tupe", axes, 2 * 2 * 2);
  }
  // 3 heads per kv head: the pk rows per key cannot be shared by the row
  // slots of an invocation (a workgroup is not a multiple of 3 rows).
  expect_all_validate("attn.tupe",
                      {{"impl", "flash"},
                       {"dtype", "f32"},
                       {"heads", "6"},
                       {"kv_heads", "2"},
                       {"seq", "1,37"},
                       {"kv_seq", "90"},
                       {"dim", "40"},
                       {"causal", "1"}},
                      2);
}

TEST(RelBiasGpu, DebertaValidates) {
  // 37 x 50: per-score terms on a GPU plan, both tables on lavapipe; decode
  // 1 x 700: c2p table + per-score p2c.
  for (const Axes& shape : {Axes{{"seq", "37"}, {"kv_seq", "50"}}, Axes{{"seq", "1"}, {"kv_seq", "700"}}}) {
    Axes axes = kRelBiasMatrix;
    axes.insert(shape.begin(), shape.end());
    expect_all_validate("attn.deberta", axes, 2 * 2 * 2);
  }
}

TEST(RelBiasGpu, T5PastMaxDistanceInBothModes) {
  // N = M = 300: |rp| up to 299, past max_distance 128 on both sides
  // (bidirectional) and before the query (unidirectional, saturating at
  // bucket 31); every log-bucket boundary of both modes is crossed.
  expect_all_validate("attn.t5",
                      {{"impl", "naive,flash"},
                       {"dtype", "f32,f16"},
                       {"heads", "4"},
                       {"kv_heads", "2"},
                       {"seq", "300"},
                       {"dim", "32"},
                       {"bidirectional", "true,false"}},
                      8);
  // TUPE's buckets, a head dim that is not a multiple of 4.
  expect_all_validate("attn.tupe",
                      {{"impl", "naive,flash"},
                       {"dtype", "f32"},
                       {"heads", "2"},
                       {"seq", "40"},
                       {"kv_seq", "260"},
                       {"dim", "6"},
                       {"causal", "0,1"}},
                      4);
}

// The CPU kernel's build in which the band's per-distance read goes through
// near_window.glsl: staged MHA with tile shuffles.
void expect_near_window_build(const PipelineRecord& p) {
  EXPECT_GT(test::spec_constant(p, "TILE_SHUFFLE").value_or(0), 0u);
  EXPECT_EQ(test::spec_constant(p, "GROUP"), 1u);
}

TEST(RelBiasGpu, T5FarRangesValidate) {
  // 8 buckets, max_distance 12: past a few keys the bias is one value per
  // side, so with N = 300 (workgroups of up to 128 rows) the CPU kernel folds
  // most keys in far ranges on both sides (flash_main.glsl, ATTN_FAR_SCORE_TERM),
  // GQA and MHA, M > N. A band one key off reads the wrong side's bias, which
  // bias_table's independent entries make an error far past the tolerance.
  const Axes axes{{"impl", "flash"}, {"dtype", "f32"},       {"heads", "4"},           {"kv_heads", "4,1"},
                  {"seq", "300"},    {"kv_seq", "300,333"}, {"dim", "16"},           {"num_buckets", "8"},
                  {"max_distance", "12"}};
  Axes t5 = axes;
  t5["causal"] = "0,1";
  t5["bidirectional"] = "true,false";
  expect_all_validate("attn.t5", t5, 2 * 2 * 2 * 2);
  Axes tupe = axes;
  tupe["causal"] = "0,1";
  expect_all_validate("attn.tupe", tupe, 2 * 2 * 2);
  // MQA over 1200 keys: the keys are split (4 splits on lavapipe), and each
  // split's far ranges are clipped to its keys.
  Axes split = axes;
  split["kv_heads"] = "1";
  split["kv_seq"] = "1200";
  split["causal"] = "0,1";
  expect_all_validate("attn.t5", split, 2);
  // The constants the kernel sees are the host's far distances.
  const RelFarDistances far = t5_far_distances(true, 8, 12);
  const CaseResult r = test::run_case("attn.t5", {{"impl", "flash"}, {"seq", "300"}, {"heads", "2"}, {"dim", "16"},
                                                  {"num_buckets", "8"}, {"max_distance", "12"}});
  ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
  const PipelineRecord& p = r.pipelines.back();
  EXPECT_EQ(p.shader, "attn_flash_t5");
  EXPECT_EQ(test::spec_constant(p, "FAR_LEFT"), far.left);
  EXPECT_EQ(test::spec_constant(p, "FAR_RIGHT"), far.right);
  EXPECT_GT(far.left, 2u);
  EXPECT_LE(far.right, 12u);
  // MHA with tile shuffles: where the subgroup also has a lane per row slot
  // (256-bit lavapipe: 8 lanes, 8 slots) the band takes the near window
  // (near_window.glsl), which the validations above check.
  expect_near_window_build(p);
  // N = M = 128 with the default buckets (far from 91 on): one workgroup
  // holds every row, and no key is that far from all of them, so the
  // kernel compiles its plain loop.
  const CaseResult small = test::run_case("attn.t5", {{"impl", "flash"}, {"seq", "128"}, {"heads", "2"}, {"dim", "16"}});
  ASSERT_EQ(small.status, CaseStatus::kOk) << small.reason;
  for (const char* name : {"FAR_LEFT", "FAR_RIGHT"}) {
    EXPECT_EQ(test::spec_constant(small.pipelines.back(), name), kRelFarNone) << name;
  }
}

TEST(RelBiasGpu, DebertaFarRangesValidate) {
  // S 8, P 16: idx saturates a few keys away, and the tables (16 kr/qr rows
  // against 300 rows) are chosen, so the CPU kernel folds most keys in far
  // ranges (one c2p entry per row slot, the p2c entry at the side's idx);
  // GQA and MHA, M > N, causal and not.
  expect_all_validate("attn.deberta",
                      {{"impl", "flash"},
                       {"dtype", "f32"},
                       {"heads", "4"},
                       {"kv_heads", "4,1"},
                       {"seq", "300"},
                       {"kv_seq", "300,333"},
                       {"dim", "16"},
                       {"causal", "0,1"},
                       {"position_buckets", "8"},
                       {"max_relative_positions", "16"}},
                      8);
  // G = 3 does not divide the workgroup: its slots hold rows of different
  // heads, each reading its own head's far p2c entry (ATTN_SLOT_HEADS).
  expect_all_validate("attn.deberta",
                      {{"impl", "flash"},
                       {"dtype", "f32"},
                       {"heads", "6"},
                       {"kv_heads", "2"},
                       {"seq", "300"},
                       {"kv_seq", "333"},
                       {"dim", "16"},
                       {"causal", "0,1"},
                       {"position_buckets", "8"},
                       {"max_relative_positions", "16"}},
                      2);
  const CaseResult r = test::run_case("attn.deberta", {{"impl", "flash"}, {"seq", "300"}, {"heads", "2"}, {"dim", "16"},
                                                       {"position_buckets", "8"}, {"max_relative_positions", "16"}});
  ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
  const PipelineRecord& flash = r.pipelines.back();
  const RelFarDistances far = deberta_far_distances(8, 16);
  EXPECT_EQ(test::spec_constant(flash, "FAR_LEFT"), far.left);
  EXPECT_EQ(test::spec_constant(flash, "FAR_RIGHT"), far.right);
  EXPECT_EQ(test::spec_constant(flash, "DEB_P2C_TABLE"), 1u);
  // The MHA cases above read idx through the near window.
  expect_near_window_build(r.pipelines.back());
  // D 64 with the default buckets (far from 506 on): the staged far-p2c
  // chunk leaves lavapipe's 32 KiB a tile of 60 keys, so tiles end inside
  // the far ranges and the band.
  expect_all_validate("attn.deberta",
                      {{"impl", "flash"}, {"heads", "2"}, {"seq", "700"}, {"dim", "64"}, {"causal", "0,1"}}, 2);
}

TEST(RelBiasGpu, DebertaLogBucketsAndClampAtN600) {
  // N = M = 600: |delta| up to 599, past mid = 128 (log buckets) and past
  // 511 (idx clamps at 0 and 2S - 1); both tables in flash.
  RunOptions options;
  options.reference_budget = 1e8;  // a sample of rows (first and last included)
  expect_all_validate(
      "attn.deberta",
      {{"impl", "naive,flash"}, {"dtype", "f32,f16"}, {"heads", "2"}, {"seq", "600"}, {"dim", "32"}, {"causal", "0,1"}},
      8, options);
}

// ---- GPU: the same inputs through two cases ----------------------------------------

TEST(RelBiasGpu, NaiveAndFlashAgreeOnTheSameInputs) {
  test::expect_naive_and_flash_agree(
      {"attn.t5", "attn.tupe", "attn.deberta"},
      {{{"seq", "45"}, {"kv_seq", "300"}, {"causal", "1"}}, {{"seq", "3"}, {"kv_seq", "300"}, {"causal", "0"}}});
}

TEST(RelBiasGpu, TheBiasChangesTheOutputVersusNope) {
  test::expect_differs_from_nope({"attn.t5", "attn.tupe", "attn.deberta"});
}

// ---- bad parameters ------------------------------------------------------------

TEST(RelBiasRejects, BadParametersFailCleanlyWithTheirValue) {
  struct Bad {
    std::string variant;
    Axes axes;
    std::string reason_has;
  };
  const std::vector<Bad> bad{
      {"attn.t5", {{"num_buckets", "31"}}, "num_buckets=31"},
      {"attn.t5", {{"num_buckets", "2"}}, "num_buckets=2"},  // bidirectional: no exact bucket per side
      {"attn.t5", {{"num_buckets", "0"}, {"causal", "1"}}, "num_buckets=0"},
      {"attn.t5", {{"max_distance", "8"}}, "max_distance=8"},  // <= exact = 8 (bidirectional)
      {"attn.t5", {{"max_distance", "16"}, {"bidirectional", "false"}}, "max_distance=16"},  // exact = 16
      {"attn.t5", {{"num_buckets", "5000000000"}}, "num_buckets=5000000000"},
      {"attn.tupe", {{"num_buckets", "33"}}, "num_buckets=33"},
      {"attn.tupe", {{"max_distance", "-1"}}, "max_distance=-1"},
      {"attn.deberta", {{"position_buckets", "1"}}, "position_buckets=1"},
      {"attn.deberta", {{"position_buckets", "8192"}}, "position_buckets=8192"},
      {"attn.deberta", {{"max_relative_positions", "129"}}, "max_relative_positions=129"},  // <= S/2 + 1
      {"attn.deberta", {{"seq", "50"}, {"kv_seq", "40"}}, "kv_seq=40"},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.variant + " " + b.reason_has);
    Axes axes = b.axes;
    axes["impl"] = "flash";
    const auto results = test::run_cases(b.variant, axes);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].status, CaseStatus::kSkipped);
    EXPECT_NE(results[0].reason.find(b.reason_has), std::string::npos) << results[0].reason;
  }
  // From the command line: the reason, naming the value.
  for (const auto& [variant, param, value] :
       {std::make_tuple("attn.t5", "num_buckets", "31"), std::make_tuple("attn.tupe", "max_distance", "4"),
        std::make_tuple("attn.deberta", "position_buckets", "1")}) {
    const std::string setting = std::string(param) + "=" + value;
    const auto out = test::run_pebench({"run", "--variant", variant, "--param", setting, "--seq", "8", "--out",
                                        test::temp_dir("relbias-bad") + "/r.json", "--quiet"});
    EXPECT_NE(out.out.find(setting), std::string::npos) << out.out;
  }
}

}  // namespace
}  // namespace pebench
