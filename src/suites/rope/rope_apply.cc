// rope.apply: rotary position embedding applied to q or k (encodings.md
// section 2), both pair styles, a partial rotary_dim, all six scalings
// (LongRoPE's factor lists are inputs), M-RoPE positions (pos_ids) and xPos.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "harness/contract/registry.h"
#include "suites/common/phase.h"
#include "suites/common/suite_util.h"
#include "suites/rope/rope_scaling.h"

namespace pebench {
namespace {

class RopeApplyCase : public Case {
 public:
  explicit RopeApplyCase(const Params& p)
      : dtype_(p.dtype()),
        batch_(p.i("batch")),
        heads_(p.i("heads")),
        seq_(p.i("seq")),
        dim_(p.i("dim")),
        offset_(p.i("offset")),
        spec_(rope_spec(p, offset_ + seq_)),
        longrope_(spec_.scaling == "longrope"),
        // Dynamic NTK's L: every position up to offset + seq has been seen.
        // LongRoPE's come from its factor lists (frequencies()).
        inv_freq_(longrope_ ? std::vector<double>() : rope_inv_freq(spec_, offset_ + seq_)) {}

  std::vector<TensorDesc> tensors() const override {
    const std::vector<int64_t> shape{batch_, heads_, seq_, dim_};
    std::vector<TensorDesc> out{tensor("x", TensorRole::kInput, dtype_, shape, "[B,H,N,D]"),
                                tensor("freq", TensorRole::kConstant, DType::kI32, {spec_.rotary_dim / 2, 2}, "[R/2,2]"),
                                tensor("y", TensorRole::kOutput, dtype_, shape, "[B,H,N,D]"),
                                tensor("step", TensorRole::kConstant, DType::kF32, {spec_.rotary_dim / 2, 2},
                                       "[R/2,2]: sin th'_t, cos th'_t")};
    if (longrope_) add_longrope_factor_tensors(out, spec_.rotary_dim, "L");
    if (spec_.mrope) {
      out.push_back(tensor("pos_ids", TensorRole::kInput, DType::kI32, {3, seq_}, "[3,N]: (t, h, w) of each token"));
    }
    return out;
  }

  void fill_inputs(TensorMap& t, Rng& rng) const override {
    t.at("x").fill_uniform(rng, -1.0, 1.0);
    if (longrope_) {
      // The spec's fill: uniform in [1, s].
      t.at("short_factor").fill_uniform(rng, 1.0, spec_.factor);
      t.at("long_factor").fill_uniform(rng, 1.0, spec_.factor);
    }
    if (spec_.mrope) fill_mrope_pos_ids(t.at("pos_ids"), seq_);
    const std::vector<double> inv_freq = frequencies(t);
    HostTensor& freq = t.at("freq");
    for (size_t i = 0; i < inv_freq.size(); ++i) {
      const auto [lo, hi] = turn_fraction_q64(inv_freq[i]);
      freq.set(static_cast<int64_t>(2 * i), static_cast<int32_t>(lo));
      freq.set(static_cast<int64_t>(2 * i + 1), static_cast<int32_t>(hi));
    }
    HostTensor& step = t.at("step");
    for (size_t i = 0; i < inv_freq.size(); ++i) {
      step.set(static_cast<int64_t>(2 * i), std::sin(inv_freq[i]));
      step.set(static_cast<int64_t>(2 * i + 1), std::cos(inv_freq[i]));
    }
  }

  int64_t reference_rows() const override { return batch_ * heads_ * seq_; }
  double reference_row_cost() const override { return 40.0 * static_cast<double>(dim_); }

  void reference(const TensorMap& t, const std::vector<int64_t>& rows, Reference& ref) const override {
    const HostTensor& x = t.at("x");
    const std::vector<double> inv_freq = frequencies(t);
    std::vector<double> in(static_cast<size_t>(dim_));
    for (int64_t r : rows) {
      for (int64_t c = 0; c < dim_; ++c) in[static_cast<size_t>(c)] = x.get(r * dim_ + c);
      const int64_t n = r % seq_;
      // M-RoPE: pos_ids' column n (offset only sets L); else offset + n.
      std::array<double, 3> thw;
      for (int c = 0; c < 3; ++c) thw[c] = spec_.mrope ? t.at("pos_ids").get(c * seq_ + n) : double(offset_ + n);
      rope_rotate(in.data(), ref.row("y", r), dim_, spec_, inv_freq, thw, spec_.xpos_k);
    }
  }

