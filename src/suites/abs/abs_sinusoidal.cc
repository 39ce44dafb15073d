// abs.sinusoidal: the Transformer paper's fixed sinusoidal encoding added to
// the input (encodings.md section 1), in its interleaved and concat layouts
// and fairseq's (tensor2tensor's frequencies w_t = base^(-t/(h-1)), the
// row p + padding_idx + 1, a zero last column for odd d).
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "harness/contract/registry.h"
#include "suites/abs/abs_common.h"
#include "suites/common/phase.h"
#include "suites/common/suite_util.h"

namespace pebench {
namespace {

class SinusoidalCase : public Case {
 public:
  explicit SinusoidalCase(const Params& p)
      : dtype_(p.dtype()),
        shape_(p),
        base_(p.f("base")),
        fairseq_(p.s("layout") == "fairseq"),
        concat_(p.s("layout") != "interleaved"),  // fairseq's halves are concat's
        row_shift_(fairseq_ ? p.i("padding_idx") + 1 : 0) {}

  std::vector<TensorDesc> tensors() const override {
    return {shape_.x(dtype_),
            tensor("freq", TensorRole::kConstant, DType::kI32, {shape_.d / 2, 4},
                   "[d/2,4]: w_t as a 64-bit turn fraction (lo, hi), then the f32 bits of sin and cos of "
                   "(seq/BLOCK) w_t, the rotation between an item's positions on CPU devices"),
            shape_.y(dtype_)};
  }

  void fill_inputs(TensorMap& t, Rng& rng) const override {
    t.at("x").fill_uniform(rng, -1.0, 1.0);
    HostTensor& freq = t.at("freq");
    // The rotation between an item's positions on a CPU device (GPUs do not step).
    const double apart = static_cast<double>(shape_.seq / cpu_positions_per_item());
    const auto bits = [](double v) {
      const float f = static_cast<float>(v);
      int32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    };
    for (int64_t i = 0; i < shape_.d / 2; ++i) {
      const auto [lo, hi] = turn_fraction_q64(frequency(i));
      freq.set(4 * i, static_cast<int32_t>(lo));
      freq.set(4 * i + 1, static_cast<int32_t>(hi));
      freq.set(4 * i + 2, bits(std::sin(apart * frequency(i))));
      freq.set(4 * i + 3, bits(std::cos(apart * frequency(i))));
    }
  }

  int64_t reference_rows() const override { return shape_.batch * shape_.seq; }
  double reference_row_cost() const override { return 30.0 * static_cast<double>(shape_.d); }

  void reference(const TensorMap& t, const std::vector<int64_t>& rows, Reference& ref) const override {
    const HostTensor& x = t.at("x");
    const int64_t d = shape_.d;
    for (int64_t r : rows) {
      const double p = static_cast<double>(shape_.offset + row_shift_ + r % shape_.seq);
      double* y = ref.row("y", r);
      for (int64_t c = 0; c < d; ++c) y[c] = x.get(r * d + c);
      for (int64_t i = 0; i < d / 2; ++i) {
        const double a = p * frequency(i);
        y[concat_ ? i : 2 * i] += std::sin(a);
        y[concat_ ? d / 2 + i : 2 * i + 1] += std::cos(a);
      }
    }
  }

  void record(Recorder& rec) const override {
    const int64_t per_row = groups_per_row();
    const int64_t block = rec.launch().is_cpu() ? cpu_positions_per_item() : 1;
    PushConstants push;
    push.u32(static_cast<uint32_t>(shape_.batch))
        .u32(static_cast<uint32_t>(shape_.seq))
        .u32(static_cast<uint32_t>(shape_.d))
        .u32(static_cast<uint32_t>(shape_.offset + row_shift_));
    // One item per invocation (an item is already `block` positions of
    // work), and no loop at all where the device takes that many groups.
    const int64_t items = shape_.batch * (shape_.seq / block) * per_row;
    Dispatch d = grid_dispatch(rec, "abs_sinusoidal", {"x", "freq", "y"}, items, push);
    d.groups[0] = rec.launch().groups(items * rec.launch().items_per_invocation(), d.spec_constants[0]);
    d.constant("VEC4", vec4() ? 1 : 0)
        .constant("BLOCK", static_cast<uint32_t>(block))
        .constant("CONCAT", concat_ ? 1 : 0);
    launch_one_pass(rec, d, items);
    rec.dispatch(d);
  }

