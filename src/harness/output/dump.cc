#include "harness/output/dump.h"

#include <filesystem>

#include "harness/output/npy.h"
#include "harness/output/report.h"
#include "harness/output/result.h"

namespace pebench {

std::string dump_case(const std::string& dir, const std::string& case_id, const std::string& variant,
                      const Params& params, const TensorMap& tensors) {
  const std::filesystem::path folder = std::filesystem::path(dir) / case_id;
  std::filesystem::create_directories(folder);
  nlohmann::json meta;
  meta["id"] = case_id;
  meta["variant"] = variant;
  meta["impl"] = params.impl();
  meta["dtype"] = params.s("dtype");
  meta["params"] = params_to_json(params);
  meta["inputs"] = nlohmann::json::array();
  meta["outputs"] = nlohmann::json::array();
  meta["tensors"] = nlohmann::json::object();
  for (const auto& [name, t] : tensors) {
    const TensorRole role = t.desc().role;
    if (role != TensorRole::kInput && role != TensorRole::kOutput) continue;
    meta[role == TensorRole::kInput ? "inputs" : "outputs"].push_back(name);
    meta["tensors"][name] = {{"dtype", dtype_name(t.desc().dtype)}, {"shape", t.desc().shape}};
    write_npy((folder / (name + ".npy")).string(), t);
  }
  write_file_atomic((folder / "meta.json").string(), meta.dump(2) + "\n");
  return folder.string();
}

}  // namespace pebench
