// Relative-position buckets (src/suites/common/rel_buckets.h, shaders/common/
// rel_buckets.glsl): every fact of encodings.md section 3, an independent
// exact evaluation of the spec's formulas, properties over wide ranges, the
// per-distance tables, rejections, and the GPU probe against the host for
// every distance in [-20000, 20000].
#include "suites/common/rel_buckets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "harness/contract/errors.h"
#include "runtime/buffer.h"
#include "runtime/command_buffer.h"
#include "runtime/pipeline.h"
#include "test_util.h"

namespace pebench {
namespace {

// ---- an independent exact evaluation of the spec's formulas -----------------------

// A natural number in base 2^32, just big enough for products of powers.
struct Nat {
  std::vector<uint32_t> d{1};
  Nat& times(uint32_t m, uint64_t k = 1) {
    for (uint64_t r = 0; r < k; ++r) {
      uint64_t carry = 0;
      for (uint32_t& x : d) {
        carry += uint64_t{x} * m;
        x = static_cast<uint32_t>(carry);
        carry >>= 32;
      }
      if (carry) d.push_back(static_cast<uint32_t>(carry));
    }
    return *this;
  }
  bool operator>=(const Nat& o) const {
    if (d.size() != o.d.size()) return d.size() > o.d.size();
    for (size_t i = d.size(); i-- > 0;) {
      if (d[i] != o.d[i]) return d[i] > o.d[i];
    }
    return true;
  }
};

// T5, n >= exact: exact + int(ln(n/exact)/ln(md/exact) * L) capped at half - 1,
// i.e. the largest t <= L-1 with t ln(md/exact) <= L ln(n/exact), i.e.
// md^t exact^L <= n^L exact^t.
int t5_by_definition(int64_t rp, bool bidirectional, int num_buckets, int max_distance) {
  const int half = bidirectional ? num_buckets / 2 : num_buckets;
  const int exact = half / 2, L = half - exact;
  int bucket = 0;
  int64_t n;
  if (bidirectional) {
    bucket = rp > 0 ? half : 0;
    n = std::llabs(rp);
  } else {
    n = std::max<int64_t>(-rp, 0);
  }
  if (n < exact) return bucket + static_cast<int>(n);
  int t = 0;
  while (t + 1 <= L - 1) {
    Nat lhs, rhs;
    lhs.times(static_cast<uint32_t>(n), L).times(exact, t + 1);
    rhs.times(max_distance, t + 1).times(exact, L);
    if (!(lhs >= rhs)) break;
    ++t;
  }
  return bucket + exact + t;
}

// DeBERTa magnitudes a > mid, ascending: mid + ceil(Q ln(a/mid)/ln((P-1)/mid)),
// the smallest u with Q ln(a/mid) <= u ln((P-1)/mid), i.e.
// a^Q mid^u <= (P-1)^u mid^Q. u(a) never decreases, so each search starts at
// the previous answer.
std::vector<int> deberta_by_definition(int bucket_size, int max_position, int64_t a_max) {
  const int mid = bucket_size / 2, Q = mid - 1;
  std::vector<int> bucket(static_cast<size_t>(a_max + 1));
  int u = 0;
  for (int64_t a = 0; a <= a_max; ++a) {
    if (a <= mid) {
      bucket[static_cast<size_t>(a)] = static_cast<int>(a);
      continue;
    }
    for (;; ++u) {
      Nat lhs, rhs;
      lhs.times(static_cast<uint32_t>(a), Q).times(mid, u);
      rhs.times(max_position - 1, u).times(mid, Q);
      if (rhs >= lhs) break;
    }
    bucket[static_cast<size_t>(a)] = mid + u;
  }
  return bucket;
}

// ---- the spec's facts, as checks on any bucket function ---------------------------

// The rp values where `bucket` (nb 32, max_distance 128) contradicts a fact
// of encodings.md; empty when all hold.
std::vector<int64_t> t5_fact_mismatches(const std::function<int(int64_t, bool)>& bucket) {
  std::vector<int64_t> bad;
  auto expect = [&](int64_t rp, bool bidirectional, int want) {
    if (bucket(rp, bidirectional) != want) bad.push_back(bidirectional ? rp : -1000000 - rp);
  };
  // Bidirectional, rp = -40..40, as the spec's run lengths.
  const std::vector<std::pair<int, int>> runs = {
      {12, 9}, {11, 9}, {10, 7}, {9, 4},  {8, 4},  {7, 1},  {6, 1},  {5, 1},  {4, 1},  {3, 1},  {2, 1},  {1, 1}, {0, 1},
      {17, 1}, {18, 1}, {19, 1}, {20, 1}, {21, 1}, {22, 1}, {23, 1}, {24, 4}, {25, 4}, {26, 7}, {27, 9}, {28, 9}};
  int64_t rp = -40;
  for (const auto& [value, count] : runs) {
    for (int k = 0; k < count; ++k) expect(rp++, true, value);
  }
  if (rp != 41) bad.push_back(999999);  // the run lengths must cover -40..40 exactly
  // First |rp| of buckets 8..15 (rp <= 0) and 24..31 (rp > 0).
  const int64_t firsts_bi[] = {8, 12, 16, 23, 32, 46, 64, 91};
  for (int b = 0; b < 8; ++b) {
    const int64_t n = firsts_bi[b];
    expect(-n, true, 8 + b);
    expect(-(n - 1), true, 8 + b - 1);
    expect(n, true, 24 + b);
    if (n - 1 > 0) expect(n - 1, true, 24 + b - 1);
  }
  // Keys before the query: i - j = 0..30.
  const int before[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  8,  8,  8,  9,  9,  9, 9,
                        10, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 11, 11};
  for (int d = 0; d <= 30; ++d) expect(-d, true, before[d]);
  // Unidirectional: rp > 0 -> 0; n = -rp in 0..15 -> n; first n of buckets 16..31.
  for (int64_t r = 1; r <= 300; ++r) expect(r, false, 0);
  for (int n = 0; n <= 15; ++n) expect(-n, false, n);
  const int64_t firsts_uni[] = {16, 19, 21, 24, 27, 31, 35, 40, 46, 52, 59, 67, 77, 87, 99, 113};
  for (int b = 0; b < 16; ++b) {
    expect(-firsts_uni[b], false, 16 + b);
    expect(-(firsts_uni[b] - 1), false, 16 + b - 1);
  }
  return bad;
}

// The |delta| where `bucket` (S 256, P 512) contradicts a fact, either sign.
std::vector<int64_t> deberta_fact_mismatches(const std::function<int64_t(int64_t)>& bucket) {
  std::vector<int64_t> bad;
  auto expect = [&](int64_t a, int64_t want) {
    if (bucket(a) != want || bucket(-a) != -want) bad.push_back(a);
  };
  for (int64_t a = 0; a <= 131; ++a) expect(a, a);
  const std::pair<int64_t, int64_t> facts[] = {{132, 131}, {135, 133}, {140, 137}, {150, 143}, {200, 169}, {256, 192},
                                               {300, 207}, {400, 233}, {500, 254}, {506, 255}, {507, 255}, {508, 255},
                                               {509, 255}, {510, 255}, {511, 255}, {512, 256}, {1024, 319}};
  for (const auto& [a, want] : facts) expect(a, want);
  if (bucket(505) == 255) bad.push_back(505);  // 506 is the first of 255
  return bad;
}

// ---- spec facts ----------------------------------------------------------------------

TEST(RelBucketsT5, SpecFactsHold) {
  EXPECT_EQ(t5_fact_mismatches([](int64_t rp, bool bi) { return t5_bucket(rp, bi, 32, 128); }), std::vector<int64_t>{});
  // The same facts, read off the threshold lists the GPU gets.
  EXPECT_EQ(t5_thresholds(true, 32, 128), (std::vector<uint32_t>{12, 16, 23, 32, 46, 64, 91}));
  EXPECT_EQ(t5_thresholds(false, 32, 128),
            (std::vector<uint32_t>{19, 21, 24, 27, 31, 35, 40, 46, 52, 59, 67, 77, 87, 99, 113}));
}

TEST(RelBucketsDeberta, SpecFactsHold) {
  EXPECT_EQ(deberta_fact_mismatches([](int64_t d) { return deberta_log_bucket(d, 256, 512); }), std::vector<int64_t>{});
  // idx = clamp(bucket + S, 0, 2S-1).
  EXPECT_EQ(deberta_idx(0, 256, 512), 256);
  EXPECT_EQ(deberta_idx(131, 256, 512), 387);
  EXPECT_EQ(deberta_idx(511, 256, 512), 511);
  EXPECT_EQ(deberta_idx(512, 256, 512), 511);  // 256 + 256 clamps to 2S-1
  EXPECT_EQ(deberta_idx(-511, 256, 512), 1);
  EXPECT_EQ(deberta_idx(-512, 256, 512), 0);
  EXPECT_EQ(deberta_idx(-1024, 256, 512), 0);
}

// The spec's T5 formula (nb 32, max_distance 128) in float or double, with
// ln(n/exact) one ulp low, well inside the 3 ulp Vulkan allows for log.
template <typename T>
int t5_log_one_ulp_low(int64_t rp, bool bidirectional) {
  const int half = bidirectional ? 16 : 32, exact = half / 2;
  const int bucket = bidirectional && rp > 0 ? half : 0;
  const int64_t n = bidirectional ? std::llabs(rp) : std::max<int64_t>(-rp, 0);
  if (n < exact) return bucket + static_cast<int>(n);
  const T num = std::nextafter(std::log(static_cast<T>(n) / static_cast<T>(exact)), T(0));
  const T v = num / std::log(T(128) / static_cast<T>(exact)) * static_cast<T>(half - exact);
  return bucket + std::min(exact + static_cast<int>(v), half - 1);
}

// The spec's DeBERTa formula (S 256, P 512) with ln(a/mid) one ulp high.
template <typename T>
int64_t deberta_log_one_ulp_high(int64_t delta) {
  const int64_t a = std::llabs(delta), mid = 128;
  if (a <= mid) return delta;
  const T num = std::nextafter(std::log(static_cast<T>(a) / static_cast<T>(mid)), std::numeric_limits<T>::infinity());
  const T v = num / std::log(T(511) / static_cast<T>(mid)) * static_cast<T>(mid - 1);
  const int64_t bucket = static_cast<int64_t>(std::ceil(v)) + mid;
  return delta < 0 ? -bucket : bucket;
}

// A log one ulp off breaks exactly the ties, and the fact checks notice.
TEST(RelBuckets, NaiveLogOneUlpOffFailsTheFacts) {
  // n = 16, 32, 64 sit exactly on ln(n/8)/ln(16)*8 = 2, 4, 6 (rp < 0 and rp > 0).
  const std::vector<int64_t> ties = {-64, -32, -16, 16, 32, 64};
  for (const auto& naive : {t5_log_one_ulp_low<float>, t5_log_one_ulp_low<double>}) {
    std::vector<int64_t> bad = t5_fact_mismatches(naive);
    std::sort(bad.begin(), bad.end());
    bad.erase(std::unique(bad.begin(), bad.end()), bad.end());
    EXPECT_EQ(bad, ties);
  }
  // |delta| = 511 gives ln(511/128)/ln(511/128) = 1 exactly; one ulp high
  // and ceil(127 (1 + eps)) = 128 lands in bucket 256.
  EXPECT_EQ(deberta_fact_mismatches(deberta_log_one_ulp_high<float>), std::vector<int64_t>{511});
  EXPECT_EQ(deberta_fact_mismatches(deberta_log_one_ulp_high<double>), std::vector<int64_t>{511});
}

// ---- the exact definition, independently ---------------------------------------------

TEST(RelBucketsT5, EqualsTheExactDefinition) {
  struct P {
    bool bidirectional;
    int num_buckets, max_distance;
  };
  for (const P p : {P{true, 32, 128}, P{false, 32, 128}, P{true, 64, 256}, P{false, 64, 256}, P{true, 4, 2},
                    P{false, 2, 5}, P{true, 6, 10}, P{false, 10, 6}, P{true, 32, 2048}, P{false, 128, 1000}}) {
    SCOPED_TRACE(::testing::Message() << "bidirectional=" << p.bidirectional << " num_buckets=" << p.num_buckets
                                      << " max_distance=" << p.max_distance);
    for (int64_t rp = -3 * p.max_distance; rp <= 3 * p.max_distance; ++rp) {
      ASSERT_EQ(t5_bucket(rp, p.bidirectional, p.num_buckets, p.max_distance),
                t5_by_definition(rp, p.bidirectional, p.num_buckets, p.max_distance))
          << "rp=" << rp;
    }
  }
}

TEST(RelBucketsDeberta, EqualsTheExactDefinition) {
  struct P {
    int bucket_size, max_position;
    int64_t a_max;
  };
  for (const P p : {P{256, 512, 3000}, P{128, 1024, 4000}, P{2, 3, 50}, P{3, 10, 50}, P{4, 4, 100}, P{10, 12, 500},
                    P{64, 40, 2000}}) {
    SCOPED_TRACE(::testing::Message() << "position_buckets=" << p.bucket_size
                                      << " max_relative_positions=" << p.max_position);
    const std::vector<int> want = deberta_by_definition(p.bucket_size, p.max_position, p.a_max);
    for (int64_t a = 0; a <= p.a_max; ++a) {
      ASSERT_EQ(deberta_log_bucket(a, p.bucket_size, p.max_position), want[static_cast<size_t>(a)]) << "a=" << a;
      ASSERT_EQ(deberta_log_bucket(-a, p.bucket_size, p.max_position), -want[static_cast<size_t>(a)]) << "a=" << a;
    }
  }
}

// The threshold lists the GPU uses agree with the host's buckets, for
// several parameter sets.
TEST(RelBuckets, ThresholdListsMarkEveryBoundary) {
  for (const auto& [bi, nb, md] :
       {std::tuple{true, 32, 128}, std::tuple{false, 32, 128}, std::tuple{true, 64, 256}, std::tuple{false, 64, 256}}) {
    const int half = bi ? nb / 2 : nb, exact = half / 2;
    const std::vector<uint32_t>& firsts = t5_thresholds(bi, nb, md);
    ASSERT_EQ(firsts.size(), static_cast<size_t>(half - exact - 1));
    for (size_t t = 0; t < firsts.size(); ++t) {
      const int64_t n = firsts[t];
      EXPECT_EQ(t5_bucket(-n, bi, nb, md), exact + static_cast<int>(t) + 1) << n;
      EXPECT_EQ(t5_bucket(-(n - 1), bi, nb, md), exact + static_cast<int>(t)) << n;  // each bucket is reached
    }
  }
  for (const auto& [S, P] : {std::pair{256, 512}, std::pair{128, 1024}}) {
    const int mid = S / 2;
    const std::vector<uint32_t> firsts = deberta_log_thresholds(S, P, 600);
    ASSERT_EQ(firsts.size(), 600u);
    EXPECT_EQ(firsts[0], static_cast<uint32_t>(mid + 1));
    for (size_t u = 0; u < firsts.size(); ++u) {
      const int64_t a = firsts[u];
      if (a == UINT32_MAX) {  // beyond 32 bits: no int32 delta reaches it
        EXPECT_LE(deberta_log_bucket(INT32_MAX, S, P), mid + static_cast<int>(u));
        continue;
      }
      if (u > 0 && firsts[u] == firsts[u - 1]) continue;  // u skipped: no |delta| has it
      EXPECT_GE(deberta_log_bucket(a, S, P), mid + static_cast<int>(u) + 1) << a;
      EXPECT_LE(deberta_log_bucket(a - 1, S, P), mid + static_cast<int>(u)) << a;
    }
  }
}

// ---- properties over wide ranges --------------------------------------------------------

TEST(RelBucketsT5, MonotoneSymmetricAndSaturating) {
  for (const auto& [nb, md] : {std::pair{32, 128}, std::pair{64, 256}}) {
    const int half = nb / 2;
    int prev_bi = 0, prev_uni = 0;
    for (int64_t n = 0; n <= 100000; ++n) {
      const int before = t5_bucket(-n, true, nb, md);
      ASSERT_GE(before, prev_bi) << n;
      ASSERT_LE(before, half - 1);
      if (n > 0) {  // keys after the query
        ASSERT_EQ(t5_bucket(n, true, nb, md), before + half) << n;
      }
      if (n >= md) {  // ln(n/exact)/ln(md/exact) >= 1: the min() caps it
        ASSERT_EQ(before, half - 1) << n;
      }
      const int uni = t5_bucket(-n, false, nb, md);
      ASSERT_GE(uni, prev_uni) << n;
      ASSERT_EQ(t5_bucket(n, false, nb, md), 0) << n;
      if (n >= md) {
        ASSERT_EQ(uni, nb - 1) << n;
      }
      prev_bi = before;
      prev_uni = uni;
    }
  }
  // Extreme distances saturate, without overflow.
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(t5_bucket(lo, true, 32, 128), 15);
  EXPECT_EQ(t5_bucket(hi, true, 32, 128), 31);
  EXPECT_EQ(t5_bucket(lo, false, 32, 128), 31);
  EXPECT_EQ(t5_bucket(hi, false, 32, 128), 0);
}

// The far distances start each side's last bucket: every distance from them
// on is in it, the one before is not.
TEST(RelBucketsT5, FarDistancesStartEachSidesLastBucket) {
  for (const bool bi : {true, false}) {
    for (const auto& [nb, md] : {std::pair{32, 128}, std::pair{8, 12}, std::pair{64, 1000}, std::pair{4, 3}}) {
      SCOPED_TRACE(testing::Message() << "bidirectional " << bi << " nb " << nb << " md " << md);
      const RelFarDistances far = t5_far_distances(bi, nb, md);
      for (const auto& [sign, from] : {std::pair{int64_t{-1}, far.left}, std::pair{int64_t{1}, far.right}}) {
        ASSERT_LE(from, static_cast<uint32_t>(md));
        const int last = t5_bucket(sign * md, bi, nb, md);
        for (int64_t d = from; d <= 4 * md; ++d) ASSERT_EQ(t5_bucket(sign * d, bi, nb, md), last) << sign * d;
        if (from > 0) {
          EXPECT_NE(t5_bucket(sign * (from - 1), bi, nb, md), last) << sign;
        }
      }
      // Keys after the query share bucket 0 when unidirectional, distance 0 included.
      if (!bi) {
        EXPECT_EQ(far.right, 0u);
      }
    }
  }
}

TEST(RelBucketsDeberta, FarDistancesStartEachSidesLastIdx) {
  // The spec's facts (S 256, P 512): |delta| 506..511 -> bucket 255 (idx
  // 511), 512 -> 256 (idx 0 after the query), 511 -> 255 (idx 1).
  const RelFarDistances far = deberta_far_distances(256, 512);
  EXPECT_EQ(far.left, 506u);
  EXPECT_EQ(far.right, 512u);
  for (const auto& [s, p] : {std::pair{256, 512}, std::pair{8, 16}, std::pair{2, 3}, std::pair{64, 4096}}) {
    SCOPED_TRACE(testing::Message() << "S " << s << " P " << p);
    const RelFarDistances f = deberta_far_distances(s, p);
    for (const auto& [sign, from] : {std::pair{int64_t{1}, f.left}, std::pair{int64_t{-1}, f.right}}) {
      const int last = deberta_idx(sign * (int64_t{1} << 40), s, p);
      for (int64_t d = from; d <= from + 4 * p; ++d) ASSERT_EQ(deberta_idx(sign * d, s, p), last) << sign * d;
      if (from > 0) {
        EXPECT_NE(deberta_idx(sign * (from - 1), s, p), last) << sign;
      }
    }
  }
}

TEST(RelBucketsDeberta, MonotoneOddAndIdxInRange) {
  for (const auto& [S, P] : {std::pair{256, 512}, std::pair{128, 1024}}) {
    const int mid = S / 2;
    int64_t prev = 0;
    for (int64_t d = 0; d <= 100000; ++d) {
      const int64_t b = deberta_log_bucket(d, S, P);
      ASSERT_GE(b, prev) << d;
      ASSERT_EQ(deberta_log_bucket(-d, S, P), -b) << d;
      if (d > mid) {
        ASSERT_GT(b, mid) << d;
      }
      // |delta| = P-1 is the tie where the log ratio is exactly 1: bucket S - 1.
      if (d == P - 1) {
        ASSERT_EQ(b, mid + mid - 1) << d;
      }
      const int idx = deberta_idx(d, S, P), idx_neg = deberta_idx(-d, S, P);
      ASSERT_EQ(idx, std::min<int64_t>(b + S, 2 * S - 1));
      ASSERT_EQ(idx_neg, std::max<int64_t>(S - b, 0));
      prev = b;
    }
  }
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  // |delta| = 2^63, far from a tie: 128 + ceil(127 ln(2^56) / ln(511/128)) = 128 + ceil(3561.02).
  EXPECT_EQ(deberta_log_bucket(lo, 256, 512), -3690);
  EXPECT_EQ(deberta_log_bucket(hi, 256, 512), -deberta_log_bucket(-hi, 256, 512));
  EXPECT_GT(deberta_log_bucket(hi, 256, 512), deberta_log_bucket(1 << 30, 256, 512));
  EXPECT_EQ(deberta_idx(lo, 256, 512), 0);
  EXPECT_EQ(deberta_idx(hi, 256, 512), 511);
}

// ---- per-distance tables ----------------------------------------------------------------

TEST(RelBuckets, TablesHoldTheIdOfEveryQueryKeyPair) {
  // M past 512 so that DeBERTa's idx clamps at both ends.
  const int64_t N = 5, M = 1100;
  EXPECT_EQ(rel_table_length(N, M), M + N - 1);
  const std::vector<int32_t> t5 = t5_bucket_table(N, M, true, 32, 128);
  const std::vector<int32_t> t5u = t5_bucket_table(N, M, false, 32, 128);
  const std::vector<int32_t> deb = deberta_idx_table(N, M, 8, 200);
  const std::vector<int32_t> deb256 = deberta_idx_table(N, M, 256, 512);
  ASSERT_EQ(t5.size(), static_cast<size_t>(M + N - 1));
  for (int64_t i = 0; i < N; ++i) {
    const int64_t ip = i + M - N;
    for (int64_t j = 0; j < M; ++j) {
      const size_t e = static_cast<size_t>(j - i + N - 1);  // = j - i' + M - 1
      ASSERT_EQ(t5[e], t5_bucket(j - ip, true, 32, 128)) << i << "," << j;
      ASSERT_EQ(t5u[e], t5_bucket(j - ip, false, 32, 128)) << i << "," << j;
      ASSERT_EQ(deb[e], deberta_idx(ip - j, 8, 200)) << i << "," << j;
      ASSERT_EQ(deb256[e], deberta_idx(ip - j, 256, 512)) << i << "," << j;
    }
  }
  // The first entry is the farthest key before the last query; the last is
  // the farthest key after the first query (rp = N-1).
  EXPECT_EQ(t5.front(), t5_bucket(-(M - 1), true, 32, 128));
  EXPECT_EQ(t5.back(), t5_bucket(N - 1, true, 32, 128));
  EXPECT_EQ(deb256.front(), 511);  // delta = M-1 = 1099: bucket 319 + 256 clamps to 2S-1
  EXPECT_EQ(deb256.back(), 252);   // delta = -(N-1) = -4

  // The kernels' copy is GPU-written scratch of the same length.
  const TensorDesc desc = rel_table_tensor("deberta_idx", N, M);
  EXPECT_EQ(desc.dtype, DType::kI32);
  EXPECT_EQ(desc.role, TensorRole::kScratch);
  EXPECT_EQ(desc.shape, std::vector<int64_t>{M + N - 1});
}

TEST(RelBuckets, ThresholdTensorHoldsTheListBits) {
  // DeBERTa lists may hold UINT32_MAX ("never"); the i32 tensor keeps the bits.
  const std::vector<uint32_t> list = {12, 16, UINT32_MAX};
  const TensorDesc desc = rel_thresholds_tensor("t", list);
  EXPECT_EQ(desc.dtype, DType::kI32);
  EXPECT_EQ(desc.role, TensorRole::kConstant);
  EXPECT_EQ(desc.shape, std::vector<int64_t>{3});
  HostTensor host(desc);
  store_rel_thresholds(host, list);
  EXPECT_EQ(std::memcmp(host.data(), list.data(), list.size() * 4), 0);
  EXPECT_THROW(store_rel_thresholds(host, std::vector<uint32_t>(2)), std::logic_error);

  // An empty list (T5 nb = 4 bidirectional) still gets one element to bind.
  ASSERT_TRUE(t5_thresholds(true, 4, 8).empty());
  HostTensor empty(rel_thresholds_tensor("t", {}));
  EXPECT_EQ(empty.numel(), 1);
  store_rel_thresholds(empty, {});
  EXPECT_EQ(empty.get(0), 0);
}

// ---- rejections --------------------------------------------------------------------------

template <typename F>
std::string rejection(F f) {
  try {
    f();
  } catch (const CaseRejected& e) {
    return e.what();
  }
  return "(accepted)";
}

// The call throws CaseRejected with `name` in its message.
#define EXPECT_REJECTED(call, name)                                                       \
  do {                                                                                    \
    const std::string what = rejection(call);                                             \
    EXPECT_NE(what.find(name), std::string::npos) << "wanted " << (name) << ": " << what; \
  } while (0)

TEST(RelBuckets, InvalidParametersAreRejectedByName) {
  EXPECT_REJECTED([] { t5_bucket(0, true, 31, 128); }, "num_buckets=31");
  EXPECT_REJECTED([] { t5_bucket(0, false, 0, 128); }, "num_buckets=0");
  EXPECT_REJECTED([] { t5_bucket(0, true, 2, 128); }, "num_buckets=2");
  EXPECT_EQ(rejection([] { t5_bucket(0, false, 2, 128); }), "(accepted)");
  EXPECT_REJECTED([] { t5_bucket(0, true, 8192, 100000); }, "num_buckets=8192");
  EXPECT_REJECTED([] { t5_bucket(0, true, 32, 8); }, "max_distance=8");
  EXPECT_EQ(rejection([] { t5_bucket(0, true, 32, 9); }), "(accepted)");
  EXPECT_REJECTED([] { t5_bucket(0, false, 32, 16); }, "max_distance=16");
  EXPECT_REJECTED([] { t5_thresholds(true, 32, -1); }, "max_distance=-1");

  EXPECT_REJECTED([] { deberta_log_bucket(0, 1, 512); }, "position_buckets=1");
  EXPECT_REJECTED([] { deberta_log_bucket(0, 8192, 100000); }, "position_buckets=8192");
  EXPECT_REJECTED([] { deberta_log_bucket(0, 256, 129); }, "max_relative_positions=129");
  EXPECT_EQ(rejection([] { deberta_log_bucket(0, 256, 130); }), "(accepted)");
  EXPECT_REJECTED([] { deberta_idx(5, 256, 0); }, "max_relative_positions=0");
  EXPECT_REJECTED([] { deberta_log_thresholds(256, 512, kRelBucketMaxThresholds + 1); },
                  "8192 DeBERTa bucket thresholds");

  EXPECT_REJECTED([] { rel_table_length(0, 4); }, "seq=0");
  EXPECT_REJECTED([] { t5_bucket_table(5, 4, true, 32, 128); }, "kv_seq=4");
  EXPECT_REJECTED([] { deberta_idx_table(4, 4, 256, 100); }, "max_relative_positions=100");
}

// ---- the GPU probe against the host --------------------------------------------------------

struct ProbeMode {
  uint32_t mode;  // as in shaders/test/rel_bucket_probe.comp
  int buckets_param, max_param;
  std::vector<uint32_t> thresholds;
  uint32_t count;
  std::function<int64_t(int64_t)> host;
};

std::vector<int32_t> run_probe(const ProbeMode& m, int32_t first, uint32_t items) {
  Device& dev = test::gpu().device();
  const uint32_t wg = test::gpu().launch().workgroup_size(64);
  const ComputePipeline& pipeline = test::probe_pipeline("rel_bucket_probe", 2, 20, wg);

  std::vector<uint32_t> thresholds = m.thresholds;
  if (thresholds.empty()) thresholds.push_back(0);  // a binding cannot be empty
  const size_t t_bytes = thresholds.size() * 4, out_bytes = size_t{items} * 4;
  auto bt = Buffer::Create(dev, t_bytes, MemoryUse::kDevice).value();
  auto bo = Buffer::Create(dev, out_bytes, MemoryUse::kDevice).value();
  EXPECT_TRUE(upload(dev, *bt, thresholds.data(), t_bytes).ok());
  const std::vector<int32_t> poison(items, std::numeric_limits<int32_t>::min());
  EXPECT_TRUE(upload(dev, *bo, poison.data(), out_bytes).ok());

  auto pool = DescriptorPool::Create(dev, 1, 2).value();
  VkDescriptorSet set = pool->allocate(pipeline, {bt.get(), bo.get()}).value();
  const uint32_t push[5] = {m.mode, static_cast<uint32_t>(first), items, static_cast<uint32_t>(m.buckets_param),
                            m.count};
  auto cmd = CommandBuffer::Create(dev).value();
  EXPECT_TRUE(cmd->begin().ok());
  cmd->bind(pipeline, set);
  cmd->push_constants(pipeline, push, sizeof push);
  cmd->dispatch(test::gpu().launch().groups(items, wg));
  EXPECT_TRUE(cmd->end().ok());
  EXPECT_TRUE(cmd->submit_and_wait().ok());
  std::vector<int32_t> out(items);
  EXPECT_TRUE(download(dev, *bo, out.data(), out_bytes).ok());
  return out;
}

TEST(RelBucketsGpu, ProbeEqualsHostForEveryDistance) {
  const uint64_t before = test::instance().validation_error_count();
  constexpr int32_t kReach = 20000;
  std::vector<ProbeMode> modes;
  // 4096 unidirectional: 2047 thresholds, 11 of the shader's 13 halvings.
  for (const auto& [nb, md] : {std::pair{32, 128}, std::pair{64, 256}, std::pair{8, 20}, std::pair{4096, 100000}}) {
    for (const bool bi : {true, false}) {
      modes.push_back({bi ? 0u : 1u, nb, md, t5_thresholds(bi, nb, md), 0,
                       [bi = bi, nb = nb, md = md](int64_t rp) { return t5_bucket(rp, bi, nb, md); }});
    }
  }
  // (4096, 4096) needs 6730 thresholds to reach 20000: all 13 halvings.
  for (const auto& [S, P] : {std::pair{256, 512}, std::pair{128, 1024}, std::pair{2, 3}, std::pair{4096, 4096}}) {
    // Exact buckets out to kReach: as many thresholds as the largest |delta| uses.
    const int count = deberta_log_bucket(kReach, S, P) - S / 2;
    if (S == 4096) {
      EXPECT_GT(count, 4095) << "meant to exercise every halving step";
    }
    modes.push_back({2u, S, P, deberta_log_thresholds(S, P, count), static_cast<uint32_t>(count),
                     [S = S, P = P](int64_t d) { return deberta_log_bucket(d, S, P); }});
    // idx for every delta from the short list (the clamp hides the saturation).
    const int idx_count = deberta_idx_threshold_count(S);
    modes.push_back({3u, S, P, deberta_log_thresholds(S, P, idx_count), static_cast<uint32_t>(idx_count),
                     [S = S, P = P](int64_t d) { return deberta_idx(d, S, P); }});
  }
  for (const ProbeMode& m : modes) {
    SCOPED_TRACE(::testing::Message() << "mode " << m.mode << " params " << m.buckets_param << ", " << m.max_param
                                      << " (" << m.thresholds.size() << " thresholds)");
    const uint32_t items = 2 * kReach + 1;
    const std::vector<int32_t> gpu = run_probe(m, -kReach, items);
    int mismatches = 0;
    for (uint32_t k = 0; k < items; ++k) {
      const int64_t v = -kReach + int64_t{k};
      if (gpu[k] != m.host(v) && ++mismatches <= 5) {
        ADD_FAILURE() << "value " << v << ": gpu " << gpu[k] << ", host " << m.host(v);
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
  // The extremes of the int32 range the shader takes.
  const ProbeMode& t5 = modes.front();
  const std::vector<int32_t> edge = run_probe(t5, std::numeric_limits<int32_t>::min(), 4);
  EXPECT_EQ(edge, std::vector<int32_t>(4, 15));
  test::expect_no_validation_errors(before);
}

}  // namespace
}  // namespace pebench
