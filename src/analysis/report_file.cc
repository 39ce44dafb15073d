#include "analysis/report_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "analysis/case_key.h"
#include "analysis/json_input.h"
#include "io/input_file.h"

namespace pebench {

std::string CaseRecord::display() const {
  const std::string shape = label.empty() ? params_label(params) : label;
  return fmt::format("{} {} {} {}", variant, impl, dtype, shape);
}

ReportFile& ReportFile::operator=(const ReportFile& other) {
  if (this == &other) return *this;
  path = other.path;
  created = other.created;
  tool = other.tool;
  host = other.host;
  command = other.command;
  injected = other.injected;
  tuned = other.tuned;
  devices = other.devices;
  cases = other.cases;
  relink();
  return *this;
}

ReportFile& ReportFile::operator=(ReportFile&& other) noexcept {
  path = std::move(other.path);
  created = std::move(other.created);
  tool = std::move(other.tool);
  host = std::move(other.host);
  command = std::move(other.command);
  injected = std::move(other.injected);
  tuned = other.tuned;
  devices = std::move(other.devices);
  cases = std::move(other.cases);
  relink();
  return *this;
}

void ReportFile::relink() {
  for (auto& c : cases) {
    c.device_info = nullptr;
    for (const auto& d : devices) {
      if (d.index == c.device) c.device_info = &d;
    }
  }
}

const DeviceRecord* ReportFile::device(const std::string& key_name) const {
  for (const auto& d : devices) {
    if (d.key_name == key_name) return &d;
  }
  return nullptr;
}

std::string ReportFile::host_cpu() const {
  const std::string cpu = json_text(host, "cpu"), id = json_text(host, "cpu_id");
  const std::string cores = json_text(host, "logical_cores");
  std::string out = cpu.empty() ? "unknown CPU" : cpu;
  if (!id.empty()) out += " (" + id + ")";
  if (!cores.empty()) out += ", " + cores + " logical cores";
  return out;
}

bool ReportFile::same_host_cpu(const ReportFile& other) const {
  for (const char* key : {"cpu", "logical_cores"}) {
    if (json_text(host, key) != json_text(other.host, key)) return false;
  }
  const std::string id = json_text(host, "cpu_id"), other_id = json_text(other.host, "cpu_id");
  return id.empty() || other_id.empty() || id == other_id;
}

std::vector<std::string> ReportFile::result_devices() const {
  std::vector<std::string> out;
  for (const auto& d : devices) {
    for (const auto& c : cases) {
      if (c.device_info == &d) {
        out.push_back(d.key_name);
        break;
      }
    }
  }
  return out;
}

std::string ReportFile::tool_string() const {
  auto text = [this](const char* key) {
    auto it = tool.find(key);
    return it != tool.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  // tool.name: a peer's report (tools/peers/) names the tool that ran it.
  std::string name = text("name");
  if (name.empty()) name = "pebench";
  std::string version = text("version");
  if (version.empty()) version = "?";
  std::string commit = text("git_commit");
  if (commit.size() > 7) commit.resize(7);
  return commit.empty() ? name + " " + version : fmt::format("{} {} ({})", name, version, commit);
}

namespace {

// A value from the file as an error message shows it: JSON-escaped (a
// newline in it would break the one-line error) and clipped (a 100 KB
// string is no clearer than its first 60 characters).
std::string shown(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// Field checks that name the file and the field in every message.
class Checker {
 public:
  explicit Checker(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw ReportError(fmt::format("{}: {}{}", path_, where.empty() ? "" : where + ": ", what));
  }

  const nlohmann::json& field(const nlohmann::json& obj, const std::string& where, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(where, fmt::format("\"{}\" is missing", key));
    return *it;
  }
  std::string string(const nlohmann::json& obj, const std::string& where, const char* key) const {
    const auto& v = field(obj, where, key);
    if (!v.is_string()) fail(where, fmt::format("\"{}\" is not a string", key));
    return v.get<std::string>();
  }
  // Optional text: missing or null gives "".
  std::string text(const nlohmann::json& obj, const std::string& where, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return "";
    if (!it->is_string()) fail(where, fmt::format("\"{}\" is not a string", key));
    return it->get<std::string>();
  }
  int64_t integer(const nlohmann::json& obj, const std::string& where, const char* key) const {
    const auto& v = field(obj, where, key);
    if (!v.is_number_integer()) fail(where, fmt::format("\"{}\" is not an integer", key));
    // 2^63 and up parse as unsigned: read as int64_t they wrapped negative.
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      fail(where, fmt::format("\"{}\" is {}, past the largest whole number pebench reads ({})", key,
                              v.get<uint64_t>(), INT64_MAX));
    }
    return v.get<int64_t>();
  }
  // An optional object: null where missing or null, anything else but an
  // object fails at WHERE.KEY.
  const nlohmann::json* maybe_object(const nlohmann::json& obj, const std::string& where, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    if (!it->is_object()) fail(where + "." + key, "is not an object");
    return &*it;
  }
  // A number that the writer may have nulled (non-finite); missing is null too.
  std::optional<double> maybe_number(const nlohmann::json& obj, const std::string& where, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) fail(where, fmt::format("\"{}\" is not a number", key));
    return it->get<double>();
  }
  double number(const nlohmann::json& obj, const std::string& where, const char* key) const {
    const auto v = maybe_number(obj, where, key);
    if (!v) fail(where, fmt::format("\"{}\" is missing or null", key));
    return *v;
  }

 private:
  std::string path_;
};

const std::set<std::string>& known_statuses() {
  static const std::set<std::string> s(kStatusNames.begin(), kStatusNames.end());
  return s;
}

// obj[key] as a list of finite numbers; empty when absent or null.
std::vector<double> number_list(const Checker& ck, const nlohmann::json& obj, const std::string& where,
                                const char* key) {
  std::vector<double> out;
  auto s = obj.find(key);
  if (s == obj.end() || s->is_null()) return out;
  if (!s->is_array()) ck.fail(where, fmt::format("\"{}\" is not a list", key));
  for (size_t i = 0; i < s->size(); ++i) {
    const auto& x = (*s)[i];
    if (!x.is_number() || !std::isfinite(x.get<double>())) {
      ck.fail(where, fmt::format("{}[{}] is not a finite number", key, i));
    }
    out.push_back(x.get<double>());
  }
  return out;
}

std::optional<TimeRecord> parse_time(const Checker& ck, const nlohmann::json& r, const std::string& where) {
  const nlohmann::json* it = ck.maybe_object(r, where, report_key::kTimeNs);
  if (!it) return std::nullopt;
  const std::string w = where + ".time_ns";
  const auto median = ck.maybe_number(*it, w, report_key::kMedian);
  if (!median) return std::nullopt;  // an unmeasurable case written as null
  TimeRecord t;
  t.median = *median;
  if (t.median < 0) ck.fail(w, fmt::format("\"median\" is negative ({})", t.median));
  t.min = ck.maybe_number(*it, w, report_key::kMin).value_or(t.median);
  t.max = ck.maybe_number(*it, w, report_key::kMax).value_or(t.median);
  t.samples = number_list(ck, *it, w, report_key::kSamples);
  if (it->contains(report_key::kStartedNs)) {
    t.started_ns = number_list(ck, *it, w, report_key::kStartedNs);
    if (t.started_ns.size() != t.samples.size()) {
      ck.fail(w, fmt::format("\"started_ns\" has {} values for {} samples", t.started_ns.size(), t.samples.size()));
    }
    for (double s : t.started_ns) {
      if (s < 0) ck.fail(w, fmt::format("\"started_ns\" holds a negative time ({})", s));
    }
  }
  t.timing = ck.text(r, where, report_key::kTiming);
  if (const nlohmann::json* cpu = ck.maybe_object(r, where, report_key::kCpuNs)) {
    const std::string wc = where + ".cpu_ns";
    t.cpu_median = ck.number(*cpu, wc, report_key::kMedian);
    t.cpu_samples = number_list(ck, *cpu, wc, report_key::kSamples);
  }
  return t;
}

// An ok case was timed: without a positive, finite median it could be
// counted nowhere, and a gate would pass on a case it never compared.
void require_usable_time(const Checker& ck, const nlohmann::json& r, const std::optional<TimeRecord>& t,
                         const std::string& where) {
  if (t && t->median > 0 && std::isfinite(t->median)) return;
  const auto it = r.find(report_key::kTimeNs);
  if (it == r.end() || it->is_null()) ck.fail(where, "an ok case needs \"time_ns\" (got null)");
  const auto median = it->find(report_key::kMedian);
  ck.fail(where + ".time_ns", fmt::format("an ok case needs a positive finite \"median\" (got {})",
                                          median == it->end() ? "nothing" : shown(*median)));
}

std::optional<ValidationRecord> parse_validation(const Checker& ck, const nlohmann::json& r,
                                                 const std::string& where) {
  const nlohmann::json* it = ck.maybe_object(r, where, report_key::kValidation);
  if (!it) return std::nullopt;
  const std::string w = where + ".validation";
  ValidationRecord v;
  const auto& passed = ck.field(*it, w, report_key::kPassed);
  if (!passed.is_boolean()) ck.fail(w, "\"passed\" is not true/false");
  v.passed = passed.get<bool>();
  v.nmse = ck.maybe_number(*it, w, report_key::kNmse);
  v.max_abs = ck.maybe_number(*it, w, report_key::kMaxAbs);
  v.max_rel = ck.maybe_number(*it, w, report_key::kMaxRel);
  if (auto t = it->find(report_key::kTolerance); t != it->end() && t->is_object()) {
    v.tol_nmse = ck.maybe_number(*t, w + ".tolerance", report_key::kNmse);
    v.tol_max_rel = ck.maybe_number(*t, w + ".tolerance", report_key::kMaxRel);
    v.tol_model = ck.text(*t, w + ".tolerance", report_key::kModel);
  }
  v.detail = ck.text(*it, w, report_key::kDetail);
  // A count past int64_t (1e300) made the cast undefined.
  auto count = [&](const char* key) -> std::optional<int64_t> {
    const auto n = ck.maybe_number(*it, w, key);
    if (!n) return std::nullopt;
    if (!(*n >= 0 && *n < 0x1p63)) ck.fail(w, fmt::format("\"{}\" is {}, not a count", key, shown((*it)[key])));
    return static_cast<int64_t>(*n);
  };
  if (auto n = count(report_key::kRowsChecked)) v.rows_checked = *n;
  if (auto n = count(report_key::kRowsTotal)) v.rows_total = *n;
  return v;
}

std::optional<PeakRecord> parse_peak(const Checker& ck, const nlohmann::json& d, const std::string& where) {
  const nlohmann::json* it = ck.maybe_object(d, where, "peak");
  if (!it) return std::nullopt;
  const std::string w = where + ".peak";
  PeakRecord p;
  p.copy_gbps = ck.number(*it, w, "copy_gbps");
  p.f32_gflops = ck.number(*it, w, "f32_gflops");
  p.f16_gflops = ck.maybe_number(*it, w, "f16_gflops");
  if (!(p.copy_gbps > 0) || !(p.f32_gflops > 0)) ck.fail(w, "copy_gbps and f32_gflops must be positive");
  return p;
}

std::optional<RooflineRecord> parse_roofline(const Checker& ck, const nlohmann::json& r, const std::string& where) {
  const nlohmann::json* it = ck.maybe_object(r, where, report_key::kRoofline);
  if (!it) return std::nullopt;
  const std::string w = where + ".roofline";
  RooflineRecord rl;
  rl.bound = ck.string(*it, w, report_key::kBound);
  if (rl.bound != "memory" && rl.bound != "compute") ck.fail(w, fmt::format("unknown bound \"{}\"", rl.bound));
  rl.fraction = ck.number(*it, w, report_key::kFraction);
  return rl;
}

std::optional<TuningRecord> parse_tuning(const Checker& ck, const nlohmann::json& r, const std::string& where) {
  const nlohmann::json* it = ck.maybe_object(r, where, report_key::kTuning);
  if (!it) return std::nullopt;
  const std::string w = where + ".tuning";
  TuningRecord t;
  t.knob = ck.string(*it, w, report_key::kKnob);
  t.planned = ck.integer(*it, w, report_key::kPlanned);
  t.chosen = ck.integer(*it, w, report_key::kChosen);
  const auto& candidates = ck.field(*it, w, report_key::kCandidates);
  if (!candidates.is_array()) ck.fail(w, "\"candidates\" is not a list");
  bool chosen_ran = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string wc = fmt::format("{}.candidates[{}]", w, i);
    const auto& c = candidates[i];
    if (!c.is_object()) ck.fail(wc, "is not an object");
    TuningRecord::Candidate one;
    one.value = ck.integer(c, wc, report_key::kValue);
    one.status = ck.string(c, wc, report_key::kStatus);
    if (!known_statuses().count(one.status)) ck.fail(wc, fmt::format("unknown status {}", shown(one.status)));
    one.reason = ck.text(c, wc, report_key::kReason);
    one.median_ns = ck.maybe_number(c, wc, report_key::kMedianNs);
    if (one.status == "ok" && !(one.median_ns && *one.median_ns > 0)) {
      ck.fail(wc, "an ok candidate needs a positive \"median_ns\"");
    }
    chosen_ran = chosen_ran || (one.value == t.chosen && one.status == "ok");
    t.candidates.push_back(std::move(one));
  }
  t.from = ck.text(*it, w, report_key::kFrom);
  // What the case ran was measured, unless the planner's value stood alone
  // or an earlier report chose it.
  if (!chosen_ran && t.chosen != t.planned && t.from.empty()) {
    ck.fail(w, fmt::format("\"chosen\" {} is not a candidate that ran", t.chosen));
  }
  return t;
}

std::vector<PipelineRecordView> parse_pipelines(const Checker& ck, const nlohmann::json& r, const std::string& where) {
  std::vector<PipelineRecordView> out;
  auto it = r.find(report_key::kPipelines);
  if (it == r.end() || it->is_null()) return out;
  if (!it->is_array()) ck.fail(where, "\"pipelines\" is not a list");
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string w = fmt::format("{}.pipelines[{}]", where, i);
    const auto& p = (*it)[i];
    if (!p.is_object()) ck.fail(w, "is not an object");
    PipelineRecordView v;
    v.shader = ck.string(p, w, report_key::kShader);
    v.storage = ck.text(p, w, report_key::kStorage);
    if (auto ls = p.find(report_key::kLocalSize); ls != p.end() && ls->is_array()) {
      for (const auto& x : *ls) {
        if (!x.is_number_unsigned()) ck.fail(w, "\"local_size\" holds a non-integer");
        v.local_size.push_back(x.get<uint32_t>());
      }
    }
    if (auto sc = p.find(report_key::kSpecConstants); sc != p.end() && sc->is_object()) {
      for (const auto& [k, x] : sc->items()) v.spec += (v.spec.empty() ? "" : " ") + k + "=" + x.dump();
    }
    if (auto st = p.find(report_key::kStats); st != p.end() && !st->is_null()) {
      if (!st->is_object()) ck.fail(w, "\"stats\" is not an object");
      for (const auto& [k, x] : st->items()) {
        if (x.is_null()) continue;
        if (!x.is_number()) ck.fail(w, fmt::format("stats \"{}\" is not a number", k));
        v.stats.emplace_back(k, x.get<double>());
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

ReportFile parse_report(const nlohmann::json& doc, const std::string& path) {
  const Checker ck(path);
  if (!doc.is_object()) ck.fail("", "not a pebench report (the top level is not a JSON object)");
  auto schema = doc.find(report_key::kSchema);
  if (schema == doc.end()) ck.fail("", "not a pebench report (no \"schema\" field)");
  if (!schema->is_string() || schema->get<std::string>() != kReportSchema) {
    ck.fail("", fmt::format("unsupported schema {} (this pebench reads {})", shown(*schema), kReportSchema));
  }
  ReportFile rep;
  rep.path = path;
  rep.created = ck.text(doc, "", report_key::kCreated);
  if (auto t = doc.find(report_key::kTool); t != doc.end() && t->is_object()) rep.tool = *t;
  if (auto h = doc.find(report_key::kHost); h != doc.end() && h->is_object()) rep.host = *h;
  if (auto c = doc.find(report_key::kCommand); c != doc.end() && c->is_array()) rep.command = *c;
  if (auto run = doc.find(report_key::kRun); run != doc.end() && run->is_object()) {
    if (auto inj = run->find(report_key::kInjectSlowdown); inj != run->end() && !inj->is_null()) rep.injected = *inj;
    if (auto tune = run->find(report_key::kTune); tune != run->end() && tune->is_boolean()) rep.tuned = *tune;
  }

  const auto& devices = ck.field(doc, "", report_key::kDevices);
  if (!devices.is_array()) ck.fail("", "\"devices\" is not a list");
  std::map<std::string, int> name_count;
  std::set<int64_t> indices;
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string w = fmt::format("devices[{}]", i);
    const auto& d = devices[i];
    if (!d.is_object()) ck.fail(w, "is not an object");
    DeviceRecord dev;
    dev.index = ck.integer(d, w, "index");
    if (!indices.insert(dev.index).second) ck.fail(w, fmt::format("device index {} appears twice", dev.index));
    dev.name = ck.string(d, w, "name");
    const int seen = name_count[dev.name]++;
    dev.key_name = seen ? fmt::format("{} #{}", dev.name, seen + 1) : dev.name;
    dev.device_type = ck.text(d, w, "device_type");
    dev.driver_name = ck.text(d, w, "driver_name");
    dev.driver_info = ck.text(d, w, "driver_info");
    dev.driver_version = ck.text(d, w, "driver_version");
    dev.api_version = ck.text(d, w, "api_version");
    if (auto v = d.find("vendor_id"); v != d.end() && v->is_number_integer()) dev.vendor_id = v->get<int64_t>();
    dev.peak = parse_peak(ck, d, w);
    rep.devices.push_back(std::move(dev));
  }

  const auto& results = ck.field(doc, "", report_key::kResults);
  if (!results.is_array()) ck.fail("", "\"results\" is not a list");
  std::map<std::string, size_t> first_seen;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string w = fmt::format("results[{}]", i);
    const auto& r = results[i];
    if (!r.is_object()) ck.fail(w, "is not an object");
    CaseRecord c;
    c.ordinal = i;
    c.id = ck.text(r, w, report_key::kId);
    c.variant = ck.string(r, w, report_key::kVariant);
    c.impl = ck.string(r, w, report_key::kImpl);
    c.dtype = ck.string(r, w, report_key::kDtype);
    c.params = ck.field(r, w, report_key::kParams);
    if (!c.params.is_object()) ck.fail(w, "\"params\" is not an object");
    c.label = ck.text(r, w, report_key::kLabel);
    c.status = ck.string(r, w, report_key::kStatus);
    if (!known_statuses().count(c.status)) ck.fail(w, fmt::format("unknown status {}", shown(c.status)));
    c.reason = ck.text(r, w, report_key::kReason);
    c.device = ck.integer(r, w, report_key::kDevice);
    if (!indices.count(c.device)) ck.fail(w, fmt::format("device {} is not in \"devices\"", c.device));
    c.time = parse_time(ck, r, w);
    if (c.ok()) require_usable_time(ck, r, c.time, w);
    c.validation = parse_validation(ck, r, w);
    c.roofline = parse_roofline(ck, r, w);
    c.bytes = ck.maybe_number(r, w, report_key::kBytes).value_or(0);
    c.flops = ck.maybe_number(r, w, report_key::kFlops).value_or(0);
    if (auto e = r.find(report_key::kVkValidationErrors); e != r.end() && e->is_number_unsigned()) {
      c.vk_validation_errors = e->get<uint64_t>();
    }
    if (auto v = r.find(report_key::kVkValidation); v != r.end() && v->is_object()) {
      std::map<std::string, uint64_t> warnings;
      if (auto ws = v->find(report_key::kWarnings); ws != v->end() && ws->is_object()) {
        for (const auto& [id, n] : ws->items()) {
          if (n.is_number_unsigned()) warnings[id] = n.get<uint64_t>();
        }
      }
      c.vk_warnings = std::move(warnings);
    }
    c.pipelines = parse_pipelines(ck, r, w);
    c.tuning = parse_tuning(ck, r, w);
    c.key = case_key(c.variant, c.impl, c.dtype, c.params);
    // Two results with one key would make matching ambiguous.
    const std::string device_key = std::to_string(c.device) + "\n" + c.key;
    if (auto [it, fresh] = first_seen.emplace(device_key, i); !fresh) {
      ck.fail(w, fmt::format("the same case as results[{}] ({} on device {})", it->second, shown(c.variant), c.device));
    }
    rep.cases.push_back(std::move(c));
  }
  // Re-point cases at devices now that both vectors are final.
  ReportFile out = std::move(rep);
  return out;
}

namespace {

// A report is a few hundred KiB; anything this large is not one, and reading
// it whole (say /dev/zero) would exhaust memory first.
constexpr size_t kMaxReportBytes = size_t(1) << 30;

std::string read_report_text(const std::string& path) {
  try {
    return read_input_file(path, kMaxReportBytes, "report");
  } catch (const InputFileError& e) {
    throw ReportError(e.what());
  }
}

}  // namespace

ReportFile load_report(const std::string& path) {
  const std::string text = read_report_text(path);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw ReportError(path + ": empty file");
  try {
    return parse_report(parse_untrusted_json(text), path);
  } catch (const JsonInputError& e) {
    throw ReportError(fmt::format("{}: {}", path, e.what()));
  }
}

std::vector<ReportFile> load_reports(const std::vector<std::string>& paths) {
  std::vector<ReportFile> reports;
  for (const auto& p : paths) reports.push_back(load_report(p));
  return reports;
}

}  // namespace pebench
