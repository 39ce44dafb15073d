// What abs.multiplicative, abs.hierarchical and abs.complex_order are for,
// checked on the float64 reference and on the GPU's own outputs (read back
// from dumps), and how each rejects bad parameters, in a sweep and on the
// command line.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness/output/npy.h"
#include "test_util.h"

namespace pebench {
namespace {

using Axes = std::map<std::string, std::string>;

// Runs one case on the test device with dumps on; expects it validated and
// returns every tensor the GPU read and wrote.
TensorMap run_on_gpu(const std::string& variant, const Axes& axes) {
  RunOptions options;
  options.dump_dir = test::temp_dir("dump");
  const CaseResult r = test::run_case(variant, axes, options);
  EXPECT_EQ(r.status, CaseStatus::kOk) << status_name(r.status) << ": " << r.reason << " " << r.validation.detail;
  EXPECT_EQ(r.vk_validation_errors, 0u);
  TensorMap out;
  const auto folder = std::filesystem::path(options.dump_dir) / r.id;
  if (!std::filesystem::is_directory(folder)) {
    ADD_FAILURE() << "no dump at " << folder;
    return out;
  }
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".npy") continue;
    const std::string name = entry.path().stem().string();
    out.emplace(name, read_npy(entry.path().string(), name));
  }
  return out;
}

// The reason a single case was skipped, or a failure when it was not.
std::string skip_reason(const std::string& variant, const Axes& axes) {
  const auto results = test::run_cases(variant, axes);
  if (results.size() != 1) return "expected one case, got " + std::to_string(results.size());
  EXPECT_EQ(results[0].status, CaseStatus::kSkipped) << status_name(results[0].status);
  return results[0].reason;
}

// `pebench run` on one rejected case: non-zero exit and the reason printed.
void expect_binary_rejects(const std::string& variant, const std::vector<std::string>& args,
                           const std::string& message) {
  std::vector<std::string> cmd{"run", "--variant", variant, "--quiet", "--out", test::temp_dir("cli") + "/r.json"};
  cmd.insert(cmd.end(), args.begin(), args.end());
  const auto r = test::run_pebench(cmd);
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(message), std::string::npos) << "missing '" << message << "' in:\n" << r.out;
}

// Smallest Euclidean distance between two of the `rows` rows of length `d`.
double min_row_distance(const std::vector<std::vector<double>>& rows, int64_t* a = nullptr, int64_t* b = nullptr) {
  double best = INFINITY;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = i + 1; j < rows.size(); ++j) {
      double s = 0;
      for (size_t c = 0; c < rows[i].size(); ++c) s += (rows[i][c] - rows[j][c]) * (rows[i][c] - rows[j][c]);
      if (s < best) {
        best = s;
        if (a) *a = static_cast<int64_t>(i);
        if (b) *b = static_cast<int64_t>(j);
      }
    }
  }
  return std::sqrt(best);
}

// ---------------------------------------------------------------- multiplicative

TEST(AbsMultiplicative, TableLenDefaultsToTheLastPositionPlusOne) {
  const auto c = test::build_case("abs.multiplicative", {{"seq", "37"}, {"d_model", "6"}, {"offset", "5"}});
  EXPECT_EQ(c.params.i("table_len"), 42);
}

TEST(AbsMultiplicative, ScalesEachTokenByItsPositionsRowOnTheGpu) {
  // A table longer than needed and an offset: row offset + n, not n, scales token n.
  for (const char* d : {"6", "24"}) {
    SCOPED_TRACE(d);
    const int64_t dm = std::stoll(d), seq = 37, offset = 5;
    const auto t = run_on_gpu("abs.multiplicative", {{"batch", "2"},
                                                     {"seq", std::to_string(seq)},
                                                     {"d_model", d},
                                                     {"offset", std::to_string(offset)},
                                                     {"table_len", "64"},
                                                     {"dtype", "f32"}});
    const HostTensor &x = t.at("x"), &table = t.at("table"), &y = t.at("y");
    for (int64_t r = 0; r < 2 * seq; ++r) {
      for (int64_t c = 0; c < dm; ++c) {
        const double want = x.get(r * dm + c) * table.get((offset + r % seq) * dm + c);
        ASSERT_NEAR(y.get(r * dm + c), want, std::ldexp(std::fabs(want), -24)) << "row " << r << " channel " << c;
      }
    }
  }
}

