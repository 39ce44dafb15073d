// attn.deberta: DeBERTa-v2/v3 disentangled attention (encodings.md
// section 3, HF DisentangledSelfAttention):
//   s = (q_i.k_j + q_i.kr[h,idx] + k_j.qr[h,idx]) / sqrt(3D),
//   idx = clamp(log_bucket(i' - j) + S, 0, 2S-1)
// (c2p and p2c use the same idx, as HF does), S = position_buckets (256),
// P = max_relative_positions (512); default not causal, causal allowed.
//
// Cost: c2p depends on (row, idx) only and p2c on (key, idx) only, so where
// the R rows of kr/qr that the case's distances reach are fewer than the
// keys (c2p) or the queries (p2c), a pre-pass computes them once as tables
// (attn_deberta_rel.comp, HF's two matmuls) and the kernels gather one
// float per term and score: at N = M = 2048 (R = 2S = 512) that is
// (N + M) R D multiply-adds instead of 2 N M D. Otherwise (decode, short
// sequences) flash computes the term per score from the kr/qr row. naive
// always uses both tables, as HF does. deberta_hooks.glsl reads either.
// CPU devices take a table even where it holds more dots than the scores
// need, up to kCpuTableDotsPerScore of them a score: a dot per score reads
// its kr/qr row one lane at a time (docs/lavapipe.md), a table's dots share
// their reads across rows (the choice: Case::configure).
//
// idx itself comes from a first pre-pass (attn_deberta_idx.comp): the
// table deberta_idx [M+N-1] of rel_buckets.glsl's exact deberta_idx per
// distance, from the host's threshold list, so the kernels use the GPU's
// bucket function; the host's deberta_idx_table serves the reference only.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/contract/registry.h"
#include "suites/attn/attn_common.h"
#include "suites/common/rel_buckets.h"

namespace pebench {
namespace {

// A table is one storage buffer: at most Vulkan's minimum maxStorageBufferRange
// (and the device's, where the case knows its device).
constexpr int64_t kTableBytes = int64_t{1} << 27;
// CPU devices: a table's dots a score may save at most. Measured on lavapipe
// (f32, H 4, D 64, flash): at M = 512 the p2c table (R about 320 rows a key)
// ran 5 against 7 ms at N = 64 (5 dots a score), 4 against 4 ms at N = 32
// (10), 4 against 2 ms at N = 16; both tables at N = M = 128 (R = 255) 2
// against 5 ms, at N = M = 500 (H 8) 39 against 148 ms.
constexpr int64_t kCpuTableDotsPerScore = 8;
// Pre-pass: split the columns until about this many workgroups exist.
constexpr int64_t kTableTargetGroups = 128;
constexpr int64_t kTableMinColumns = 16;
// CPU devices: rows of x per pre-pass invocation, at most. Each kr/qr chunk
// an invocation loads (a per-lane gather on llvmpipe) serves that many
// rows. Measured on lavapipe, pre-pass alone, N = M = 2048, H 8, D 64, f32:
// 8 rows 78-79 ms, 16 rows 52-53 ms, 32 rows 86-89 ms (the registers no
// longer fit); N = M = 1024, D 32: 8 rows 25-27 ms, 16 rows 18 ms.
constexpr int64_t kTableMaxCpuRows = 16;

// The kr/qr rows the case's distances reach: idx is non-decreasing in
// delta = i' - j, which runs from 1 - N to M - 1.
struct RelRows {
  int64_t lo, width;
};
RelRows rel_rows(const Params& p) {
  const int S = int_param_value(p, "position_buckets"), P = int_param_value(p, "max_relative_positions");
  const int64_t lo = deberta_idx(1 - p.i("seq"), S, P), hi = deberta_idx(p.i("kv_seq") - 1, S, P);
  return {lo, hi - lo + 1};
}

// Which terms come from tables.
struct Tables {
  bool c2p, p2c;
};
int64_t c2p_bytes(const Params& p, int64_t width) { return p.i("batch") * p.i("heads") * p.i("seq") * width * 4; }
int64_t p2c_bytes(const Params& p, int64_t width) { return p.i("batch") * p.i("heads") * p.i("kv_seq") * width * 4; }
// The device a flash case runs on, as far as the tables go; without one
// (plans), a GPU's with Vulkan's minimum storage range.
struct TableDevice {
  bool cpu = false;
  int64_t max_bytes = kTableBytes;
};
// c2p computes R dots a query row, saving M (one a key); p2c R a key,
// saving N.
Tables choose_tables(const Params& p, const TableDevice& dev = {}) {
  if (p.impl() == "naive") return {true, true};
  const int64_t width = rel_rows(p).width, n = p.i("seq"), m = p.i("kv_seq");
  const int64_t dots = dev.cpu ? kCpuTableDotsPerScore : 1;
  const int64_t max_bytes = std::min(kTableBytes, dev.max_bytes);
  return {width < dots * m && c2p_bytes(p, width) <= max_bytes, width < dots * n && p2c_bytes(p, width) <= max_bytes};
}

// DeBERTa's c2p and p2c terms (deberta_hooks.glsl), with their pre-passes.
class DisentangledTerms : public AttnTerm {
 public:
  DisentangledTerms(const Params& p, const AttnShape& s)
      : params_(p),
        shape_(s),
        flash_(p.impl() == "flash"),
        buckets_(static_cast<int>(p.i("position_buckets"))),
        max_position_(static_cast<int>(p.i("max_relative_positions"))),
        rows_(rel_rows(p)),
        tables_(choose_tables(p)),
        thresholds_(deberta_log_thresholds(buckets_, max_position_, deberta_idx_threshold_count(buckets_))),
        idx_(deberta_idx_table(s.seq, s.kv_seq, buckets_, max_position_)) {}

