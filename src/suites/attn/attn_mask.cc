#include "suites/attn/attn_mask.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/contract/errors.h"

namespace pebench {

// The derivation that lets a parameter stay absent after resolve (the
// harness's resolve_params, harness/engine/sweep.cc): off, and not written
// into the case's params, so that cases without modifiers keep their keys
// in reports and baselines.
constexpr const char* kOff = "off";

std::vector<ParamSpec> attn_mask_params() {
  return {derived_param("window", ParamType::kInt, kOff,
                        "sliding window W (HF sliding_window, counts the query): causal i' - j < W, else |i' - j| < W"),
          derived_param("chunk", ParamType::kInt, kOff,
                        "chunked attention C (Llama 4 attention_chunk_size): floor(j/C) == floor(i'/C)"),
          derived_param("sink_tokens", ParamType::kInt, kOff,
                        "the first S keys stay visible beside window/chunk (StreamingLLM)"),
          derived_param("softcap", ParamType::kFloat, kOff,
                        "logit soft-capping c (Gemma 2): content score t -> c tanh(t/c), before the bias"),
          derived_param("sink_logits", ParamType::kBool, kOff,
                        "a learned sink logit per query head in the denominator (gpt-oss; input sinks [H])")};
}

void resolve_attn_mask_params(Params& p) {
  for (const char* key : {"window", "chunk", "sink_tokens"}) {
    if (p.has(key) && p.i(key) < 0) throw CaseRejected(fmt::format("{}={} must be >= 0 (0: off)", key, p.i(key)));
  }
  if (p.has("softcap") && !(std::isfinite(p.f("softcap")) && p.f("softcap") >= 0)) {
    throw CaseRejected(fmt::format("softcap={} must be finite and >= 0 (0: off)", p.f("softcap")));
  }
}

AttnMask::AttnMask(bool causal, int64_t seq, int64_t kv_seq, int64_t window, int64_t chunk, int64_t sink_tokens)
    : causal_(causal), seq_(seq), kv_seq_(kv_seq), window_(window), chunk_(chunk), sinks_(sink_tokens) {}

AttnMask::AttnMask(const Params& p)
    : AttnMask(p.b("causal"), p.i("seq"), p.i("kv_seq"), p.has("window") ? p.i("window") : 0,
               p.has("chunk") ? p.i("chunk") : 0, p.has("sink_tokens") ? p.i("sink_tokens") : 0) {}

bool AttnMask::visible(int64_t qpos, int64_t kpos) const {
  const bool base = !causal_ || kpos <= qpos;
  const int64_t d = qpos - kpos;
  const bool local = (window_ == 0 || (causal_ ? d < window_ : std::abs(d) < window_)) &&
                     (chunk_ == 0 || kpos / chunk_ == qpos / chunk_);
  return base && (local || kpos < sinks_);
}

int64_t AttnMask::local_begin(int64_t qpos) const {
  int64_t lo = 0;
  if (window_ > 0) lo = std::max(lo, qpos - window_ + 1);
  if (chunk_ > 0) lo = std::max(lo, qpos / chunk_ * chunk_);
  return std::min(lo, kv_seq_);
}

int64_t AttnMask::local_end(int64_t qpos) const {
  int64_t hi = causal_ ? qpos + 1 : kv_seq_;
  if (window_ > 0 && !causal_) hi = std::min(hi, qpos + window_);
  if (chunk_ > 0) hi = std::min(hi, qpos / chunk_ * chunk_ + chunk_);
  return std::clamp<int64_t>(hi, 0, kv_seq_);
}

int64_t AttnMask::sink_end(int64_t qpos) const {
  return std::clamp<int64_t>(std::min(sinks_, causal_ ? qpos + 1 : kv_seq_), 0, kv_seq_);
}

int64_t AttnMask::visible_keys(int64_t qpos) const {
  const int64_t lo = local_begin(qpos), hi = local_end(qpos), se = sink_end(qpos);
  const int64_t local = std::max<int64_t>(0, hi - lo);
  const int64_t overlap = std::max<int64_t>(0, std::min(se, hi) - lo);
  return local + se - std::min(se, overlap);
}

AttnMask::KeyRanges AttnMask::tile_ranges(int64_t p0, int64_t p1) const {
  KeyRanges r;
  r.begin = local_begin(p0);
  r.end = std::max(r.begin, local_end(p1));
  r.all_begin = std::clamp(local_begin(p1), r.begin, r.end);
  r.all_end = std::clamp(local_end(p0), r.all_begin, r.end);
  // Sink keys before the local range are a range of their own; those that
  // reach into it or past it (not causal: a row before the S-th key) widen it.
  const int64_t se = sink_end(p1);
  r.sink_end = std::min(se, r.begin);
  r.end = std::max(r.end, se);
  return r;
}

double AttnMask::mean_key_tiles(int64_t rows_per_tile, int64_t keys_per_tile) const {
  const int64_t K = keys_per_tile;
  double tiles = 0;
  int64_t qtiles = 0;
  for (int64_t i0 = 0; i0 < seq_; i0 += rows_per_tile, ++qtiles) {
    const int64_t shift = kv_seq_ - seq_;
    const KeyRanges r = tile_ranges(i0 + shift, std::min(seq_, i0 + rows_per_tile) - 1 + shift);
    const int64_t sink_tiles = (r.sink_end + K - 1) / K;  // tiles [0, sink_tiles)
    int64_t first = r.begin / K, last = r.end > r.begin ? (r.end - 1) / K : first - 1;
    first = std::max(first, sink_tiles);
    tiles += static_cast<double>(sink_tiles + std::max<int64_t>(0, last - first + 1));
  }
  return qtiles > 0 ? tiles / static_cast<double>(qtiles) : 0.0;
}

double AttnMask::visible_pairs() const {
  double n = 0;
  for (int64_t i = 0; i < seq_; ++i) n += static_cast<double>(visible_keys(i + kv_seq_ - seq_));
  return n;
}

double AttnSoftcap::apply(double t) const { return cap_ > 0 ? cap_ * std::tanh(t / cap_) : t; }

}  // namespace pebench