TEST(AbsMultiplicative, RejectsPositionsPastTheTable) {
  const Axes axes{{"seq", "8"}, {"offset", "3"}, {"table_len", "10"}, {"d_model", "8"}};
  const std::string reason = skip_reason("abs.multiplicative", axes);
  EXPECT_NE(reason.find("table_len=10"), std::string::npos) << reason;
  EXPECT_NE(reason.find("offset=3"), std::string::npos) << reason;
  expect_binary_rejects("abs.multiplicative",
                        {"--seq", "8", "--param", "offset=3", "--param", "table_len=10", "--param", "d_model=8"},
                        "table_len=10");
}

// ---------------------------------------------------------------- hierarchical

// pe = y - x for every row of a reference computed in float64.
std::vector<std::vector<double>> reference_pe(const test::BuiltCase& c) {
  const Reference ref = c.reference();
  const HostTensor& x = c.tensors.at("x");
  const int64_t d = c.params.i("d_model");
  std::vector<std::vector<double>> pe;
  for (const auto& out : ref.outputs()) {
    pe.resize(out.rows.size());
    for (const auto& [r, y] : out.rows) {
      for (int64_t ch = 0; ch < d; ++ch) pe[static_cast<size_t>(r)].push_back(y[ch] - x.get(r * d + ch));
    }
  }
  return pe;
}

TEST(AbsHierarchical, FirstTableLenPositionsAreTheTableRows) {
  // The trained rows keep their meaning: for p < n0, pe(p) = table[p].
  const auto c = test::build_case("abs.hierarchical", {{"seq", "16"}, {"d_model", "6"}, {"table_len", "16"}});
  const auto pe = reference_pe(c);
  const HostTensor& table = c.tensors.at("table");
  for (int64_t p = 0; p < 16; ++p) {
    for (int64_t ch = 0; ch < 6; ++ch) EXPECT_NEAR(pe[p][ch], table.get(p * 6 + ch), 1e-14) << p << "," << ch;
  }
}

TEST(AbsHierarchical, EveryPositionBelowTableLenSquaredHasItsOwnRow) {
  // n0 = 24 rows serve 576 positions; none of them may share a row. The
  // closest pair is compared with the table's scale (std 0.02).
  const auto c = test::build_case("abs.hierarchical", {{"seq", "576"}, {"d_model", "6"}, {"table_len", "24"}});
  const auto pe = reference_pe(c);
  ASSERT_EQ(pe.size(), 576u);
  int64_t a = 0, b = 0;
  const double closest = min_row_distance(pe, &a, &b);
  EXPECT_GT(closest, 1e-3) << "positions " << a << " and " << b;
}

TEST(AbsHierarchical, AlphaOneHalfMakesSwappedDigitsCollide) {
  // Why alpha defaults to 0.4: with alpha = 0.5, u[q] and u[r] enter
  // symmetrically, so p = q n0 + r and r n0 + q share a row. The property
  // test above must be able to fail.
  const auto c = test::build_case("abs.hierarchical",
                                  {{"seq", "64"}, {"d_model", "6"}, {"table_len", "8"}, {"alpha", "0.5"}});
  const auto pe = reference_pe(c);
  for (int64_t q = 1; q < 8; ++q) {
    for (int64_t r = 0; r < q; ++r) {
      for (int64_t ch = 0; ch < 6; ++ch) EXPECT_NEAR(pe[q * 8 + r][ch], pe[r * 8 + q][ch], 1e-14);
    }
  }
}