  // The tables the device is better off with (choose_tables); the case
  // plans again after this.
  void use_device(const LaunchPlanner& launch) {
    tables_ = choose_tables(params_, {launch.is_cpu(), static_cast<int64_t>(launch.max_storage_buffer_range())});
  }

  bool record_prepass(Recorder& rec, const PrepassTarget&) const override {
    record_idx(rec);
    // The c2p/p2c tables do not read idx, so the case's one barrier covers all three.
    if (tables_.c2p) record_table(rec, "q", "kr", "c2p", shape_.heads, shape_.seq);
    if (tables_.p2c) record_table(rec, "k", "qr", "p2c", shape_.kv_heads, shape_.kv_seq);
    return true;
  }

  std::vector<TensorDesc> tensors() const override {
    const AttnShape& s = shape_;
    const int64_t two_s = 2 * int64_t{buckets_};
    // An unused table is a placeholder element: the kernels always bind it.
    auto table = [&](const char* name, bool used, int64_t rows, const char* doc) {
      return used ? tensor(name, TensorRole::kScratch, DType::kF32, {s.batch, s.heads, rows, rows_.width}, doc)
                  : tensor(name, TensorRole::kScratch, DType::kF32, {1}, "[1] (unused)");
    };
    return {tensor("kr", TensorRole::kInput, s.dtype, {s.heads, two_s, s.dim}, "[H,2S,D]"),
            tensor("qr", TensorRole::kInput, s.dtype, {s.heads, two_s, s.dim}, "[H,2S,D]"),
            rel_thresholds_tensor("deberta_thresholds", thresholds_),
            rel_table_tensor("deberta_idx", s.seq, s.kv_seq),
            table("c2p", tables_.c2p, s.seq, "[B,H,N,R]"),
            table("p2c", tables_.p2c, s.kv_seq, "[B,H,M,R]")};
  }
  std::vector<std::string> bindings() const override { return {"deberta_idx", "kr", "qr", "c2p", "p2c"}; }
  // The CPU kernel's table entries: one per lane and score in the band.
  std::vector<TexelTensor> flash_cpu_texel_tensors() const override {
    return {{"c2p", TexelFormat::kR32f}, {"p2c", TexelFormat::kR32f}};
  }
  void fill(TensorMap& t, Rng& rng) const override {
    t.at("kr").fill_uniform(rng, -1.0, 1.0);
    t.at("qr").fill_uniform(rng, -1.0, 1.0);
    store_rel_thresholds(t.at("deberta_thresholds"), thresholds_);
  }
  void push(PushConstants& push) const override {
    push.u32(static_cast<uint32_t>(rows_.lo)).u32(static_cast<uint32_t>(rows_.width)).u32(2u * buckets_);
  }
  // With both tables: past these distances idx is the first or the last kr/qr
  // row, so a far range's c2p entry is one per row slot and its p2c entry
  // needs no idx (deberta_hooks.glsl).
  std::optional<RelFarDistances> flash_cpu_far() const override {
    if (!flash_ || !tables_.c2p || !tables_.p2c) return std::nullopt;
    return deberta_far_distances(buckets_, max_position_);
  }
  // MHA with far ranges: a far key's p2c entry serves the whole workgroup,
  // staged with K and V (deberta_hooks.glsl, DEB_STAGE_P2C). On lavapipe it
  // halves the tile (32 keys): faster still (docs/attention-kernels.md).
  int64_t flash_cpu_staged_chunks() const override { return flash_cpu_far() && shape_.group() == 1 ? 1 : 0; }
  // naive always reads both tables.
  std::vector<NamedConstant> spec_constants() const override {
    if (!flash_) return {};
    return {{"DEB_C2P_TABLE", tables_.c2p ? 1u : 0u}, {"DEB_P2C_TABLE", tables_.p2c ? 1u : 0u}};
  }
  // Without the p2c table the score term dots the key's chunks inside the
  // causal branch (attn_k_chunk_at: every lane reads every chunk), and the
  // core's shuffled reads no longer share those loads: 25% slower at N = 128
  // (measured before CPU devices took the p2c table there).
  bool flash_cpu_tile_shuffle() const override { return tables_.p2c; }