  Cost cost() const override {
    // One add per element; sin/cos are not multiply-adds (section 4), so 0.5 "flop" pairs are not counted.
    return {io_bytes(tensors()), static_cast<double>(shape_.batch * shape_.seq * shape_.d)};
  }

  Tolerance tolerance() const override {
    // Inputs in [-1, 1) plus pe in [-1, 1]: mean square about 1/3 + 1/2.
    Tolerance t = rounding_tolerance(dtype_, 2, "output rounding + Vulkan sin/cos error (2^-11 abs)");
    t.nmse += 4 * trig_nmse(1.0 / 3 + 0.5);
    return t;
  }

 private:
  // Positions one item steps through by rotation on a CPU device (the
  // shader's BLOCK, which must divide seq; GPUs use 1): 8, fewer where that
  // would leave too few items (per batch row) to keep its threads busy. The
  // step table is built for it. Measured on lavapipe
  // (docs/lavapipe.md), alternating builds in one sitting: at seq 4096
  // d_model 512 f32, 8 took 2.90-3.40 ms against 4's 3.70-3.87; at the quick
  // shape 8 beat 4 in f32 and f16; 16 was no better in f32 and slower in f16.
  int64_t cpu_positions_per_item() const { return rotation_block(shape_.seq, groups_per_row()); }

  // (An odd d, fairseq's, takes the scalar path, which copies the last column.)
  bool vec4() const { return shape_.d % (concat_ ? 8 : 4) == 0; }
  // Items per position: frequency groups of 1 (scalar), 2 (interleaved vec4) or 4 (concat vec4).
  int64_t groups_per_row() const { return vec4() ? shape_.d / (concat_ ? 8 : 4) : shape_.d / 2; }

  double frequency(int64_t i) const {
    if (fairseq_) return std::pow(base_, -static_cast<double>(i) / static_cast<double>(shape_.d / 2 - 1));
    return std::pow(base_, -2.0 * static_cast<double>(i) / static_cast<double>(shape_.d));
  }

  DType dtype_;
  InputShape shape_;
  double base_;
  bool fairseq_, concat_;
  int64_t row_shift_;  // fairseq: row r = p + padding_idx + 1
};

class Sinusoidal : public Variant {
 public:
  std::string id() const override { return "abs.sinusoidal"; }
  std::string summary() const override { return "fixed sinusoidal encoding added to x (Vaswani et al.)"; }
  std::vector<ParamSpec> params() const override {
    auto specs = input_shape_params();
    specs.push_back(float_param("base", 10000.0, "frequency base: w_t = base^(-2t/d)"));
    specs.push_back(enum_param("layout", "interleaved", {"interleaved", "concat", "fairseq"},
                               "interleaved: pe[2t]=sin, pe[2t+1]=cos; concat: pe[t]=sin, pe[d/2+t]=cos; fairseq: "
                               "concat with w_t = base^(-t/(h-1)), h = floor(d/2), row p + padding_idx + 1, odd d "
                               "a last column of 0"));
    specs.push_back(int_param("padding_idx", 1, "fairseq: the first token reads row padding_idx + 1"));
    return specs;
  }
  void resolve(Params& p) const override {
    resolve_input_shape(p);
    if (p.s("layout") == "fairseq") {
      if (p.i("d_model") < 4) throw CaseRejected(fmt::format("layout=fairseq needs d_model >= 4, got {}", p.i("d_model")));
      if (p.i("padding_idx") < 0) {
        throw CaseRejected(fmt::format("padding_idx={} must not be negative", p.i("padding_idx")));
      }
      if (p.i("offset") + p.i("seq") + p.i("padding_idx") + 1 > (int64_t{1} << 31)) {
        throw CaseRejected("offset + seq + padding_idx + 1 exceeds 2^31 rows");
      }
    } else if (p.i("d_model") % 2 != 0) {
      throw CaseRejected(fmt::format("d_model={} must be even", p.i("d_model")));
    }
    if (!(p.f("base") > 1.0)) throw CaseRejected(fmt::format("base={} must be greater than 1", p.f("base")));
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<SinusoidalCase>(p); }
};

PEBENCH_REGISTER_VARIANT(Sinusoidal);

}  // namespace
}  // namespace pebench
