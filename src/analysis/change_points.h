// Change points in a series of run medians (oldest first): where a case's
// time stepped, for `pebench db changes` and the HTML report's trend
// charts. Binary segmentation with a rank statistic:
//   - in a segment, every split leaving at least `min_segment` points a side
//     is scored by the standardized Mann–Whitney U of left against right;
//     the best split is the one with the largest |z|;
//   - its significance is a permutation test of that maximum: the segment's
//     ranks shuffled `permutations` times (deterministic, seeded), p the
//     share of shuffles whose best |z| reaches the observed one, so scanning
//     many splits is paid for;
//   - a split with p < alpha whose step (after/before medians - 1) is at
//     least min_step in size is a change point; both halves are searched
//     again.
// Ranks make it robust to the odd slow run (a load spike), and nothing
// assumes a distribution. E-divisive (Otava/Hunter) differs in its statistic
// (energy distance), not in this structure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pebench {

struct ChangePointOptions {
  size_t min_segment = 5;     // points each side of a split, at least
  double alpha = 0.01;        // permutation p-value below which a split counts
  size_t permutations = 499;  // shuffles per tested segment
  double min_step = 0.0;      // |after/before - 1| below which a split is ignored
  uint64_t seed = 0x5eed;
};

struct ChangePoint {
  size_t index = 0;  // first point of the new level
  double before = 0, after = 0;  // the medians of the segments it separates
  double step = 0;   // after / before - 1
  double p = 0;      // the permutation p-value
  double z = 0;      // the standardized U at the split (positive: slower after)
};

// Change points of `series`, by index. Non-finite or non-positive values
// must be removed by the caller.
std::vector<ChangePoint> change_points(const std::vector<double>& series, const ChangePointOptions& options = {});

}  // namespace pebench
