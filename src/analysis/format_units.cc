#include "analysis/format_units.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pebench {

// Times and ratios in reports may be anything from 1e-300 to 1e308: past the
// ranges real runs produce, fixed notation would print hundreds of digits
// (or "0"), so those get 3 significant digits in exponent form.
std::string format_ns(double ns, NsStyle style) {
  struct Unit {
    double scale;
    const char* fixed;    // kFixed and kFixedUpToMs
    const char* compact;  // kCompact
  };
  static constexpr Unit kUnits[] = {{1, "{:.0f} ns", "{:.3g} ns"},
                                    {1e3, "{:.2f} us", "{:.3g} us"},
                                    {1e6, "{:.3f} ms", "{:.3g} ms"},
                                    {1e9, "{:.3f} s", "{:.3g} s"}};
  if (style == NsStyle::kFixed) {
    if (ns > 0 && ns < 1) return fmt::format("{:.3g} ns", ns);
    if (ns >= 1e15) return fmt::format("{:.3g} s", ns / 1e9);  // over 11 days
  }
  size_t u = ns < 1e3 ? 0 : ns < 1e6 ? 1 : ns < 1e9 ? 2 : 3;
  if (style == NsStyle::kFixedUpToMs) u = std::min<size_t>(u, 2);
  const Unit& unit = kUnits[u];
  return fmt::format(fmt::runtime(style == NsStyle::kCompact ? unit.compact : unit.fixed), ns / unit.scale);
}

std::string format_ns(const std::optional<double>& ns) { return ns ? format_ns(*ns) : "-"; }

std::string format_ratio(double r) {
  if (r != 0 && (std::fabs(r) >= 1e6 || std::fabs(r) < 1e-3)) return fmt::format("{:.3g}", r);
  return fmt::format("{:.3f}", r);
}

std::string format_ratio(const std::optional<double>& r) { return r ? format_ratio(*r) : "-"; }

std::string format_p(const std::optional<double>& p) {
  if (!p) return "-";
  if (*p <= 0) return "<1e-300";  // below double range after erfc underflow
  if (*p >= 0.001) return fmt::format("{:.3f}", *p);
  return fmt::format("{:.1e}", *p);
}

std::string format_percent(double fraction) {
  if (std::fabs(fraction) < 1e4) return fmt::format("{:+.1f}%", fraction * 100);
  // fraction * 100 may overflow: scale the exponent instead of the value.
  const int exponent = static_cast<int>(std::floor(std::log10(std::fabs(fraction))));
  return fmt::format("{:+.2f}e+{}%", fraction / std::pow(10.0, exponent), exponent + 2);
}

std::string format_bytes(double bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  if (bytes < kMiB) return fmt::format("{:.0f} {}", bytes, bytes == 1 ? "byte" : "bytes");
  return fmt::format("{:.1f} MiB", bytes / kMiB);
}

std::pair<std::string, std::string> format_bytes_pair(double a, double b) {
  std::pair<std::string, std::string> out{format_bytes(a), format_bytes(b)};
  if (out.first == out.second && a != b) {
    out = {fmt::format("{:.0f} bytes", a), fmt::format("{:.0f} bytes", b)};
  }
  return out;
}

std::string format_number(const std::optional<double>& v) {
  if (!v) return "-";
  if (*v == 0) return "0";
  return fmt::format("{:.2g}", *v);
}

}  // namespace pebench

namespace pebench {

std::string format_threshold(double threshold) {
  return threshold < 1 ? fmt::format("{:g}%", threshold * 100) : fmt::format("{:g}x", 1 + threshold);
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

}  // namespace pebench
