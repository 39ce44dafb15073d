// Two reports side by side: cases matched by key on paired devices, per case
// the medians, their ratio, a Mann–Whitney U test on the raw samples and a
// verdict; per variant family and overall the geometric mean ratio; the
// cases that match nothing, listed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/report_file.h"

namespace pebench {

// Which samples a comparison reads (timing_rule.h).
enum class TimeSeries {
  kGpu,  // time_ns: GPU timestamps
  kCpu,  // cpu_ns: the process CPU time of each sample
};

// On a CPU device (lavapipe) the host CPU is the device, and how one
// kernel's cost relates to another's changes with it: against a baseline
// timed on an Intel Xeon VM, attn.complex flash measured 1.285x of the run's
// other cases on an AMD EPYC (Zen 5) VM, 0.94x on an Intel Xeon VM.
// So `--gate` fails such a pair as it fails two different devices, or, asked
// to, gates its correctness only.
enum class CrossHost {
  kFail,         // a "host" reason, like the "device" reason
  kCorrectness,  // no timing reason for the pair; correctness as always
};

struct CompareOptions {
  double threshold = 0.10;  // a change smaller than 10% is "unchanged"
  double alpha = 0.01;      // significance level of the U test
  TimeSeries series = TimeSeries::kGpu;
  // Divide every ratio by the pair's load factor (timing_rule.h).
  bool normalize = false;
  // With normalize: each case's own load factor, the median ratio of this
  // many cases of other variants nearest it in BASE time (timing_rule.h).
  // 0: one factor for all cases.
  size_t load_neighbours = 0;
  // A case with fewer samples on either side gets no U test ("noisy" when
  // outside the band) and, with --gate, fails it: a rule that needs samples
  // must not pass blind. 0: no minimum.
  size_t min_samples = 0;
  // Also judge each variant/impl by the median of its cases' ratios; slower
  // past 1 + this. Absent: no per-variant verdicts.
  std::optional<double> variant_threshold;
  // What --gate does with a pair whose CPU device ran on different host
  // CPUs (PairComparison::cross_host).
  CrossHost cross_host = CrossHost::kFail;
  // When BASE and NEW match across impls (match_across_impls: a peer
  // report), the impl compared where one side ran several impls of a case
  // (--impl). Empty: flash where the side has it.
  std::string impl;
};

enum class Verdict {
  kFaster,     // ratio < 1/(1+threshold) and p < alpha
  kSlower,     // ratio > 1+threshold and p < alpha
  kUnchanged,  // ratio within the threshold band
  kNoisy,      // outside the band but not significant: too noisy to tell
  kNone,       // no timing on one side (status, or no time)
};
const char* verdict_name(Verdict v);

// How the case's status moved from BASE to NEW.
enum class StatusChange {
  kSame,    // same status on both sides
  kBroke,   // ok (or compiled) in BASE; failed (validation) or error in NEW
  kLost,    // ok (or compiled) in BASE; skipped or unsupported in NEW
  kFixed,   // not ok in BASE, ok (or compiled) in NEW
  kNotRun,  // interrupted on one side: nothing is known there
  kOther,   // any other change (e.g. skipped -> error)
};
const char* status_change_name(StatusChange c);

// A key pipeline statistic (analysis/pipeline_stats.h) that differs
// between BASE and NEW, for one pipeline of a matched case (pipelines are
// paired by shader and build, in order).
struct StatChange {
  std::string shader;
  std::string stat;  // the column title: "VGPRs", "spilled VGPRs", ...
  std::optional<double> base, next;
  bool new_spills = false;  // BASE had no spills here, NEW has (what --gate fails)
};

struct CaseComparison {
  const CaseRecord* base = nullptr;
  const CaseRecord* next = nullptr;
  std::optional<double> base_median, new_median, ratio;  // ratio = new / base
  std::optional<double> p_value;
  bool exact_test = false;
  Verdict verdict = Verdict::kNone;
  StatusChange change = StatusChange::kSame;
  std::vector<StatChange> stat_changes;
  // Validation-layer warning ids (run --validate) raised on one side only,
  // when both sides ran under the layer.
  std::vector<std::string> vk_warnings_appeared, vk_warnings_gone;
  // Timed on both sides with fewer samples than options.min_samples on one.
  bool too_few_samples = false;
  // What NEW's median and samples were divided by (1 unless options.normalize).
  double load_factor = 1;
};

// One variant/impl's cases together (CompareOptions::variant_threshold).
struct VariantComparison {
  std::string variant, impl;
  std::vector<size_t> cases;  // indices into PairComparison::cases: those with a ratio and enough samples
  double ratio = 1;                          // the median of their ratios
  bool slower = false;
};

struct GeoMean {
  std::string family;  // "abs", "rope", ... or "all"
  size_t cases = 0;
  double ratio = 1;
};

struct DevicePair {
  std::string base, next;  // device key names
};

struct PairComparison {
  size_t base_report = 0, new_report = 0;  // indices into the reports compared
  std::vector<DevicePair> devices;
  // The reports share no device name and each ran on one device: that device
  // is compared with the other (vendor against vendor).
  bool cross_device = false;
  // The pair's CPU devices (BASE key names) ran on different host CPUs
  // (ReportFile::host_cpu()): BASE's and NEW's. Absent when the hosts match
  // or no paired device is a CPU.
  struct Hosts {
    std::vector<std::string> devices;
    std::string base, next;
  };
  std::optional<Hosts> cross_host;
  // BASE and NEW share no impl (match_across_impls): cases matched on
  // variant, dtype, params and device with the impl left out, each side's
  // impls listed here (sorted). Where a side ran several impls of one case,
  // it compares options.impl (else flash), and lists the others as only on
  // that side (all of them when it has no such impl); where it ran one, it
  // compares that one, whatever its name.
  bool across_impls = false;
  std::vector<std::string> base_impls, new_impls;
  std::vector<CaseComparison> cases;            // BASE order
  std::vector<const CaseRecord*> only_in_base;  // BASE order
  std::vector<const CaseRecord*> only_in_new;   // NEW order
  std::vector<GeoMean> families;                // sorted by family
  std::optional<GeoMean> overall;               // absent when nothing was timed on both sides
  // The median NEW/BASE ratio over cases timed on both sides; every ratio
  // above is divided by it when options.normalize (else 1), or by the case's
  // own factor (CaseComparison::load_factor) with options.load_neighbours.
  double load_factor = 1;
  std::vector<VariantComparison> variants;  // with options.variant_threshold

