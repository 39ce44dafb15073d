// The contract between the harness and a variant (shape of llama.cpp's
// test-backend-ops): a Variant declares its id, impls and parameters and
// builds a Case for one parameter set; a Case declares its tensors, fills its
// inputs, computes the float64 reference, records its dispatches and states
// its cost and tolerance. The harness does everything else (sweep,
// allocation, upload, warm-up, timing, read-back, validation, dumps, reports),
// so adding a variant is a shader, a suite file with one
// PEBENCH_REGISTER_VARIANT, and nothing else.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "harness/contract/dtype.h"
#include "harness/contract/errors.h"
#include "harness/contract/launch.h"
#include "harness/contract/params.h"
#include "harness/contract/rng.h"
#include "harness/contract/tensor.h"
#include "runtime/device_limits.h"

namespace pebench {

// encodings.md section 4: bytes = every spec input read once + every output
// written once, flops = 2 per required multiply-add.
struct Cost {
  double bytes = 0;
  double flops = 0;
};
// Bytes of every kInput and kOutput tensor (constants and scratch excluded).
double io_bytes(const std::vector<TensorDesc>& tensors);

struct Tolerance {
  double nmse = 1e-6;     // pass iff nmse <= this ...
  double max_rel = 0;     // ... and, when > 0, max_rel <= this
  std::string model;      // the error model it comes from, one line
};

// Push-constant words, packed in declaration order (all 4-byte scalars, which
// is what std430 push-constant blocks of scalars look like).
class PushConstants {
 public:
  PushConstants& u32(uint32_t v) {
    words_.push_back(v);
    return *this;
  }
  PushConstants& i32(int32_t v) { return u32(static_cast<uint32_t>(v)); }
  PushConstants& f32(float v) {
    uint32_t w;
    std::memcpy(&w, &v, 4);
    return u32(w);
  }
  const std::vector<uint32_t>& words() const { return words_; }

 private:
  std::vector<uint32_t> words_;
};

// One compute dispatch, as a case describes it.
struct Dispatch {
  std::string shader;                    // file stem of shaders/**/<shader>.comp
  std::vector<std::string> buffers;      // tensor names bound at bindings 0..n-1
  std::vector<uint32_t> spec_constants;  // constant_id i = spec_constants[i]
  // (constant_id, name) of constants the host sets by the shader's name for
  // them: creating the pipeline fails where the shader declares that id
  // under another name (a host/shader mismatch).
  std::vector<std::pair<uint32_t, std::string>> spec_names;
  // Appends the next constant (constant_id spec_constants.size()) under the
  // name the shader declares it with. (The check reads SPIR-V's OpName: the
  // optimizer may give the constant the name of a local const copied from
  // it, so shaders use the constant by its own name.)
  Dispatch& constant(std::string name, uint32_t value) {
    spec_names.emplace_back(static_cast<uint32_t>(spec_constants.size()), std::move(name));
    spec_constants.push_back(value);
    return *this;
  }
  // Sets constant `id` (ids below it the host has not set become 0).
  Dispatch& constant_at(uint32_t id, std::string name, uint32_t value) {
    if (spec_constants.size() <= id) spec_constants.resize(id + 1, 0);
    spec_constants[id] = value;
    spec_names.emplace_back(id, std::move(name));
    return *this;
  }
  PushConstants push;
  std::array<uint32_t, 3> groups{1, 1, 1};
  uint32_t required_subgroup_size = 0;  // 0: driver's choice
  std::optional<DType> storage;         // which build of the shader; default: the case's dtype
};

// What a case records into: dispatches and barriers, in order. The harness
// brackets everything recorded with GPU timestamps. What it says of the
// device is plain numbers (runtime/device_limits.h): no Vulkan types.
class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual const DeviceLimits& limits() const = 0;
  virtual const SubgroupInfo& subgroup() const = 0;
  virtual const DeviceFeatures& enabled() const = 0;
  virtual const LaunchPlanner& launch() const = 0;
  virtual void dispatch(const Dispatch& d) = 0;
  // Makes earlier dispatches' writes visible to later ones.
  virtual void barrier() = 0;
};

