// abs.hierarchical: hierarchical decomposition of a learned position table
// (Su, 2020: extends BERT's 512 rows to 512^2 positions; encodings.md
// section 1). With p = q n0 + r and u = (table - alpha table[0]) / (1 - alpha):
// y = x + alpha u[q] + (1 - alpha) u[r]. For p < n0 (q = 0) this is exactly
// table[p], so the trained rows keep their meaning.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "harness/contract/registry.h"
#include "suites/abs/abs_common.h"
#include "suites/common/suite_util.h"

namespace pebench {
namespace {

constexpr double kTableStd = 0.02;  // the usual init scale of learned tables

class HierarchicalCase : public Case {
 public:
  explicit HierarchicalCase(const Params& p)
      : dtype_(p.dtype()), shape_(p), n0_(p.i("table_len")), alpha_(p.f("alpha")) {}

  std::vector<TensorDesc> tensors() const override {
    return {shape_.x(dtype_), tensor("table", TensorRole::kInput, dtype_, {n0_, shape_.d}, "[n0,d]"),
            shape_.y(dtype_)};
  }

  void fill_inputs(TensorMap& t, Rng& rng) const override {
    t.at("x").fill_uniform(rng, -1.0, 1.0);
    t.at("table").fill_normal(rng, kTableStd);
  }

  int64_t reference_rows() const override { return shape_.batch * shape_.seq; }
  double reference_row_cost() const override { return 10.0 * static_cast<double>(shape_.d); }

  void reference(const TensorMap& t, const std::vector<int64_t>& rows, Reference& ref) const override {
    const HostTensor& x = t.at("x");
    const HostTensor& table = t.at("table");
    const int64_t d = shape_.d;
    const double a = alpha_;
    for (int64_t r : rows) {
      const int64_t p = shape_.offset + r % shape_.seq;
      const int64_t q = p / n0_, rem = p % n0_;
      double* y = ref.row("y", r);
      for (int64_t c = 0; c < d; ++c) {
        const double t0 = table.get(c);
        const double uq = (table.get(q * d + c) - a * t0) / (1 - a);
        const double ur = (table.get(rem * d + c) - a * t0) / (1 - a);
        y[c] = x.get(r * d + c) + a * uq + (1 - a) * ur;
      }
    }
  }

  void record(Recorder& rec) const override {
    const bool vec4 = shape_.d % 4 == 0;
    PushConstants push;
    push.u32(static_cast<uint32_t>(shape_.batch))
        .u32(static_cast<uint32_t>(shape_.seq))
        .u32(static_cast<uint32_t>(shape_.d))
        .u32(static_cast<uint32_t>(shape_.offset))
        .u32(static_cast<uint32_t>(n0_))
        .f32(static_cast<float>(alpha_))
        .f32(static_cast<float>(1.0 / (1.0 - alpha_)));
    Dispatch d = grid_dispatch(rec, "abs_hierarchical", {"x", "table", "y"}, shape_.seq * shape_.d / (vec4 ? 4 : 1),
                               push, static_cast<uint32_t>(shape_.batch));
    d.constant("VEC4", vec4 ? 1 : 0);
    rec.dispatch(d);
  }

  Cost cost() const override {
    // Per (position, channel): alpha*t0, two (row - alpha*t0) * k, alpha*uq + (1-alpha)*ur: 8 flops;
    // then one add per batch element. The spec's rule counts the whole table as read.
    const double pos_elems = static_cast<double>(shape_.seq * shape_.d);
    return {io_bytes(tensors()), 8.0 * pos_elems + static_cast<double>(shape_.batch) * pos_elems};
  }