  // Reference: both terms per score from the pair's q and k rows, straight
  // from the definition.
  void add_reference(const TensorMap& t, AttnRefTerms& terms) const override {
    terms.add_score([this, kr = t.at("kr").to_f64(), qr = t.at("qr").to_f64()](int64_t h, int64_t qpos, int64_t kpos,
                                                                               const double* q, const double* k) {
      const int64_t D = shape_.dim;
      const int64_t row = h * 2 * buckets_ + idx_[static_cast<size_t>(kpos - qpos + shape_.kv_seq - 1)];
      const double* a = &kr[static_cast<size_t>(row * D)];
      const double* b = &qr[static_cast<size_t>(row * D)];
      double c2p = 0, p2c = 0;
      for (int64_t c = 0; c < D; ++c) {
        c2p += q[c] * a[c];
        p2c += k[c] * b[c];
      }
      return shape_.scale * (c2p + p2c);
    });
  }
  double reference_cost_per_key() const override { return 8.0 * static_cast<double>(shape_.dim); }

  double flops() const override {
    // The two terms where they are cheapest, whichever implementation runs:
    // q.kr for every (row, kr row in use) or every score, whichever is
    // fewer (likewise k.qr per key), D multiply-adds each; then two adds per
    // score.
    const AttnShape& s = shape_;
    const double bh = static_cast<double>(s.batch * s.heads), D = static_cast<double>(s.dim);
    const double c2p = bh * static_cast<double>(s.seq) * static_cast<double>(std::min(rows_.width, s.kv_seq));
    const double p2c = bh * static_cast<double>(s.kv_seq) * static_cast<double>(std::min(rows_.width, s.seq));
    return 2 * D * (c2p + p2c) + 2 * s.scores();
  }

