#include "harness/presets.h"

namespace pebench {

const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = {
      {"quick",
       "every variant at small shapes in f32 and f16: a smoke test that takes seconds on lavapipe",
       {},
       {{"batch", {"1"}}, {"heads", {"4"}}, {"dim", {"64"}}, {"seq", {"128", "1024"}}, {"dtype", {"f32", "f16"}}},
       {{"attn.*", {{"seq", {"128", "512"}}}},
        // The ODE integrates sequentially on one workgroup: keep it small.
        {"abs.floater", {{"seq", {"64", "256"}}, {"d_model", {"64"}}}}},
       0.02},
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
      {"kernels",
       "every pipeline at the shapes a kernel engineer reads: attention at head dims 64, 128 and 256, MHA and GQA, "
       "prefill (512 queries) and decode (1), 4096 keys, both dtypes; for --compile-only and the spill gate",
       {},
       {{"batch", {"1"}}, {"heads", {"8"}}, {"dim", {"64", "128", "256"}}, {"seq", {"512"}}, {"dtype", {"f32", "f16"}}},
       {{"attn.*", {{"kv_heads", {"8", "2"}}, {"seq", {"512", "1"}}, {"kv_seq", {"4096"}}}},
        {"abs.floater", {{"seq", {"64"}}, {"d_model", {"64"}}}}},
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
