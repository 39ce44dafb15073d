// `pebench list [--json]`: every variant with its impls, parameters,
// defaults and the tensors it reads and writes.
#include <fmt/format.h>

#include <iostream>

#include "cli/command.h"
#include "harness/contract/registry.h"
#include "harness/engine/sweep.h"
#include "harness/output/result.h"

namespace pebench {
namespace {

struct TensorLine {
  std::string name, role, dtype, shape;
};

// The tensors of the variant's default case (shapes as documented symbols).
std::vector<TensorLine> default_tensors(const Variant& v) {
  SweepSpec spec;
  spec.variant_globs = {v.id()};
  std::vector<TensorLine> out;
  for (const auto& pc : expand_sweep(Registry::instance(), spec)) {
    if (!pc.rejected.empty()) continue;
    for (const auto& t : v.make(pc.params)->tensors()) {
      if (t.role != TensorRole::kInput && t.role != TensorRole::kOutput) continue;
      const std::string dtype = t.dtype == DType::kI32 ? "i32" : "dtype";
      out.push_back({t.name, role_name(t.role), dtype, t.shape_doc});
    }
    break;
  }
  return out;
}

class ListCommand : public Command {
 public:
  std::string name() const override { return "list"; }
  std::string description() const override { return "list every variant, its impls, parameters and tensors"; }
  void configure(CLI::App& app) override { app.add_flag("--json", json_, "print JSON"); }

  int run(CLI::App&) override {
    nlohmann::json all = nlohmann::json::array();
    for (const Variant* v : Registry::instance().variants()) {
      const auto tensors = default_tensors(*v);
      if (json_) {
        nlohmann::json params = nlohmann::json::array();
        for (const auto& s : all_params(*v)) {
          nlohmann::json p = {{"key", s.key}, {"type", param_type_name(s.type)}, {"help", s.help}};
          if (s.default_value) {
            Params tmp;
            tmp.set(s.key, *s.default_value);
            p["default"] = params_to_json(tmp)[s.key];
          } else {
            p["default"] = nullptr;
            p["derived"] = s.derived;
          }
          if (!s.choices.empty()) p["choices"] = s.choices;
          params.push_back(p);
        }
        nlohmann::json ts = nlohmann::json::array();
        for (const auto& t : tensors) ts.push_back({{"name", t.name}, {"role", t.role}, {"dtype", t.dtype}, {"shape", t.shape}});
        all.push_back({{"id", v->id()}, {"family", v->family()}, {"summary", v->summary()}, {"impls", v->impls()},
                       {"params", params}, {"tensors", ts}});
        continue;
      }
      std::cout << fmt::format("{}  {}\n", v->id(), v->summary());
      std::string impls;
      for (const auto& i : v->impls()) impls += (impls.empty() ? "" : ", ") + i;
      std::cout << fmt::format("    impls: {}\n", impls);
      std::string reads, writes;
      for (const auto& t : tensors) {
        std::string& dst = t.role == "input" ? reads : writes;
        dst += (dst.empty() ? "" : ", ") + t.name + " " + t.shape + (t.dtype == "i32" ? " i32" : "");
      }
      std::cout << fmt::format("    reads: {}\n    writes: {}\n", reads, writes);
      std::cout << "    params:\n";
      for (const auto& s : all_params(*v)) {
        std::string def = s.default_value ? param_to_string(*s.default_value) : "= " + s.derived;
        std::string choices;
        for (const auto& c : s.choices) choices += (choices.empty() ? " {" : "|") + c;
        if (!choices.empty()) choices += "}";
        std::cout << fmt::format("      {:<24} {:<6} {:<14} {}{}\n", s.key, param_type_name(s.type), def, s.help,
                                 choices);
      }
    }
    if (json_) std::cout << all.dump(2) << "\n";
    return 0;
  }

 private:
  bool json_ = false;
};

PEBENCH_REGISTER_COMMAND(ListCommand);

}  // namespace
}  // namespace pebench
