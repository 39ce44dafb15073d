#include "harness/engine/presets.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "harness/contract/errors.h"

namespace pebench {

namespace {

// llm's part for one model's RoPE configuration: rope.apply at 8192 tokens,
// attn.rope flash in decode (8192 keys) and prefill (2048), GQA 32:8, D 128,
// f16, with `model`'s keys over these.
// (rope.apply has no impls: a part naming impls would leave it out, so
// the two variants come in two parts.)
std::vector<PresetPart> model_parts(const AxisSet& model) {
  AxisSet rope{{"batch", {"1"}}, {"heads", {"32"}}, {"kv_heads", {"8"}}, {"dim", {"128"}},
               {"seq", {"8192"}}, {"dtype", {"f16"}}, {"causal", {"1"}}};
  for (const auto& [k, v] : model) rope[k] = v;
  AxisSet attn = rope;
  attn["seq"] = {"1", "2048"};
  attn["kv_seq"] = {"8192"};
  return {{{"rope.apply"}, {}, rope}, {{"attn.rope"}, {"flash"}, attn}};
}

// quick's part for one form of issue 43 in `variant`: rope.apply at 1024
// tokens, attn.rope flash in decode and prefill (1 and 128 queries, 512 keys,
// GQA 4:2, causal); H 4, D 64, both dtypes.
PresetPart quick_rope_part(const std::string& variant, const AxisSet& form) {
  const bool attn = variant == "attn.rope";
  AxisSet axes{{"batch", {"1"}}, {"heads", {"4"}}, {"dim", {"64"}}, {"dtype", {"f32", "f16"}}};
  if (attn) {
    axes.insert({{"kv_heads", {"2"}}, {"seq", {"1", "128"}}, {"kv_seq", {"512"}}, {"causal", {"1"}}});
  } else {
    axes["seq"] = {"1024"};
  }
  for (const auto& [k, v] : form) axes[k] = v;
  return {{variant}, attn ? std::vector<std::string>{"flash"} : std::vector<std::string>{}, axes};
}


// The spec's named combinations of masks and modifiers, each at its model's
// shape, attn.rope flash, decode and prefill (2048 queries) against 8192
// keys (Llama 4: 16384, so that the chunk cuts), f16:
//   StreamingLLM       window 1020 + 4 sink tokens (Llama-2-7B: 32 heads, D 128)
//   gpt-oss sliding    window 128 + sink logits (64 heads over 8, D 64)
//   Gemma 2 local      window 4096 + softcap 50, scale 1/16 (9B: 16 heads over 8, D 256)
//   Llama 4 local      chunk 8192 (Scout: 40 heads over 8, D 128)
std::vector<PresetPart> mask_model_parts() {
  const AxisSet base{{"batch", {"1"}}, {"seq", {"1", "2048"}}, {"kv_seq", {"8192"}}, {"dtype", {"f16"}},
                     {"causal", {"1"}}};
  std::vector<PresetPart> parts;
  for (const AxisSet& model : std::vector<AxisSet>{
           {{"heads", {"32"}}, {"kv_heads", {"32"}}, {"dim", {"128"}}, {"window", {"1020"}}, {"sink_tokens", {"4"}}},
           {{"heads", {"64"}}, {"kv_heads", {"8"}}, {"dim", {"64"}}, {"window", {"128"}}, {"sink_logits", {"true"}}},
           {{"heads", {"16"}}, {"kv_heads", {"8"}}, {"dim", {"256"}}, {"window", {"4096"}}, {"softcap", {"50"}},
            {"scale", {"0.0625"}}},
           {{"heads", {"40"}}, {"kv_heads", {"8"}}, {"dim", {"128"}}, {"kv_seq", {"16384"}}, {"chunk", {"8192"}}},
       }) {
    AxisSet axes = base;
    for (const auto& [k, v] : model) axes[k] = v;
    parts.push_back({{"attn.rope"}, {"flash"}, axes});
  }
  return parts;
}

// kernels: every variant at its shapes, then the rotary forms whose
// pipelines differ from plain RoPE's (M-RoPE in both layouts and xPos:
// specialization constants of rope_apply, attn_rope_qk and the flash
// kernels), so that the spill gate's baseline holds them too. (YaRN's
// variants and LongRoPE only change the host's frequency table.)
std::vector<PresetPart> kernels_parts() {
  const AxisSet shapes{{"batch", {"1"}}, {"heads", {"8"}}, {"dim", {"64", "128", "256"}}, {"seq", {"512"}},
                       {"dtype", {"f32", "f16"}}};
  const AxisSet attn{{"kv_heads", {"8", "2"}}, {"seq", {"512", "1"}}, {"kv_seq", {"4096"}}};
  std::vector<PresetPart> parts{
      {{"*"}, {}, shapes, {{"attn.*", attn}, {"abs.floater", {{"seq", {"64"}}, {"d_model", {"64"}}}}}}};
  const AxisSet forms[] = {{{"positions", {"mrope"}}, {"mrope_layout", {"chunked", "interleaved"}}},
                           {{"xpos_scale_base", {"512"}}}};
  for (const AxisSet& form : forms) {
    AxisSet rope = shapes;
    for (const auto& [k, v] : form) rope[k] = v;
    parts.push_back({{"rope.apply", "attn.rope"}, {}, rope, {{"attn.*", attn}}});
  }
  return parts;
}

// llm: its decoder shapes for every variant, then each model's RoPE
// configuration (encodings.md section 2) in rope.apply at 8192 tokens and in
// attn.rope flash, decode against 8192 keys and prefill at 2048 (GQA 32:8,
// D 128, f16 unless the model says otherwise).
std::vector<PresetPart> llm_parts() {
  std::vector<PresetPart> parts{{{"*"},
                                 {},
                                 {{"batch", {"1"}},
                                  {"heads", {"32"}},
                                  {"kv_heads", {"8"}},
                                  {"dim", {"128"}},
                                  {"seq", {"1", "2048", "8192"}},
                                  {"dtype", {"f16"}},
                                  {"causal", {"1"}}},
                                 {{"attn.*", {{"kv_seq", {"8192"}}}}}}};
  for (const AxisSet& model : std::vector<AxisSet>{
           // DeepSeek-V3: YaRN on its 64 rotary dims (here R 64 of D 128), s 40, mscale = mscale_all_dim = 1.
           {{"rotary_dim", {"64"}}, {"scaling", {"yarn"}}, {"factor", {"40"}}, {"mscale", {"1"}},
            {"mscale_all_dim", {"1"}}},
           // gpt-oss: YaRN, base 150000, s 32, truncate false; D 64, 64 heads over 8.
           {{"dim", {"64"}}, {"heads", {"64"}}, {"base", {"150000"}}, {"scaling", {"yarn"}}, {"factor", {"32"}},
            {"truncate", {"false"}}},
           // Phi-3-mini-128k: LongRoPE, R = D = 96, s 32, 32 heads (MHA).
           {{"dim", {"96"}}, {"kv_heads", {"32"}}, {"scaling", {"longrope"}}, {"factor", {"32"}}},
           // Qwen2-VL: M-RoPE chunked 16:24:24 (R 128), base 1e6.
           {{"positions", {"mrope"}}, {"mrope_section", {"16:24:24"}}, {"base", {"1000000"}}},
           // Qwen3-VL: M-RoPE interleaved 24:20:20, base 5e6.
           {{"positions", {"mrope"}}, {"mrope_layout", {"interleaved"}}, {"mrope_section", {"24:20:20"}},
            {"base", {"5000000"}}},
       }) {
    for (auto& p : model_parts(model)) parts.push_back(std::move(p));
  }
  // The masks and modifiers the models ship (encodings.md "Masks and
  // modifiers"), in attn.rope flash, decode and prefill against 8192 keys.
  for (auto& p : mask_model_parts()) parts.push_back(std::move(p));
  return parts;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = {
      {"quick",
       "every variant at small shapes in f32 and f16, 5 interleaved repetitions each: a smoke test and the CI "
       "gate's measurement (a minute or two on lavapipe)",
       {},
       {},
       {},
       // The gate needs samples from all through the run, not time: 5
       // repetitions give every case at least 5 (the exact U test's minimum
       // for p < 0.01), and short ones a few ms' worth each.
       0.005,
       /*f32_without_16bit_storage=*/false,
       /*repetitions=*/5,
       // Interleaving switches cases at every repetition; the first runs
       // after a switch were up to 4x slower for ~10 runs (abs.recurrent
       // sequential), enough to fail the gate when a slower runner took
       // fewer samples (docs/compare-and-gate.md).
       /*warmup_s=*/0.005,
       {
           {{"*"},
            {},
            {{"batch", {"1"}}, {"heads", {"4"}}, {"dim", {"64"}}, {"seq", {"128", "1024"}}, {"dtype", {"f32", "f16"}}},
            {{"attn.*", {{"seq", {"128", "512"}}}},
             // Issue 47's variants: f32, GQA 4:2 against 512 keys (the
             // kerple part below adds decode); four flash pipelines in all,
             // each seconds to compile on llvmpipe (FIRE's MLP most), where
             // "*"'s shapes and both dtypes took six each: the quick run's
             // KERPLE and FIRE cases went from 148 s to 44 s (wall, lavapipe,
             // docs/measurements/issue-47-overheads.md). f16 is naive only
             // (below); f16 flash and MHA are in their tests
             // (attn_kerple_test.cc, attn_fire_test.cc).
             {"attn.kerple", {{"kv_heads", {"2"}}, {"seq", {"128"}}, {"kv_seq", {"512"}}, {"dtype", {"f32"}}}},
             {"attn.fire",
              {{"kv_heads", {"2"}}, {"seq", {"1", "128"}}, {"kv_seq", {"512"}}, {"dtype", {"f32"}}, {"fire_L", {"64"}}}},
             // Issue 47's CoPE: the same shape, f32, naive and flash (its
             // f16 naive case below): one flash pipeline.
             {"attn.cope", {{"kv_heads", {"2"}}, {"seq", {"128"}}, {"kv_seq", {"512"}}, {"dtype", {"f32"}}}},
             // The ODE integrates sequentially on one workgroup: keep it small.
             {"abs.floater", {{"seq", {"64", "256"}}, {"d_model", {"64"}}}}}},
           // Issue 43's forms, each at least once: YaRN with mscale
           // (DeepSeek) and without truncation (gpt-oss) in one case,
           // LongRoPE, M-RoPE in both layouts, xPos; in rope.apply and in
           // attn.rope flash, decode (the fused kernel) and prefill.
           quick_rope_part("rope.apply", {{"scaling", {"yarn"}}, {"mscale", {"1"}}, {"mscale_all_dim", {"0.707"}},
                                          {"truncate", {"false"}}}),
           quick_rope_part("rope.apply", {{"scaling", {"longrope"}}}),
           quick_rope_part("rope.apply", {{"positions", {"mrope"}}, {"mrope_layout", {"chunked", "interleaved"}}}),
           quick_rope_part("rope.apply", {{"xpos_scale_base", {"512"}}, {"style", {"gptj"}}}),
           quick_rope_part("attn.rope", {{"scaling", {"yarn"}}, {"mscale", {"1"}}, {"mscale_all_dim", {"0.707"}},
                                         {"truncate", {"false"}}}),
           quick_rope_part("attn.rope", {{"scaling", {"longrope"}}}),
           quick_rope_part("attn.rope", {{"positions", {"mrope"}}, {"mrope_layout", {"chunked", "interleaved"}}}),
           quick_rope_part("attn.rope", {{"xpos_scale_base", {"512"}}, {"style", {"gptj"}}}),
           // Issue 47: KERPLE's power kernel in decode (the "*" part runs log
           // in prefill; the flash kernel is the same). FIRE's cases are all
           // in the "*" part (decode and prefill, rows on both sides of
           // fire_L 64). Causal, their default and only form.
           {{"attn.kerple"},
            {},
            {{"batch", {"1"}}, {"heads", {"4"}}, {"kv_heads", {"2"}}, {"dim", {"64"}}, {"seq", {"1"}},
             {"kv_seq", {"512"}}, {"dtype", {"f32"}}, {"kind", {"power"}}}},
           // ... and both in f16, naive only (its pipelines compile in a
           // fraction of flash's): quick holds every variant in both dtypes.
           {{"attn.kerple"},
            {"naive"},
            {{"batch", {"1"}}, {"heads", {"4"}}, {"kv_heads", {"2"}}, {"dim", {"64"}}, {"seq", {"128"}},
             {"kv_seq", {"512"}}, {"dtype", {"f16"}}}},
           {{"attn.fire"},
            {"naive"},
            {{"batch", {"1"}}, {"heads", {"4"}}, {"kv_heads", {"2"}}, {"dim", {"64"}}, {"seq", {"128"}},
             {"kv_seq", {"512"}}, {"dtype", {"f16"}}, {"fire_L", {"64"}}}},
           // Decode (issue 45): one query row against 4096 keys, GQA 8:2, so
           // the gate watches the direct kernel (texel build, blocks of
           // keys) in both dtypes; attn.rope's decode is in its parts above.
           {{"attn.nope"},
            {"flash"},
            {{"batch", {"1"}}, {"heads", {"8"}}, {"kv_heads", {"2"}}, {"dim", {"64"}}, {"seq", {"1"}},
             {"kv_seq", {"4096"}}, {"dtype", {"f32", "f16"}}, {"causal", {"1"}}}},
           // Each mask and modifier (issue 44) at a small shape, both impls,
           // f32: window + sink tokens, chunk, softcap, sink logits in
           // attn.nope, and ALiBi's bias after the cap with a window.
           {{"attn.nope"},
            {},
            {{"batch", {"1"}}, {"heads", {"4"}}, {"kv_heads", {"2"}}, {"dim", {"64"}}, {"seq", {"128"}},
             {"kv_seq", {"512"}}, {"dtype", {"f32"}}, {"causal", {"1"}}, {"window", {"64"}}, {"sink_tokens", {"4"}}}},
           {{"attn.nope"},
            {},
            {{"batch", {"1"}}, {"heads", {"4"}}, {"kv_heads", {"2"}}, {"dim", {"64"}}, {"seq", {"128"}},
             {"kv_seq", {"512"}}, {"dtype", {"f32"}}, {"causal", {"1"}}, {"chunk", {"128"}}}},
           {{"attn.nope"},
            {},
            {{"batch", {"1"}}, {"heads", {"4"}}, {"kv_heads", {"2"}}, {"dim", {"64"}}, {"seq", {"1", "128"}},
             {"kv_seq", {"512"}}, {"dtype", {"f32"}}, {"causal", {"1"}}, {"softcap", {"0.5"}},
             {"sink_logits", {"true"}}}},
           {{"attn.alibi"},
            {"flash"},
            {{"batch", {"1"}}, {"heads", {"4"}}, {"kv_heads", {"2"}}, {"dim", {"64"}}, {"seq", {"128"}},
             {"kv_seq", {"512"}}, {"dtype", {"f32"}}, {"causal", {"1"}}, {"window", {"64"}}, {"softcap", {"0.5"}}}},
           {{"attn.cope"},
            {"naive"},
            {{"batch", {"1"}}, {"heads", {"4"}}, {"kv_heads", {"2"}}, {"dim", {"64"}}, {"seq", {"128"}},
             {"kv_seq", {"512"}}, {"dtype", {"f16"}}}},
           // fairseq's sinusoid.
           {{"abs.sinusoidal"},
            {},
            {{"batch", {"1"}}, {"d_model", {"256"}}, {"seq", {"1024"}}, {"dtype", {"f32", "f16"}},
             {"layout", {"fairseq"}}}},
       }},
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
       {},
       {},
       0.1,
       /*f32_without_16bit_storage=*/false,
       /*repetitions=*/0,
       /*warmup_s=*/0,
       llm_parts()},
      {"kernels",
       "every pipeline at the shapes a kernel engineer reads: attention at head dims 64, 128 and 256, MHA and GQA, "
       "prefill (512 queries) and decode (1), 4096 keys, both dtypes, and the rotary forms with kernels of their "
       "own (M-RoPE, xPos); for --compile-only and the spill gate",
       {},
       {},
       {},
       0.1,
       /*f32_without_16bit_storage=*/false,
       /*repetitions=*/0,
       /*warmup_s=*/0,
       kernels_parts()},
      {"mobile",
       "phone-sized models: few heads, short sequences, f16 (f32 where the device has no 16-bit storage)",
       {},
       {{"batch", {"1"}}, {"heads", {"4", "8"}}, {"dim", {"64"}}, {"seq", {"128", "512"}}, {"dtype", {"f16"}}},
       {},
       0.1,
       /*f32_without_16bit_storage=*/true},
      {"gpu",
       "a discrete GPU's measurement (issue 42's goals): flash attention at N = M = 2048 and 8192 (MHA and GQA, "
       "causal and not) for PyTorch SDPA beside it, every attention variant at 4096 for its overhead over nope, "
       "decode against 8K to 64K keys, and the elementwise variants at 32 to 64 MB; both dtypes",
       {},
       {},
       {},
       0.05,
       /*f32_without_16bit_storage=*/false,
       /*repetitions=*/0,
       /*warmup_s=*/0.02,
       {
           // What tools/peers/torch_peer.py times beside it.
           {{"attn.nope"},
            {"flash"},
            {{"batch", {"1"}},
             {"heads", {"32"}},
             {"kv_heads", {"32", "8"}},
             {"dim", {"64", "128"}},
             {"seq", {"2048", "8192"}},
             {"causal", {"0", "1"}},
             {"dtype", {"f32", "f16"}}}},
           {{"attn.alibi", "attn.t5"},
            {"flash"},
            {{"batch", {"1"}},
             {"heads", {"32"}},
             {"kv_heads", {"32", "8"}},
             {"dim", {"128"}},
             {"seq", {"2048"}},
             {"causal", {"0", "1"}},
             {"dtype", {"f32", "f16"}}}},
           // compare --over attn.nope: every encoding at one shape.
           {{"attn.*"},
            {"flash"},
            {{"batch", {"1"}}, {"heads", {"32"}}, {"dim", {"64", "128"}}, {"seq", {"4096"}}, {"dtype", {"f32"}}}},
           // Decode: one query against a long KV cache, K and V read once;
           // rotary decode at one length beside it.
           {{"attn.nope", "attn.rope"},
            {"flash"},
            {{"batch", {"1"}},
             {"heads", {"32"}},
             {"kv_heads", {"8"}},
             {"dim", {"128"}},
             {"seq", {"1"}},
             {"kv_seq", {"8192", "32768", "65536"}},
             {"causal", {"1"}},
             {"dtype", {"f32", "f16"}}},
            {{"attn.rope", {{"kv_seq", {"32768"}}}}}},
           // Memory-bound kernels at 32 MB or more: 8192 x 2048 values, 64 MB
           // in f32 and 32 MB in f16 each way.
           // (abs.floater integrates on one workgroup: not a bandwidth kernel.)
           {{"rope.apply", "abs.learned", "abs.sinusoidal", "abs.hierarchical", "abs.complex_order", "abs.conv",
             "abs.conv_grouped", "abs.recurrent", "abs.multiplicative"},
            {},
            {{"batch", {"1"}}, {"heads", {"16"}}, {"dim", {"128"}}, {"seq", {"8192"}}, {"dtype", {"f32", "f16"}}}},
       }},
  };
  return kPresets;
}

std::vector<PlannedCase> expand_preset_sweep(const SweepSpec& spec, const Preset* preset) {
  if (!preset || preset->parts.empty()) return expand_sweep(Registry::instance(), spec);
  std::vector<PlannedCase> planned;
  std::set<std::string> seen;
  std::optional<UsageError> first_error;
  bool any = false;
  for (const PresetPart& part : preset->parts) {
    SweepSpec s = spec;
    if (s.variant_globs.empty()) s.variant_globs = part.variants;
    if (s.impls.empty()) s.impls = part.impls;
    s.preset_axes = part.axes;
    s.preset_overrides = part.overrides;
    std::vector<PlannedCase> cases;
    try {
      cases = expand_sweep(Registry::instance(), s);
    } catch (const UsageError& e) {
      if (!first_error) first_error = e;
      continue;
    }
    any = true;
    for (auto& pc : cases) {
      if (seen.insert(pc.variant->id() + "|" + pc.params.canonical()).second) planned.push_back(std::move(pc));
    }
  }
  if (!any && first_error) throw *first_error;
  if (planned.size() > spec.max_cases) {
    throw UsageError(fmt::format("the sweep has {} cases, over the limit of {}; narrow it, or raise the limit with "
                                 "--max-cases",
                                 planned.size(), spec.max_cases));
  }
  return planned;
}

const Preset* find_preset(const std::string& name) {
  for (const auto& p : presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

namespace {

bool to_f32(std::vector<std::string>& dtypes) {
  if (std::find(dtypes.begin(), dtypes.end(), "f16") == dtypes.end()) return false;
  std::vector<std::string> out;
  for (const auto& d : dtypes) {
    const std::string v = d == "f16" ? "f32" : d;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  dtypes = out;
  return true;
}

}  // namespace

std::vector<PlannedCase> plan_for_device(const Preset* preset, const SweepSpec& spec,
                                         const std::vector<PlannedCase>& planned, const PhysicalDeviceInfo& device,
                                         std::string& note) {
  note.clear();
  if (!preset || !preset->f32_without_16bit_storage || device.features.storage_buffer_16bit ||
      spec.axes.count("dtype") != 0) {
    return planned;
  }
  SweepSpec s = spec;
  bool changed = false;
  if (auto it = s.preset_axes.find("dtype"); it != s.preset_axes.end()) changed = to_f32(it->second) || changed;
  for (auto& [glob, axes] : s.preset_overrides) {
    if (auto it = axes.find("dtype"); it != axes.end()) changed = to_f32(it->second) || changed;
  }
  if (!changed) return planned;
  note = fmt::format("device {} ({}) has no 16-bit storage (storageBuffer16BitAccess): preset {} runs f32",
                     device.index, device.profile.empty() ? device.name : "as profile " + device.profile,
                     preset->name);
  return expand_sweep(Registry::instance(), s);
}

}  // namespace pebench