  Tolerance tolerance() const override {
    // Every f32 operation rounds by 2^-24 of its result; the results' sizes
    // (rms, table std s, A = |alpha|, B = |1-alpha|, K = 1/B):
    //   alpha*t0 ~ A s;  row - alpha*t0 ~ (1+A) s;  u ~ (1+A) s K;
    //   alpha*u ~ A (1+A) s K;  (1-alpha)*u ~ (1+A) s;  pe ~ (2A + B) s K;  y ~ sqrt(1/3) + pe.
    // Each rounding is carried to y with the weights alpha*k and (1-alpha)*k
    // (sum (A + B) K); k and 1-alpha are rounded too, and alpha's own f32
    // rounding moves pe by A K (3+A) s. Near alpha = 1 everything grows with
    // K (and K^2 through alpha's rounding): the cancellation in u.
    const double u = std::ldexp(1.0, -24);
    const double A = std::fabs(alpha_), B = std::fabs(1 - alpha_), K = 1 / B, s = kTableStd;
    const double pe = (2 * A + B) * s * K;
    const double err = u * (A * s * (A + B) * K               // alpha*t0, used by both rows
                            + 2 * (1 + A) * s * (A + B) * K   // the subtraction, and k's rounding
                            + (1 + A) * s * (A + B) * K       // the product with k
                            + A * (1 + A) * s * K             // alpha*uq
                            + 2 * (1 + A) * s                 // (1-alpha) rounded, (1-alpha)*ur
                            + pe + (std::sqrt(1.0 / 3) + pe)  // the two sums
                            + A * K * (3 + A) * s);           // alpha in f32
    Tolerance t = rounding_tolerance(dtype_, 0, "");  // the f16 output rounding; f32 adds nothing here
    t.nmse += 4 * err * err / (1.0 / 3);              // signal: x uniform in [-1, 1), mean square 1/3; 4x margin
    t.model = fmt::format(
        "f32 roundings at the intermediates' sizes (table std {}, 1/(1-alpha) = {:.3g}, rms error {:.2g}) "
        "+ output rounding",
        s, K, err);
    return t;
  }

 private:
  DType dtype_;
  InputShape shape_;
  int64_t n0_;
  double alpha_;
};

class Hierarchical : public Variant {
 public:
  std::string id() const override { return "abs.hierarchical"; }
  std::string summary() const override {
    return "hierarchical decomposition of a learned table: n0 rows serve n0^2 positions (Su 2020)";
  }
  std::vector<ParamSpec> params() const override {
    auto specs = input_shape_params();
    specs.push_back(int_param("table_len", 512,
                              "rows n0 of the trained table (512, BERT's: serves 512^2 = 262,144 positions p < n0^2)"));
    specs.push_back(float_param("alpha", 0.4,
                                "weight of the coarse row u[p / n0]; != 1 (alpha = 0.5 makes p = q*n0+r and "
                                "r*n0+q share a row)"));
    return specs;
  }
  void resolve(Params& p) const override {
    resolve_input_shape(p);
    const int64_t n0 = p.i("table_len"), d = p.i("d_model");
    const double alpha = p.f("alpha");
    if (n0 < 1) throw CaseRejected(fmt::format("table_len={} must be at least 1", n0));
    // Divided, not multiplied: a huge table_len must not overflow int64 first.
    if (n0 > int64_t{UINT32_MAX} / d) {
      throw CaseRejected(fmt::format("table_len={} x d_model={} elements exceed 32-bit indexing", n0, d));
    }
    const int64_t last = p.i("offset") + p.i("seq") - 1;  // the largest position p
    if (last / n0 >= n0) {
      throw CaseRejected(fmt::format("offset={} + seq={} exceeds table_len^2 = {} positions (table_len={})",
                                     p.i("offset"), p.i("seq"), n0 * n0, n0));
    }
    if (alpha == 1.0) throw CaseRejected("alpha=1 makes 1 - alpha zero (u divides by it)");
    if (static_cast<float>(alpha) == 1.0f || !std::isfinite(static_cast<float>(1.0 / (1.0 - alpha)))) {
      throw CaseRejected(fmt::format("alpha={} is 1 in f32 (u divides by 1 - alpha)", alpha));
    }
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<HierarchicalCase>(p); }
};

PEBENCH_REGISTER_VARIANT(Hierarchical);

}  // namespace
}  // namespace pebench
