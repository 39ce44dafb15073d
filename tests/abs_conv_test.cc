// What abs.conv and abs.conv_grouped are for, beyond validating against
// their references (variants_test.cc): zero padding at the borders, the
// grouped conv's channel groups, the accuracy of the erf GELU, tiling within
// a small device's limits and llvmpipe's loop limit, the cost formulas, and
// clean rejection of bad parameters.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "harness/contract/registry.h"
#include "harness/engine/sweep.h"
#include "harness/output/dump.h"
#include "harness/output/npy.h"
#include "test_util.h"

namespace pebench {
namespace {

using Axes = std::map<std::string, std::string>;
using Fill = std::function<void(const Case& inner, TensorMap& t, Rng& rng)>;

// A case whose inputs come from `fill` instead of its own generator;
// everything else (reference, dispatches, tolerance) is the real case's.
class FilledCase : public Case {
 public:
  FilledCase(std::unique_ptr<Case> inner, Fill fill) : inner_(std::move(inner)), fill_(std::move(fill)) {}
  std::vector<TensorDesc> tensors() const override { return inner_->tensors(); }
  void fill_inputs(TensorMap& t, Rng& rng) const override { fill_(*inner_, t, rng); }
  int64_t reference_rows() const override { return inner_->reference_rows(); }
  double reference_row_cost() const override { return inner_->reference_row_cost(); }
  void reference(const TensorMap& t, const std::vector<int64_t>& rows, Reference& ref) const override {
    inner_->reference(t, rows, ref);
  }
  void record(Recorder& rec) const override { inner_->record(rec); }
  Cost cost() const override { return inner_->cost(); }
  Tolerance tolerance() const override { return inner_->tolerance(); }

 private:
  std::unique_ptr<Case> inner_;
  Fill fill_;
};

class FilledVariant : public Variant {
 public:
  FilledVariant(const Variant& inner, Fill fill) : inner_(inner), fill_(std::move(fill)) {}
  std::string id() const override { return inner_.id(); }
  std::string summary() const override { return inner_.summary(); }
  std::vector<std::string> impls() const override { return inner_.impls(); }
  std::vector<ParamSpec> params() const override { return inner_.params(); }
  void resolve(Params& p) const override { inner_.resolve(p); }
  std::unique_ptr<Case> make(const Params& p) const override {
    return std::make_unique<FilledCase>(inner_.make(p), fill_);
  }

 private:
  const Variant& inner_;
  Fill fill_;
};

// Runs one case on the test GPU with inputs from `fill` (validated against
// its reference like any case) and returns what the GPU wrote to `output`,
// read back from the case's dump.
HostTensor run_filled(const std::string& variant, const Axes& axes, Fill fill, const std::string& output = "y") {
  const PlannedCase pc = test::plan_accepted(variant, axes);
  const FilledVariant filled(*pc.variant, std::move(fill));
  GpuContext& ctx = test::gpu();
  CaseResult r;
  r.variant = variant;
  r.params = pc.params;
  r.impl = r.params.impl();
  r.dtype = r.params.s("dtype");
  r.id = case_id(ctx.info().index, filled, r.params);
  r.label = r.params.canonical();
  RunOptions options;
  options.dump_dir = test::temp_dir(r.id);
  const uint64_t before = test::instance().validation_error_count();
  {
    CaseRun run(ctx, filled, options, r);
    EXPECT_TRUE(run.setup()) << status_name(r.status) << ": " << r.reason;
  }
  test::expect_no_validation_errors(before);
  EXPECT_EQ(r.status, CaseStatus::kOk) << r.reason;
  return read_npy(options.dump_dir + "/" + r.id + "/" + output + ".npy");
}

void fill_constant(TensorMap& t, const std::string& name, double v) {
  HostTensor& h = t.at(name);
  for (int64_t i = 0; i < h.numel(); ++i) h.set(i, v);
}

// Taps of a kernel of `k` with `before` taps left of the centre that land
// inside [0, seq) for output n: the rest read the zero padding.
int64_t taps_inside(int64_t n, int64_t seq, int64_t k, int64_t before) {
  return std::min(n, before) + 1 + std::min(seq - 1 - n, k - 1 - before);
}

double gelu(double z) { return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))); }

