// abs.learned: a trained absolute position table added to the input
// (encodings.md section 1): y = x + table[offset + n].
#include <fmt/format.h>

#include "harness/registry.h"
#include "suites/abs_common.h"
#include "suites/suite_util.h"

namespace pebench {
namespace {

class LearnedCase : public Case {
 public:
  explicit LearnedCase(const Params& p) : dtype_(p.dtype()), shape_(p), table_len_(p.i("table_len")) {}

  std::vector<TensorDesc> tensors() const override {
    return {shape_.x(dtype_), tensor("table", TensorRole::kInput, dtype_, {table_len_, shape_.d}, "[L,d]"),
            shape_.y(dtype_)};
  }

  void fill_inputs(TensorMap& t, Rng& rng) const override {
    t.at("x").fill_uniform(rng, -1.0, 1.0);
    t.at("table").fill_normal(rng, 0.02);  // the usual init scale of learned tables
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
      for (int64_t c = 0; c < d; ++c) y[c] = x.get(r * d + c) + table.get(p * d + c);
    }
  }

  void record(Recorder& rec) const override {
    const bool vec4 = shape_.d % 4 == 0;
    PushConstants push;
    push.u32(static_cast<uint32_t>(shape_.batch))
        .u32(static_cast<uint32_t>(shape_.seq))
        .u32(static_cast<uint32_t>(shape_.d))
        .u32(static_cast<uint32_t>(shape_.offset));
    Dispatch d = grid_dispatch(rec, "abs_learned", {"x", "table", "y"}, shape_.seq * shape_.d / (vec4 ? 4 : 1), push,
                               static_cast<uint32_t>(shape_.batch));
    d.spec_constants.push_back(vec4 ? 1 : 0);
    rec.dispatch(d);
  }

  Cost cost() const override {
    // The spec's rule counts the whole table as read; only N rows of it are.
    return {io_bytes(tensors()), static_cast<double>(shape_.batch * shape_.seq * shape_.d)};
  }

  Tolerance tolerance() const override { return rounding_tolerance(dtype_, 1, "one f32 add, output rounding"); }

 private:
  DType dtype_;
  InputShape shape_;
  int64_t table_len_;
};

class Learned : public Variant {
 public:
  std::string id() const override { return "abs.learned"; }
  std::string summary() const override { return "learned absolute position table added to x (BERT, GPT-2)"; }
  std::vector<ParamSpec> params() const override {
    auto specs = input_shape_params();
    specs.push_back(table_len_param());
    return specs;
  }
  void resolve(Params& p) const override {
    resolve_input_shape(p);
    resolve_table_len(p);
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<LearnedCase>(p); }
};

PEBENCH_REGISTER_VARIANT(Learned);

}  // namespace
}  // namespace pebench