TEST(AbsHierarchical, GpuMatchesTheTableBelowN0AndKeepsRowsDistinctAbove) {
  const int64_t n0 = 24, d = 8;
  const auto t = run_on_gpu("abs.hierarchical", {{"seq", std::to_string(n0 * n0)},
                                                 {"d_model", std::to_string(d)},
                                                 {"table_len", std::to_string(n0)},
                                                 {"dtype", "f32"}});
  const HostTensor &x = t.at("x"), &table = t.at("table"), &y = t.at("y");
  std::vector<std::vector<double>> pe(static_cast<size_t>(n0 * n0));
  for (int64_t p = 0; p < n0 * n0; ++p) {
    for (int64_t c = 0; c < d; ++c) pe[p].push_back(y.get(p * d + c) - x.get(p * d + c));
  }
  // y = x + pe rounded once in f32 (|y| < 1.2): y - x is pe to within 2^-24.
  for (int64_t p = 0; p < n0; ++p) {
    for (int64_t c = 0; c < d; ++c) ASSERT_NEAR(pe[p][c], table.get(p * d + c), std::ldexp(1.0, -23)) << p << "," << c;
  }
  int64_t a = 0, b = 0;
  EXPECT_GT(min_row_distance(pe, &a, &b), 1e-3) << "positions " << a << " and " << b;
}

TEST(AbsHierarchical, ValidatesUpToTheLastServedPosition) {
  // A 512-row table serves positions 0 .. 262143; run the last 37 of them.
  for (const char* dtype : {"f32", "f16"}) {
    const CaseResult r = test::run_case(
        "abs.hierarchical", {{"seq", "37"}, {"offset", "262107"}, {"d_model", "24"}, {"dtype", dtype}});
    EXPECT_EQ(r.status, CaseStatus::kOk) << r.reason << " " << r.validation.detail;
  }
}

TEST(AbsHierarchical, RejectsPositionsPastTableLenSquared) {
  const std::string reason = skip_reason("abs.hierarchical", {{"seq", "37"}, {"offset", "262108"}, {"d_model", "8"}});
  EXPECT_NE(reason.find("262144"), std::string::npos) << reason;
  EXPECT_NE(reason.find("table_len=512"), std::string::npos) << reason;
  expect_binary_rejects("abs.hierarchical", {"--seq", "17", "--param", "table_len=4", "--param", "d_model=8"},
                        "exceeds table_len^2 = 16 positions (table_len=4)");
}

TEST(AbsHierarchical, RejectsAlphaOne) {
  EXPECT_NE(skip_reason("abs.hierarchical", {{"alpha", "1"}, {"d_model", "8"}}).find("alpha=1"), std::string::npos);
  // 1 + 1e-9 is 1 in f32: the kernel would divide by zero.
  const std::string reason = skip_reason("abs.hierarchical", {{"alpha", "1.000000001"}, {"d_model", "8"}});
  EXPECT_NE(reason.find("alpha=1.000000001"), std::string::npos) << reason;
  expect_binary_rejects("abs.hierarchical", {"--param", "alpha=1", "--param", "d_model=8"}, "alpha=1");
}

// ---------------------------------------------------------------- complex order

TEST(AbsComplexOrder, MagnitudeIsTheAmplitude) {
  // |z| = |amp[t]| at every position: position only turns the phase.
  const auto c = test::build_case("abs.complex_order",
                                  {{"batch", "2"}, {"seq", "37"}, {"d_model", "6"}, {"vocab", "5"}, {"offset", "1000"}});
  const Reference ref = c.reference();
  const HostTensor &tokens = c.tensors.at("tokens"), &amp = c.tensors.at("amp");
  const auto& outs = ref.outputs();
  ASSERT_EQ(outs.size(), 2u);
  const auto& zr = outs[0].desc.name == "zr" ? outs[0] : outs[1];
  const auto& zi = outs[0].desc.name == "zr" ? outs[1] : outs[0];
  for (int64_t r = 0; r < 2 * 37; ++r) {
    const int64_t t = static_cast<int64_t>(tokens.get(r));
    ASSERT_GE(t, 0);
    ASSERT_LT(t, 5);
    for (int64_t ch = 0; ch < 6; ++ch) {
      const double re = zr.rows.at(r)[ch], im = zi.rows.at(r)[ch];
      EXPECT_NEAR(std::hypot(re, im), std::fabs(amp.get(t * 6 + ch)), 1e-14);
    }
  }
}

