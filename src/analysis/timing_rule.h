// The parts of compare's timing rule that let a gate stay quiet and sharp on
// a shared CPU runner (docs/compare-and-gate.md, "The gate on a shared CPU
// runner"):
//   - which samples are compared: GPU timestamps (time_ns) or the process
//     CPU time of each sample (cpu_ns), which on lavapipe is the device's own
//     work, so other processes' load barely moves it;
//   - the load factor: the median NEW/BASE ratio over every case timed on
//     both sides, which `--normalize` divides out, since load on the machine
//     moves all cases together while a regression moves a few;
//   - or, with --load-neighbours K, a load factor per case: the median ratio
//     of the K cases of other variants nearest it in BASE time, since a
//     runner's fixed cost per submission drifts apart from its speed (short
//     cases move together, apart from long ones);
//   - per variant and impl, the median of its cases' ratios, which
//     `--variant-threshold` gates: a kernel change moves all of a variant's
//     cases, while noise rarely moves most of them together.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analysis/comparison.h"
#include "analysis/report_file.h"

namespace pebench {

const char* series_name(TimeSeries s);  // "gpu" | "cpu"

// A timed case's median and samples in `series`.
double series_median(const TimeRecord& t, TimeSeries series);
const std::vector<double>& series_samples(const TimeRecord& t, TimeSeries series);

// Median of the NEW/BASE ratios of the pairs ok and timed on both sides in
// `series`; 1 when there are none.
double load_factor(const std::vector<std::pair<const CaseRecord*, const CaseRecord*>>& matched, TimeSeries series);

// Per pair of `matched`, the median NEW/BASE ratio of the `neighbours` pairs
// of other variants (ok and timed on both sides) whose BASE medians are
// nearest its own on a log scale; ties go to the earlier pair. `overall`
// for a pair not timed on both sides, or when no other variant is.
std::vector<double> case_load_factors(const std::vector<std::pair<const CaseRecord*, const CaseRecord*>>& matched,
                                      TimeSeries series, size_t neighbours, double overall);

// Per variant and impl (BASE order), the median ratio of its cases that have
// a ratio and enough samples; slower when past 1 + options.variant_threshold.
std::vector<VariantComparison> compare_variants(const std::vector<CaseComparison>& cases,
                                                const CompareOptions& options);

// The shortest median --normalize accepts: 1 ps, far below any dispatch.
constexpr double kShortestMeasurableNs = 1e-3;

// Throws ReportError naming the file when `reports` cannot be compared under
// `options`: BASE (reports[0]) was made with --inject-slowdown, a timed ok
// case has no cpu_ns samples while options.series is kCpu, or (with
// options.normalize) a timed ok case's median is below kShortestMeasurableNs.
void check_comparable(const std::vector<ReportFile>& reports, const CompareOptions& options);

}  // namespace pebench
