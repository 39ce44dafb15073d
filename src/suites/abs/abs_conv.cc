// abs.conv: a depthwise convolution over positions added to the input, with
// zero padding (encodings.md section 1):
//   y[n,c] = x[n,c] + bias[c] + sum_t w[c,t] x[n + t - (k-1)/2, c].
#include <fmt/format.h>

#include "harness/contract/registry.h"
#include "suites/common/suite_util.h"

namespace pebench {
namespace {

// Positions per work item, a compile-time constant of
// shaders/abs/abs_conv.comp (keep in sync): the item keeps its outputs and a
// window of inputs in registers, so a longer run of positions amortises the
// weight reads of every tap.
constexpr int64_t kPositionsPerItem = 16;

class ConvCase : public Case {
 public:
  explicit ConvCase(const Params& p)
      : dtype_(p.dtype()), batch_(p.i("batch")), seq_(p.i("seq")), d_(p.i("d_model")), k_(p.i("kernel")) {}

  std::vector<TensorDesc> tensors() const override {
    return {tensor("x", TensorRole::kInput, dtype_, {batch_, seq_, d_}, "[B,N,d]"),
            tensor("w", TensorRole::kInput, dtype_, {d_, k_}, "[d,k]"),
            tensor("bias", TensorRole::kInput, dtype_, {d_}, "[d]"),
            tensor("y", TensorRole::kOutput, dtype_, {batch_, seq_, d_}, "[B,N,d]")};
  }

  void fill_inputs(TensorMap& t, Rng& rng) const override {
    // PyTorch's Conv1d init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = k for depthwise.
    const double bound = 1.0 / std::sqrt(static_cast<double>(k_));
    t.at("x").fill_uniform(rng, -1.0, 1.0);
    t.at("w").fill_uniform(rng, -bound, bound);
    t.at("bias").fill_uniform(rng, -bound, bound);
  }

  int64_t reference_rows() const override { return batch_ * seq_; }
  double reference_row_cost() const override { return 2.0 * static_cast<double>(d_ * k_); }

  void reference(const TensorMap& t, const std::vector<int64_t>& rows, Reference& ref) const override {
    const HostTensor& x = t.at("x");
    const HostTensor& w = t.at("w");
    const HostTensor& bias = t.at("bias");
    const int64_t half = (k_ - 1) / 2;
    for (int64_t r : rows) {
      const int64_t batch_row = r - r % seq_, n = r % seq_;
      double* y = ref.row("y", r);
      for (int64_t c = 0; c < d_; ++c) {
        double s = x.get(r * d_ + c) + bias.get(c);
        for (int64_t tap = 0; tap < k_; ++tap) {
          const int64_t m = n + tap - half;
          if (m >= 0 && m < seq_) s += w.get(c * k_ + tap) * x.get((batch_row + m) * d_ + c);
        }
        y[c] = s;
      }
    }
  }

  void record(Recorder& rec) const override {
    const int64_t blocks = (seq_ + kPositionsPerItem - 1) / kPositionsPerItem;
    const int64_t channel4 = (d_ + 3) / 4;
    PushConstants push;
    push.u32(static_cast<uint32_t>(batch_))
        .u32(static_cast<uint32_t>(seq_))
        .u32(static_cast<uint32_t>(d_))
        .u32(static_cast<uint32_t>(k_))
        .u32(static_cast<uint32_t>(blocks))
        .u32(static_cast<uint32_t>(channel4));
    // An item's loop iterations: its k taps (the loops over positions and
    // lanes have constant trip counts and are unrolled by glslc).
    Dispatch d = grid_dispatch(rec, "abs_conv", {"x", "w", "bias", "y"}, batch_ * blocks * channel4, push,
                               static_cast<uint32_t>(k_));
    d.constant("VEC4", d_ % 4 == 0 ? 1 : 0);
    rec.dispatch(d);
  }

  Cost cost() const override {
    // k multiply-adds per output (zero-padded taps included), plus the bias
    // and residual adds.
    return {io_bytes(tensors()), static_cast<double>(batch_ * seq_ * d_) * (2.0 * static_cast<double>(k_) + 2.0)};
  }

  Tolerance tolerance() const override {
    return rounding_tolerance(dtype_, static_cast<double>(k_ + 2),
                              fmt::format("{} f32 roundings (k={} taps, bias, residual), each <= 2^-24 of a partial "
                                          "sum the size of y, + output rounding",
                                          k_ + 2, k_));
  }

 private:
  DType dtype_;
  int64_t batch_, seq_, d_, k_;
};

class Conv : public Variant {
 public:
  std::string id() const override { return "abs.conv"; }
  std::string summary() const override {
    return "depthwise convolution over positions added to x, zero padding (convolutional position encoding)";
  }
  std::vector<ParamSpec> params() const override {
    return {shape::batch(), shape::seq(), shape::d_model(),
            int_param("kernel", 3, "taps k of the depthwise convolution (odd)")};
  }
  void resolve(Params& p) const override {
    const int64_t k = p.i("kernel");
    if (k < 1) throw CaseRejected(fmt::format("kernel={} must be at least 1", k));
    if (k % 2 == 0) throw CaseRejected(fmt::format("kernel={} must be odd", k));
    require_u32_items(p.i("batch") * p.i("seq") * p.i("d_model"), "x");
    require_u32_items(p.i("d_model") * k, "w");
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<ConvCase>(p); }
};

PEBENCH_REGISTER_VARIANT(Conv);

}  // namespace
}  // namespace pebench
