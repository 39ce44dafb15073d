#include "suites/common/rel_buckets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "harness/contract/errors.h"
#include "suites/common/suite_util.h"

namespace pebench {
namespace {

// ---- exact comparison of powers of ratios -----------------------------------------

// (num/den)^exp, num >= den >= 1.
struct RatioPower {
  uint64_t num, den, exp;
};

// A natural number as little-endian 32-bit limbs, normalised (no leading
// zero limb); only what the comparison needs: multiply and compare.
class BigNat {
 public:
  void mul_pow(uint64_t base, uint64_t exp) {  // base >= 1 keeps it normalised
    uint64_t chunk = 1;                        // base^k in as few 64-bit steps as fit
    for (uint64_t i = 0; i < exp; ++i) {
      if (chunk > std::numeric_limits<uint64_t>::max() / base) {
        mul(chunk);
        chunk = 1;
      }
      chunk *= base;
    }
    mul(chunk);
  }
  static int compare(const BigNat& a, const BigNat& b) {
    if (a.limbs_.size() != b.limbs_.size()) return a.limbs_.size() < b.limbs_.size() ? -1 : 1;
    for (size_t i = a.limbs_.size(); i-- > 0;) {
      if (a.limbs_[i] != b.limbs_[i]) return a.limbs_[i] < b.limbs_[i] ? -1 : 1;
    }
    return 0;
  }

 private:
  void mul(uint64_t m) {
    unsigned __int128 carry = 0;
    for (uint32_t& limb : limbs_) {
      carry += static_cast<unsigned __int128>(limb) * m;
      limb = static_cast<uint32_t>(carry);
      carry >>= 32;
    }
    for (; carry != 0; carry >>= 32) limbs_.push_back(static_cast<uint32_t>(carry));
  }
  std::vector<uint32_t> limbs_{1};
};

// exp * ln(num/den) in long double, with ln(1 + x) for x = (num-den)/den:
// one rounding in x and a few ulp in log1p, so the relative error stays a
// few ulp even for ratios near 1.
long double log_term(const RatioPower& r) {
  const long double x = static_cast<long double>(r.num - r.den) / static_cast<long double>(r.den);
  return static_cast<long double>(r.exp) * std::log1p(x);
}

static_assert(std::numeric_limits<long double>::digits >= 53, "long double must be at least a double");
// log_term is off by a few ulp of its value, so la - lb by at most about
// 4.4e-16 (la + lb) where long double is a double, 2.2e-19 (la + lb) on x87;
// a margin of 1e-12 (1 + la + lb) is over 2000 times that.
constexpr long double kLogMargin = 1e-12L;
// Largest exact product multiplied out, in bits (a fraction of a second).
// Only an unclamped DeBERTa bucket at an enormous |delta| could need more.
constexpr long double kMaxExactBits = 1 << 20;

// sign(a - b) for a, b = powers of ratios, exactly. The logs decide whenever
// they differ by more than their rounding error; at a tie or near one (the
// bucket boundaries the spec's facts sit on) both sides are multiplied out:
// a.num^a.exp * b.den^b.exp vs b.num^b.exp * a.den^a.exp.
int compare_ratio_powers(const RatioPower& a, const RatioPower& b) {
  const long double la = log_term(a), lb = log_term(b);
  if (std::fabs(la - lb) > kLogMargin * (1 + la + lb)) return la > lb ? 1 : -1;
  const long double bits =
      (a.exp * std::log2(static_cast<long double>(a.num)) + b.exp * std::log2(static_cast<long double>(b.den)));
  if (bits > kMaxExactBits) {
    throw std::overflow_error(
        fmt::format("relative bucket: a near-tie of ({}/{})^{} and ({}/{})^{} needs a "
                    "{:.0f}-bit exact product",
                    a.num, a.den, a.exp, b.num, b.den, b.exp, static_cast<double>(bits)));
  }
  BigNat lhs, rhs;
  lhs.mul_pow(a.num, a.exp);
  lhs.mul_pow(b.den, b.exp);
  rhs.mul_pow(b.num, b.exp);
  rhs.mul_pow(a.den, a.exp);
  return BigNat::compare(lhs, rhs);
}

uint64_t magnitude(int64_t v) { return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); }

// ---- T5 -------------------------------------------------------------------------

struct T5Shape {
  uint64_t half, exact, log_buckets;  // nb (per direction), nb/2, nb - exact
};
T5Shape t5_shape(bool bidirectional, int num_buckets) {
  const uint64_t half = static_cast<uint64_t>(bidirectional ? num_buckets / 2 : num_buckets);
  return {half, half / 2, half - half / 2};
}

// bucket(n) >= exact + t  <=>  L ln(n/exact) >= t ln(md/exact)
//                         <=>  (n/exact)^L >= (md/exact)^t.
std::vector<uint32_t> compute_t5_thresholds(bool bidirectional, int num_buckets, int max_distance) {
  const T5Shape s = t5_shape(bidirectional, num_buckets);
  const uint64_t md = static_cast<uint64_t>(max_distance), L = s.log_buckets, exact = s.exact;
  auto reaches = [&](uint64_t n, uint64_t t) { return compare_ratio_powers({n, exact, L}, {md, exact, t}) >= 0; };
  std::vector<uint32_t> firsts;
  for (uint64_t t = 1; t < L; ++t) {
    // The estimate exact * (md/exact)^(t/L) only picks where to start; the
    // exact comparisons settle the boundary. It lies in (exact, md].
    const long double guess =
        exact * std::exp(static_cast<long double>(t) * std::log(static_cast<long double>(md) / exact) / L);
    uint64_t n = static_cast<uint64_t>(std::clamp<long double>(std::ceil(guess), exact + 1, md));
    while (n > exact + 1 && reaches(n - 1, t)) --n;
    while (!reaches(n, t)) ++n;
    firsts.push_back(static_cast<uint32_t>(n));
  }
  return firsts;
}

// The bucket of rp given the threshold list (what the shader does too).
int t5_bucket_from(const std::vector<uint32_t>& firsts, bool bidirectional, int num_buckets, int64_t rp) {
  const T5Shape s = t5_shape(bidirectional, num_buckets);
  uint64_t bucket = 0, n = 0;
  if (bidirectional) {
    if (rp > 0) bucket = s.half;
    n = magnitude(rp);
  } else if (rp < 0) {
    n = magnitude(rp);
  }
  if (n < s.exact) return static_cast<int>(bucket + n);
  // Entries <= n; past the last one n stays in the last bucket (the spec's min(.., nb - 1)).
  const auto log_bucket =
      std::upper_bound(firsts.begin(), firsts.end(), n, [](uint64_t v, uint32_t first) { return v < first; }) -
      firsts.begin();
  return static_cast<int>(bucket + s.exact + static_cast<uint64_t>(log_bucket));
}

// ---- DeBERTa --------------------------------------------------------------------

// For a > mid: u(a) <= u  <=>  u ln((P-1)/mid) >= Q ln(a/mid)
//                        <=>  ((P-1)/mid)^u >= (a/mid)^Q,   Q = mid - 1.
struct DebertaLog {
  static constexpr uint64_t kNoCap = std::numeric_limits<uint64_t>::max();
  uint64_t mid, q, top;  // S/2, mid - 1, P - 1
  DebertaLog(int bucket_size, int max_position)
      : mid(static_cast<uint64_t>(bucket_size / 2)), q(mid - 1), top(static_cast<uint64_t>(max_position - 1)) {}
  bool within(uint64_t a, uint64_t u) const { return compare_ratio_powers({top, mid, u}, {a, mid, q}) >= 0; }