// --- abs.conv ---------------------------------------------------------------

// x = 1, w = 1, bias = 0: y[n,c] = 1 + (taps inside the sequence), fewer at
// the borders, per batch entry (no taps from the neighbouring entry).
void expect_conv_border_counts(const Axes& axes, const std::function<double(int64_t, int64_t)>& value_at,
                               const HostTensor& y, double tol) {
  const int64_t batch = std::stoll(axes.at("batch")), seq = std::stoll(axes.at("seq"));
  const int64_t d = std::stoll(axes.at("d_model"));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t n = 0; n < seq; ++n) {
      for (int64_t c = 0; c < d; ++c) {
        const double want = value_at(n, c);
        ASSERT_NEAR(y.get((b * seq + n) * d + c), want, tol * std::abs(want)) << "b=" << b << " n=" << n << " c=" << c;
      }
    }
  }
}

TEST(AbsConv, BordersSeeTheZeroPadding) {
  const Fill ones = [](const Case&, TensorMap& t, Rng&) {
    fill_constant(t, "x", 1.0);
    fill_constant(t, "w", 1.0);
    fill_constant(t, "bias", 0.0);
  };
  for (const char* d : {"5", "8"}) {  // scalar and vec4 paths
    for (const char* dtype : {"f32", "f16"}) {
      const Axes axes{{"batch", "2"}, {"seq", "9"}, {"d_model", d}, {"kernel", "5"}, {"dtype", dtype}};
      SCOPED_TRACE(std::string("d_model=") + d + " " + dtype);
      const auto expected = [](int64_t n, int64_t) { return 1.0 + static_cast<double>(taps_inside(n, 9, 5, 2)); };
      // The counts themselves: 3 4 5 5 5 5 5 4 3.
      EXPECT_EQ(expected(0, 0), 4.0);
      EXPECT_EQ(expected(1, 0), 5.0);
      EXPECT_EQ(expected(4, 0), 6.0);
      EXPECT_EQ(expected(8, 0), 4.0);

      test::BuiltCase built = test::build_case("abs.conv", axes);
      Rng rng(1);
      ones(*built.impl, built.tensors, rng);
      const Reference ref = built.reference();
      const auto& rows = ref.outputs().at(0).rows;
      for (int64_t r = 0; r < 18; ++r) {
        for (int64_t c = 0; c < std::stoll(d); ++c) EXPECT_EQ(rows.at(r)[c], expected(r % 9, c)) << "row " << r;
      }
      expect_conv_border_counts(axes, expected, run_filled("abs.conv", axes, ones), 0.0);
    }
  }
}

// --- abs.conv_grouped -------------------------------------------------------

// x = 1, w = 1/8, bias = 0: conv[n,o] = Cg/8 * (taps inside). An even
// kernel pads K/2 before and K/2 - 1 after (the extra last output dropped),
// so its first row sees fewer taps than its last.
TEST(AbsConvGrouped, BordersSeeTheZeroPadding) {
  const Fill ones = [](const Case&, TensorMap& t, Rng&) {
    fill_constant(t, "x", 1.0);
    fill_constant(t, "w", 0.125);
    fill_constant(t, "bias", 0.0);
  };
  struct Shape {
    const char *d, *groups;
    int64_t cg;
  };
  for (const Shape& s : {Shape{"32", "4", 8}, Shape{"6", "2", 3}}) {
    for (const int64_t k : {4, 5}) {
      for (const char* dtype : {"f32", "f16"}) {
        const Axes axes{
            {"batch", "2"},  {"seq", "11"}, {"d_model", s.d}, {"groups", s.groups}, {"kernel", std::to_string(k)},
            {"dtype", dtype}};
        SCOPED_TRACE(fmt::format("d_model={} groups={} kernel={} {}", s.d, s.groups, k, dtype));
        const auto expected = [&](int64_t n, int64_t) {
          return 1.0 + gelu(0.125 * static_cast<double>(s.cg * taps_inside(n, 11, k, k / 2)));
        };
        if (k == 4) {  // 2 taps inside at n = 0, 3 at n = N-1
          EXPECT_EQ(taps_inside(0, 11, 4, 2), 2);
          EXPECT_EQ(taps_inside(10, 11, 4, 2), 3);
          EXPECT_EQ(taps_inside(5, 11, 4, 2), 4);
        }
        test::BuiltCase built = test::build_case("abs.conv_grouped", axes);
        Rng rng(1);
        ones(*built.impl, built.tensors, rng);
        const Reference ref = built.reference();
        const auto& rows = ref.outputs().at(0).rows;
        for (int64_t r = 0; r < 22; ++r) EXPECT_NEAR(rows.at(r)[0], expected(r % 11, 0), 1e-12) << "row " << r;
        const double tol = std::string(dtype) == "f16" ? std::ldexp(1.0, -11) : 1e-6;
        expect_conv_border_counts(axes, expected, run_filled("abs.conv_grouped", axes, ones), tol);
      }
    }
  }
}

