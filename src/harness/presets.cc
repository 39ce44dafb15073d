#include "harness/presets.h"

namespace pebench {

const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = {
      {"quick",
       "every variant at small shapes in f32 and f16, 5 interleaved repetitions each: a smoke test and the CI "
       "gate's measurement (a minute or two on lavapipe)",
       {},
       {{"batch", {"1"}}, {"heads", {"4"}}, {"dim", {"64"}}, {"seq", {"128", "1024"}}, {"dtype", {"f32", "f16"}}},
       {{"attn.*", {{"seq", {"128", "512"}}}},
        // The ODE integrates sequentially on one workgroup: keep it small.
        {"abs.floater", {{"seq", {"64", "256"}}, {"d_model", {"64"}}}}},
       // The gate needs samples from all through the run, not time: 5
       // repetitions give every case at least 5 (the exact U test's minimum
       // for p < 0.01), and short ones a few ms' worth each.
       0.005,
       5},
      {"standard",
       "the default comparison sweep: typical model shapes, both dtypes, causal and not",
       {},
       {{"batch", {"1"}},
        {"heads", {"8"}},
        {"dim", {"64", "128"}},
        {"seq", {"512", "2048"}},
        {"dtype", {"f32", "f16"}},
        {"causal", {"0", "1"}}},
       {},
       0.1},
      {"llm",
       "decoder LLM shapes: GQA, head dim 128, long contexts and decode (seq 1 against a long KV cache)",
       {},
       {{"batch", {"1"}},
        {"heads", {"32"}},
        {"kv_heads", {"8"}},
        {"dim", {"128"}},
        {"seq", {"1", "2048", "8192"}},
        {"dtype", {"f16"}},
        {"causal", {"1"}}},
       {{"attn.*", {{"kv_seq", {"8192"}}}}},
       0.1},
      {"mobile",
       "phone-sized models: few heads, short sequences, f16",
       {},
       {{"batch", {"1"}}, {"heads", {"4", "8"}}, {"dim", {"64"}}, {"seq", {"128", "512"}}, {"dtype", {"f16"}}},
       {},
       0.1},
  };
  return kPresets;
}

const Preset* find_preset(const std::string& name) {
  for (const auto& p : presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace pebench
