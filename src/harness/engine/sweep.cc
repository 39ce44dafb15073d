#include "harness/engine/sweep.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "harness/contract/errors.h"
#include "harness/contract/rng.h"

namespace pebench {

std::vector<ParamSpec> all_params(const Variant& v) {
  std::vector<ParamSpec> specs = v.params();
  specs.push_back(enum_param("dtype", "f32", {"f32", "f16"}, "storage dtype (kernels accumulate in f32)"));
  const auto impls = v.impls();
  specs.push_back(enum_param("impl", impls.front(), impls, "implementation"));
  return specs;
}

std::vector<std::string> split_list(const std::string& text, const std::string& what) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    // Trim spaces around an item.
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item.empty()) {
      throw UsageError(fmt::format("malformed list for {}: '{}' has an empty item", what, text));
    }
    items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

namespace {

const ParamSpec* find_spec(const std::vector<ParamSpec>& specs, const std::string& key) {
  for (const auto& s : specs) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

const std::vector<std::string>* lookup(const SweepSpec& spec, const Variant& v, const std::string& key) {
  if (auto it = spec.axes.find(key); it != spec.axes.end()) return &it->second;
  const std::vector<std::string>* found = nullptr;
  for (const auto& [glob, axes] : spec.preset_overrides) {
    if (fnmatch(glob.c_str(), v.id().c_str(), 0) != 0) continue;
    if (auto it = axes.find(key); it != axes.end()) found = &it->second;
  }
  if (found) return found;
  if (auto it = spec.preset_axes.find(key); it != spec.preset_axes.end()) return &it->second;
  return nullptr;
}

bool is_shape_key(const std::string& key) {
  for (const char* k : {"batch", "heads", "kv_heads", "seq", "kv_seq", "dim", "d_model"}) {
    if (key == k) return true;
  }
  return false;
}

// A value given for a shape key: a size, so from 1 to kMaxShapeValue; bad
// input (exit 2) when not, rather than a sweep of cases that cannot run.
void check_shape_value(const std::string& key, const std::string& text, const ParamValue& value) {
  const auto* v = std::get_if<int64_t>(&value);
  if (v && (*v < 1 || *v > kMaxShapeValue)) {
    throw UsageError(fmt::format("invalid value '{}' for parameter {}: must be from 1 to {}", text, key,
                                 kMaxShapeValue));
  }
}

int64_t parse_int_or_throw(const std::string& key, const std::string& text) {
  const ParamValue value = parse_param_value(int_param(key, 0, ""), text);
  check_shape_value(key, text, value);
  return std::get<int64_t>(value);
}

}  // namespace

void resolve_params(const Variant& v, Params& p) {
  const auto specs = all_params(v);
  if (find_spec(specs, "kv_heads") && !p.has("kv_heads") && p.has("heads")) p.set("kv_heads", p.get("heads"));
  if (find_spec(specs, "kv_seq") && !p.has("kv_seq") && p.has("seq")) p.set("kv_seq", p.get("seq"));
  for (const char* key : {"batch", "heads", "kv_heads", "seq", "kv_seq", "dim", "d_model"}) {
    if (p.has(key) && p.i(key) < 1) throw CaseRejected(fmt::format("{}={} must be at least 1", key, p.i(key)));
  }
  if (p.has("kv_seq") && p.has("seq") && p.i("kv_seq") < p.i("seq")) {
    throw CaseRejected(fmt::format("kv_seq={} is less than seq={}: the queries are the last N of the M positions",
                                   p.i("kv_seq"), p.i("seq")));
  }
  if (p.has("kv_heads") && p.has("heads") && p.i("heads") % p.i("kv_heads") != 0) {
    throw CaseRejected(fmt::format("heads={} is not divisible by kv_heads={}", p.i("heads"), p.i("kv_heads")));
  }
  // The kernels take parameters as f32: a value past its range (alpha=1e300)
  // became inf there and the case "failed" while its float64 reference was
  // fine. Such a case cannot be represented: skipped, with the reason.
  const auto check_floats = [&] {
    for (const auto& s : specs) {
      if (s.type != ParamType::kFloat || !p.has(s.key)) continue;
      const auto* x = std::get_if<double>(&p.get(s.key));
      if (x && !(std::fabs(*x) <= std::numeric_limits<float>::max())) {
        throw CaseRejected(fmt::format("{}={} cannot be represented in f32, the type the kernels take it in "
                                       "(largest finite {})",
                                       s.key, *x, std::numeric_limits<float>::max()));
      }
    }
  };
  check_floats();
  v.resolve(p);
  check_floats();  // and what resolve derived
  for (const auto& s : specs) {
    // A derived parameter whose derivation is "off" may stay absent: off,
    // and left out of the case's params (attn's masks and modifiers,
    // suites/attn/attn_mask.cc), so cases without it keep their keys.
    if (!p.has(s.key) && s.derived != "off") throw std::logic_error(v.id() + ": parameter " + s.key + " left unresolved");
  }
}

std::string case_id(uint32_t device, const Variant& v, const Params& p) {
  const uint64_t h = fnv1a(p.canonical());
  return fmt::format("d{}-{}-{}-{}-{:08x}", device, v.id(), p.impl(), p.s("dtype"),
                     static_cast<uint32_t>(h ^ (h >> 32)));
}

namespace {

// The variants the globs name (all without any), each once, in glob order.
std::vector<const Variant*> select_variants(const Registry& registry, const SweepSpec& spec) {
  std::vector<const Variant*> selected;
  const std::vector<std::string> globs = spec.variant_globs.empty() ? std::vector<std::string>{"*"}
                                                                    : spec.variant_globs;
  for (const auto& glob : globs) {
    const auto matched = registry.match(glob);
    if (matched.empty()) {
      throw UsageError(fmt::format("unknown variant '{}': no registered variant matches it (see `pebench list`)",
                                   glob));
    }
    for (const Variant* v : matched) {
      if (std::find(selected.begin(), selected.end(), v) == selected.end()) selected.push_back(v);
    }
  }
  return selected;
}

// Every command-line key and impl must belong to some selected variant.
void check_keys_and_impls(const std::vector<const Variant*>& selected, const SweepSpec& spec) {
  for (const auto& [key, values] : spec.axes) {
    bool known = false;
    for (const Variant* v : selected) {
      const auto specs = all_params(*v);
      // heads and dim also set an input-side variant's d_model (heads * dim).
      const bool via_d_model = (key == "heads" || key == "dim") && find_spec(specs, "d_model") != nullptr;
      known = known || via_d_model || find_spec(specs, key) != nullptr;
    }
    if (!known) {
      throw UsageError(fmt::format("unknown parameter '{}': no selected variant has it (see `pebench list`)", key));
    }
  }
  for (const auto& impl : spec.impls) {
    bool known = false;
    for (const Variant* v : selected) {
      const auto impls = v->impls();
      known = known || std::find(impls.begin(), impls.end(), impl) != impls.end();
    }
    if (!known) throw UsageError(fmt::format("unknown impl '{}': no selected variant has it", impl));
  }
}

// d_model without a value of its own: every heads * dim the sweep names
// (heads 8 and dim 64 where it names none).
std::vector<ParamValue> d_model_values(const SweepSpec& spec, const Variant& v) {
  const auto* heads = lookup(spec, v, "heads");
  const auto* dims = lookup(spec, v, "dim");
  const uint64_t pairs = uint64_t(heads ? heads->size() : 1) * uint64_t(dims ? dims->size() : 1);
  if (pairs > spec.max_cases) {
    throw UsageError(fmt::format("the sweep has at least {} cases ({}: {} heads x {} dims), over the limit of {}; "
                                 "narrow it, or raise the limit with --max-cases",
                                 pairs, v.id(), heads ? heads->size() : 1, dims ? dims->size() : 1, spec.max_cases));
  }
  std::set<int64_t> products;
  for (const auto& h : heads ? *heads : std::vector<std::string>{"8"}) {
    for (const auto& d : dims ? *dims : std::vector<std::string>{"64"}) {
      products.insert(parse_int_or_throw("heads", h) * parse_int_or_throw("dim", d));
    }
  }
  return std::vector<ParamValue>(products.begin(), products.end());
}

// `values` without repeats, keeping the first occurrence's order.
std::vector<ParamValue> without_repeats(std::vector<ParamValue> values) {
  std::vector<ParamValue> unique;
  std::set<ParamValue> seen;
  for (auto& x : values) {
    if (seen.insert(x).second) unique.push_back(std::move(x));
  }
  return unique;
}

// One variant's sweep axes: the values of each key, parsed, in the
// variant's parameter order; keys without values are derived later.
struct VariantAxes {
  std::vector<std::pair<std::string, std::vector<ParamValue>>> axes;
  std::vector<std::string> explicit_keys;
};

// nullopt when the variant has none of the requested impls.
std::optional<VariantAxes> variant_axes(const Variant& v, const SweepSpec& spec) {
  VariantAxes out;
  for (const auto& s : all_params(v)) {
    std::vector<ParamValue> values;
    if (s.key == "impl" && !spec.impls.empty()) {
      for (const auto& impl : spec.impls) {
        if (std::find(s.choices.begin(), s.choices.end(), impl) != s.choices.end()) values.emplace_back(impl);
      }
      if (values.empty()) return std::nullopt;
    } else if (s.key == "impl" && !lookup(spec, v, s.key)) {
      for (const auto& impl : s.choices) values.emplace_back(impl);  // no --impl: every impl
    } else if (const auto* raw = lookup(spec, v, s.key)) {
      if (raw->size() > spec.max_cases) {
        throw UsageError(fmt::format("the sweep has at least {} cases ({} values of {}), over the limit of {}; narrow "
                                     "it, or raise the limit with --max-cases",
                                     raw->size(), raw->size(), s.key, spec.max_cases));
      }
      for (const auto& text : *raw) {
        values.push_back(parse_param_value(s, text));
        if (is_shape_key(s.key)) check_shape_value(s.key, text, values.back());
      }
      out.explicit_keys.push_back(s.key);
    } else if (s.key == "d_model") {
      values = d_model_values(spec, v);
    } else if (s.default_value) {
      values.push_back(*s.default_value);
    }
    auto unique = without_repeats(std::move(values));
    if (!unique.empty()) out.axes.emplace_back(s.key, std::move(unique));
  }
  return out;
}

// Appends the cross product of `va`'s axes, in axis order (odometer), each
// distinct resolved parameter set once; a rejected one carries its reason.
void append_cross_product(const Variant& v, const VariantAxes& va, std::vector<PlannedCase>& planned) {
  const auto& axes = va.axes;
  std::vector<size_t> index(axes.size(), 0);
  std::set<std::string> seen;
  while (true) {
    PlannedCase pc;
    pc.variant = &v;
    pc.explicit_keys = va.explicit_keys;
    for (size_t a = 0; a < axes.size(); ++a) pc.params.set(axes[a].first, axes[a].second[index[a]]);
    try {
      resolve_params(v, pc.params);
    } catch (const CaseRejected& e) {
      pc.rejected = e.what();
    }
    if (seen.insert(pc.params.canonical()).second) planned.push_back(std::move(pc));
    size_t a = axes.size();
    while (a > 0) {
      --a;
      if (++index[a] < axes[a].second.size()) break;
      index[a] = 0;
      if (a == 0) {
        a = SIZE_MAX;
        break;
      }
    }
    if (a == SIZE_MAX || axes.empty()) break;
  }
}

// At most how many cases `axes` of variant `v` make, saturating at UINT64_MAX.
uint64_t case_count(const VariantAxes& axes) {
  uint64_t n = 1;
  for (const auto& [key, values] : axes.axes) {
    n = values.empty() || n <= UINT64_MAX / values.size() ? n * values.size() : UINT64_MAX;
  }
  return n;
}

// Refuses a sweep of more than spec.max_cases cases, naming its count and
// the variant with the most.
void check_case_count(const std::vector<std::pair<const Variant*, VariantAxes>>& axes, const SweepSpec& spec) {
  uint64_t total = 0, most = 0;
  const Variant* largest = nullptr;
  for (const auto& [v, va] : axes) {
    const uint64_t n = case_count(va);
    total = n > UINT64_MAX - total ? UINT64_MAX : total + n;
    if (n > most) most = n, largest = v;
  }
  if (total <= spec.max_cases) return;
  throw UsageError(fmt::format("the sweep has up to {} cases ({} of them {}), over the limit of {}; narrow it, or "
                               "raise the limit with --max-cases",
                               total == UINT64_MAX ? std::string("more than 2^64") : std::to_string(total), most,
                               largest ? largest->id() : "", spec.max_cases));
}

}  // namespace

std::vector<PlannedCase> expand_sweep(const Registry& registry, const SweepSpec& spec) {
  const std::vector<const Variant*> selected = select_variants(registry, spec);
  check_keys_and_impls(selected, spec);
  std::vector<std::pair<const Variant*, VariantAxes>> axes;
  for (const Variant* v : selected) {
    if (auto va = variant_axes(*v, spec)) axes.emplace_back(v, std::move(*va));
  }
  check_case_count(axes, spec);  // counted before any case is built
  std::vector<PlannedCase> planned;
  for (const auto& [v, va] : axes) append_cross_product(*v, va, planned);
  return planned;
}

}  // namespace pebench
