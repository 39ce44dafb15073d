// The table `pebench run` prints at the end of a sweep.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/run_table.h"

namespace pebench {
namespace {

CaseResult timed(const std::string& variant, std::optional<CaseResult::Tuning> tuning) {
  CaseResult r;
  r.variant = variant;
  r.impl = "flash";
  r.dtype = "f32";
  r.label = "seq=2048";
  r.status = CaseStatus::kOk;
  r.time = time_stats({1e6, 1.1e6, 0.9e6, 1e6, 1e6});
  r.tuning = std::move(tuning);
  return r;
}

TEST(RunTable, NamesEachCaseTuningMovedOffItsPlannersChoice) {
  const CaseResult::Tuning moved{"row_slots", 8, 6, {}};
  const CaseResult::Tuning kept{"row_slots", 8, 8, {}};
  const std::string text = run_table_text(
      {timed("attn.tupe", moved), timed("attn.nope", kept), timed("rope.apply", std::nullopt)});
  EXPECT_NE(text.find("tuned: d0 attn.tupe flash f32 seq=2048: row_slots=6 (planned 8)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("tuned: d0 attn.nope"), std::string::npos) << text;
  EXPECT_EQ(text.find("tuned: d0 rope.apply"), std::string::npos) << text;
}

}  // namespace
}  // namespace pebench