// Perturbing one group's input channels changes that group's outputs and
// nothing else, on the reference and on the GPU.
TEST(AbsConvGrouped, OutputsDependOnlyOnTheirGroup) {
  const int64_t d = 32, groups = 4, cg = d / groups, perturbed = 2;
  const Fill own = [](const Case& inner, TensorMap& t, Rng& rng) { inner.fill_inputs(t, rng); };
  const Fill bumped = [&](const Case& inner, TensorMap& t, Rng& rng) {
    inner.fill_inputs(t, rng);
    HostTensor& x = t.at("x");
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (i % d / cg == perturbed) x.set(i, x.get(i) + 0.5);
    }
  };
  const Axes axes{{"batch", "2"}, {"seq", "37"}, {"d_model", "32"}, {"groups", "4"}, {"kernel", "5"}, {"dtype", "f32"}};

  const auto check = [&](const std::function<double(int64_t)>& base, const std::function<double(int64_t)>& moved,
                         int64_t numel) {
    int64_t changed = 0;
    for (int64_t i = 0; i < numel; ++i) {
      if (i % d / cg == perturbed) {
        changed += base(i) != moved(i);
      } else {
        ASSERT_EQ(base(i), moved(i)) << "element " << i << " (channel " << i % d << ") outside the perturbed group";
      }
    }
    EXPECT_GT(changed, numel / groups / 2) << "the perturbed group's outputs barely changed";
  };

  test::BuiltCase a = test::build_case("abs.conv_grouped", axes), b = test::build_case("abs.conv_grouped", axes);
  HostTensor& bx = b.tensors.at("x");
  for (int64_t i = 0; i < bx.numel(); ++i) {
    if (i % d / cg == perturbed) bx.set(i, bx.get(i) + 0.5);
  }
  const Reference ra = a.reference(), rb = b.reference();
  const auto& rows_a = ra.outputs().at(0).rows;
  const auto& rows_b = rb.outputs().at(0).rows;
  check([&](int64_t i) { return rows_a.at(i / d)[i % d]; }, [&](int64_t i) { return rows_b.at(i / d)[i % d]; },
        2 * 37 * d);

  const HostTensor ya = run_filled("abs.conv_grouped", axes, own);
  const HostTensor yb = run_filled("abs.conv_grouped", axes, bumped);
  check([&](int64_t i) { return ya.get(i); }, [&](int64_t i) { return yb.get(i); }, ya.numel());
}