  void record(Recorder& rec) const override {
    const int64_t R = spec_.rotary_dim;
    const bool vec4 = dim_ % 4 == 0 && R % (spec_.neox ? 8 : 4) == 0;
    const int64_t rot_items = vec4 ? (spec_.neox ? R / 8 : R / 4) : R / 2;
    const int64_t pass_items = vec4 ? (dim_ - R) / 4 : dim_ - R;
    // An item: one position and dim group in a chunk of rows (B*H of them),
    // sharing its sin and cos across the chunk. On a CPU device, where sin
    // and cos cost many loads, 8 rows; on a GPU 1 (parallelism matters more).
    const int64_t rows = batch_ * heads_;
    const int64_t rows_per_item = std::min<int64_t>(rec.launch().is_cpu() ? 8 : 1, rows);
    const int64_t chunks = (rows + rows_per_item - 1) / rows_per_item;
    const int64_t per_pos = rot_items + pass_items;
    // M-RoPE's positions need not step by one, and xPos's factor changes
    // with each: no stepping.
    const int64_t block = spec_.mrope || xpos() ? 1 : positions_per_item(rec.launch(), chunks, per_pos);
    PushConstants push;
    push.u32(static_cast<uint32_t>(rows))
        .u32(static_cast<uint32_t>(seq_))
        .u32(static_cast<uint32_t>(dim_))
        .u32(static_cast<uint32_t>(R))
        .u32(static_cast<uint32_t>(offset_))
        .u32(spec_.neox ? 1 : 0)
        .f32(static_cast<float>(spec_.attention_factor))
        .u32(static_cast<uint32_t>(rows_per_item))
        .u32(static_cast<uint32_t>(spec_.mrope_section[0]))
        .u32(static_cast<uint32_t>(spec_.mrope_section[1]))
        .u32(static_cast<uint32_t>(spec_.mrope_section[2]))
        .f32(static_cast<float>(xpos() ? (spec_.xpos_k ? -1.0 : 1.0) / spec_.xpos_scale_base : 0.0))
        .u32(static_cast<uint32_t>(spec_.xpos_centre));
    const int64_t items = chunks * (seq_ / block) * per_pos;
    // Per item: per position, the row loop.
    const auto loop = static_cast<uint32_t>(block * (rows_per_item + 1));
    // Binding 3: pos_ids under M-RoPE (BLOCK 1 never reads step), else step.
    Dispatch d = grid_dispatch(rec, "rope_apply", {"x", "freq", "y", spec_.mrope ? "pos_ids" : "step"}, items,
                               push, loop);
    d.constant("VEC4", vec4 ? 1 : 0)
        .constant("BLOCK", static_cast<uint32_t>(block))
        .constant("MROPE", spec_.mrope ? (spec_.mrope_interleaved ? 2u : 1u) : 0u)
        .constant("XPOS", xpos() ? 1u : 0u);
    // One item per invocation: an item already loops over its rows, and
    // on lavapipe invocations that loop over several items were slower
    // (CPU time per execution, seq 4096 H 8 D 64 f32: 4 items each 1.7x one).
    d.groups[0] = rec.launch().groups(items * rec.launch().items_per_invocation(), d.spec_constants[0], loop);
    rec.dispatch(d);
  }

  Cost cost() const override {
    // Per rotated pair: two outputs of two multiply-adds each (plus the
    // attention factor, or xPos's, when there is one).
    const double per_pair = spec_.attention_factor != 1.0 || xpos() ? 6.0 : 4.0;
    return {io_bytes(tensors()),
            2.0 * per_pair * static_cast<double>(batch_ * heads_ * seq_ * spec_.rotary_dim / 2)};
  }

  Tolerance tolerance() const override {
    // Angle error: the fixed-point phase rounds to 2^-25 of a turn, and the
    // 64-bit frequency carries p * 2^-65 turns: this is where error grows
    // with position, negligibly up to p = 2^32. Vulkan only guarantees sin
    // and cos to 2^-11 absolute on [-pi, pi]; |x| < 1, rms^2 = 1/3.
    // (M-RoPE's positions are below seq_.)
    const double p_max = static_cast<double>(offset_ + seq_);
    // On CPU devices up to kMaxRotationSteps - 1 rotation steps (BLOCK) add
    // about 2 ulp each.
    const double angle = 2 * M_PI * (std::ldexp(1.0, -25) + p_max * std::ldexp(1.0, -65)) +
                         static_cast<double>(kMaxRotationSteps - 1) * std::ldexp(1.0, -23);
    Tolerance t = rounding_tolerance(dtype_, 4, "");
    const double f = spec_.attention_factor;
    // xPos: every output and its reference carry the same factor g, so the
    // errors above stay relative to the output; nmse weighs them by g^2 but
    // each is bounded alike. g adds its own relative error: exp2's 3 + 2|x|
    // ulp at x = e log2 zeta (|x| largest at t = 0), log2's 2^-21 absolute
    // error times |e| and x's rounding, with e = |p - c| / scale_base.
    double rel = 0;
    if (xpos()) {
      const double e_max = xpos_reach();
      const double x_max = e_max * std::log2(1.0 / xpos_zeta(spec_.rotary_dim, 0));
      rel = std::ldexp(e_max, -21) * M_LN2 + (3 + 3 * x_max) * std::ldexp(1.0, -23);
    }
    t.nmse += 4 * f * f * (angle * angle + 2 * trig_nmse(1.0 / 3)) + 2 * rel * rel;
    t.model = fmt::format("angle error {:.2g} rad at p <= {} (with the rotation steps) + Vulkan sin/cos (2^-11 abs) + "
                          "output rounding{}",
                          angle, static_cast<int64_t>(p_max),
                          xpos() ? fmt::format(" + xPos factor (exp2, log2) rel {:.2g}", rel) : "");
    return t;
  }