  // min(u(a), cap) for a > mid: the smallest u with within(a, u). A cap
  // keeps every exponent below it (deberta_idx needs no u above S - mid).
  uint64_t offset(uint64_t a, uint64_t cap = kNoCap) const {
    if (q == 0) return 0;      // the spec's ceil(0 * ...) = 0
    if (cap <= 1) return cap;  // u(a) >= 1 for a > mid
    if (cap != kNoCap && !within(a, cap - 1)) return cap;
    // The estimate only picks where to start; within() settles it.
    const long double guess =
        q * std::log(static_cast<long double>(a) / mid) / std::log1p(static_cast<long double>(top - mid) / mid);
    uint64_t u = static_cast<uint64_t>(std::clamp<long double>(std::ceil(guess), 1, static_cast<long double>(cap - 1)));
    while (u > 1 && within(a, u - 1)) --u;
    while (!within(a, u)) ++u;
    return u;
  }
};

}  // namespace

// ---- T5 ---------------------------------------------------------------------------

void check_t5_params(bool bidirectional, int num_buckets, int max_distance) {
  if (num_buckets < 2 || num_buckets % 2 != 0) {
    throw CaseRejected(fmt::format("num_buckets={} must be even and >= 2", num_buckets));
  }
  if (bidirectional && num_buckets < 4) {
    throw CaseRejected(fmt::format(
        "num_buckets={} must be >= 4 when bidirectional (each direction needs an exact bucket)", num_buckets));
  }
  if (num_buckets > kRelBucketMaxBuckets) {
    throw CaseRejected(fmt::format("num_buckets={} exceeds {}", num_buckets, kRelBucketMaxBuckets));
  }
  const T5Shape s = t5_shape(bidirectional, num_buckets);
  if (max_distance <= static_cast<int64_t>(s.exact)) {
    throw CaseRejected(fmt::format("max_distance={} must exceed the {} exact distances of num_buckets={}{}",
                                   max_distance, s.exact, num_buckets, bidirectional ? " (bidirectional)" : ""));
  }
}