// With K = 1, G = d, x = 0 and w = 0 the kernel writes y[o] = gelu(bias[o])
// exactly as it computes it: compare a dense grid of z against std::erf.
// common/erf.glsl bounds its own error by 1.2e-7 |z| with a correctly
// rounded exp; the tolerance model allows 3e-7 |z| for the device's exp.
TEST(AbsConvGrouped, GeluMatchesErfOnADenseGrid) {
  const int64_t d = 8000;
  const auto z_at = [&](int64_t o) { return -9.0 + 18.0 * static_cast<double>(o) / static_cast<double>(d - 1); };
  const Fill grid = [&](const Case&, TensorMap& t, Rng&) {
    fill_constant(t, "x", 0.0);
    fill_constant(t, "w", 0.0);
    HostTensor& bias = t.at("bias");
    for (int64_t o = 0; o < d; ++o) bias.set(o, z_at(o));
  };
  const Axes axes{{"batch", "1"},  {"seq", "1"},    {"d_model", std::to_string(d)}, {"groups", std::to_string(d)},
                  {"kernel", "1"}, {"dtype", "f32"}};
  const HostTensor y = run_filled("abs.conv_grouped", axes, grid);
  double worst = 0, worst_z = 0;
  for (int64_t o = 0; o < d; ++o) {
    const double z = static_cast<double>(static_cast<float>(z_at(o)));  // the stored bias
    const double err = std::abs(y.get(o) - gelu(z));
    const double scaled = err / std::max(std::abs(z), 1e-30);
    if (scaled > worst) worst = scaled, worst_z = z;
    ASSERT_LE(err, 3e-7 * std::abs(z) + 1e-37) << "z=" << z << " gelu=" << gelu(z) << " got " << y.get(o);
  }
  std::printf("gelu on %lld points in [-9, 9]: max |error| / |z| = %.3g at z = %.4f\n", static_cast<long long>(d),
              worst, worst_z);
}

// A device with 16 KiB of shared memory and 128 invocations, and llvmpipe
// with its loop limit: the plan fits, or the case is refused as unsupported.
class FakeRecorder : public Recorder {
 public:
  explicit FakeRecorder(const PhysicalDeviceInfo& info) : info_(info), planner_(info_) {}
  const DeviceLimits& limits() const override { return info_.limits; }
  const SubgroupInfo& subgroup() const override { return info_.subgroup; }
  const DeviceFeatures& enabled() const override { return info_.features; }
  const LaunchPlanner& launch() const override { return planner_; }
  void dispatch(const Dispatch& d) override { dispatches.push_back(d); }
  void barrier() override {}
  std::vector<Dispatch> dispatches;

 private:
  PhysicalDeviceInfo info_;
  LaunchPlanner planner_;
};

PhysicalDeviceInfo fake_device(bool phone) {
  PhysicalDeviceInfo info;
  info.name = phone ? "phone" : "llvmpipe";
  info.type = phone ? VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU : VK_PHYSICAL_DEVICE_TYPE_CPU;
  info.driver_id = phone ? VK_DRIVER_ID_ARM_PROPRIETARY : VK_DRIVER_ID_MESA_LLVMPIPE;
  info.subgroup.size = info.subgroup.min_size = info.subgroup.max_size = phone ? 16 : 8;
  info.limits.max_compute_shared_memory_size = phone ? 16384 : 32768;
  info.limits.max_compute_work_group_invocations = phone ? 128 : 1024;
  info.limits.max_compute_work_group_size[0] = phone ? 128 : 1024;
  info.limits.max_compute_work_group_size[1] = phone ? 128 : 1024;
  info.limits.max_compute_work_group_size[2] = 64;
  for (auto& c : info.limits.max_compute_work_group_count) c = 65535;
  return info;
}

TEST(AbsConvGrouped, TilesFitASmallDevice) {
  FakeRecorder rec(fake_device(true));
  test::make_case("abs.conv_grouped", {{"seq", "1024"}, {"d_model", "768"}, {"dtype", "f16"}})->record(rec);
  ASSERT_EQ(rec.dispatches.size(), 1u);
  const Dispatch& d = rec.dispatches[0];
  // Spec constants: WG, CC (channels per chunk), K, TN (positions per
  // workgroup); the shader's shared arrays are CC*(TN+KP) floats of x and
  // CC*KP*TO floats of w, TO = 4 output channels, KP = K rounded up to 4.
  ASSERT_GE(d.spec_constants.size(), 4u);
  const uint64_t wg = d.spec_constants[0], cc = d.spec_constants[1], k = d.spec_constants[2], tn = d.spec_constants[3];
  const uint64_t kp = (k + 3) / 4 * 4;
  EXPECT_EQ(k, 128u);
  EXPECT_LE(wg, 128u);
  EXPECT_GE(cc, 1u);
  EXPECT_LE(4 * cc * (tn + kp) + 4 * cc * kp * 4, 16384u);
  EXPECT_EQ(d.groups[0], (1024 + tn - 1) / tn);
  EXPECT_EQ(d.groups[1], 16u * (48 / 4));  // groups x output-channel tiles of 4
  EXPECT_EQ(d.groups[2], 1u);
}

