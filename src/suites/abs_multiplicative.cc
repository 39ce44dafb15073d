// abs.multiplicative: a learned absolute position table that scales the input
// element-wise (encodings.md section 1): y = x * table[offset + n].
#include <fmt/format.h>

#include <cstdint>

#include "harness/registry.h"
#include "suites/abs_common.h"
#include "suites/suite_util.h"

namespace pebench {
namespace {

class MultiplicativeCase : public Case {
 public:
  explicit MultiplicativeCase(const Params& p) : dtype_(p.dtype()), shape_(p), table_len_(p.i("table_len")) {}

  std::vector<TensorDesc> tensors() const override {
    return {shape_.x(dtype_), tensor("table", TensorRole::kInput, dtype_, {table_len_, shape_.d}, "[L,d]"),
            shape_.y(dtype_)};
  }

  void fill_inputs(TensorMap& t, Rng& rng) const override {
    t.at("x").fill_uniform(rng, -1.0, 1.0);
    // A learned scale starts near the identity: 1 + the usual 0.02 init noise.
    HostTensor& table = t.at("table");
    for (int64_t i = 0; i < table.numel(); ++i) table.set(i, 1.0 + 0.02 * rng.normal());
  }

  int64_t reference_rows() const override { return shape_.batch * shape_.seq; }
  double reference_row_cost() const override { return 4.0 * static_cast<double>(shape_.d); }

  void reference(const TensorMap& t, const std::vector<int64_t>& rows, Reference& ref) const override {
    const HostTensor& x = t.at("x");
    const HostTensor& table = t.at("table");
    const int64_t d = shape_.d;
    for (int64_t r : rows) {
      const int64_t p = shape_.offset + r % shape_.seq;
      double* y = ref.row("y", r);
      for (int64_t c = 0; c < d; ++c) y[c] = x.get(r * d + c) * table.get(p * d + c);
    }
  }

  void record(Recorder& rec) const override {
    const bool vec4 = shape_.d % 4 == 0;
    PushConstants push;
    push.u32(static_cast<uint32_t>(shape_.batch))
        .u32(static_cast<uint32_t>(shape_.seq))
        .u32(static_cast<uint32_t>(shape_.d))
        .u32(static_cast<uint32_t>(shape_.offset));
    Dispatch d = grid_dispatch(rec, "abs_multiplicative", {"x", "table", "y"}, shape_.seq * shape_.d / (vec4 ? 4 : 1),
                               push, static_cast<uint32_t>(shape_.batch));
    d.spec_constants.push_back(vec4 ? 1 : 0);
    rec.dispatch(d);
  }

  Cost cost() const override {
    // One multiply per element. The spec's rule counts the whole table as
    // read; only N rows of it are.
    return {io_bytes(tensors()), static_cast<double>(shape_.batch * shape_.seq * shape_.d)};
  }

  Tolerance tolerance() const override {
    // A product's rounding is relative to the product itself, so one rounding per element bounds nmse.
    return rounding_tolerance(dtype_, 1, "one f32 multiply, output rounding");
  }

 private:
  DType dtype_;
  InputShape shape_;
  int64_t table_len_;
};

class Multiplicative : public Variant {
 public:
  std::string id() const override { return "abs.multiplicative"; }
  std::string summary() const override { return "learned absolute position table multiplied into x element-wise"; }
  std::vector<ParamSpec> params() const override {
    auto specs = input_shape_params();
    specs.push_back(table_len_param());
    return specs;
  }
  void resolve(Params& p) const override {
    resolve_input_shape(p);
    resolve_table_len(p);
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<MultiplicativeCase>(p); }
};

PEBENCH_REGISTER_VARIANT(Multiplicative);

}  // namespace
}  // namespace pebench