const std::vector<uint32_t>& t5_thresholds(bool bidirectional, int num_buckets, int max_distance) {
  check_t5_params(bidirectional, num_buckets, max_distance);
  static std::mutex mutex;
  static std::map<std::tuple<bool, int, int>, std::vector<uint32_t>> cache;  // nodes never move
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(bidirectional, num_buckets, max_distance);
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache.emplace(key, compute_t5_thresholds(bidirectional, num_buckets, max_distance)).first;
  }
  return it->second;
}

int t5_bucket(int64_t rp, bool bidirectional, int num_buckets, int max_distance) {
  return t5_bucket_from(t5_thresholds(bidirectional, num_buckets, max_distance), bidirectional, num_buckets, rp);
}

namespace {
// The first distance d in [0, limit] from which id(d) == id(limit), for an
// id that moves one way with d and is constant from `limit` on (binary search).
template <typename Id>
uint32_t first_of_last_id(int64_t limit, Id id) {
  const int last = id(limit);
  int64_t lo = 0, hi = limit;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (id(mid) == last) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return static_cast<uint32_t>(std::min<int64_t>(lo, kRelFarNone));
}
}  // namespace

RelFarDistances t5_far_distances(bool bidirectional, int num_buckets, int max_distance) {
  // Per side the bucket does not decrease with |rp| and is the last one from
  // max_distance on.
  auto side = [&](int64_t sign) {
    return first_of_last_id(max_distance, [&](int64_t d) { return t5_bucket(sign * d, bidirectional, num_buckets, max_distance); });
  };
  return {side(-1), side(1)};
}

// ---- DeBERTa ------------------------------------------------------------------------

void check_deberta_params(int bucket_size, int max_position) {
  if (bucket_size < 2) throw CaseRejected(fmt::format("position_buckets={} must be >= 2", bucket_size));
  if (bucket_size > kRelBucketMaxBuckets) {
    throw CaseRejected(fmt::format("position_buckets={} exceeds {}", bucket_size, kRelBucketMaxBuckets));
  }
  const int mid = bucket_size / 2;
  if (max_position <= mid + 1) {
    throw CaseRejected(fmt::format(
        "max_relative_positions={} must exceed position_buckets/2 + 1 = {} (ln((P-1)/mid) must be positive)",
        max_position, mid + 1));
  }
}

int deberta_log_bucket(int64_t delta, int bucket_size, int max_position) {
  check_deberta_params(bucket_size, max_position);
  const DebertaLog d(bucket_size, max_position);
  const uint64_t a = magnitude(delta);
  if (a <= d.mid) return static_cast<int>(delta);
  const int bucket = static_cast<int>(d.mid + d.offset(a));
  return delta < 0 ? -bucket : bucket;
}

RelFarDistances deberta_far_distances(int bucket_size, int max_position) {
  // idx is monotone in delta and clamps to [0, 2S - 1]; 2^40 is past any
  // clamp (deberta_idx caps u there).
  constexpr int64_t kLimit = int64_t{1} << 40;
  auto side = [&](int64_t sign) {
    return first_of_last_id(kLimit, [&](int64_t d) { return deberta_idx(sign * d, bucket_size, max_position); });
  };
  return {side(1), side(-1)};  // before the query: delta > 0
}

int deberta_idx(int64_t delta, int bucket_size, int max_position) {
  check_deberta_params(bucket_size, max_position);
  const DebertaLog d(bucket_size, max_position);
  const uint64_t a = magnitude(delta);
  int64_t bucket = delta;
  if (a > d.mid) {
    // |bucket| >= S clamps the same as any larger one: cap u at S - mid.
    const uint64_t u = d.offset(a, static_cast<uint64_t>(bucket_size) - d.mid);
    bucket = static_cast<int64_t>(d.mid + u) * (delta < 0 ? -1 : 1);
  }
  return static_cast<int>(std::clamp<int64_t>(bucket + bucket_size, 0, 2 * int64_t{bucket_size} - 1));
}

