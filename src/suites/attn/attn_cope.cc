// attn.cope: Contextual Position Encoding (Golovneva et al. 2024;
// facebookresearch/RAM context_position.py; encodings.md section 3):
//   g_ij = sigmoid(scale q_i.k_j)                       over visible keys
//   p_ij = min(sum_{t=j..last} g_it, npos - 1)          last = i' (causal) or M - 1
//   e_ij = (1 - w) q_i.pos_emb[f] + w q_i.pos_emb[min(f + 1, npos - 1)],  f = floor(p), w = p - f
//   s_ij = scale q_i.k_j + e_ij  (cope_nodiv, default)  or  scale (q_i.k_j + e_ij)
// Key j's position depends on the gates of every key from j to the row's
// last, so the term is a row's, not a pair's (AttnRefTerms::row_bias).
//
// Kernels: a pre-pass (attn_cope_qpe.comp) forms q_i.pos_emb[t] for every
// query row and t < npos into cope_qpe [B*H*N, npos], so that e costs two
// loads and a mix a score. Naive: the plain score pass, then one invocation
// a row (attn_cope_rows.comp) walks its keys from last to first, summing the
// gates, and adds e in place before the softmax. Flash (CPU and GPU plans):
// the fused kernel walks the key tiles from last to first
// (ATTN_KEYS_LAST_TO_FIRST, cope_hooks.glsl) with each row's running sum of
// gates in a register, in one key split (flash_one_key_split): one pass
// over K and V, as plain attention makes, rather than two (a first pass for
// the sums would read K again and keep M sums a row).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/contract/registry.h"
#include "suites/attn/attn_common.h"

namespace pebench {
namespace {

constexpr int64_t kCopeMaxPositions = 1 << 16;

class CopeTerm : public AttnTerm {
 public:
  CopeTerm(const Params& p, const AttnShape& s) : shape_(s), npos_(p.i("npos")), nodiv_(p.b("cope_nodiv")) {}

  std::vector<TensorDesc> tensors() const override {
    const AttnShape& s = shape_;
    return {tensor("pos_emb", TensorRole::kInput, s.dtype, {npos_, s.dim}, "[npos,D]"),
            tensor("cope_qpe", TensorRole::kScratch, DType::kF32, {s.q_rows(), npos_}, "[B*H*N,npos]")};
  }
  // RAM's code starts pos_emb at zeros (a trained model's is learned);
  // uniform within 1/sqrt(D) gives |q.pos_emb| <= sqrt(D), the bound of the
  // content score scale q.k at scale 1/sqrt(D), so both parts weigh alike.
  void fill(TensorMap& t, Rng& rng) const override {
    const double a = 1.0 / std::sqrt(static_cast<double>(shape_.dim));
    t.at("pos_emb").fill_uniform(rng, -a, a);
  }
  bool record_prepass(Recorder& rec, const PrepassTarget&) const override {
    const AttnShape& s = shape_;
    const bool vec4 = s.dim % 4 == 0;
    PushConstants push;
    push.u32(static_cast<uint32_t>(s.q_rows())).u32(static_cast<uint32_t>(npos_));
    Dispatch d = grid_dispatch(rec, "attn_cope_qpe", {"q", "pos_emb", "cope_qpe"}, s.q_rows() * npos_, push,
                               static_cast<uint32_t>(vec4 ? s.dim / 4 : s.dim));
    d.constant("HEAD_DIM", static_cast<uint32_t>(s.dim)).constant("VEC4", vec4 ? 1u : 0u);
    rec.dispatch(d);
    return true;
  }
  bool record_naive_rows(Recorder& rec, int64_t slice0, int64_t slices) const override {
    const AttnShape& s = shape_;
    PushConstants push = s.push();
    push.u32(static_cast<uint32_t>(slice0)).u32(static_cast<uint32_t>(slices));
    add_push(push);
    push.f32(static_cast<float>(s.softcap.cap()));  // the row pass caps (caps_in_naive_rows)
    Dispatch d = grid_dispatch(rec, "attn_cope_rows", {"scores", "cope_qpe"}, slices * s.seq, push,
                               static_cast<uint32_t>(s.kv_seq));
    d.storage = DType::kF32;  // f32 buffers only
    rec.dispatch(d);
    return true;
  }
  bool caps_in_naive_rows() const override { return true; }
  std::vector<std::string> bindings() const override { return {"cope_qpe"}; }
  bool flash_one_key_split() const override { return true; }
  void push(PushConstants& push) const override { add_push(push); }

  void add_reference(const TensorMap& t, AttnRefTerms& terms) const override {
    terms.row_bias = [this, pos = t.at("pos_emb").to_f64()](int64_t, int64_t, const double* q, const double* content,
                                                           double* bias) {
      const int64_t D = shape_.dim, M = shape_.kv_seq;
      std::vector<double> qpe(static_cast<size_t>(npos_));
      for (int64_t r = 0; r < npos_; ++r) {
        double acc = 0;
        for (int64_t c = 0; c < D; ++c) acc += q[c] * pos[static_cast<size_t>(r * D + c)];
        qpe[static_cast<size_t>(r)] = acc;
      }
      double sum = 0;
      for (int64_t j = M - 1; j >= 0; --j) {
        const double x = content[static_cast<size_t>(j)];
        if (x == -INFINITY) continue;  // not visible: no gate, no term
        sum += 1 / (1 + std::exp(-x));
        bias[static_cast<size_t>(j)] += (nodiv_ ? 1.0 : shape_.scale) * cope_e(qpe, std::min(sum, cap()));
      }
    };
  }
  double reference_cost_per_key() const override { return 30; }

