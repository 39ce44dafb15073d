// abs.conv_grouped: wav2vec2's convolutional position embedding
// (encodings.md section 1): y = x + gelu(conv(x)), a grouped convolution
// over positions with K = kernel taps, G = groups, padding K/2 (the extra
// last output of an even K dropped) and the exact erf GELU.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "harness/contract/registry.h"
#include "suites/common/suite_util.h"

namespace pebench {
namespace {

// fill_inputs' distributions, which the error model below depends on.
constexpr double kXRms2 = 1.0 / 3.0;     // x ~ U(-1, 1)
constexpr double kBiasStd = 0.1;         // bias ~ N(0, 0.1^2)
// fairseq/wav2vec2 init of the positional conv: w ~ N(0, 4 / (K d)).
double weight_std(int64_t kernel, int64_t d) { return std::sqrt(4.0 / static_cast<double>(kernel * d)); }

// Register blocking of shaders/abs/abs_conv_grouped.comp (compile-time
// constants there; keep in sync): RN positions x 4*RO4 output channels per
// invocation.
constexpr uint32_t kShaderRN = 32;
constexpr uint32_t kShaderRO4 = 1;
// 32 invocations x 32 positions: 1024 positions per workgroup (measured on
// lavapipe; fewer invocations, or more, did not help).
constexpr uint32_t kPreferredWG = 32;

// How one case is tiled on one device: from the device's workgroup and
// shared memory limits.
struct GroupedConvPlan {
  uint32_t workgroup = 0;  // invocations (spec constant 0)
  uint32_t chunk = 0;      // input channels staged per chunk (CC)
  uint32_t tile_n = 0;     // positions per workgroup, WG * RN
  uint32_t tile_o = 4 * kShaderRO4;  // output channels per workgroup
  bool vec4 = false, x_vec4 = false, w_vec4 = false;
  uint64_t loop_iterations = 0;  // per invocation, all loops that stay loops
};

GroupedConvPlan plan_grouped_conv(const Recorder& rec, int64_t kernel, int64_t cg) {
  GroupedConvPlan p;
  p.workgroup = rec.launch().workgroup_size(kPreferredWG);
  p.tile_n = p.workgroup * kShaderRN;
  const uint64_t shared = rec.limits().max_compute_shared_memory_size;
  const uint64_t k = static_cast<uint64_t>(kernel);
  const uint64_t kp = (k + 3) / 4 * 4;  // taps padded to a multiple of 4
  // One staged input channel: TN + KP floats of x and KP x TO floats of w.
  const uint64_t per_channel = 4 * (p.tile_n + kp) + 4 * kp * p.tile_o;
  uint64_t chunk = std::min<uint64_t>({shared / per_channel, static_cast<uint64_t>(cg), 16});
  if (chunk == 0) {
    throw Unsupported(fmt::format("kernel={} needs {} bytes of shared memory per staged input channel; the device has {}",
                                  kernel, per_channel, shared));
  }
  p.vec4 = cg % 4 == 0;
  if (p.vec4 && chunk >= 4) chunk -= chunk % 4;
  p.chunk = static_cast<uint32_t>(chunk);
  p.x_vec4 = p.vec4 && chunk % 4 == 0;
  p.w_vec4 = kernel % 4 == 0;

  // Loop iterations of one invocation: per chunk the chunk loop and the two
  // staging loops (units of 4 x 4 values with vec4 reads, else of 1 x or 4
  // w values); per input channel its loop and KP/4 steps of 4 taps.
  const uint64_t wg = p.workgroup;
  const uint64_t chunks = (static_cast<uint64_t>(cg) + chunk - 1) / chunk;
  const uint64_t x_units = p.x_vec4 ? (p.tile_n + kp) / 4 * (chunk / 4) : (p.tile_n + kp) * chunk;
  const uint64_t w_units = kShaderRO4 * chunk * (p.w_vec4 ? kp / 4 : kp);
  const uint64_t stage = (x_units + wg - 1) / wg + (w_units + wg - 1) / wg;
  p.loop_iterations = chunks * (1 + stage) + static_cast<uint64_t>(cg) * (1 + kp / 4);
  if (p.loop_iterations > rec.launch().max_loop_iterations()) {
    throw Unsupported(fmt::format("d_model/groups={} input channels x kernel={} need {} loop iterations per "
                                  "invocation; this driver stops loops after {}",
                                  cg, kernel, p.loop_iterations, rec.launch().max_loop_iterations()));
  }
  return p;
}

class ConvGroupedCase : public Case {
 public:
  explicit ConvGroupedCase(const Params& p)
      : dtype_(p.dtype()),
        batch_(p.i("batch")),
        seq_(p.i("seq")),
        d_(p.i("d_model")),
        k_(p.i("kernel")),
        groups_(p.i("groups")),
        cg_(d_ / groups_) {}