  size_t count(Verdict v) const;
};

// The impls of a report's cases, sorted, each once.
std::vector<std::string> report_impls(const ReportFile& report);

// Cases of `base` and `next` match across impls when both have cases and no
// impl of one occurs in the other: a report from another implementation
// (tools/peers/, interface.md) names its impl after the peer.
bool match_across_impls(const ReportFile& base, const ReportFile& next);

// Verdict for one timed case.
Verdict classify(double ratio, std::optional<double> p_value, const CompareOptions& options);

// Pointers in the result point into `base` and `next`: keep them alive.
PairComparison compare_reports(const ReportFile& base, const ReportFile& next, const CompareOptions& options,
                               size_t base_index = 0, size_t new_index = 1);

// The value of a tuned knob (run --tune) a matched case ran on one side: its
// tuning's choice, or, untuned, the planner's, which the other side's tuning
// names; absent when neither side was tuned.
std::optional<int64_t> tuned_value(const CaseRecord& side, const CaseRecord& other);

// Geometric mean of positive ratios (empty: 1), itself kept in range.
double geometric_mean(const std::vector<double>& ratios);

// num / den for two positive times, pinned to [DBL_MIN, DBL_MAX]: times
// from 1e-300 to 1e308 ns are finite, their ratio need not be, and an inf
// or 0 ratio would turn every geometric mean, axis and verdict it meets
// into inf or NaN. Pinned, it still orders and classifies correctly.
double time_ratio(double num, double den);

}  // namespace pebench
