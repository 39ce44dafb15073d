// attn.alibi: attention with ALiBi's linear biases (Press et al.,
// encodings.md section 3): s = scale q.k - m_h (i' - j) when causal,
// - m_h |i' - j| when not, with the slopes of get_slopes(H).
#include <fmt/format.h>

#include <cmath>

#include "harness/contract/registry.h"
#include "suites/attn/attn_common.h"

namespace pebench {

std::vector<double> alibi_slopes(int64_t heads) {
  // get_slopes_power_of_2(n): 2^(-8/n), 2^(-16/n), ..., 2^(-8).
  auto power_of_two = [](int64_t n) {
    std::vector<double> m(static_cast<size_t>(n));
    for (int64_t h = 0; h < n; ++h) {
      m[static_cast<size_t>(h)] = std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(n));
    }
    return m;
  };
  int64_t c = 1;  // 2^floor(log2 H)
  while (c * 2 <= heads) c *= 2;
  std::vector<double> slopes = power_of_two(c);
  // Otherwise: then the even-indexed slopes of get_slopes(2c), the first H - c.
  const std::vector<double> finer = power_of_two(2 * c);
  for (size_t e = 0; static_cast<int64_t>(slopes.size()) < heads; e += 2) slopes.push_back(finer[e]);
  return slopes;
}

namespace {

// The bias -m_h (i' - j) (causal) or -m_h |i' - j|, slopes bound as [H].
class AlibiBias : public AttnTerm {
 public:
  explicit AlibiBias(const AttnShape& s) : shape_(s), slopes_(alibi_slopes(s.heads)) {}

  std::vector<TensorDesc> tensors() const override {
    return {tensor("slopes", TensorRole::kConstant, DType::kF32, {shape_.heads}, "[H]")};
  }
  void fill(TensorMap& t, Rng&) const override {
    for (size_t h = 0; h < slopes_.size(); ++h) t.at("slopes").set(static_cast<int64_t>(h), slopes_[h]);
  }
  std::vector<std::string> bindings() const override { return {"slopes"}; }

  void add_reference(const TensorMap&, AttnRefTerms& terms) const override {
    terms.add_bias([this](int64_t h, int64_t qpos, int64_t kpos, const double*, const double*) {
      const double d = static_cast<double>(qpos - kpos);
      return -slopes_[static_cast<size_t>(h)] * (shape_.causal ? d : std::fabs(d));
    });
  }

  // One multiply-add per score.
  double flops() const override { return 2.0 * shape_.scores(); }

  TermError score_error(double s_before) const override {
    // The f32 slope (rounded) times the exact distance, rounded: 2u |bias|.
    // Keys whose weight matters (s >= max - 40) have |bias| <= 40 + 2 s,
    // since the key at i' has bias 0 (which is also why the bias never
    // widens the spread of the scores that matter: reach 0).
    TermError err;
    err.abs = 2 * std::ldexp(1.0, -24) * (40 + 2 * s_before);
    err.model = "(bias 2u|b|)";
    return err;
  }

 private:
  AttnShape shape_;
  std::vector<double> slopes_;
};

class AttnAlibiCase : public AttnCase {
 public:
  explicit AttnAlibiCase(const Params& p) : AttnCase(p) {
    add_term(std::make_unique<AlibiBias>(shape_));
    plan();
  }

 protected:
  std::string kernel() const override { return "alibi"; }
};

class AttnAlibi : public Variant {
 public:
  std::string id() const override { return "attn.alibi"; }
  std::string summary() const override { return "attention with ALiBi linear biases (Press et al.)"; }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override { return attn_params(); }
  void resolve(Params& p) const override {
    resolve_attn_params(p, 1.0 / std::sqrt(static_cast<double>(p.i("dim"))));
    // Distances i' - j are exact in f32 only below 2^24.
    if (p.i("kv_seq") > (int64_t{1} << 24)) {
      throw CaseRejected(fmt::format("kv_seq={} exceeds 2^24: ALiBi's distances would not be exact in f32",
                                     p.i("kv_seq")));
    }
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnAlibiCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnAlibi);

}  // namespace
}  // namespace pebench
