// How the analysis tools print times, ratios and p-values: short, fixed
// significant digits, the same in text, markdown and HTML.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pebench {

// How format_ns writes a time: in every style the unit is the largest of
// ns, us, ms, s that the time reaches.
enum class NsStyle {
  kFixed,        // "86.76 us", "1.367 ms", "2.500 s"; 3 significant digits past the ranges runs produce
  kFixedUpToMs,  // as kFixed, but never in seconds ("2500.000 ms"): the run table's column
  kCompact,      // axis labels: "100 us", "1.5 ms" (at most 3 significant digits, no padding)
};
std::string format_ns(double ns, NsStyle style = NsStyle::kFixed);
std::string format_ns(const std::optional<double>& ns);  // "-" when absent
std::string format_ratio(double r);                   // "1.015"
std::string format_ratio(const std::optional<double>& r);
std::string format_p(const std::optional<double>& p);  // "0.043", "2.1e-05", "-"
std::string format_percent(double fraction);          // "+12.3%", "-4.0%"
std::string format_number(const std::optional<double>& v);  // "5.2e-16", "-"
// A size: exact below 1 MiB ("1 byte", "65535 bytes"; a profile's
// maxStorageBufferRange of 1 printed "0.0 MiB"), else "128.0 MiB".
std::string format_bytes(double bytes);
// parts with sep between them ("a; b; c").
std::string join(const std::vector<std::string>& parts, const std::string& sep);
// Two sizes side by side (a need and its limit): as format_bytes, but both
// exact when format_bytes would print them alike ("1.0 MiB" and "1.0 MiB").
std::pair<std::string, std::string> format_bytes_pair(double a, double b);

}  // namespace pebench

namespace pebench {
// A --threshold for people: "10%" below 1, "20x" (as a ratio) from 1 up.
std::string format_threshold(double threshold);
}  // namespace pebench