std::vector<uint32_t> deberta_log_thresholds(int bucket_size, int max_position, int count) {
  check_deberta_params(bucket_size, max_position);
  if (count < 0 || count > kRelBucketMaxThresholds) {
    throw CaseRejected(
        fmt::format("{} DeBERTa bucket thresholds (position_buckets={}, max_relative_positions={}) "
                    "exceed the shader's {}",
                    count, bucket_size, max_position, kRelBucketMaxThresholds));
  }
  const DebertaLog d(bucket_size, max_position);
  const uint64_t never = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> firsts;
  for (uint64_t u = 1; u <= static_cast<uint64_t>(count); ++u) {
    if (d.q == 0) {  // u(a) = 0 for every a: no |delta| reaches u >= 1
      firsts.push_back(static_cast<uint32_t>(never));
      continue;
    }
    // First a with u(a) >= u, i.e. !within(a, u-1): just above mid * ((P-1)/mid)^((u-1)/Q).
    const long double guess =
        d.mid * std::exp((u - 1) * std::log1p(static_cast<long double>(d.top - d.mid) / d.mid) / d.q);
    if (guess > 4 * static_cast<long double>(never)) {
      firsts.push_back(static_cast<uint32_t>(never));
      continue;
    }
    uint64_t a = std::max<uint64_t>(d.mid + 1, static_cast<uint64_t>(std::floor(guess)) + 1);
    while (a > d.mid + 1 && !d.within(a - 1, u - 1)) --a;
    while (d.within(a, u - 1)) ++a;
    firsts.push_back(static_cast<uint32_t>(std::min(a, never)));
  }
  return firsts;
}

// ---- tables ---------------------------------------------------------------------------

int64_t rel_table_length(int64_t N, int64_t M) {
  if (N < 1) throw CaseRejected(fmt::format("seq={} must be >= 1", N));
  if (M < N) throw CaseRejected(fmt::format("kv_seq={} must be >= seq={}", M, N));
  const int64_t length = M + N - 1;
  require_u32_items(length, "the relative-position table");
  return length;
}

std::vector<int32_t> t5_bucket_table(int64_t N, int64_t M, bool bidirectional, int num_buckets, int max_distance) {
  const int64_t length = rel_table_length(N, M);
  const std::vector<uint32_t>& firsts = t5_thresholds(bidirectional, num_buckets, max_distance);
  std::vector<int32_t> table(static_cast<size_t>(length));
  for (int64_t e = 0; e < length; ++e) {
    table[static_cast<size_t>(e)] = t5_bucket_from(firsts, bidirectional, num_buckets, e - (M - 1));
  }
  return table;
}

std::vector<int32_t> deberta_idx_table(int64_t N, int64_t M, int bucket_size, int max_position) {
  const int64_t length = rel_table_length(N, M);
  // Through the short threshold list, as the shader's deberta_idx does.
  const std::vector<uint32_t> firsts =
      deberta_log_thresholds(bucket_size, max_position, deberta_idx_threshold_count(bucket_size));
  const int64_t mid = bucket_size / 2;
  std::vector<int32_t> table(static_cast<size_t>(length));
  for (int64_t e = 0; e < length; ++e) {
    const int64_t delta = (M - 1) - e;  // = -rp
    const uint64_t a = magnitude(delta);
    int64_t bucket = delta;
    if (a > static_cast<uint64_t>(mid)) {
      const int64_t u =
          std::upper_bound(firsts.begin(), firsts.end(), a, [](uint64_t v, uint32_t first) { return v < first; }) -
          firsts.begin();
      bucket = (mid + u) * (delta < 0 ? -1 : 1);
    }
    table[static_cast<size_t>(e)] =
        static_cast<int32_t>(std::clamp<int64_t>(bucket + bucket_size, 0, 2 * int64_t{bucket_size} - 1));
  }
  return table;
}

TensorDesc rel_table_tensor(std::string name, int64_t N, int64_t M) {
  return tensor(std::move(name), TensorRole::kScratch, DType::kI32, {rel_table_length(N, M)}, "[M+N-1]");
}

TensorDesc rel_thresholds_tensor(std::string name, const std::vector<uint32_t>& thresholds) {
  const int64_t count = std::max<int64_t>(1, static_cast<int64_t>(thresholds.size()));
  return tensor(std::move(name), TensorRole::kConstant, DType::kI32, {count}, "[thresholds]");
}

void store_rel_thresholds(HostTensor& tensor, const std::vector<uint32_t>& thresholds) {
  const int64_t count = std::max<int64_t>(1, static_cast<int64_t>(thresholds.size()));
  if (tensor.desc().dtype != DType::kI32 || tensor.numel() != count) {
    throw std::logic_error(fmt::format("store_rel_thresholds: tensor {} is not i32 [{}]", tensor.desc().name, count));
  }
  std::memset(tensor.data(), 0, tensor.bytes());
  if (!thresholds.empty()) std::memcpy(tensor.data(), thresholds.data(), thresholds.size() * sizeof(uint32_t));
}

}  // namespace pebench