TEST(AbsComplexOrder, GpuMagnitudeIsTheAmplitude) {
  // Angle errors do not change |z|; only sin/cos (Vulkan: 2^-11 absolute
  // each) and the output rounding do.
  for (const char* dtype : {"f32", "f16"}) {
    for (const char* d : {"6", "24"}) {
      SCOPED_TRACE(std::string(dtype) + " d=" + d);
      const int64_t dm = std::stoll(d);
      const auto t = run_on_gpu("abs.complex_order",
                                {{"batch", "2"}, {"seq", "37"}, {"d_model", d}, {"vocab", "7"}, {"dtype", dtype}});
      const HostTensor &tokens = t.at("tokens"), &amp = t.at("amp"), &zr = t.at("zr"), &zi = t.at("zi");
      const double out_round = std::string(dtype) == "f16" ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
      for (int64_t r = 0; r < 2 * 37; ++r) {
        const int64_t tok = static_cast<int64_t>(tokens.get(r));
        for (int64_t c = 0; c < dm; ++c) {
          const double a = std::fabs(amp.get(tok * dm + c));
          const double mag = std::hypot(zr.get(r * dm + c), zi.get(r * dm + c));
          ASSERT_NEAR(mag, a, a * (2 * std::ldexp(1.0, -11) + 2 * out_round)) << "row " << r << " channel " << c;
        }
      }
    }
  }
}

// z(t, p + k) = z(t, p) e^(i freq[t] k): moving a word by k positions is a
// rotation by an angle that depends only on k (the paper's relative-order
// property). Returns the largest violation over rows n, n + k of a
// one-word vocabulary, relative to |amp|.
double shift_violation(const HostTensor& amp, const HostTensor& freq, int64_t d, int64_t seq, int64_t k,
                       const std::function<double(const char*, int64_t)>& z) {
  double worst = 0;
  for (int64_t n = 0; n + k < seq; ++n) {
    for (int64_t c = 0; c < d; ++c) {
      const double re = z("zr", n * d + c), im = z("zi", n * d + c);
      const double w = freq.get(c) * static_cast<double>(k);
      const double want_re = re * std::cos(w) - im * std::sin(w), want_im = re * std::sin(w) + im * std::cos(w);
      const double err = std::hypot(z("zr", (n + k) * d + c) - want_re, z("zi", (n + k) * d + c) - want_im);
      worst = std::max(worst, err / std::fabs(amp.get(c)));
    }
  }
  return worst;
}

TEST(AbsComplexOrder, ShiftingAWordRotatesItsEmbeddingByFreqTimesShiftEvenAtLargeOffsets) {
  // Near p = 2^31 a double angle would already be off by up to 2^-19 rad; the
  // reference must stay exact here for the GPU check below to mean anything.
  const int64_t d = 6, seq = 64, offset = (int64_t{1} << 31) - seq;
  const auto c = test::build_case("abs.complex_order", {{"seq", std::to_string(seq)},
                                                        {"d_model", std::to_string(d)},
                                                        {"vocab", "1"},
                                                        {"offset", std::to_string(offset)}});
  const Reference ref = c.reference();
  std::map<std::string, const Reference::Output*> by_name;
  for (const auto& o : ref.outputs()) by_name[o.desc.name] = &o;
  auto z = [&](const char* name, int64_t i) { return by_name.at(name)->rows.at(i / d)[i % d]; };
  for (int64_t k : {1, 7, 63}) {
    EXPECT_LT(shift_violation(c.tensors.at("amp"), c.tensors.at("freq"), d, seq, k, z), 1e-12) << "k=" << k;
  }
}