 private:
  // Positions one item steps through by rotation (the shader's BLOCK, which
  // must divide seq): on a CPU device 8, fewer where that would leave too
  // few items to keep its threads busy. 1 on GPUs, and 1 where a position
  // has more items (`per_pos`) than a subgroup: then a subgroup's items
  // cover only part of each position, and stepping was slower than not
  // (lavapipe, f32, by minimum: N 4096 H 8 D 64 1.71-1.79 against 2.29-2.32
  // ms, N 2048 H 32 D 64 3.81 against 4.80; D 128, 16 items a position,
  // 1.35-1.5x slower, and still about 5% slower with each item taking two
  // dim groups so that a subgroup covered the position: docs/lavapipe.md).
  int64_t positions_per_item(const LaunchPlanner& launch, int64_t chunks, int64_t per_pos) const {
    if (!launch.is_cpu() || per_pos > static_cast<int64_t>(launch.subgroup_size())) return 1;
    return rotation_block(seq_, chunks * per_pos);
  }

  bool xpos() const { return spec_.xpos_scale_base > 0; }

  // xPos: the largest |p - c| / scale_base of the case.
  double xpos_reach() const {
    const auto c = static_cast<double>(spec_.xpos_centre);
    return std::max(c - static_cast<double>(offset_), static_cast<double>(offset_ + seq_ - 1) - c) /
           spec_.xpos_scale_base;
  }

  // th'_t: LongRoPE's from its factor lists as stored (f32), L = offset + N.
  std::vector<double> frequencies(const TensorMap& t) const {
    if (!longrope_) return inv_freq_;
    const HostTensor& f = t.at(longrope_long(spec_, offset_ + seq_) ? "long_factor" : "short_factor");
    std::vector<double> ext(static_cast<size_t>(f.numel()));
    for (int64_t i = 0; i < f.numel(); ++i) ext[static_cast<size_t>(i)] = f.get(i);
    return rope_inv_freq(spec_, offset_ + seq_, &ext);
  }

  DType dtype_;
  int64_t batch_, heads_, seq_, dim_, offset_;
  RopeSpec spec_;
  bool longrope_;
  std::vector<double> inv_freq_;
};

class RopeApply : public Variant {
 public:
  std::string id() const override { return "rope.apply"; }
  std::string summary() const override { return "rotary position embedding of q or k (RoFormer; NeoX/GPT-J styles)"; }
  std::vector<ParamSpec> params() const override {
    std::vector<ParamSpec> specs{shape::batch(), shape::heads(), shape::seq(), shape::dim(),
                                 int_param("offset", 0, "absolute position of the first token (p = offset + n)")};
    for (auto& s : rope_params()) specs.push_back(std::move(s));
    specs.push_back(enum_param("tensor", "q", {"q", "k"}, "xPos: q takes zeta^((p-c)/scale_base), k its inverse"));
    return specs;
  }
  void resolve(Params& p) const override {
    if (p.i("offset") < 0) throw CaseRejected(fmt::format("offset={} must not be negative", p.i("offset")));
    if (p.i("offset") + p.i("seq") > (int64_t{1} << 31)) {
      throw CaseRejected(fmt::format("offset={} + seq={} exceeds 2^31 positions", p.i("offset"), p.i("seq")));
    }
    resolve_rope_params(p, p.i("dim"));
    require_u32_items(p.i("batch") * p.i("heads") * p.i("seq") * p.i("dim"), "x");
    if (p.f("xpos_scale_base") > 0) {
      // The largest factor, zeta_0^(-max |p - c| / scale_base), times |y| <= sqrt(2) |x| must stay finite in the
      // storage dtype (f16: |p - c| up to about 4500 at scale_base 512) and well inside f32.
      const int64_t len = p.i("offset") + p.i("seq"), c = xpos_centre(len);
      const double e = static_cast<double>(std::max(c - p.i("offset"), len - 1 - c)) / p.f("xpos_scale_base");
      const double g = std::pow(xpos_zeta(p.i("rotary_dim"), 0), -e) * std::sqrt(2.0) * p.f("attention_factor");
      const double limit = p.dtype() == DType::kF16 ? 65504.0 : 0x1p100;
      if (!(g <= limit)) {
        throw CaseRejected(fmt::format("xPos's factor reaches {:.3g} at |p - c| = {:.0f}, past {} ({})", g,
                                       e * p.f("xpos_scale_base"), limit, dtype_name(p.dtype())));
      }
    }
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<RopeApplyCase>(p); }
};

PEBENCH_REGISTER_VARIANT(RopeApply);

}  // namespace
}  // namespace pebench
