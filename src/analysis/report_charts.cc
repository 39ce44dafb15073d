#include "analysis/report_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "analysis/case_key.h"
#include "analysis/comparison.h"
#include "analysis/variant_overhead.h"

namespace pebench {
namespace {

bool drawable(const CaseRecord& c) { return c.ok() && c.timed(); }

// Cases of `column`, in file order.
template <typename F>
void for_column(const std::vector<ReportFile>& reports, const MatrixColumn& column, F&& f) {
  for (const auto& c : reports[column.report].cases) {
    if (c.device_info->key_name == column.device) f(c);
  }
}

}  // namespace

std::vector<SeqChart> seq_charts(const std::vector<ReportFile>& reports, const std::vector<MatrixColumn>& columns) {
  struct Item {
    size_t column;
    const CaseRecord* c;
    double seq;
  };
  std::vector<std::string> order;
  std::map<std::string, std::vector<Item>> by_variant;
  for (size_t col = 0; col < columns.size(); ++col) {
    for_column(reports, columns[col], [&](const CaseRecord& c) {
      auto seq = c.params.find("seq");
      if (!drawable(c) || seq == c.params.end() || !seq->is_number() || !(seq->get<double>() > 0)) return;
      if (!by_variant.count(c.variant)) order.push_back(c.variant);
      by_variant[c.variant].push_back({col, &c, seq->get<double>()});
    });
  }

  std::vector<SeqChart> charts;
  for (const auto& variant : order) {
    const auto& items = by_variant[variant];
    // A parameter that equals seq at two or more different lengths follows
    // seq (kv_seq, table_len): it is written "=seq" so those points join
    // one line; one that equals seq once by coincidence stays itself.
    std::map<std::string, std::set<std::string>> equal_at;  // param -> seq values where param == seq
    for (const auto& it : items) {
      const std::string seq = canonical_value(it.c->params["seq"]);
      for (const auto& [k, v] : it.c->params.items()) {
        if (k != "seq" && canonical_value(v) == seq) equal_at[k].insert(seq);
      }
    }
    auto follows_seq = [&](const std::string& k) { return equal_at.count(k) && equal_at[k].size() >= 2; };

    struct Group {
      size_t column;
      std::string impl, dtype;
      std::map<std::string, std::string> params;  // seq excluded
      std::vector<SeqPoint> points;
    };
    std::vector<Group> groups;
    std::map<std::string, size_t> group_of;
    for (const auto& it : items) {
      const std::string seq = canonical_value(it.c->params["seq"]);
      std::map<std::string, std::string> params;
      for (const auto& [k, v] : it.c->params.items()) {
        if (k == "seq" || k == "impl" || k == "dtype") continue;
        const std::string value = canonical_value(v);
        params[k] = follows_seq(k) && value == seq ? "seq" : value;
      }
      std::string key = fmt::format("{}|{}|{}", it.column, it.c->impl, it.c->dtype);
      for (const auto& [k, v] : params) key += "|" + k + "=" + v;
      auto [pos, fresh] = group_of.emplace(key, groups.size());
      if (fresh) groups.push_back({it.column, it.c->impl, it.c->dtype, params, {}});
      groups[pos->second].points.push_back({it.seq, it.c->time->median, it.c});
    }
    // Name each line by what tells it apart: device column (when several),
    // impl, dtype, and the parameters that differ between lines.
    std::set<std::string> varying;
    for (const auto& g : groups) {
      for (const auto& [k, v] : g.params) {
        for (const auto& h : groups) {
          auto other = h.params.find(k);
          if (other == h.params.end() || other->second != v) varying.insert(k);
        }
      }
    }
    SeqChart chart;
    chart.variant = variant;
    for (auto& g : groups) {
      std::sort(g.points.begin(), g.points.end(), [](const SeqPoint& a, const SeqPoint& b) { return a.seq < b.seq; });
      std::string style = g.impl + " " + g.dtype;
      for (const auto& k : varying) {
        auto v = g.params.find(k);
        if (v != g.params.end()) style += " " + k + "=" + v->second;
      }
      // The column's short name only: the page says once which device it is.
      std::string name = columns.size() > 1 ? columns[g.column].name + " · " + style : style;
      chart.series.push_back({name, style, g.column, std::move(g.points)});
    }
    charts.push_back(std::move(chart));
  }
  return charts;
}

std::vector<OverheadChart> overhead_charts(const std::vector<ReportFile>& reports,
                                           const std::vector<MatrixColumn>& columns) {
  std::vector<OverheadChart> charts;
  for (size_t col = 0; col < columns.size(); ++col) {
    std::vector<const CaseRecord*> refs, encoded;
    for_column(reports, columns[col], [&](const CaseRecord& c) {
      if (!drawable(c)) return;
      if (c.variant == kOverheadReference) {
        refs.push_back(&c);
      } else if (c.family() == "attn") {
        encoded.push_back(&c);
      }
    });
    if (refs.empty()) continue;
    std::map<std::tuple<std::string, std::string, std::string>, OverheadBarData> bars;
    for (const CaseRecord* e : encoded) {
      std::vector<std::string> best_differs;
      const CaseRecord* best = matching_base(*e, refs, &best_differs);
      if (!best) continue;
      auto& bar = bars[{e->variant, e->impl, e->dtype}];
      bar.variant = e->variant;
      bar.impl = e->impl;
      bar.dtype = e->dtype;
      bar.differs.insert(best_differs.begin(), best_differs.end());
      bar.matches.push_back({e, best, time_ratio(e->time->median, best->time->median), std::move(best_differs)});
    }
    OverheadChart chart;
    chart.column = col;
    for (auto& [key, bar] : bars) {
      std::vector<double> ratios;
      for (const auto& m : bar.matches) ratios.push_back(m.ratio);
      bar.ratio = geometric_mean(ratios);
      chart.bars.push_back(std::move(bar));
    }
    if (!chart.bars.empty()) charts.push_back(std::move(chart));
  }
  return charts;
}

std::vector<RooflineChart> roofline_charts(const std::vector<ReportFile>& reports,
                                           const std::vector<MatrixColumn>& columns) {
  std::vector<RooflineChart> charts;
  for (size_t col = 0; col < columns.size(); ++col) {
    RooflineChart chart;
    chart.column = col;
    const DeviceRecord* device = nullptr;
    for (const auto& d : reports[columns[col].report].devices) {
      if (d.key_name == columns[col].device) device = &d;
    }
    if (!device || !device->peak) continue;
    chart.peak = *device->peak;
    std::map<std::string, size_t> index;
    for_column(reports, columns[col], [&](const CaseRecord& c) {
      if (!drawable(c)) return;
      if (!(c.flops > 0) || !(c.bytes > 0)) {
        ++chart.not_drawn;
        return;
      }
      auto [it, fresh] = index.emplace(c.variant, chart.variants.size());
      if (fresh) chart.variants.push_back({c.variant, {}});
      chart.variants[it->second].second.push_back({c.flops / c.bytes, c.flops / c.time->median, &c});
    });
    charts.push_back(std::move(chart));
  }
  return charts;
}

}  // namespace pebench