  TermError score_error(double s_before) const override {
    // Each position term is an f32 dot product of D terms with entries in
    // [-1, 1] after scaling one side: scale D^2 u + scale D u (as q.k's).
    // The three terms are summed (two roundings of at most s_before + 2
    // scale D); the two reach 2 scale D together.
    const double u = std::ldexp(1.0, -24);
    const double D = static_cast<double>(shape_.dim), sc = std::fabs(shape_.scale);
    TermError err;
    err.abs = 2 * (sc * D * D * u + sc * D * u) + 2 * u * (s_before + 2 * sc * D);
    err.reach = 2 * sc * D;
    err.model = "(c2p, p2c dots 2 scale D^2 u, sums)";
    return err;
  }

 private:
  // The idx table (attn_deberta_idx.comp): entry e = deberta_idx(delta =
  // (M-1) - e), the layout of deberta_idx_table.
  void record_idx(Recorder& rec) const {
    const AttnShape& s = shape_;
    const int64_t length = s.kv_seq + s.seq - 1;
    PushConstants push;
    push.u32(static_cast<uint32_t>(length))
        .u32(static_cast<uint32_t>(s.kv_seq))
        .u32(static_cast<uint32_t>(buckets_))
        .u32(static_cast<uint32_t>(thresholds_.size()));
    rec.dispatch(grid_dispatch(rec, "attn_deberta_idx", {"deberta_thresholds", "deberta_idx"}, length, push));
  }

  // One table (attn_deberta_rel.comp): scale x.rel[h, lo + w] for every row
  // of x (q or k, `x_heads` heads of `rows` rows) and query head h.
  void record_table(Recorder& rec, const std::string& x, const std::string& rel, const std::string& out,
                    int64_t x_heads, int64_t rows) const {
    const AttnShape& s = shape_;
    // Rows per invocation: on CPU devices as many rows of x as the flash
    // kernel's chunk budget holds of q (x is all this pass keeps; flash keeps
    // the accumulator besides), so its compile time stays alike.
    const int64_t d4 = ceil_div(s.dim, 4);
    const bool cpu = rec.launch().is_cpu();
    const uint32_t slots =
        cpu ? static_cast<uint32_t>(std::clamp<int64_t>(flash_cpu_row_budget(s, 1) / d4, 1, kTableMaxCpuRows)) : 1u;
    const uint32_t wg = rec.launch().workgroup_size(cpu ? 128 / slots : 64);
    const int64_t row_tiles = ceil_div(rows, int64_t{wg} * slots);
    const int64_t row_groups = row_tiles * s.batch * s.heads;
    const int64_t chunks = std::clamp<int64_t>(ceil_div(kTableTargetGroups, row_groups), 1,
                                               std::max<int64_t>(1, rows_.width / kTableMinColumns));
    // Columns in fours where the width allows (the shader's COLS4).
    const bool cols4 = rows_.width % 4 == 0;
    const int64_t columns = cols4 ? ceil_div(ceil_div(rows_.width, chunks), 4) * 4 : ceil_div(rows_.width, chunks);
    // One loop over the columns per invocation (2S <= 8192 of them).
    if (LaunchPlanner::loop_cost(static_cast<uint64_t>(columns)) > rec.launch().max_loop_iterations()) {
      throw Unsupported(fmt::format("deberta: {} table columns per invocation exceed the loop budget", columns));
    }
    PushConstants push;
    push.u32(static_cast<uint32_t>(s.heads))
        .u32(static_cast<uint32_t>(x_heads))
        .u32(static_cast<uint32_t>(rows))
        .u32(2u * buckets_)
        .u32(static_cast<uint32_t>(rows_.lo))
        .u32(static_cast<uint32_t>(rows_.width))
        .u32(static_cast<uint32_t>(columns))
        .f32(static_cast<float>(s.scale));
    // CPU devices, four columns at a time: each lane reads its share of the
    // rel rows' chunks and shuffles hand them round (the shader's shuffle
    // build).
    const SubgroupInfo& sg = rec.subgroup();
    const bool shuffle = cpu && cols4 &&
                         cpu_shuffles_fit((sg.supported_operations & kSubgroupFeatureShuffle) != 0, sg.size,
                                          sg.min_size, wg);
    Dispatch d;
    d.shader = shuffle ? "attn_deberta_rel_shuffle" : "attn_deberta_rel";
    d.buffers = {x, rel, out};
    // GPUs: a row longer than 32 chunks held in registers spills (navi21, D 256).
    const bool x_in_regs = cpu || d4 <= 32;
    d.constant("local_size_x", wg)
        .constant("HEAD_DIM", static_cast<uint32_t>(s.dim))
        .constant("VEC4", s.dim % 4 == 0 ? 1u : 0u)
        .constant("ROWS", slots)
        .constant("X_IN_REGS", x_in_regs ? 1u : 0u)
        .constant("COLS4", cols4 ? 1u : 0u);
    if (shuffle) d.constant("SHUFFLE", sg.size);
    d.push = push;
    d.groups = {static_cast<uint32_t>(row_tiles), static_cast<uint32_t>(s.batch * s.heads),
                static_cast<uint32_t>(ceil_div(rows_.width, columns))};
    rec.dispatch(d);
  }