  // Per score: the gate (exp, add, divide: ~4), the suffix sum, the clamp,
  // floor and fraction, the mix and the add (~8); per query row the npos
  // dot products of the pre-pass (2 D npos).
  double flops() const override {
    const AttnShape& s = shape_;
    return 12.0 * s.scores() + 2.0 * static_cast<double>(s.dim * npos_) * static_cast<double>(s.q_rows());
  }

  TermError score_error(double s_before) const override {
    // |q.pos_emb| <= B = D / sqrt(D) (fill), so |e| <= B and e moves a
    // score by at most B (times scale without cope_nodiv). Errors: the f32
    // dots of the pre-pass (D terms: D u B); the positions p through the
    // gates (each gate errs by 1/4 of its score's error, a dot of D terms,
    // plus its exp's few ulp) and the f32 suffix sum (u (npos - 1) per add),
    // independent from key to key, so their sum over up to M keys grows as
    // sqrt(M) (rms); e is piecewise linear in p with slope <= 2 B.
    const AttnShape& s = shape_;
    const double u = std::ldexp(1.0, -24);
    const double D = static_cast<double>(s.dim), M = static_cast<double>(s.kv_seq);
    const double B = std::sqrt(D);
    const double weight = nodiv_ ? 1.0 : std::fabs(s.scale);
    const double ds = std::fabs(s.scale) * D * D * u;  // the content score's (qk_max 1)
    const double dp = std::sqrt(M) * (0.25 * ds + 8 * u + u * static_cast<double>(npos_ - 1));
    TermError err;
    err.abs = weight * (D * u * B) + u * (s_before + B);
    err.rms = weight * 2 * B * dp;
    err.reach = weight * B;
    err.model = fmt::format("(CoPE npos={} dp {:.2g}, |e| <= {:.3g})", npos_, dp, weight * B);
    return err;
  }

  double cap() const { return static_cast<double>(npos_ - 1); }
  // e at position p of the row whose q.pos_emb[t] are qpe.
  double cope_e(const std::vector<double>& qpe, double p) const {
    const double f = std::floor(p), w = p - f;
    const int64_t lo = static_cast<int64_t>(f), hi = std::min(lo + 1, npos_ - 1);
    return (1 - w) * qpe[static_cast<size_t>(lo)] + w * qpe[static_cast<size_t>(hi)];
  }

 private:
  void add_push(PushConstants& push) const {
    push.u32(static_cast<uint32_t>(npos_)).u32(nodiv_ ? 1u : 0u);
  }

  AttnShape shape_;
  int64_t npos_;
  bool nodiv_;
};

class AttnCopeCase : public AttnCase {
 public:
  explicit AttnCopeCase(const Params& p) : AttnCase(p) {
    add_term(std::make_unique<CopeTerm>(p, shape_));
    plan();
  }

 protected:
  std::string kernel() const override { return "cope"; }
};

class AttnCope : public Variant {
 public:
  std::string id() const override { return "attn.cope"; }
  std::string summary() const override {
    return "attention with CoPE's contextual positions: gated suffix sums over keys (Golovneva et al. 2024)";
  }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override {
    std::vector<ParamSpec> specs = attn_params();
    for (ParamSpec& s : specs) {
      if (s.key == "causal") s = shape::causal(true);
    }
    specs.push_back(int_param("npos", 64, "CoPE's positions: p = min(sum of gates, npos - 1); pos_emb [npos,D]"));
    specs.push_back(bool_param("cope_nodiv", true,
                               "true: s = scale q.k + e (the paper's listing); false: s = scale (q.k + e) (RAM's code)"));
    return specs;
  }
  void resolve(Params& p) const override {
    // Before the common checks (which name what the flash kernel lacks).
    const AttnMask mask(p);
    if (mask.on()) {
      throw CaseRejected(fmt::format("window={}, chunk={}, sink_tokens={}: CoPE's positions sum the gates of every "
                                     "key up to the query's last; encodings.md skips these masks for attn.cope",
                                     mask.window(), mask.chunk(), mask.sink_tokens()));
    }
    resolve_attn_params(p, 1.0 / std::sqrt(static_cast<double>(p.i("dim"))));
    const int64_t npos = p.i("npos");
    if (npos < 1 || npos > kCopeMaxPositions) {
      throw CaseRejected(fmt::format("npos={} must be in [1, {}]", npos, kCopeMaxPositions));
    }
    require_u32_items(p.i("batch") * p.i("heads") * p.i("seq") * npos, "cope_qpe");
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnCopeCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnCope);

}  // namespace
}  // namespace pebench