TEST(AbsComplexOrder, GpuKeepsTheShiftPropertyAtLargeOffsets) {
  // The kernel reduces freq p exactly, so the angle error (and this check's
  // bound: both rows' angle and sin/cos errors) is the same at p = 2^31 as
  // at p = 0. An f32 angle would be off by up to 10 * 2^31 * 2^-24 = 1280 rad.
  const int64_t seq = 64;
  for (const char* d : {"6", "24"}) {
    SCOPED_TRACE(d);
    const int64_t dm = std::stoll(d);
    const auto t = run_on_gpu("abs.complex_order", {{"seq", std::to_string(seq)},
                                                    {"d_model", d},
                                                    {"vocab", "1"},
                                                    {"offset", std::to_string((int64_t{1} << 31) - seq)},
                                                    {"dtype", "f32"}});
    auto z = [&](const char* name, int64_t i) { return t.at(name).get(i); };
    const double angle = 3 * 2 * M_PI * std::ldexp(1.0, -32) + 3 * M_PI * std::ldexp(1.0, -24);  // the kernel's
    const double bound = 2 * (angle + 2 * std::ldexp(1.0, -11)) + 4 * std::ldexp(1.0, -24);
    for (int64_t k : {1, 7, 63}) {
      EXPECT_LT(shift_violation(t.at("amp"), t.at("freq"), dm, seq, k, z), bound) << "k=" << k;
    }
  }
}

TEST(AbsComplexOrder, ToleranceDoesNotGrowWithPositionAndHoldsThere) {
  const Axes near_zero{{"seq", "37"}, {"d_model", "24"}};
  Axes far = near_zero;
  far["offset"] = std::to_string((int64_t{1} << 31) - 37);
  const auto a = test::build_case("abs.complex_order", near_zero);
  const auto b = test::build_case("abs.complex_order", far);
  EXPECT_EQ(a.impl->tolerance().nmse, b.impl->tolerance().nmse);
  for (const char* dtype : {"f32", "f16"}) {
    far["dtype"] = dtype;
    const CaseResult r = test::run_case("abs.complex_order", far);
    EXPECT_EQ(r.status, CaseStatus::kOk) << r.reason << " " << r.validation.detail;
    EXPECT_TRUE(r.validation.passed);
  }
}

TEST(AbsComplexOrder, RejectsBadVocab) {
  for (const char* v : {"0", "-3"}) {
    const std::string reason = skip_reason("abs.complex_order", {{"vocab", v}, {"d_model", "8"}});
    EXPECT_NE(reason.find(std::string("vocab=") + v), std::string::npos) << reason;
  }
  // Tokens are int32; and vocab x d_model must fit 32-bit indices.
  std::string reason = skip_reason("abs.complex_order", {{"vocab", "2147483648"}, {"d_model", "1"}});
  EXPECT_NE(reason.find("vocab=2147483648"), std::string::npos) << reason;
  EXPECT_NE(reason.find("vocab overflow"), std::string::npos) << reason;
  reason = skip_reason("abs.complex_order", {{"vocab", "10000000"}, {"d_model", "512"}});
  EXPECT_NE(reason.find("vocab=10000000"), std::string::npos) << reason;
  EXPECT_NE(reason.find("vocab overflow"), std::string::npos) << reason;
  expect_binary_rejects("abs.complex_order", {"--param", "vocab=0", "--param", "d_model=8"}, "vocab=0");
  expect_binary_rejects("abs.complex_order", {"--param", "vocab=10000000", "--param", "d_model=512"},
                        "vocab overflow");
}

}  // namespace
}  // namespace pebench
