#include "analysis/compare_render.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "analysis/case_key.h"
#include "analysis/format_units.h"
#include "analysis/sample_spread.h"
#include "analysis/timing_rule.h"

namespace pebench {
namespace {

std::string driver_string(const DeviceRecord& d) {
  std::vector<std::string> parts;
  if (!d.driver_name.empty()) parts.push_back(d.driver_name);
  if (!d.driver_info.empty()) parts.push_back(d.driver_info);
  if (!d.driver_version.empty()) parts.push_back(d.driver_version);
  return join(parts, " ");
}

}  // namespace

TextTable reports_table(const std::vector<ReportFile>& reports, const std::vector<std::string>& roles) {
  TextTable t({"", "file", "device", "driver", "build", "created"});
  for (size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    std::vector<std::string> devices, drivers;
    for (const auto& name : r.result_devices()) {
      const DeviceRecord* d = r.device(name);
      devices.push_back(name);
      drivers.push_back(d ? driver_string(*d) : "");
    }
    t.add_row({roles[i], r.path, join(devices, "; "), join(drivers, "; "), r.tool_string(), r.created});
  }
  return t;
}

namespace {

// The time cell: the median when the case ran, else its status.
std::string time_cell(const CaseRecord* c) {
  if (!c) return "-";
  if (!c->ok()) return c->status;
  return format_ns(c->timed() ? std::optional<double>(c->time->median) : std::nullopt);
}

// A pair's time cell: the median compared (GPU or CPU time) when the case ran.
std::string compared_cell(const CaseRecord* c, const std::optional<double>& median) {
  return c && c->ok() ? format_ns(median) : time_cell(c);
}

// What the ratios of a pair measure, when it is not plain GPU-time medians.
std::string timing_note(const PairComparison& pair, const CompareOptions& options) {
  std::vector<std::string> parts;
  if (options.series == TimeSeries::kCpu) parts.push_back("base and new are process CPU time per sample (--time cpu)");
  if (options.normalize && options.load_neighbours > 0) {
    parts.push_back(fmt::format("each ratio is divided by its case's load factor, the median NEW/BASE ratio of the {} "
                                "cases of other variants nearest it in BASE time (over all cases: {})",
                                options.load_neighbours, format_ratio(pair.load_factor)));
  } else if (options.normalize) {
    parts.push_back(fmt::format("ratios are divided by the load factor {} (the median NEW/BASE ratio)",
                                format_ratio(pair.load_factor)));
  }
  if (options.min_samples > 0) parts.push_back(fmt::format("cases need {} samples a side", options.min_samples));
  return parts.empty() ? "" : join(parts, "; ") + ".";
}

TextTable variants_table(const PairComparison& pair) {
  TextTable t({"variant", "impl", "cases", "median ratio", "verdict"});
  t.align_right(2);
  t.align_right(3);
  for (const auto& v : pair.variants) {
    t.add_row({v.variant, v.impl, std::to_string(v.cases.size()), v.cases.empty() ? "-" : format_ratio(v.ratio),
               v.slower ? "slower" : "-"});
  }
  return t;
}

std::string verdict_cell(const CaseComparison& c) {
  if (c.change != StatusChange::kSame) return status_change_name(c.change);
  return verdict_name(c.verdict);
}

// "57% -> 81%": the roofline fraction on each side ("-" where absent).
std::string roofline_cell(const CaseRecord* base, const CaseRecord* next) {
  auto one = [](const CaseRecord* c) {
    return c && c->roofline ? fmt::format("{:.0f}%", 100 * c->roofline->fraction) : std::string("-");
  };
  if (!(base && base->roofline) && !(next && next->roofline)) return "-";
  return one(base) + " -> " + one(next);
}

// "12/15", "3!/15": sample counts, flagged where too few for the U test to
// ever reach alpha.
std::string samples_pair_cell(const CaseRecord* base, const CaseRecord* next, double alpha) {
  auto one = [alpha](const CaseRecord* c) {
    return c && c->time ? samples_cell(c->time->samples.size(), alpha) : std::string("-");
  };
  return one(base) + "/" + one(next);
}

// The impl compared; "flash vs torch-sdpa" when matching across impls.
std::string impl_cell(const PairComparison& pair, const CaseComparison& c) {
  return pair.across_impls ? c.base->impl + " vs " + c.next->impl : c.base->impl;
}

std::string case_cell(const CaseRecord& c) { return c.label.empty() ? params_label(c.params) : c.label; }

// The driver's pipeline statistics that changed (registers, spills,
// occupancy...), one row per statistic.
void stats_section(TextDocument& doc, const PairComparison& pair, bool device_column) {
  std::vector<std::string> header;
  if (device_column) header.push_back("device");
  for (const char* h : {"variant", "impl", "dtype", "case", "pipeline", "statistic", "base", "new"}) header.push_back(h);
  TextTable t(header);
  t.align_right(header.size() - 2);
  t.align_right(header.size() - 1);
  auto value = [](const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : std::string("-"); };
  for (const auto& c : pair.cases) {
    for (const auto& sc : c.stat_changes) {
      std::vector<std::string> row;
      if (device_column) row.push_back(c.base->device_info->key_name);
      for (const auto& cell : {c.base->variant, c.base->impl, c.base->dtype, case_cell(*c.base), sc.shader, sc.stat,
                               value(sc.base), value(sc.next)}) {
        row.push_back(cell);
      }
      t.add_row(row);
    }
  }
  if (t.rows() == 0) return;
  doc.paragraph({fmt::format("pipeline statistics that changed ({}):", t.rows())});
  doc.table(std::move(t));
}

// Validation-layer warning ids (run --validate) that one side raised and
// the other did not, one row per case and id.
void vk_warnings_section(TextDocument& doc, const PairComparison& pair, bool device_column) {
  std::vector<std::string> header;
  if (device_column) header.push_back("device");
  for (const char* h : {"variant", "impl", "dtype", "case", "warning id", "change"}) header.push_back(h);
  TextTable t(header);
  for (const auto& c : pair.cases) {
    for (const auto* ids : {&c.vk_warnings_appeared, &c.vk_warnings_gone}) {
      for (const auto& id : *ids) {
        std::vector<std::string> row;
        if (device_column) row.push_back(c.base->device_info->key_name);
        for (const auto& cell : {c.base->variant, c.base->impl, c.base->dtype, case_cell(*c.base), id,
                                 std::string(ids == &c.vk_warnings_appeared ? "appears" : "disappears")}) {
          row.push_back(cell);
        }
        t.add_row(row);
      }
    }
  }
  if (t.rows() == 0) return;
  doc.paragraph({fmt::format("validation-layer warnings that appear or disappear ({}):", t.rows())});
  doc.table(std::move(t));
}

// Cases that ran another plan on each side because run --tune chose another
// value: their times differ by the plan as well as by the change.
void tuning_section(TextDocument& doc, const PairComparison& pair, bool device_column) {
  std::vector<std::string> header;
  if (device_column) header.push_back("device");
  for (const char* h : {"variant", "impl", "dtype", "case", "knob", "base", "new"}) header.push_back(h);
  TextTable t(header);
  t.align_right(header.size() - 2);
  t.align_right(header.size() - 1);
  for (const auto& c : pair.cases) {
    const auto base = tuned_value(*c.base, *c.next), next = tuned_value(*c.next, *c.base);
    if (!base || !next || *base == *next) continue;
    std::vector<std::string> row;
    if (device_column) row.push_back(c.base->device_info->key_name);
    const std::string& knob = c.base->tuning ? c.base->tuning->knob : c.next->tuning->knob;
    for (const auto& cell : {c.base->variant, c.base->impl, c.base->dtype, case_cell(*c.base), knob,
                             std::to_string(*base), std::to_string(*next)}) {
      row.push_back(cell);
    }
    t.add_row(row);
  }
  if (t.rows() == 0) return;
  doc.paragraph({fmt::format("tuned plans that differ ({}): these cases ran another value of the knob on each side",
                             t.rows())});
  doc.table(std::move(t));
}

void pair_section(TextDocument& doc, const std::vector<ReportFile>& reports, const PairComparison& pair,
                  const CompareOptions& options) {
  const ReportFile& base = reports[pair.base_report];
  const ReportFile& next = reports[pair.new_report];
  std::vector<std::string> notes;
  if (pair.cross_device) {
    notes.push_back(fmt::format("devices differ: {} (BASE) against {} (NEW)", pair.devices[0].base,
                                pair.devices[0].next));
  } else {
    for (const auto& dp : pair.devices) {
      const DeviceRecord* b = base.device(dp.base);
      const DeviceRecord* n = next.device(dp.next);
      if (b && n && driver_string(*b) != driver_string(*n)) {
        notes.push_back(fmt::format("driver changed on {}: {} -> {}", dp.base, driver_string(*b), driver_string(*n)));
      }
    }
  }
  if (pair.cross_host) {
    notes.push_back(fmt::format("host CPUs differ: {} (BASE) against {} (NEW); the times of {} compare them",
                                pair.cross_host->base, pair.cross_host->next, fmt::join(pair.cross_host->devices, ", ")));
  }
  if (base.tuned != next.tuned) {
    notes.push_back(fmt::format("tuning differs: BASE {}, NEW {}; a tuned case may run another plan than its "
                                "planner's (results[].tuning)",
                                base.tuned ? "ran with --tune" : "without", next.tuned ? "ran with --tune" : "without"));
  }
  if (pair.across_impls) {
    notes.push_back(fmt::format(
        "impls differ: BASE ran {}, NEW ran {}; cases matched with the impl left out (impl column: BASE vs NEW), "
        "and where a side ran several impls of a case, {} is compared{}",
        fmt::join(pair.base_impls, ", "), fmt::join(pair.new_impls, ", "),
        options.impl.empty() ? std::string("flash") : options.impl,
        options.impl.empty() ? " (--impl NAME: another)" : ""));
  }
  if (pair.devices.empty()) notes.push_back("no device in common: nothing to match");
  if (!notes.empty()) doc.paragraph(notes);

  const bool device_column = pair.devices.size() > 1;
  std::vector<std::string> header;
  if (device_column) header.push_back("device");
  for (const char* h : {"variant", "impl", "dtype", "case", "base", "new", "ratio", "p", "n", "roofline", "verdict"}) {
    header.push_back(h);
  }
  TextTable t(header);
  const size_t first_number = device_column ? 5 : 4;
  for (size_t c = first_number; c < first_number + 6; ++c) t.align_right(c);
  for (const auto& c : pair.cases) {
    std::vector<std::string> row;
    if (device_column) row.push_back(c.base->device_info->key_name);
    for (const auto& cell : {c.base->variant, impl_cell(pair, c), c.base->dtype, case_cell(*c.base),
                             compared_cell(c.base, c.base_median), compared_cell(c.next, c.new_median),
                             format_ratio(c.ratio), format_p(c.p_value), samples_pair_cell(c.base, c.next, options.alpha),
                             roofline_cell(c.base, c.next), verdict_cell(c)}) {
      row.push_back(cell);
    }
    t.add_row(row);
  }
  if (t.rows() > 0) doc.table(std::move(t));
  const size_t enough = min_comparable_samples(options.alpha);
  size_t too_few = 0;
  for (const auto& c : pair.cases) {
    for (const CaseRecord* side : {c.base, c.next}) too_few += side->time && side->time->samples.size() < enough;
  }
  if (too_few > 0) {
    doc.paragraph({fmt::format("n!: {} side(s) have fewer than {} samples: at alpha {} the U test cannot call their "
                               "change significant whatever it is; give them more --benchmark_min_time",
                               too_few, enough, options.alpha)});
  }
  if (const std::string note = timing_note(pair, options); !note.empty()) doc.paragraph({note});
  if (!pair.variants.empty()) {
    doc.table(variants_table(pair));
    doc.paragraph({fmt::format("per variant/impl: the median ratio of its cases; slower past {}.",
                               format_threshold(*options.variant_threshold))});
  }

  if (pair.overall) {
    TextTable g({"family", "cases", "geomean ratio", "change"});
    g.align_right(1);
    g.align_right(2);
    g.align_right(3);
    for (const auto& f : pair.families) {
      g.add_row({f.family, std::to_string(f.cases), format_ratio(f.ratio), format_percent(f.ratio - 1)});
    }
    g.add_row({"all", std::to_string(pair.overall->cases), format_ratio(pair.overall->ratio),
               format_percent(pair.overall->ratio - 1)});
    doc.table(std::move(g));
  }

  auto listing = [&](const std::vector<const CaseRecord*>& cases) {
    std::vector<std::string> items;
    for (const CaseRecord* c : cases) {
      items.push_back(device_column ? fmt::format("{} on {} ({})", c->display(), c->device_info->key_name, c->status)
                                    : fmt::format("{} ({})", c->display(), c->status));
    }
    return items;
  };
  if (!pair.only_in_base.empty()) {
    doc.paragraph({fmt::format("only in BASE ({}):", pair.only_in_base.size())});
    doc.list(listing(pair.only_in_base));
  }
  if (!pair.only_in_new.empty()) {
    doc.paragraph({fmt::format("only in NEW ({}):", pair.only_in_new.size())});
    doc.list(listing(pair.only_in_new));
  }

  stats_section(doc, pair, device_column);
  vk_warnings_section(doc, pair, device_column);
  tuning_section(doc, pair, device_column);

  size_t changed = 0;
  for (const auto& c : pair.cases) changed += c.change != StatusChange::kSame;
  doc.paragraph({fmt::format(
      "{} matched: {} faster, {} slower, {} unchanged, {} noisy, {} status changes; {} only in BASE, {} only in NEW. "
      "ratio = NEW/BASE median; slower/faster: beyond {} either way and Mann-Whitney U p < {:g}.",
      pair.cases.size(), pair.count(Verdict::kFaster), pair.count(Verdict::kSlower), pair.count(Verdict::kUnchanged),
      pair.count(Verdict::kNoisy), changed, pair.only_in_base.size(), pair.only_in_new.size(),
      format_threshold(options.threshold), options.alpha)});
}

void matrix_section(TextDocument& doc, const VendorMatrix& m) {
  std::vector<std::string> header = {"variant", "impl", "dtype", "case"};
  for (size_t col = 0; col < m.columns.size(); ++col) {
    header.push_back(m.columns[col].name);
    if (col > 0) header.push_back(m.columns[col].name + "/" + m.columns[0].name);
  }
  TextTable t(header);
  for (size_t c = 4; c < header.size(); ++c) t.align_right(c);
  for (const auto& row : m.rows) {
    std::vector<std::string> cells = {row.first->variant, row.first->impl, row.first->dtype, case_cell(*row.first)};
    for (size_t col = 0; col < m.columns.size(); ++col) {
      cells.push_back(time_cell(row.cells[col]));
      if (col > 0) cells.push_back(format_ratio(row.ratios[col]));
    }
    t.add_row(cells);
  }
  doc.table(std::move(t));

  std::vector<std::string> vheader = {"variant"};
  for (size_t col = 1; col < m.columns.size(); ++col) vheader.push_back(m.columns[col].name + "/" + m.columns[0].name);
  TextTable v(vheader);
  for (size_t c = 1; c < vheader.size(); ++c) v.align_right(c);
  for (const auto& vr : m.variants) {
    std::vector<std::string> cells = {vr.variant};
    for (size_t col = 1; col < m.columns.size(); ++col) {
      cells.push_back(vr.ratios[col] ? fmt::format("{} ({})", format_ratio(vr.ratios[col]), vr.cases[col]) : "-");
    }
    v.add_row(cells);
  }
  doc.table(std::move(v));
  doc.paragraph({"times are medians; ratios are to the first column (geometric mean over the cases timed in both, "
                 "count in parentheses); \"-\": the case is absent or did not run there."});
}

}  // namespace

TextDocument compare_document(const std::vector<ReportFile>& reports, const CompareResult& result) {
  TextDocument doc;
  std::vector<std::string> roles;
  if (!result.matrix) {
    roles = {"BASE", "NEW"};
  } else {
    for (size_t i = 0; i < reports.size(); ++i) roles.push_back(fmt::format("R{}", i));
  }
  doc.heading(result.matrix ? fmt::format("pebench compare: {} reports", reports.size()) : "pebench compare");
  doc.table(reports_table(reports, roles));
  if (result.matrix) {
    matrix_section(doc, *result.matrix);
  } else {
    pair_section(doc, reports, result.pairs.at(0), result.options);
  }
  if (result.gate) {
    if (result.gate->passed()) {
      doc.paragraph({fmt::format("gate: passed (threshold {}, alpha {:g})", format_threshold(result.options.threshold),
                                 result.options.alpha)});
    } else {
      doc.paragraph({fmt::format("gate: FAILED, {} reason{} (threshold {}, alpha {:g}):", result.gate->reasons.size(),
                                 result.gate->reasons.size() == 1 ? "" : "s", format_threshold(result.options.threshold),
                                 result.options.alpha)});
      doc.list(result.gate->reasons);
    }
    if (!result.gate->unconfirmed.empty()) {
      doc.paragraph({fmt::format("not confirmed by the second run ({}), so not counted:", result.confirm_path)});
      doc.list(result.gate->unconfirmed);
    }
    if (!result.gate->notes.empty()) doc.list(result.gate->notes);
  }
  return doc;
}

}  // namespace pebench
