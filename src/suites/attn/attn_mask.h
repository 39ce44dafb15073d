// Masks and modifiers of every attention variant (encodings.md section 3,
// "Masks and modifiers"), each one object the way position terms are
// (attn_term.h), owned by AttnCase:
//   AttnMask        `window` W, `chunk` C and `sink_tokens` S on top of the
//                   causal (or full) base: the visibility rule, the key range
//                   a row or a tile of rows sees (flash skips the rest), the
//                   reference's test and the exact count of visible pairs
//                   (the cost model's V);
//   AttnSoftcap     `softcap` c: t = c tanh(t / c) on the content score
//                   (before the position-only bias and the mask);
//   AttnSinkLogits  `sink_logits`: one logit per query head in the softmax
//                   denominator (input `sinks [H]`, storage dtype).
// Every parameter is off by default and then absent from the case's params
// (derived parameters no variant fills), so cases without modifiers keep
// their keys in reports and baselines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/contract/params.h"

namespace pebench {

// The five parameters, as attn_params() declares them.
std::vector<ParamSpec> attn_mask_params();
// Rejects values the definition has no meaning for (negative W, C, S;
// non-finite or negative softcap), naming them.
void resolve_attn_mask_params(Params& p);

class AttnMask {
 public:
  AttnMask() = default;
  // Keys 0..M-1, queries at i' = i + M - N for i in [0, N).
  AttnMask(bool causal, int64_t seq, int64_t kv_seq, int64_t window, int64_t chunk, int64_t sink_tokens);
  explicit AttnMask(const Params& p);

  // Any of window, chunk, sink_tokens set (a plain causal or full mask: false).
  bool on() const { return window_ > 0 || chunk_ > 0 || sinks_ > 0; }
  bool causal() const { return causal_; }
  int64_t window() const { return window_; }
  int64_t chunk() const { return chunk_; }
  int64_t sink_tokens() const { return sinks_; }

  // encodings.md: base(i',j) and (local(i',j) or j < S).
  bool visible(int64_t qpos, int64_t kpos) const;
  // The keys [local_begin, local_end) the base and local parts show the row
  // at qpos; both are non-decreasing in qpos (what lets a tile of rows take
  // one range). Sink keys are [0, sink_end(qpos)) on top.
  int64_t local_begin(int64_t qpos) const;
  int64_t local_end(int64_t qpos) const;
  int64_t sink_end(int64_t qpos) const;
  int64_t visible_keys(int64_t qpos) const;

  // The keys a tile of rows at positions [p0, p1] must fold (flash): the
  // sink keys [0, sink_end) and the local keys [begin, end); of these every
  // row sees [all_begin, all_end) (empty when all_begin >= all_end), so
  // only the rest needs the per-element test. Sink keys inside [begin, end)
  // are folded with the local range (sink_end <= begin).
  struct KeyRanges {
    int64_t sink_end = 0;
    int64_t begin = 0, all_begin = 0, all_end = 0, end = 0;
  };
  KeyRanges tile_ranges(int64_t p0, int64_t p1) const;
  // Key tiles of `keys_per_tile` a query tile of `rows_per_tile` rows
  // visits, averaged over the query tiles (encodings.md's fact: 8.44 at
  // N = M = 8192, 128 x 128 tiles, W 1024, against 32.5 for causal alone).
  double mean_key_tiles(int64_t rows_per_tile, int64_t keys_per_tile) const;

  // Visible (i', j) pairs of one (b, h) slice, exactly.
  double visible_pairs() const;

 private:
  bool causal_ = false;
  int64_t seq_ = 0, kv_seq_ = 0, window_ = 0, chunk_ = 0, sinks_ = 0;
};

// `softcap` c > 0: t -> c tanh(t / c).
class AttnSoftcap {
 public:
  explicit AttnSoftcap(double cap = 0) : cap_(cap) {}
  bool on() const { return cap_ > 0; }
  double cap() const { return cap_; }
  double apply(double t) const;
  // Flops a visible score: a divide, the tanh (counted as 1) and a multiply.
  static constexpr double kFlopsPerScore = 3;

 private:
  double cap_ = 0;
};

}  // namespace pebench
