// abs.learned and abs.multiplicative: a trained absolute position table
// combined with the input element-wise (encodings.md section 1),
//   abs.learned:        y = x + table[offset + n]   (BERT, GPT-2)
//   abs.multiplicative: y = x * table[offset + n]
// The two differ only in the operation, the table's initialisation and the
// shader (shaders/abs/table_combine.glsl with the operation defined).
#include <cstdint>

#include "harness/contract/registry.h"
#include "suites/abs/abs_common.h"
#include "suites/common/suite_util.h"

namespace pebench {
namespace {

// Items per invocation on CPU devices when the kernel runs without a loop
// (table_combine.glsl, ONE_PASS), as `pebench peak`'s fastest copy.
constexpr uint32_t kOnePassUnroll = 4;

struct TableCombine {
  const char* id;
  const char* summary;
  const char* shader;
  double (*combine)(double x, double t);
  double table_mean;  // entries are table_mean + 0.02 N(0, 1), the usual init noise
  const char* tolerance_model;
};

const TableCombine kLearned{"abs.learned", "learned absolute position table added to x (BERT, GPT-2)",
                            "abs_learned", [](double x, double t) { return x + t; },
                            0.0,           "one f32 add, output rounding"};
// A learned scale starts near the identity. A product's rounding is relative
// to the product itself, so one rounding per element bounds nmse too.
const TableCombine kMultiplicative{"abs.multiplicative",
                                   "learned absolute position table multiplied into x element-wise",
                                   "abs_multiplicative",
                                   [](double x, double t) { return x * t; },
                                   1.0,
                                   "one f32 multiply, output rounding"};

class TableCombineCase : public Case {
 public:
  TableCombineCase(const TableCombine& op, const Params& p)
      : op_(op), dtype_(p.dtype()), shape_(p), table_len_(p.i("table_len")) {}

  std::vector<TensorDesc> tensors() const override {
    return {shape_.x(dtype_), tensor("table", TensorRole::kInput, dtype_, {table_len_, shape_.d}, "[L,d]"),
            shape_.y(dtype_)};
  }

  void fill_inputs(TensorMap& t, Rng& rng) const override {
    t.at("x").fill_uniform(rng, -1.0, 1.0);
    HostTensor& table = t.at("table");
    for (int64_t i = 0; i < table.numel(); ++i) table.set(i, op_.table_mean + 0.02 * rng.normal());
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
      for (int64_t c = 0; c < d; ++c) y[c] = op_.combine(x.get(r * d + c), table.get(p * d + c));
    }
  }

  void record(Recorder& rec) const override {
    const bool vec4 = shape_.d % 4 == 0;
    PushConstants push;
    push.u32(static_cast<uint32_t>(shape_.batch))
        .u32(static_cast<uint32_t>(shape_.seq))
        .u32(static_cast<uint32_t>(shape_.d))
        .u32(static_cast<uint32_t>(shape_.offset));
    const int64_t items = shape_.seq * shape_.d / (vec4 ? 4 : 1);
    Dispatch d = grid_dispatch(rec, op_.shader, {"x", "table", "y"}, items, push, static_cast<uint32_t>(shape_.batch));
    // Without loops where the device takes the groups: kOnePassUnroll items
    // per invocation on CPU devices, one on GPUs.
    const uint32_t unroll = rec.launch().is_cpu() ? kOnePassUnroll : 1;
    d.constant("VEC4", vec4 ? 1 : 0);
    launch_one_pass(rec, d, shape_.batch * items, unroll);
    d.constant("UNROLL", unroll);
    rec.dispatch(d);
  }

  Cost cost() const override {
    // One operation per element. The spec's rule counts the whole table as
    // read; only N rows of it are.
    return {io_bytes(tensors()), static_cast<double>(shape_.batch * shape_.seq * shape_.d)};
  }

  Tolerance tolerance() const override { return rounding_tolerance(dtype_, 1, op_.tolerance_model); }

 private:
  const TableCombine& op_;
  DType dtype_;
  InputShape shape_;
  int64_t table_len_;
};

template <const TableCombine& kOp>
class TableCombineVariant : public Variant {
 public:
  std::string id() const override { return kOp.id; }
  std::string summary() const override { return kOp.summary; }
  std::vector<ParamSpec> params() const override {
    auto specs = input_shape_params();
    specs.push_back(table_len_param());
    return specs;
  }
  void resolve(Params& p) const override {
    resolve_input_shape(p);
    resolve_table_len(p);
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<TableCombineCase>(kOp, p); }
};

using Learned = TableCombineVariant<kLearned>;
using Multiplicative = TableCombineVariant<kMultiplicative>;
PEBENCH_REGISTER_VARIANT(Learned);
PEBENCH_REGISTER_VARIANT(Multiplicative);

}  // namespace
}  // namespace pebench