  std::vector<TensorDesc> tensors() const override {
    return {tensor("x", TensorRole::kInput, dtype_, {batch_, seq_, d_}, "[B,N,d]"),
            tensor("w", TensorRole::kInput, dtype_, {d_, cg_, k_}, "[d,d/G,K]"),
            tensor("bias", TensorRole::kInput, dtype_, {d_}, "[d]"),
            tensor("y", TensorRole::kOutput, dtype_, {batch_, seq_, d_}, "[B,N,d]")};
  }

  void fill_inputs(TensorMap& t, Rng& rng) const override {
    t.at("x").fill_uniform(rng, -1.0, 1.0);
    t.at("w").fill_normal(rng, weight_std(k_, d_));
    t.at("bias").fill_normal(rng, kBiasStd);
  }

  int64_t reference_rows() const override { return batch_ * seq_; }
  double reference_row_cost() const override { return 2.0 * static_cast<double>(d_ * cg_ * k_); }

  void reference(const TensorMap& t, const std::vector<int64_t>& rows, Reference& ref) const override {
    const std::vector<double> x = t.at("x").to_f64();
    const std::vector<double> w = t.at("w").to_f64();
    const HostTensor& bias = t.at("bias");
    const int64_t half = k_ / 2;
    for (int64_t r : rows) {
      const int64_t batch_row = r - r % seq_, n = r % seq_;
      double* y = ref.row("y", r);
      for (int64_t o = 0; o < d_; ++o) {
        const int64_t cin0 = o / cg_ * cg_;
        double z = bias.get(o);
        for (int64_t c = 0; c < cg_; ++c) {
          const double* wr = &w[static_cast<size_t>((o * cg_ + c) * k_)];
          for (int64_t tap = 0; tap < k_; ++tap) {
            const int64_t m = n + tap - half;
            if (m >= 0 && m < seq_) z += wr[tap] * x[static_cast<size_t>((batch_row + m) * d_ + cin0 + c)];
          }
        }
        y[o] = x[static_cast<size_t>(r * d_ + o)] + 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
      }
    }
  }

  void record(Recorder& rec) const override {
    const GroupedConvPlan plan = plan_grouped_conv(rec, k_, cg_);
    const int64_t oc_tiles = (cg_ + plan.tile_o - 1) / plan.tile_o;
    const std::array<int64_t, 3> groups{(seq_ + plan.tile_n - 1) / plan.tile_n, groups_ * oc_tiles, batch_};
    const auto& max_groups = rec.limits().max_compute_work_group_count;
    for (int i = 0; i < 3; ++i) {
      if (groups[i] > max_groups[i]) {
        throw Unsupported(fmt::format("{} workgroups along dimension {} exceed the device's {}", groups[i], i,
                                      max_groups[i]));
      }
    }
    Dispatch d;
    d.shader = "abs_conv_grouped";
    d.buffers = {"x", "w", "bias", "y"};
    d.constant("local_size_x", plan.workgroup)
        .constant("CC", plan.chunk)
        .constant("K", static_cast<uint32_t>(k_))
        .constant("TN", plan.tile_n)
        .constant("VEC4", plan.vec4 ? 1u : 0u)
        .constant("XVEC4", plan.x_vec4 ? 1u : 0u)
        .constant("WVEC4", plan.w_vec4 ? 1u : 0u);
    d.push.u32(static_cast<uint32_t>(seq_))
        .u32(static_cast<uint32_t>(d_))
        .u32(static_cast<uint32_t>(cg_))
        .u32(static_cast<uint32_t>(oc_tiles));
    d.groups = {static_cast<uint32_t>(groups[0]), static_cast<uint32_t>(groups[1]), static_cast<uint32_t>(groups[2])};
    rec.dispatch(d);
  }

