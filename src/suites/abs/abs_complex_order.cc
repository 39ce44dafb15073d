// abs.complex_order: word-dependent complex embedding (Wang et al. 2020,
// "Encoding word order in complex embeddings"; encodings.md section 1): each
// channel of token t is a wave of amplitude amp[t], frequency freq[t] and
// initial phase phase[t] evaluated at its position p = offset + n:
//   zr = amp[t] cos(freq[t] p + phase[t]),  zi = amp[t] sin(freq[t] p + phase[t]).
// Moving a word by k positions multiplies its embedding by e^(i freq k), a
// transform that depends only on k.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "harness/contract/registry.h"
#include "suites/abs/abs_common.h"
#include "suites/common/suite_util.h"

namespace pebench {
namespace {

// The angle error of the kernel's exact reduction (abs_complex_order.comp),
// in radians, independent of p: three truncations of under 2^-32 turn each
// (freq's 64-bit turn fraction times p < 2^32, the low word of that product,
// the phase's turn fraction) and three f32 roundings of a value below pi:
// int to float, the constant 2 pi / 2^32 and the product with it.
double reduced_angle_error() { return 3 * 2 * M_PI * std::ldexp(1.0, -32) + 3 * M_PI * std::ldexp(1.0, -24); }

class ComplexOrderCase : public Case {
 public:
  explicit ComplexOrderCase(const Params& p) : dtype_(p.dtype()), shape_(p), vocab_(p.i("vocab")) {}

  std::vector<TensorDesc> tensors() const override {
    const std::vector<int64_t> table{vocab_, shape_.d}, out{shape_.batch, shape_.seq, shape_.d};
    return {tensor("tokens", TensorRole::kInput, DType::kI32, {shape_.batch, shape_.seq}, "[B,N]"),
            tensor("amp", TensorRole::kInput, dtype_, table, "[V,d]"),
            tensor("freq", TensorRole::kInput, dtype_, table, "[V,d]"),
            tensor("phase", TensorRole::kInput, dtype_, table, "[V,d]"),
            tensor("zr", TensorRole::kOutput, dtype_, out, "[B,N,d]"),
            tensor("zi", TensorRole::kOutput, dtype_, out, "[B,N,d]")};
  }

  void fill_inputs(TensorMap& t, Rng& rng) const override {
    HostTensor& tokens = t.at("tokens");
    for (int64_t i = 0; i < tokens.numel(); ++i) tokens.set(i, static_cast<double>(rng.below(vocab_)));
    // The paper's code initialises amplitudes as a word embedding (N(0,1)),
    // frequencies uniform in [0, 10) and phases in [0, 2 pi); training moves
    // them anywhere, so both signs are drawn (the kernel's reduction treats
    // negative values separately).
    t.at("amp").fill_normal(rng, 1.0);
    t.at("freq").fill_uniform(rng, -10.0, 10.0);
    t.at("phase").fill_uniform(rng, -2 * M_PI, 2 * M_PI);
  }

  int64_t reference_rows() const override { return shape_.batch * shape_.seq; }
  // long double sin and cos with exact argument reduction are slow.
  double reference_row_cost() const override { return 400.0 * static_cast<double>(shape_.d); }

  void reference(const TensorMap& t, const std::vector<int64_t>& rows, Reference& ref) const override {
    const HostTensor& tokens = t.at("tokens");
    const HostTensor& amp = t.at("amp");
    const HostTensor& freq = t.at("freq");
    const HostTensor& phase = t.at("phase");
    const int64_t d = shape_.d;
    for (int64_t r : rows) {
      const int64_t tok = static_cast<int64_t>(tokens.get(r));
      const long double p = static_cast<long double>(shape_.offset + r % shape_.seq);
      double* zr = ref.row("zr", r);
      double* zi = ref.row("zi", r);
      for (int64_t c = 0; c < d; ++c) {
        const int64_t i = tok * d + c;
        // A 24-bit freq times a 31-bit p is exact in long double's 64-bit
        // mantissa and sinl/cosl reduce their argument exactly; adding the
        // phase by the angle-sum identity avoids rounding the sum (its ulp
        // is 2^-29 rad near 2^34 rad; a double product alone would lose 2^-19).
        const long double wp = static_cast<long double>(freq.get(i)) * p;
        const long double ph = phase.get(i);
        const long double cw = cosl(wp), sw = sinl(wp), cph = cosl(ph), sph = sinl(ph);
        zr[c] = static_cast<double>(amp.get(i) * (cw * cph - sw * sph));
        zi[c] = static_cast<double>(amp.get(i) * (sw * cph + cw * sph));
      }
    }
  }

