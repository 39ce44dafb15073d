// Masks and modifiers (encodings.md section 3, "Masks and modifiers"): the
// spec's facts for window, chunk and sink tokens, the key ranges flash
// folds and skips, the exact visible-pair count of the cost model, and the
// float64 reference with softcap and sink logits.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "harness/contract/registry.h"
#include "suites/attn/attn_common.h"
#include "suites/attn/attn_mask.h"

namespace pebench {
namespace {

// The keys visible to the row at qpos, by the rule.
std::vector<int64_t> keys(const AttnMask& m, int64_t M, int64_t qpos) {
  std::vector<int64_t> out;
  for (int64_t j = 0; j < M; ++j) {
    if (m.visible(qpos, j)) out.push_back(j);
  }
  return out;
}
std::vector<int64_t> iota(int64_t a, int64_t b) {  // [a, b]
  std::vector<int64_t> v;
  for (int64_t j = a; j <= b; ++j) v.push_back(j);
  return v;
}

TEST(AttnMaskSpec, WindowCountsTheQuery) {
  // W 4, causal, i' 10: j = 7..10 (HF's sliding_window; not Mistral's W + 1).
  const AttnMask m(true, 11, 11, 4, 0, 0);
  EXPECT_EQ(keys(m, 11, 10), iota(7, 10));
  EXPECT_EQ(m.visible_keys(10), 4);
  EXPECT_EQ(keys(m, 11, 2), iota(0, 2));
  // causal=false: |i' - j| < W (Gemma 3).
  const AttnMask e(false, 20, 20, 4, 0, 0);
  EXPECT_EQ(keys(e, 20, 10), iota(7, 13));
  EXPECT_EQ(keys(e, 20, 0), iota(0, 3));
}

TEST(AttnMaskSpec, ChunksAreLlama4s) {
  // C 4, causal, i' 10: j = 8..10.
  EXPECT_EQ(keys(AttnMask(true, 11, 11, 0, 4, 0), 11, 10), iota(8, 10));
  // C 4, N 2, M 9: row 0 (i' 7) sees 4..7, row 1 (i' 8) sees 8.
  const AttnMask m(true, 2, 9, 0, 4, 0);
  EXPECT_EQ(keys(m, 9, 7), iota(4, 7));
  EXPECT_EQ(keys(m, 9, 8), iota(8, 8));
  // causal=false: blocks on the diagonal.
  EXPECT_EQ(keys(AttnMask(false, 10, 10, 0, 4, 0), 10, 5), iota(4, 7));
  EXPECT_EQ(keys(AttnMask(false, 10, 10, 0, 4, 0), 10, 9), iota(8, 9));
}

TEST(AttnMaskSpec, SinkTokensStayVisibleBesideTheWindow) {
  // StreamingLLM: window 4 plus the first 2 keys.
  const AttnMask m(true, 12, 12, 4, 0, 2);
  EXPECT_EQ(keys(m, 12, 10), (std::vector<int64_t>{0, 1, 7, 8, 9, 10}));
  EXPECT_EQ(m.visible_keys(10), 6);
  // Still causal: the row at 0 sees key 0 only, sinks overlapping the window count once.
  EXPECT_EQ(keys(m, 12, 0), iota(0, 0));
  EXPECT_EQ(m.visible_keys(3), 4);
  // Not causal: sinks are the first S keys whatever the row.
  EXPECT_EQ(keys(AttnMask(false, 12, 12, 2, 0, 1), 12, 6), (std::vector<int64_t>{0, 5, 6, 7}));
}

TEST(AttnMaskSpec, FlashVisitsTheSpecsTileCounts) {
  // N = M = 8192, 128-key tiles: W 1024 leaves 8.44 tiles a query tile
  // against 32.5 for causal alone.
  EXPECT_DOUBLE_EQ(AttnMask(true, 8192, 8192, 0, 0, 0).mean_key_tiles(128, 128), 32.5);
  EXPECT_NEAR(AttnMask(true, 8192, 8192, 1024, 0, 0).mean_key_tiles(128, 128), 8.44, 0.005);
  // Chunks of 2048: a query tile sees its chunk's tiles up to its own, 8.5 on average.
  EXPECT_DOUBLE_EQ(AttnMask(true, 8192, 8192, 0, 2048, 0).mean_key_tiles(128, 128), 8.5);
}

// Over many shapes and tiles: every visible key of every row of a tile lies
// in the tile's ranges, keys of [all_begin, all_end) are visible to every
// row, and the pair count is the brute-force one.
TEST(AttnMaskSpec, TileRangesAndPairCountsMatchTheRule) {
  for (const bool causal : {true, false}) {
    for (const int64_t W : {0, 1, 3, 8}) {
      for (const int64_t C : {0, 1, 4, 5}) {
        for (const int64_t S : {0, 1, 3}) {
          for (const auto& [N, M] : {std::pair<int64_t, int64_t>{13, 13}, {5, 17}, {1, 9}}) {
            const AttnMask m(causal, N, M, W, C, S);
            SCOPED_TRACE(testing::Message() << "causal " << causal << " W " << W << " C " << C << " S " << S
                                            << " N " << N << " M " << M);
            double pairs = 0;
            for (int64_t i = 0; i < N; ++i) pairs += static_cast<double>(keys(m, M, i + M - N).size());
            EXPECT_EQ(m.visible_pairs(), pairs);
            for (int64_t rows : {1, 3, 4}) {
              for (int64_t i0 = 0; i0 < N; i0 += rows) {
                const int64_t p0 = i0 + M - N, p1 = std::min(N, i0 + rows) - 1 + M - N;
                const AttnMask::KeyRanges r = m.tile_ranges(p0, p1);
                ASSERT_LE(r.sink_end, r.begin);
                ASSERT_LE(r.begin, r.all_begin);
                ASSERT_LE(r.all_begin, r.all_end);
                ASSERT_LE(r.all_end, r.end);
                for (int64_t p = p0; p <= p1; ++p) {
                  for (int64_t j = 0; j < M; ++j) {
                    const bool in = j < r.sink_end || (j >= r.begin && j < r.end);
                    if (m.visible(p, j)) {
                      EXPECT_TRUE(in) << "row " << p << " key " << j;
                    }
                    if (j >= r.all_begin && j < r.all_end) {
                      EXPECT_TRUE(m.visible(p, j)) << "row " << p << " key " << j;
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST(AttnMaskSpec, SoftcapIsGemma2s) {
  const AttnSoftcap cap(50);
  EXPECT_DOUBLE_EQ(cap.apply(10), 50 * std::tanh(0.2));
  EXPECT_LT(cap.apply(1e6), 50.0 + 1e-12);
  EXPECT_DOUBLE_EQ(AttnSoftcap(0).apply(123.0), 123.0);
}

// A case built past resolve (the kernels do not take modifiers yet): its
// params as a user would give them.
std::unique_ptr<Case> mask_case(const std::string& variant, Params p) {
  const Variant* v = Registry::instance().find(variant);
  if (!p.has("scale")) p.set("scale", 1.0 / std::sqrt(static_cast<double>(p.i("dim"))));
  return v->make(p);
}
Params attn_params_of(bool causal, int64_t N, int64_t M) {
  Params p;
  p.set("batch", int64_t{2});
  p.set("heads", int64_t{4});
  p.set("kv_heads", int64_t{2});
  p.set("seq", N);
  p.set("kv_seq", M);
  p.set("dim", int64_t{8});
  p.set("causal", causal);
  p.set("dtype", std::string("f32"));
  p.set("impl", std::string("naive"));
  return p;
}

TEST(AttnMaskCost, FlopsCountTheVisiblePairs) {
  Params p = attn_params_of(true, 8192, 8192);
  p.set("dim", int64_t{64});
  p.set("heads", int64_t{8});
  p.set("kv_heads", int64_t{8});
  p.set("batch", int64_t{1});
  const double causal = mask_case("attn.nope", p)->cost().flops;
  EXPECT_DOUBLE_EQ(causal, 4.0 * 8 * 64 * 8192.0 * 8192.0 / 2);  // section 4: halved
  p.set("window", int64_t{1024});
  const double windowed = mask_case("attn.nope", p)->cost().flops;
  // V = sum_i min(i + 1, 1024) = 1024 * 1025 / 2 + 7168 * 1024.
  EXPECT_DOUBLE_EQ(windowed, 4.0 * 8 * 64 * (1024.0 * 1025 / 2 + 7168.0 * 1024));
  // ALiBi's one multiply-add a score follows the same pairs.
  const double alibi = mask_case("attn.alibi", p)->cost().flops;
  EXPECT_DOUBLE_EQ(alibi - windowed, 2.0 * 8 * (1024.0 * 1025 / 2 + 7168.0 * 1024));
}

// The reference by hand for one row: softmax over the visible keys of
// cap(scale q.k) + bias, the sink logit in the denominator.
TEST(AttnMaskReference, MatchesTheDefinitionByHand) {
  for (const char* variant : {"attn.nope", "attn.alibi"}) {
    Params p = attn_params_of(true, 6, 11);
    p.set("window", int64_t{3});
    p.set("sink_tokens", int64_t{2});
    p.set("softcap", 0.3);
    p.set("sink_logits", true);
    const auto c = mask_case(variant, p);
    TensorMap t;
    for (const TensorDesc& d : c->tensors()) t.emplace(d.name, HostTensor(d));
    Rng rng(3);
    c->fill_inputs(t, rng);
    const int64_t r = 1 * 4 * 6 + 3 * 6 + 5;  // b 1, h 3, i 5 (i' 10): kv head 1
    Reference ref(c->tensors());
    c->reference(t, {r}, ref);
    const std::vector<double>& out = ref.outputs().at(0).rows.at(r);
    const std::vector<double> slopes = alibi_slopes(4);
    const bool alibi = std::string(variant) == "attn.alibi";
    const double sink = t.at("sinks").get(3);
    std::vector<double> o(8, 0.0);
    double l = std::exp(sink);
    for (int64_t j : {0, 1, 8, 9, 10}) {
      double dot = 0;
      for (int64_t d = 0; d < 8; ++d) dot += t.at("q").get(r * 8 + d) * t.at("k").get(((1 * 2 + 1) * 11 + j) * 8 + d);
      const double s = 0.3 * std::tanh(dot / std::sqrt(8.0) / 0.3) - (alibi ? slopes[3] * (10 - j) : 0.0);
      l += std::exp(s);
      for (int64_t d = 0; d < 8; ++d) o[d] += std::exp(s) * t.at("v").get(((1 * 2 + 1) * 11 + j) * 8 + d);
    }
    for (int64_t d = 0; d < 8; ++d) EXPECT_NEAR(out[d], o[d] / l, 1e-12) << variant << " dim " << d;
  }
}

}  // namespace
}  // namespace pebench