  Params params_;
  AttnShape shape_;
  bool flash_;
  int buckets_, max_position_;
  RelRows rows_;
  Tables tables_;
  std::vector<uint32_t> thresholds_;  // deberta_log_thresholds for idx, for the pre-pass
  std::vector<int32_t> idx_;          // deberta_idx_table (reference): entry j - i' + M - 1
};

class AttnDebertaCase : public AttnCase {
 public:
  explicit AttnDebertaCase(const Params& p)
      : AttnCase(p), terms_(add_term(std::make_unique<DisentangledTerms>(p, shape_))) {
    plan();
  }
  void configure(const LaunchPlanner& launch) override {
    terms_.use_device(launch);
    plan();
  }

 protected:
  std::string kernel() const override { return "deberta"; }

 private:
  DisentangledTerms& terms_;
};

class AttnDeberta : public Variant {
 public:
  std::string id() const override { return "attn.deberta"; }
  std::string summary() const override { return "DeBERTa disentangled attention (c2p and p2c, log buckets)"; }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override {
    std::vector<ParamSpec> specs = attn_params("1/sqrt(3*dim)");
    specs.push_back(int_param("position_buckets", 256, "DeBERTa bucket size S (kr/qr have 2S rows per head)"));
    specs.push_back(int_param("max_relative_positions", 512, "DeBERTa max position P of the log buckets"));
    return specs;
  }
  void resolve(Params& p) const override {
    resolve_attn_params(p, 1.0 / std::sqrt(3.0 * static_cast<double>(p.i("dim"))));
    check_deberta_params(int_param_value(p, "position_buckets"), int_param_value(p, "max_relative_positions"));
    rel_table_length(p.i("seq"), p.i("kv_seq"));
    require_u32_items(p.i("heads") * 2 * p.i("position_buckets") * p.i("dim"), "kr");
    const Tables t = choose_tables(p);
    const int64_t width = rel_rows(p).width;
    for (const auto& [used, bytes, what] : {std::make_tuple(t.c2p, c2p_bytes(p, width), "c2p [B,H,N,R]"),
                                            std::make_tuple(t.p2c, p2c_bytes(p, width), "p2c [B,H,M,R]")}) {
      if (used && bytes > kTableBytes) {
        throw CaseRejected(
            fmt::format("naive: the {} table (R={}) needs {} bytes, more than a storage buffer's "
                        "guaranteed {}",
                        what, width, bytes, kTableBytes));
      }
    }
  }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnDebertaCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnDeberta);

}  // namespace
}  // namespace pebench