TEST(AbsConvGrouped, RefusesWhatLlvmpipesLoopLimitWouldCut) {
  FakeRecorder rec(fake_device(false));
  // d/G = 48, K = 128: a few thousand iterations per invocation.
  EXPECT_NO_THROW(test::make_case("abs.conv_grouped", {{"seq", "64"}, {"d_model", "768"}})->record(rec));
  // d/G = 1024, K = 256: over 60000.
  try {
    test::make_case("abs.conv_grouped", {{"seq", "64"}, {"d_model", "1024"}, {"groups", "1"}, {"kernel", "256"}})
        ->record(rec);
    ADD_FAILURE() << "no Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("loop iterations"), std::string::npos) << e.what();
  }
  // A kernel whose taps do not fit in shared memory at all.
  try {
    test::make_case("abs.conv_grouped", {{"seq", "64"}, {"d_model", "16"}, {"kernel", "4096"}})->record(rec);
    ADD_FAILURE() << "no Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("kernel=4096"), std::string::npos) << e.what();
  }
}

// --- costs --------------------------------------------------------------------

TEST(AbsConv, CostCountsEveryMultiplyAdd) {
  const Cost c =
      test::make_case("abs.conv", {{"batch", "2"}, {"seq", "10"}, {"d_model", "6"}, {"kernel", "5"}})->cost();
  EXPECT_EQ(c.flops, 2.0 * 10 * 6 * (2 * 5 + 2));          // k multiply-adds + bias + residual
  EXPECT_EQ(c.bytes, 4.0 * (2 * 2 * 10 * 6 + 6 * 5 + 6));  // x, y, w, bias in f32
  const Cost g = test::make_case("abs.conv_grouped",
                                 {{"batch", "2"}, {"seq", "10"}, {"d_model", "32"}, {"groups", "4"}, {"kernel", "5"}})
                     ->cost();
  EXPECT_EQ(g.flops, 2.0 * 2 * 10 * 32 * 8 * 5 + 5.0 * 2 * 10 * 32);  // conv + 5 per output
  EXPECT_EQ(g.bytes, 4.0 * (2 * 2 * 10 * 32 + 32 * 8 * 5 + 32));
}

// --- bad parameters -------------------------------------------------------------

struct BadParams {
  const char* variant;
  Axes axes;
  const char* message;
};

const std::vector<BadParams>& bad_params() {
  static const std::vector<BadParams> cases = {
      {"abs.conv", {{"kernel", "4"}}, "kernel=4 must be odd"},
      {"abs.conv", {{"kernel", "0"}}, "kernel=0 must be at least 1"},
      {"abs.conv", {{"kernel", "-3"}}, "kernel=-3 must be at least 1"},
      {"abs.conv_grouped", {{"d_model", "30"}, {"groups", "4"}}, "d_model=30 is not divisible by groups=4"},
      {"abs.conv_grouped", {{"kernel", "0"}}, "kernel=0 must be at least 1"},
      {"abs.conv_grouped", {{"groups", "0"}}, "groups=0 must be at least 1"},
  };
  return cases;
}

TEST(AbsConv, BadParametersAreSkippedInASweep) {
  for (const auto& bad : bad_params()) {
    Axes axes = bad.axes;
    axes["seq"] = "8";
    const auto results = test::run_cases(bad.variant, axes);
    ASSERT_EQ(results.size(), 1u) << bad.message;
    EXPECT_EQ(results[0].status, CaseStatus::kSkipped) << bad.message;
    EXPECT_NE(results[0].reason.find(bad.message), std::string::npos) << results[0].reason;
  }
}

TEST(AbsConv, BadParametersFailTheBinaryWithTheReason) {
  const std::string dir = test::temp_dir("bad");
  for (const auto& bad : bad_params()) {
    std::vector<std::string> args{"run", "--variant", bad.variant, "--seq", "8", "--out", dir + "/r.json"};
    for (const auto& [k, v] : bad.axes) args.insert(args.end(), {"--param", k + "=" + v});
    const auto r = test::run_pebench(args);
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find(bad.message), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace pebench
