// The recurrences of encodings.md section 1 on the test device:
// abs.recurrent's two impls against the closed form and each other, within
// the error bound of docs/recurrence-error.md (implemented here again from
// that document, not taken from the suite), and abs.floater's RK4 against
// float64 and against ODEs with known solutions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include "harness/output/npy.h"
#include "test_util.h"

namespace pebench {
namespace {

constexpr double kU = 0x1.0p-24;  // f32 unit roundoff
const long double kTwoPi = 2.0L * 3.14159265358979323846264338327950288L;

// docs/recurrence-error.md: the GPU's rotation of pair t is (sin th, cos th)
// rounded to f32; its exact powers drift from R^p by |rho^p e^{i p dth} - 1|,
// and each impl's P[p] depends on at most p rounded complex products of
// error <= 2 sqrt(2) u each.
struct PairModel {
  long double th, dth, log_rho;
  explicit PairModel(long double theta) : th(theta) {
    const float s = static_cast<float>(std::sin(static_cast<double>(theta)));
    const float c = static_cast<float>(std::cos(static_cast<double>(theta)));
    dth = std::atan2(static_cast<long double>(s), static_cast<long double>(c)) - theta;
    log_rho = 0.5L * std::log(static_cast<long double>(s) * s + static_cast<long double>(c) * c);
  }
  double growth(double p) const { return std::max(1.0, static_cast<double>(std::exp(p * log_rho))); }
  double drift(double p) const {
    const long double a = std::expm1(p * log_rho), h = std::sin(0.5L * p * dth);
    return static_cast<double>(std::sqrt(a * a + 4 * (1 + a) * h * h));
  }
  double rounding(double p) const { return 2 * std::sqrt(2.0) * p * kU * growth(p); }
  double bound(double p) const { return drift(p) + rounding(p); }
};

struct RecurrentShape {
  int64_t d, seq, offset, batch;
  std::string dtype;
};

std::string label(const RecurrentShape& s) {
  return "d" + std::to_string(s.d) + "_n" + std::to_string(s.seq) + "_off" + std::to_string(s.offset) + "_b" +
         std::to_string(s.batch) + "_" + s.dtype;
}

// Runs one impl through the harness (its own validation included) and
// returns the pos it wrote.
HostTensor run_recurrent(const RecurrentShape& s, const std::string& impl) {
  RunOptions options;
  options.dump_dir = test::temp_dir(label(s) + "_" + impl);
  const CaseResult r = test::run_case("abs.recurrent",
                                      {{"impl", impl},
                                       {"dtype", s.dtype},
                                       {"batch", std::to_string(s.batch)},
                                       {"seq", std::to_string(s.seq)},
                                       {"d_model", std::to_string(s.d)},
                                       {"offset", std::to_string(s.offset)}},
                                      options);
  EXPECT_EQ(r.status, CaseStatus::kOk) << impl << ": " << r.reason;
  EXPECT_TRUE(r.validation.passed) << r.validation.detail;
  EXPECT_EQ(r.vk_validation_errors, 0u);
  HostTensor pos = read_npy(options.dump_dir + "/" + r.id + "/pos.npy");
  std::filesystem::remove_all(options.dump_dir);  // up to ~50 MB a case
  return pos;
}

class RecurrentBound : public ::testing::TestWithParam<RecurrentShape> {};

TEST_P(RecurrentBound, EachImplWithinItsBoundAndTheyAgree) {
  const RecurrentShape s = GetParam();
  const HostTensor seq = run_recurrent(s, "sequential");
  const HostTensor scan = run_recurrent(s, "scan");
  ASSERT_EQ(seq.numel(), s.seq * s.d);
  ASSERT_EQ(scan.numel(), s.seq * s.d);

  const double out = s.dtype == "f16" ? 0x1.0p-11 : kU;  // rounding of the stored pos
  std::vector<PairModel> pairs;
  for (int64_t t = 0; t < s.d / 2; ++t) pairs.emplace_back(std::pow(10000.0L, -2.0L * t / s.d));

  double worst_seq = 0, worst_scan = 0, worst_bound = 0, last_seq = 0, last_scan = 0;
  int64_t failures = 0;
  for (int64_t n = 0; n < s.seq; ++n) {
    const double p = static_cast<double>(s.offset + n);
    double neighbour_gap = 0, row_bound = 0;  // does an off-by-one position fail?
    for (int64_t t = 0; t < s.d / 2; ++t) {
      const PairModel& m = pairs[static_cast<size_t>(t)];
      const long double a = std::fmod(static_cast<long double>(p) * m.th, kTwoPi);
      const double sn = static_cast<double>(std::sin(a)), cs = static_cast<double>(std::cos(a));
      const int64_t i = n * s.d + 2 * t;
      const double e_seq = std::hypot(seq.get(i) - sn, seq.get(i + 1) - cs);
      const double e_scan = std::hypot(scan.get(i) - sn, scan.get(i + 1) - cs);
      const double e_both = std::hypot(seq.get(i) - scan.get(i), seq.get(i + 1) - scan.get(i + 1));
      const double bound = m.bound(p) + std::sqrt(2.0) * out;
      const double agree = 2 * m.rounding(p) + 2 * std::sqrt(2.0) * out;
      if (e_seq > bound || e_scan > bound || e_both > agree) {
        if (failures++ < 5) {
          ADD_FAILURE() << "p=" << p << " t=" << t << ": sequential " << e_seq << ", scan " << e_scan << " (bound "
                        << bound << "), |sequential - scan| " << e_both << " (bound " << agree << ")";
        }
      }
      if (n == s.seq - 1) {
        last_seq = std::max(last_seq, e_seq);
        last_scan = std::max(last_scan, e_scan);
      }
      worst_seq = std::max(worst_seq, e_seq);
      worst_scan = std::max(worst_scan, e_scan);
      worst_bound = std::max(worst_bound, bound);
      row_bound = std::max(row_bound, bound);
      const long double b = std::fmod(static_cast<long double>(p + 1) * m.th, kTwoPi);
      neighbour_gap = std::max(neighbour_gap, std::hypot(scan.get(i) - static_cast<double>(std::sin(b)),
                                                         scan.get(i + 1) - static_cast<double>(std::cos(b))));
    }
    if (neighbour_gap <= row_bound) {
      ADD_FAILURE() << "the bound at p=" << p << " (" << row_bound << ") would accept position p+1";
      break;
    }
  }
  EXPECT_EQ(failures, 0);
  const int64_t p_last = s.offset + s.seq - 1;
  std::cout << "[ measured ] " << label(s) << ": max |err| over p in [" << s.offset << ", " << p_last
            << "]: sequential " << worst_seq << ", scan " << worst_scan << ", bound " << worst_bound
            << "; at p=" << p_last << ": sequential " << last_seq << " (" << last_seq / (p_last * kU) << " p u), scan "
            << last_scan << " (" << last_scan / (p_last * kU) << " p u)\n";
}

// d=1024 with positions up to 65535 (windows of 4096), multi-dispatch runs
// (llvmpipe's loop limit: 65536 positions at batch 1, an offset past 60000),
// odd N, tiny d, f16, and d=2 up to about a million positions, near where
// the bound reaches the variant's limit of 0.25.
INSTANTIATE_TEST_SUITE_P(
    Shapes, RecurrentBound,
    ::testing::Values(RecurrentShape{1024, 4096, 0, 1, "f32"}, RecurrentShape{1024, 4096, 12288, 1, "f32"},
                      RecurrentShape{1024, 4096, 28672, 1, "f32"}, RecurrentShape{1024, 4096, 61440, 1, "f32"},
                      RecurrentShape{1024, 37, 0, 2, "f16"}, RecurrentShape{64, 257, 70001, 3, "f32"},
                      RecurrentShape{8, 65536, 0, 1, "f32"}, RecurrentShape{6, 999, 5, 2, "f16"},
                      RecurrentShape{2, 1000000, 0, 1, "f32"}),
    [](const auto& info) { return label(info.param); });

TEST(Recurrent, TheBoundAtTheLimitStillSeparatesPositions) {
  // Where the variant stops accepting positions (bound 0.25), an off-by-one
  // at the highest frequency (|2 sin(1/2)| = 0.96) is still far outside it.
  PairModel top(1.0L);
  EXPECT_LT(top.bound(1.1e6), 0.25 + 0.05);
  EXPECT_GT(2 * std::sin(0.5), 3 * top.bound(1.1e6));
}

std::vector<CaseResult> sweep(const std::string& variant, const std::string& key, const std::string& value) {
  return test::run_cases(variant, {{key, value}, {"seq", "8"}});
}

void expect_rejected(const std::string& variant, const std::string& key, const std::string& value,
                     const std::string& named) {
  SCOPED_TRACE(variant + " " + key + "=" + value);
  const auto results = sweep(variant, key, value);
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) {
    EXPECT_EQ(r.status, CaseStatus::kSkipped) << r.reason;
    EXPECT_NE(r.reason.find(named), std::string::npos) << r.reason;
  }
  const std::string out = test::temp_dir("rejected") + "/report.json";
  const auto run = test::run_pebench(
      {"run", "--variant", variant, "--seq", "8", "--param", key + "=" + value, "--out", out, "--quiet"});
  EXPECT_NE(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find(named), std::string::npos) << run.out;
}

TEST(Recurrent, RejectsBadParametersNamingTheValue) {
  expect_rejected("abs.recurrent", "d_model", "7", "d_model=7");
  expect_rejected("abs.recurrent", "offset", "-1", "offset=-1");
  expect_rejected("abs.recurrent", "base", "1", "base=1");
  // Past the documented bound's limit the recurrence no longer encodes positions.
  expect_rejected("abs.recurrent", "offset", "3000000", "offset=3000000");
}

// FLOATER through the harness: the GPU trajectory against the float64 RK4
// (the harness's validation), with several dispatches where the loop limit
// asks for them, and P(0) = p0 exactly.
TEST(Floater, GpuTrajectoryMatchesFloat64Rk4) {
  struct Shape {
    std::string d, seq, offset, substeps, dtype;
  };
  for (const Shape& s :
       {Shape{"64", "256", "0", "5", "f32"}, Shape{"7", "300", "0", "2", "f32"}, Shape{"1024", "4", "3", "5", "f32"},
        Shape{"30", "41", "0", "5", "f16"}, Shape{"1", "9", "0", "1", "f16"}}) {
    SCOPED_TRACE("d=" + s.d + " seq=" + s.seq + " offset=" + s.offset + " " + s.dtype);
    RunOptions options;
    options.dump_dir = test::temp_dir("floater_d" + s.d + "_" + s.dtype);
    const CaseResult r = test::run_case("abs.floater",
                                        {{"d_model", s.d},
                                         {"seq", s.seq},
                                         {"offset", s.offset},
                                         {"substeps", s.substeps},
                                         {"dtype", s.dtype},
                                         {"batch", "2"}},
                                        options);
    ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
    EXPECT_TRUE(r.validation.passed) << r.validation.detail;
    EXPECT_EQ(r.validation.rows_checked, r.validation.rows_total);
    EXPECT_EQ(r.vk_validation_errors, 0u);
    EXPECT_LE(r.validation.tolerance.nmse, s.dtype == "f16" ? 1e-3 : 1e-6);
    if (s.offset == "0") {
      const HostTensor pos = read_npy(options.dump_dir + "/" + r.id + "/pos.npy");
      const HostTensor p0 = read_npy(options.dump_dir + "/" + r.id + "/p0.npy");
      for (int64_t j = 0; j < p0.numel(); ++j) EXPECT_EQ(pos.get(j), p0.get(j)) << "j=" << j;
    }
    std::filesystem::remove_all(options.dump_dir);
  }
}

// The float64 reference on ODEs with known solutions (inputs overwritten
// after the case's own generator ran).
TEST(Floater, ReferenceSolvesKnownOdes) {
  const int64_t d = 3, N = 50;
  auto built = test::build_case("abs.floater", {{"d_model", "3"}, {"seq", "50"}, {"dtype", "f32"}});
  TensorMap& t = built.tensors;
  auto set_all = [](HostTensor& h, double v) {
    for (int64_t i = 0; i < h.numel(); ++i) h.set(i, v);
  };
  const double dt = 0.01;

  // No hidden layer (w1 = b1 = 0): h = w2[:, d] t + b2, so P(t) = p0 + b2 t +
  // w2[:, d] t^2 / 2, which RK4 (Simpson's rule here) integrates exactly.
  set_all(t.at("w1"), 0.0);
  set_all(t.at("b1"), 0.0);
  for (int64_t j = 0; j < d; ++j) {
    for (int64_t k = 0; k < d; ++k) t.at("w2").set(j * (d + 1) + k, 0.25);
    t.at("w2").set(j * (d + 1) + d, 0.5 * static_cast<double>(j + 1));
    t.at("b2").set(j, -0.25 * static_cast<double>(j));
  }
  {
    const Reference ref = built.reference();
    const auto& pos = ref.outputs()[0].desc.name == "pos" ? ref.outputs()[0] : ref.outputs()[1];
    ASSERT_EQ(pos.desc.name, "pos");
    ASSERT_EQ(static_cast<int64_t>(pos.rows.size()), N);
    for (int64_t n = 0; n < N; ++n) {
      const double tn = static_cast<double>(n) * dt;
      for (int64_t j = 0; j < d; ++j) {
        const double want = t.at("p0").get(j) + t.at("b2").get(j) * tn + t.at("w2").get(j * (d + 1) + d) * tn * tn / 2;
        EXPECT_NEAR(pos.rows.at(n)[static_cast<size_t>(j)], want, 1e-13) << "n=" << n << " j=" << j;
      }
    }
  }

  // dP/dt = -P: w1 = I and b1 = 10 keep relu in its linear part, w2 = -I
  // and b2 = 10 cancel the shift; P(t) = p0 e^-t, and RK4's error at
  // step 0.002 is O(1e-13) over t <= 0.5.
  set_all(t.at("w1"), 0.0);
  set_all(t.at("w2"), 0.0);
  for (int64_t j = 0; j < d; ++j) {
    t.at("w1").set(j * (d + 1) + j, 1.0);
    t.at("w2").set(j * (d + 1) + j, -1.0);
    t.at("b1").set(j, 10.0);
    t.at("b2").set(j, 10.0);
  }
  {
    const Reference ref = built.reference();
    for (const auto& out : ref.outputs()) {
      if (out.desc.name != "pos") continue;
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t j = 0; j < d; ++j) {
          const double want = t.at("p0").get(j) * std::exp(-static_cast<double>(n) * dt);
          EXPECT_NEAR(out.rows.at(n)[static_cast<size_t>(j)], want, 1e-11) << "n=" << n << " j=" << j;
        }
      }
    }
  }
}

TEST(Floater, RejectsBadParametersNamingTheValue) {
  expect_rejected("abs.floater", "substeps", "0", "substeps=0");
  expect_rejected("abs.floater", "dt", "0", "dt=0");
  expect_rejected("abs.floater", "dt", "-0.01", "dt=-0.01");
  expect_rejected("abs.floater", "offset", "-1", "offset=-1");
}

}  // namespace
}  // namespace pebench