  void record(Recorder& rec) const override {
    const bool vec4 = shape_.d % 4 == 0;
    PushConstants push;
    push.u32(static_cast<uint32_t>(shape_.batch * shape_.seq))
        .u32(static_cast<uint32_t>(shape_.seq))
        .u32(static_cast<uint32_t>(shape_.d))
        .u32(static_cast<uint32_t>(shape_.offset))
        .u32(static_cast<uint32_t>(vocab_));
    // The fused kernel binds 6 storage buffers; where the device allows
    // fewer (the Android baseline: 4), three passes of 4 (the split kernel).
    if (rec.limits().max_per_stage_descriptor_storage_buffers >= 6) {
      Dispatch d = grid_dispatch(rec, "abs_complex_order", {"tokens", "amp", "freq", "phase", "zr", "zi"},
                                 shape_.batch * shape_.seq * shape_.d / (vec4 ? 4 : 1), push);
      d.constant("VEC4", vec4 ? 1 : 0);
      rec.dispatch(d);
      return;
    }
    const std::vector<std::vector<std::string>> parts = {
        {"tokens", "freq", "phase", "zr"}, {"tokens", "freq", "phase", "zi"}, {"tokens", "amp", "zr", "zi"}};
    for (uint32_t part = 0; part < parts.size(); ++part) {
      if (part == 2) rec.barrier();
      Dispatch d = grid_dispatch(rec, "abs_complex_order_split", parts[part],
                                 shape_.batch * shape_.seq * shape_.d / (vec4 ? 4 : 1), push);
      d.constant("VEC4", vec4 ? 1 : 0).constant("PART", part);
      rec.dispatch(d);
    }
  }

  Cost cost() const override {
    // Per element: freq p + phase (one multiply-add) and amp times cos and
    // sin. The spec's rule counts the whole tables as read; at most B N rows are.
    return {io_bytes(tensors()), 4.0 * static_cast<double>(shape_.batch * shape_.seq * shape_.d)};
  }

  Tolerance tolerance() const override {
    // With angle error da and sin/cos error et (Vulkan guarantees 2^-11
    // absolute on [-pi, pi]), |dzr|, |dzi| <= |amp| (da + et) while
    // zr^2 + zi^2 = amp^2: nmse <= 2 (da + et)^2 over both outputs, a worst
    // case needing no margin. Computing freq p in f32 instead would make da
    // |freq| p 2^-24, growing with p; the exact reduction keeps da fixed.
    const double da = reduced_angle_error();
    const double et = std::ldexp(1.0, -11);
    // amp * cos, output rounding; twice in the split kernel (cos, then times amp).
    Tolerance t = rounding_tolerance(dtype_, 2, "");
    t.nmse += 2 * (da + et) * (da + et);
    t.model = fmt::format(
        "angle error {:.2g} rad at every p (exact reduction of freq p) + Vulkan sin/cos (2^-11 abs) "
        "+ output rounding (twice where the kernel is split into 4-buffer passes)",
        da);
    return t;
  }

 private:
  DType dtype_;
  InputShape shape_;
  int64_t vocab_;
};

class ComplexOrder : public Variant {
 public:
  std::string id() const override { return "abs.complex_order"; }
  std::string summary() const override {
    return "word-dependent complex embedding amp e^(i (freq p + phase)) (Wang et al. 2020)";
  }
  std::vector<ParamSpec> params() const override {
    auto specs = input_shape_params();
    specs.push_back(int_param("vocab", 1024, "vocabulary size V: rows of amp, freq and phase; tokens in [0, V)"));
    return specs;
  }
  void resolve(Params& p) const override {
    const int64_t vocab = p.i("vocab"), d = p.i("d_model");
    require_u32_items(p.i("batch") * p.i("seq") * d, "zr");
    resolve_input_shape(p);
    if (vocab < 1) throw CaseRejected(fmt::format("vocab={} must be at least 1", vocab));
    if (vocab > INT32_MAX) throw CaseRejected(fmt::format("vocab={} overflows int32 tokens (vocab overflow)", vocab));
    if (vocab > int64_t{UINT32_MAX} / d) {
      throw CaseRejected(
          fmt::format("vocab={} x d_model={} elements overflow 32-bit indexing (vocab overflow)", vocab, d));
    }
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<ComplexOrderCase>(p); }
};

PEBENCH_REGISTER_VARIANT(ComplexOrder);

}  // namespace
}  // namespace pebench