  Cost cost() const override {
    // The convolution: d/G x K multiply-adds per output (zero-padded taps
    // included, as a dense conv counts them). Per output also the bias add,
    // gelu's 1 + erf, times z, times 0.5, and the residual add: 5 flops (erf
    // itself, an approximation, is not counted).
    const double outputs = static_cast<double>(batch_ * seq_ * d_);
    return {io_bytes(tensors()), outputs * (2.0 * static_cast<double>(cg_ * k_) + 5.0)};
  }

  Tolerance tolerance() const override {
    // f32 accumulation of L = d/G K + 1 terms (FMA, one rounding each, of at
    // most 2^-24 of the partial sum): as independent rounding errors
    // (Higham's probabilistic bound) their variance is <= u^2 L E[z^2], and
    // gelu' <= 1.13 carries it to y. The erf approximation and the device's
    // exp give |gelu error| <= 3e-7 |z| (common/erf.glsl). Then the gelu
    // products and the residual add (3 roundings of y) and, in f16, the
    // output rounding. E[z^2] <= var(bias) + L var(w) E[x^2]; E[y^2] >= E[x^2]
    // (gelu(z) is all but uncorrelated with x[n,o]).
    const double u = std::ldexp(1.0, -24);
    const double terms = static_cast<double>(cg_ * k_ + 1);
    const double ws = weight_std(k_, d_);
    const double z2 = kBiasStd * kBiasStd + static_cast<double>(cg_ * k_) * ws * ws * kXRms2;
    const double gelu_err = 3e-7;
    const double u_out = dtype_ == DType::kF16 ? std::ldexp(1.0, -11) : 0.0;
    Tolerance t;
    t.nmse = 4.0 * ((1.13 * 1.13 * u * u * terms + gelu_err * gelu_err) * z2 / kXRms2 + 9 * u * u + u_out * u_out) +
             1e-14;
    t.model = fmt::format(
        "f32 accumulation of {} terms (probabilistic, u^2 L E[z^2]) through gelu' <= 1.13, erf/gelu 3e-7 |z|, "
        "3 roundings of y{}; E[z^2]/E[y^2] <= {:.3g}; x4 margin",
        static_cast<int64_t>(terms), dtype_ == DType::kF16 ? ", f16 output" : "", z2 / kXRms2);
    return t;
  }

 private:
  DType dtype_;
  int64_t batch_, seq_, d_, k_, groups_, cg_;
};

class ConvGrouped : public Variant {
 public:
  std::string id() const override { return "abs.conv_grouped"; }
  std::string summary() const override {
    return "wav2vec2 convolutional position embedding: x + gelu(grouped conv over positions)";
  }
  std::vector<ParamSpec> params() const override {
    return {shape::batch(), shape::seq(), shape::d_model(),
            int_param("kernel", 128, "taps K of the grouped convolution (padding K/2; an even K drops the last output)"),
            int_param("groups", 16, "convolution groups G (d_model divisible by G)")};
  }
  void resolve(Params& p) const override {
    const int64_t k = p.i("kernel"), g = p.i("groups"), d = p.i("d_model");
    if (k < 1) throw CaseRejected(fmt::format("kernel={} must be at least 1", k));
    if (g < 1) throw CaseRejected(fmt::format("groups={} must be at least 1", g));
    if (d % g != 0) throw CaseRejected(fmt::format("d_model={} is not divisible by groups={}", d, g));
    require_u32_items(p.i("batch") * p.i("seq") * d, "x");
    require_u32_items(d * (d / g) * k, "w");
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<ConvGroupedCase>(p); }
};

PEBENCH_REGISTER_VARIANT(ConvGrouped);

}  // namespace
}  // namespace pebench
