// Relative-position buckets of encodings.md section 3, exact: the T5 bucket
// (HF T5Attention._relative_position_bucket) and the DeBERTa log bucket (HF
// make_log_bucket_position), as the mathematical value of the spec's
// formulas. A float log one ulp off flips the bucket at the ties (T5 n = 16,
// 32, 64; DeBERTa |delta| = 511), so nothing here rounds a log: each bucket
// boundary is found by an exact comparison of integer powers
// (docs/relative-buckets.md). The same thresholds drive
// shaders/common/rel_buckets.glsl.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/contract/tensor.h"

namespace pebench {

// Largest num_buckets / position_buckets accepted: keeps the exact
// comparisons small and every threshold list within the shader's
// loop-free search (kRelBucketMaxThresholds).
constexpr int kRelBucketMaxBuckets = 4096;
// rel_count_at_most() in rel_buckets.glsl searches at most this many entries.
constexpr int kRelBucketMaxThresholds = 8191;

// ---- T5 ---------------------------------------------------------------------
// half = bidirectional ? num_buckets/2 : num_buckets, exact = half/2,
// L = half - exact. Valid: num_buckets even, >= 2 (>= 4 when bidirectional,
// so exact >= 1), <= kRelBucketMaxBuckets; exact < max_distance < 2^31.
// Throws CaseRejected naming the offending value.
void check_t5_params(bool bidirectional, int num_buckets, int max_distance);

// The bucket in [0, num_buckets) of relative position rp = j - i'.
int t5_bucket(int64_t rp, bool bidirectional, int num_buckets, int max_distance);

// The first n of each log bucket: entry t-1 is the smallest n (n = |rp|, or
// -rp when unidirectional) in bucket exact + t (+ half for rp > 0 when
// bidirectional), t = 1 .. L-1; ascending, L-1 entries. For n >= exact the
// bucket is exact + (number of entries <= n). Cached; thread-safe.
const std::vector<uint32_t>& t5_thresholds(bool bidirectional, int num_buckets, int max_distance);

// From distance `left` on before the query (rp <= -left) and from `right` on
// after it (rp >= right), every position of that side falls in the side's
// last bucket, so a term of the bucket is one value per query row and side
// (the CPU flash kernel's far ranges: ATTN_FAR_SCORE_TERM). Both at most
// max_distance (and kRelFarNone).
struct RelFarDistances {
  uint32_t left, right;
};
constexpr uint32_t kRelFarNone = 1u << 30;
RelFarDistances t5_far_distances(bool bidirectional, int num_buckets, int max_distance);

// ---- DeBERTa ----------------------------------------------------------------
// mid = position_buckets/2. Valid: 2 <= position_buckets <=
// kRelBucketMaxBuckets, mid + 1 < max_relative_positions < 2^31 (so that
// ln((P-1)/mid) > 0). Throws CaseRejected naming the offending value.
void check_deberta_params(int bucket_size, int max_position);

// The signed bucket of delta = i' - j, before the +S shift and clamp:
// delta itself for |delta| <= mid, else sign(delta) * (mid + u) with
// u = ceil((mid-1) ln(|delta|/mid) / ln((P-1)/mid)) (grows without bound in
// |delta|; within these limits it stays below 2^28). Exact for every delta;
// throws std::overflow_error in the never-observed case of a near-tie whose
// exact check would multiply out more than 2^20 bits (u ~ 2^20 / log2 P).
int deberta_log_bucket(int64_t delta, int bucket_size, int max_position);

// The row of kr/qr: clamp(deberta_log_bucket(delta) + S, 0, 2S-1), with
// u capped at S - mid (any larger u clamps the same), so always cheap.
int deberta_idx(int64_t delta, int bucket_size, int max_position);

// Entry u-1 is the smallest |delta| (> mid) with u(|delta|) >= u, for
// u = 1 .. count (ascending; UINT32_MAX where it is beyond 2^32-1), so
// u(a) = min(count, number of entries <= a). count = deberta_log_bucket(D)
// - mid makes buckets exact for |delta| <= D; count = S - mid makes
// deberta_idx exact for every delta (the clamp hides the saturation).
std::vector<uint32_t> deberta_log_thresholds(int bucket_size, int max_position, int count);
inline int deberta_idx_threshold_count(int bucket_size) { return bucket_size - bucket_size / 2; }
// As t5_far_distances, for deberta_idx: from `left` on before the query
// (delta = i' - j >= left) idx is the side's last value, and from `right`
// on after it (delta <= -right) the other side's.
RelFarDistances deberta_far_distances(int bucket_size, int max_position);

// ---- Per-distance tables for fused kernels ------------------------------------
// Query i sits at i' = i + M - N, key j at j, so rp = j - i' lies in
// [-(M-1), N-1]: M + N - 1 distances. Entry e of a table holds the id for
// rp = e - (M-1), i.e. a kernel reads table[j - i' + M - 1] =
// table[j - i + N - 1]. Both tables are indexed by rp = j - i' (DeBERTa's
// delta = i' - j = -rp). Throws CaseRejected unless 1 <= N <= M and the
// length fits 32-bit indexing.
int64_t rel_table_length(int64_t N, int64_t M);
// T5: entry = t5_bucket(rp), the row of bias_table [nb, H].
std::vector<int32_t> t5_bucket_table(int64_t N, int64_t M, bool bidirectional, int num_buckets, int max_distance);
// DeBERTa: entry = deberta_idx(delta = -rp), the row of kr/qr [H, 2S, D].
std::vector<int32_t> deberta_idx_table(int64_t N, int64_t M, int bucket_size, int max_position);
// These host tables are the reference's. The kernels' copies are computed
// on the GPU by rel_buckets.glsl from a threshold list, so that what they
// read is the shader's exact bucket, not a host upload of it.
// The i32 kScratch tensor [M+N-1] a pre-pass writes such a table into.
TensorDesc rel_table_tensor(std::string name, int64_t N, int64_t M);
// A threshold list as an i32 kConstant tensor holding the uint32 entries'
// bits (shaders read it as uint), at least one element because a binding
// cannot be empty (an empty list is never read), and its filling.
TensorDesc rel_thresholds_tensor(std::string name, const std::vector<uint32_t>& thresholds);
void store_rel_thresholds(HostTensor& tensor, const std::vector<uint32_t>& thresholds);

}  // namespace pebench