// Expected outputs for the rows the harness asked for. A row of an output is
// its last dimension (row r of y[B,N,d] is y[r/N, r%N, :]). Only written rows
// are compared.
class Reference {
 public:
  explicit Reference(const std::vector<TensorDesc>& tensors);
  // Row `r` of output `name`, row_length() doubles, marked as written.
  double* row(const std::string& name, int64_t r);

  struct Output {
    TensorDesc desc;
    std::unordered_map<int64_t, std::vector<double>> rows;
  };
  const std::vector<Output>& outputs() const { return outputs_; }

 private:
  std::vector<Output> outputs_;
};

// One setting of a plan choice that only a measurement on the device can
// make (`run --tune`): the knob's name as the report shows it, and a value.
struct TuningChoice {
  std::string knob;
  int64_t value = 0;
  bool operator==(const TuningChoice& o) const { return knob == o.knob && value == o.value; }
};

class Case {
 public:
  virtual ~Case() = default;
  // The device the case is about to run on, before tensors(): a case whose
  // scratch tensors serve a path only some devices take (CPU devices) sizes
  // them here, and a case whose better plan depends on the device chooses it
  // here (attn.deberta's tables). Without a call (plans, tests of the
  // declaration) the device-free choice stands: every path's tensors at full
  // size, the tables as for a GPU.
  virtual void configure(const LaunchPlanner& launch) {}
  // Every tensor the case uses, in a stable order; spec tensors carry the
  // names of encodings.md.
  virtual std::vector<TensorDesc> tensors() const = 0;
  // Fills every kInput and kConstant tensor (already allocated) from `rng`.
  virtual void fill_inputs(TensorMap& tensors, Rng& rng) const = 0;
  // The row space the harness samples for validation (e.g. B*N tokens).
  virtual int64_t reference_rows() const = 0;
  // Rough float64 operations per reference row, to size the sample.
  virtual double reference_row_cost() const { return 100; }
  // Computes the reference for `rows` (sorted, unique) into `ref`.
  virtual void reference(const TensorMap& tensors, const std::vector<int64_t>& rows, Reference& ref) const = 0;
  // Records the dispatches. May throw Unsupported (device limits).
  virtual void record(Recorder& rec) const = 0;
  virtual Cost cost() const = 0;
  virtual Tolerance tolerance() const = 0;
  // After configure(): the settings of a plan choice worth timing on this
  // device (`run --tune`), the planner's own first; fewer than two: nothing
  // to tune. E.g. the CPU flash kernel's row slots, whose best count
  // depends on the host CPU's caches (docs/attention-kernels.md).
  virtual std::vector<TuningChoice> tuning_choices(const LaunchPlanner& launch) const { return {}; }
  // Plans with `choice`, one of tuning_choices(); tensors() stay the same.
  virtual void select_tuning(const TuningChoice& choice) {}
};

class Variant {
 public:
  virtual ~Variant() = default;
  virtual std::string id() const = 0;       // "family.name", e.g. "rope.apply"
  virtual std::string summary() const = 0;  // one line for `pebench list`
  virtual std::vector<std::string> impls() const { return {"default"}; }
  // Parameters other than `dtype` and `impl` (the harness adds those).
  virtual std::vector<ParamSpec> params() const = 0;
  // Fills this variant's derived defaults and rejects invalid combinations
  // (throw CaseRejected naming the value). Shape keys' derived defaults
  // (kv_heads, kv_seq) and generic checks are done by the harness first.
  virtual void resolve(Params& p) const {}
  // A case for resolved parameters.
  virtual std::unique_ptr<Case> make(const Params& p) const = 0;

  std::string family() const { return id().substr(0, id().find('.')); }
};

}  // namespace pebench
