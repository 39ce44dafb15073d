// Relative-position buckets (encodings.md section 3) in integer arithmetic:
// the T5 bucket and the DeBERTa log bucket, exact for every distance because
// the log-bucket boundaries come from the host (src/suites/common/rel_buckets.h:
// t5_thresholds, deberta_log_thresholds) instead of a float log, which is
// one ulp off at the ties (T5 n = 16, 32, 64; DeBERTa |delta| = 511).
//
// Before including, define how threshold i is read, e.g. from a buffer or a
// shared-memory copy:
//   #define REL_BUCKET_THRESHOLD(i) thresholds[i]
// Several lists may share one array; each call names its first entry.
#ifndef PEBENCH_REL_BUCKETS_GLSL
#define PEBENCH_REL_BUCKETS_GLSL

#ifndef REL_BUCKET_THRESHOLD
#error "define REL_BUCKET_THRESHOLD(i) before including common/rel_buckets.glsl"
#endif

// One halving step of a binary search over an ascending list.
#define REL_BUCKET_HALVE                                  \
  if (len > 0u) {                                         \
    const uint half_len = len >> 1;                       \
    if (REL_BUCKET_THRESHOLD(lo + half_len) <= n) {       \
      lo += half_len + 1u;                                \
      len -= half_len + 1u;                               \
    } else {                                              \
      len = half_len;                                     \
    }                                                     \
  }

// How many of the ascending entries [first, first + count) are <= n, for
// count <= 8191 (kRelBucketMaxThresholds). Thirteen unrolled halvings and no
// loop, so a kernel that calls this per (i, j) spends none of llvmpipe's
// 65535 loop iterations per invocation on it.
uint rel_count_at_most(uint n, uint first, uint count) {
  uint lo = first;
  uint len = count;
  REL_BUCKET_HALVE REL_BUCKET_HALVE REL_BUCKET_HALVE REL_BUCKET_HALVE REL_BUCKET_HALVE
  REL_BUCKET_HALVE REL_BUCKET_HALVE REL_BUCKET_HALVE REL_BUCKET_HALVE REL_BUCKET_HALVE
  REL_BUCKET_HALVE REL_BUCKET_HALVE REL_BUCKET_HALVE
  return lo - first;
}

// |v| as uint; defined for v = -2^31 too (wrapping negation).
uint rel_magnitude(int v) { return v < 0 ? 0u - uint(v) : uint(v); }

// T5 bucket of rp = j - i', in [0, num_buckets). The list at `first` is
// t5_thresholds(bidirectional, num_buckets, max_distance): L - 1 entries,
// the first n of buckets exact + 1 .. half - 1 (max_distance is in them).
uint t5_bucket(int rp, bool bidirectional, uint num_buckets, uint first) {
  const uint half_buckets = bidirectional ? num_buckets >> 1 : num_buckets;
  const uint exact = half_buckets >> 1;
  uint bucket = 0u;
  uint n = 0u;
  if (bidirectional) {
    if (rp > 0) bucket = half_buckets;
    n = rel_magnitude(rp);
  } else if (rp < 0) {
    n = rel_magnitude(rp);
  }
  if (n < exact) return bucket + n;
  return bucket + exact + rel_count_at_most(n, first, half_buckets - exact - 1u);
}

// DeBERTa log bucket of delta = i' - j, before the +S shift and clamp, with
// mid = S/2 and the list at `first` from deberta_log_thresholds(S, P, count):
// exact for |delta| <= D when count = deberta_log_bucket(D) - mid on the host.
int deberta_log_bucket(int delta, uint mid, uint first, uint count) {
  const uint a = rel_magnitude(delta);
  if (a <= mid) return delta;
  const int bucket = int(mid + rel_count_at_most(a, first, count));
  return delta < 0 ? -bucket : bucket;
}

// The row of kr/qr: clamp(bucket + S, 0, 2S-1); exact for every delta with
// count = S - S/2 (deberta_idx_threshold_count).
uint deberta_idx(int delta, uint bucket_size, uint first, uint count) {
  const int shifted = deberta_log_bucket(delta, bucket_size >> 1, first, count) + int(bucket_size);
  return uint(clamp(shifted, 0, int(2u * bucket_size) - 1));
}

#endif
