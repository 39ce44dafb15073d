// Masks and modifiers on the device (encodings.md "Masks and modifiers"):
// window, chunk, sink_tokens, softcap and sink_logits validate against the
// float64 reference in every attention variant, both impls and dtypes, MHA
// and GQA, N != M and decode, on the CPU kernel and the GPU kernel
// (--emulate desktop-gpu); and flash reads no key that its rows' ranges
// leave out (shaders/attn/mask.glsl, attn_key_ranges).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "suites/attn/attn_common.h"
#include "test_util.h"

namespace pebench {
namespace {

using Axes = std::map<std::string, std::string>;

Axes with(Axes a, const Axes& more) {
  for (const auto& [k, v] : more) a[k] = v;
  return a;
}

// The modifier sets: each modifier alone, and the spec's combinations
// (StreamingLLM, gpt-oss's sliding layers with Gemma 2's cap on top).
// softcap 0.2: the scores of uniform q, k reach about 0.6, so the cap bends them.
const std::vector<Axes>& modifier_sets() {
  static const std::vector<Axes> sets{{{"window", "5"}},
                                      {{"chunk", "8"}},
                                      {{"window", "4"}, {"sink_tokens", "3"}},
                                      {{"softcap", "0.2"}},
                                      {{"window", "6"}, {"sink_logits", "1"}, {"softcap", "0.3"}}};
  return sets;
}

TEST(AttnMaskGpu, RepresentativeVariantsValidateEveryModifier) {
  // GQA prefill with N != M (staged), MHA decode (direct, split over keys).
  const std::vector<Axes> shapes{{{"heads", "4"}, {"kv_heads", "2"}, {"seq", "21"}, {"kv_seq", "45"}},
                                 {{"heads", "2"}, {"kv_heads", "2"}, {"seq", "1"}, {"kv_seq", "300"}}};
  // f16 with the combined set (the last), f32 with every set: the f16 build
  // differs in its loads and stores only.
  for (const char* variant : {"attn.nope", "attn.alibi", "attn.rope", "attn.t5"}) {
    for (size_t m = 0; m < modifier_sets().size(); ++m) {
      const bool both = m + 1 == modifier_sets().size();
      for (const Axes& shape : shapes) {
        const Axes axes = with(with(shape, modifier_sets()[m]),
                               {{"impl", "naive,flash"}, {"dtype", both ? "f32,f16" : "f32"}, {"causal", "1"}, {"dim", "32"}});
        SCOPED_TRACE(std::string(variant));
        test::expect_all_validate(variant, axes, both ? 4 : 2);
      }
    }
  }
}

TEST(AttnMaskGpu, NonCausalWindowsChunksAndSinksValidate) {
  // causal=false: |i' - j| < W, chunks as diagonal blocks, sinks past the row.
  for (const char* variant : {"attn.nope", "attn.alibi", "attn.t5"}) {
    for (const Axes& mods : {Axes{{"window", "7"}, {"sink_tokens", "2"}}, Axes{{"chunk", "16"}, {"sink_logits", "1"}}}) {
      SCOPED_TRACE(std::string(variant));
      test::expect_all_validate(variant,
                                with(mods, {{"impl", "naive,flash"},
                                            {"dtype", "f32"},
                                            {"causal", "0"},
                                            {"heads", "2"},
                                            {"kv_heads", "1"},
                                            {"seq", "30"},
                                            {"kv_seq", "40"},
                                            {"dim", "16"}}),
                                2);
    }
  }
}

TEST(AttnMaskGpu, EveryVariantValidatesEveryModifierAtOnce) {
  for (const char* variant : {"attn.nope", "attn.alibi", "attn.rope", "attn.t5", "attn.tupe", "attn.shaw", "attn.xl", "attn.kerple",
                              "attn.fire", "attn.deberta", "attn.complex"}) {
    SCOPED_TRACE(variant);
    test::expect_all_validate(variant,
                              {{"impl", "naive,flash"},
                               {"dtype", "f32"},
                               {"causal", "1"},
                               {"heads", "2"},
                               {"kv_heads", "2"},
                               {"seq", "40"},
                               {"kv_seq", "48"},
                               {"dim", "16"},
                               {"window", "9"},
                               {"sink_tokens", "2"},
                               {"softcap", "0.3"},
                               {"sink_logits", "1"}},
                              2);
  }
}

TEST(AttnMaskGpu, GpuPlanValidatesMasksUnderDesktopGpu) {
  GpuContext& desktop = test::gpu_as("desktop-gpu");
  for (const char* variant : {"attn.nope", "attn.alibi", "attn.t5", "attn.tupe", "attn.deberta"}) {
    for (const Axes& mods : modifier_sets()) {
      SCOPED_TRACE(std::string(variant));
      test::expect_all_validate(variant,
                                with(mods, {{"impl", "flash"},
                                            {"dtype", "f32,f16"},
                                            {"causal", "1"},
                                            {"heads", "4"},
                                            {"kv_heads", "2"},
                                            {"seq", "33,1"},
                                            {"kv_seq", "70"},
                                            {"dim", "64"}}),
                                4, {}, &desktop);
    }
  }
}

// The flash kernels' ordinary build declares the sinks' binding (11) in
// every case (mask.glsl); the packed build, which phones with 4 storage
// buffers get, has none. Masks and softcap still run there; sink_logits is
// unsupported, with the binding count in the reason.
TEST(AttnMaskGpu, PackedBuildsTakeMasksAndRefuseSinkLogits) {
  GpuContext& phone = test::gpu_as("android-baseline-2022");
  const Axes shape{{"impl", "flash"}, {"dtype", "f32"}, {"causal", "1"}, {"heads", "2"},
                   {"kv_heads", "1"},  {"seq", "21"},   {"kv_seq", "45"},  {"dim", "32"}};
  for (const char* variant : {"attn.nope", "attn.t5"}) {
    SCOPED_TRACE(variant);
    const auto ok = test::run_cases(variant, with(shape, {{"window", "5"}, {"sink_tokens", "3"}, {"softcap", "0.2"}}), {}, &phone);
    ASSERT_EQ(ok.size(), 1u);
    ASSERT_EQ(ok[0].status, CaseStatus::kOk) << ok[0].reason;
    bool packed = false;
    for (const auto& p : ok[0].pipelines) packed = packed || p.shader.find("_packed") != std::string::npos;
    EXPECT_TRUE(packed);
    const auto sinks = test::run_cases(variant, with(shape, {{"sink_logits", "1"}}), {}, &phone);
    ASSERT_EQ(sinks.size(), 1u);
    EXPECT_EQ(sinks[0].status, CaseStatus::kUnsupported);
    EXPECT_NE(sinks[0].reason.find("sink_logits: the flash kernel binds 12 storage buffers, this device allows 4"),
              std::string::npos)
        << sinks[0].reason;
  }
}

// Keys no row of the case sees hold NaN in k and v: a kernel that folded
// one of them, even masked (weight 0 times NaN), would give NaN. Flash reads
// only its ranges, so it validates: the staged kernel (40 rows) and the
// direct one (decode). (The GPU kernel's decode: the test below.)
void expect_unseen_keys_unread(const std::string& variant, const Axes& axes, GpuContext* on = nullptr) {
  auto c = test::build_case(variant, axes);
  const auto& shape = dynamic_cast<const AttnCase&>(*c.impl).shape();
  int64_t poisoned = 0;
  for (int64_t j = 0; j < shape.kv_seq; ++j) {
    bool seen = false;
    for (int64_t i = 0; i < shape.seq; ++i) seen = seen || shape.mask.visible(shape.query_pos(i), j);
    if (seen) continue;
    ++poisoned;
    for (int64_t bh = 0; bh < shape.batch * shape.kv_heads; ++bh) {
      for (int64_t d = 0; d < shape.dim; ++d) {
        const int64_t at = (bh * shape.kv_seq + j) * shape.dim + d;
        c.tensors.at("k").set(at, std::numeric_limits<double>::quiet_NaN());
        c.tensors.at("v").set(at, std::numeric_limits<double>::quiet_NaN());
      }
    }
  }
  ASSERT_GT(poisoned, shape.kv_seq / 2);
  const Reference ref = c.reference();
  std::vector<double> want;
  for (int64_t r = 0; r < shape.q_rows(); ++r) {
    const auto& row = ref.outputs().at(0).rows.at(r);
    want.insert(want.end(), row.begin(), row.end());
  }
  const std::vector<double> got = test::run_on_gpu(c, "o", on);
  EXPECT_LE(test::nmse(got, want), 4 * c.impl->tolerance().nmse);
}

TEST(AttnMaskGpu, FlashReadsNoKeyOutsideItsRanges) {
  for (const char* variant : {"attn.nope", "attn.alibi", "attn.t5", "attn.xl"}) {
    SCOPED_TRACE(variant);
    // Staged (40 rows of one kv head), window and sinks: keys 3 .. 222 unseen.
    expect_unseen_keys_unread(variant,
                              {{"impl", "flash"},
                               {"heads", "1"},
                               {"kv_heads", "1"},
                               {"seq", "40"},
                               {"kv_seq", "300"},
                               {"dim", "32"},
                               {"causal", "1"},
                               {"window", "38"},
                               {"sink_tokens", "3"}});
    // Decode (direct, split over the keys): a window of 16 and a chunk.
    expect_unseen_keys_unread(variant,
                              {{"impl", "flash"},
                               {"heads", "2"},
                               {"kv_heads", "1"},
                               {"seq", "1"},
                               {"kv_seq", "700"},
                               {"dim", "32"},
                               {"causal", "1"},
                               {"window", "16"},
                               {"sink_logits", "1"}});
    expect_unseen_keys_unread(variant,
                              {{"impl", "flash"},
                               {"heads", "2"},
                               {"kv_heads", "2"},
                               {"seq", "3"},
                               {"kv_seq", "700"},
                               {"dim", "32"},
                               {"causal", "1"},
                               {"chunk", "128"}});
  }
}

// The GPU kernel's decode reads only the keys in its split's ranges. MHA
// (direct: a cluster per key split) with a trip count uniform over the
// workgroup: the longest range of its clusters' splits, the shorter ranges'
// extra keys masked and read from the row's own position. GQA (staged: the
// group's heads share the split's tiles) stages only the keys of the ranges.
// K and V are NaN at every unseen key, so one read of them would show.
TEST(AttnMaskGpu, GpuPlanDecodeReadsNoKeyOutsideItsRanges) {
  GpuContext& desktop = test::gpu_as("desktop-gpu");
  for (const char* variant : {"attn.nope", "attn.alibi", "attn.t5"}) {
    for (const char* kv_heads : {"1", "2"}) {
      SCOPED_TRACE(fmt::format("{} kv_heads {}", variant, kv_heads));
      const Axes decode{{"impl", "flash"}, {"heads", "2"}, {"kv_heads", kv_heads}, {"seq", "1"},
                        {"kv_seq", "700"}, {"dim", "64"},  {"causal", "1"}};
      expect_unseen_keys_unread(variant, with(decode, {{"window", "16"}, {"sink_tokens", "3"}}), &desktop);
      expect_unseen_keys_unread(variant, with(decode, {{"chunk", "128"}}), &desktop);
    }
  }
}

}  // namespace
}  // namespace pebench
