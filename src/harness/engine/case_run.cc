#include "harness/engine/case_run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <new>

#include "analysis/case_key.h"
#include "analysis/format_units.h"
#include "harness/contract/errors.h"
#include "harness/engine/validate.h"
#include "harness/output/dump.h"

namespace pebench {
namespace {

constexpr uint32_t kSetsPerPool = 64;

double process_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Names, dtypes and shapes: what the buffers were sized and filled for.
bool same_tensors(const std::vector<TensorDesc>& a, const std::vector<TensorDesc>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const TensorDesc& x, const TensorDesc& y) {
    return x.name == y.name && x.dtype == y.dtype && x.shape == y.shape && x.role == y.role;
  });
}

std::string mib(double bytes) { return format_bytes(bytes); }

double host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

// Records a case's dispatches into a command buffer, creating pipelines and
// descriptor sets as it goes; without a command buffer (compile-only) it
// creates the pipelines and checks the dispatches, and records nothing.
// Either way each distinct dispatch's pipeline goes into the result.
class CommandRecorder : public Recorder {
 public:
  CommandRecorder(GpuContext& ctx, CommandBuffer* cmd, CaseResult& result, const TensorLayout& layout,
                  const std::map<std::string, std::unique_ptr<Buffer>>& buffers,
                  std::vector<std::unique_ptr<DescriptorPool>>& pools)
      : ctx_(ctx), cmd_(cmd), result_(result), layout_(layout), buffers_(buffers), pools_(pools) {}

  const DeviceLimits& limits() const override { return ctx_.info().limits; }
  const SubgroupInfo& subgroup() const override { return ctx_.info().subgroup; }
  const DeviceFeatures& enabled() const override { return ctx_.device().enabled(); }
  const LaunchPlanner& launch() const override { return ctx_.launch(); }

  void dispatch(const Dispatch& d) override {
    PipelineDesc desc;
    desc.buffer_count = static_cast<uint32_t>(d.buffers.size());
    desc.push_constant_bytes = static_cast<uint32_t>(d.push.words().size() * 4);
    desc.spec_constants = d.spec_constants;
    desc.spec_names = d.spec_names;
    desc.required_subgroup_size = d.required_subgroup_size;
    const DType storage = d.storage.value_or(result_.params.dtype());
    const ComputePipeline& pipeline = ctx_.pipeline(d.shader, storage, desc);
    check_groups(d);
    note_pipeline(d, storage, pipeline);
    std::vector<BufferRange> bound;
    for (const auto& name : d.buffers) bound.push_back(binding(d.shader, name));
    if (!cmd_) return;

    if (pools_.empty() || sets_in_last_pool_ == kSetsPerPool) {
      pools_.push_back(DescriptorPool::Create(ctx_.device(), kSetsPerPool, kSetsPerPool * 16).value());
      sets_in_last_pool_ = 0;
    }
    VkDescriptorSet set = pools_.back()->allocate_ranges(pipeline, bound).value();
    ++sets_in_last_pool_;
    cmd_->bind(pipeline, set);
    cmd_->push_constants(pipeline, d.push.words().data(), desc.push_constant_bytes);
    cmd_->dispatch(d.groups[0], d.groups[1], d.groups[2]);
  }

  void barrier() override {
    if (cmd_) cmd_->compute_barrier();
  }

 private:
  void check_groups(const Dispatch& d) const {
    const auto& limits = ctx_.info().limits;
    for (int i = 0; i < 3; ++i) {
      if (d.groups[i] < 1 || d.groups[i] > limits.max_compute_work_group_count[i]) {
        throw Unsupported(fmt::format("{}: {} workgroups in dimension {} (device allows {})", d.shader, d.groups[i],
                                      i, limits.max_compute_work_group_count[i]));
      }
    }
  }

  // A binding names a tensor (bound alone, even inside a pack) or a pack
  // (bound whole). Without buffers (compile-only) only the range is real.
  BufferRange binding(const std::string& shader, const std::string& name) const {
    BufferRange r;
    std::string buffer = name;
    size_t bytes = 0;
    if (auto t = layout_.tensors.find(name); t != layout_.tensors.end()) {
      buffer = t->second.buffer;
      r.offset = t->second.offset;
      r.size = bytes = t->second.span();
    } else if (auto b = layout_.buffers.find(name); b != layout_.buffers.end()) {
      bytes = b->second;
    } else {
      throw std::logic_error(shader + ": no tensor or pack named " + name);
    }
    const auto& limits = ctx_.info().limits;
    if (static_cast<double>(bytes) > limits.max_storage_buffer_range) {
      const auto [need, limit] = format_bytes_pair(static_cast<double>(bytes), limits.max_storage_buffer_range);
      throw Unsupported(
          fmt::format("{}: binds {} ({}), more than maxStorageBufferRange ({})", shader, name, need, limit));
    }
    if (auto it = buffers_.find(buffer); it != buffers_.end()) r.buffer = it->second.get();
    return r;
  }

  void note_pipeline(const Dispatch& d, DType storage, const ComputePipeline& pipeline) {
    PipelineRecord rec;
    rec.shader = d.shader;
    rec.storage = dtype_name(storage);
    rec.spec_constants = pipeline.named_spec_constants();
    rec.local_size = pipeline.local_size();
    rec.groups = d.groups;
    rec.stats = pipeline.stats();
    auto& seen = result_.pipelines;
    if (std::find(seen.begin(), seen.end(), rec) == seen.end()) seen.push_back(std::move(rec));
  }

  GpuContext& ctx_;
  CommandBuffer* cmd_;
  CaseResult& result_;
  const TensorLayout& layout_;
  const std::map<std::string, std::unique_ptr<Buffer>>& buffers_;
  std::vector<std::unique_ptr<DescriptorPool>>& pools_;
  uint32_t sets_in_last_pool_ = 0;
};

}  // namespace

CaseRun::~CaseRun() {
  // On a lost device the runtime objects leak themselves instead (Device::lost()).
  ctx_.device().wait_idle();
}

// Runs `steps`, turning what they throw into the result's status and reason.
template <typename Steps>
bool CaseRun::guarded(Steps steps) {
  try {
    steps();
    return true;
  } catch (const CaseRejected& e) {
    result_.status = CaseStatus::kSkipped;
    result_.reason = e.what();
  } catch (const Unsupported& e) {
    result_.status = CaseStatus::kUnsupported;
    result_.reason = e.what();
  } catch (const StatusError& e) {
    const bool oom = e.vk_result() == VK_ERROR_OUT_OF_DEVICE_MEMORY || e.vk_result() == VK_ERROR_OUT_OF_HOST_MEMORY;
    result_.status = oom ? CaseStatus::kUnsupported : CaseStatus::kError;
    result_.reason = oom ? std::string("out of memory: ") + e.what() : e.what();
  } catch (const std::bad_alloc&) {
    // The host ran out of memory for this case (its tensors, the reference):
    // like device memory, a limit of the machine, not a fault (README).
    result_.status = CaseStatus::kUnsupported;
    result_.reason = "out of memory: the host could not allocate the case's memory (std::bad_alloc)";
  } catch (const std::exception& e) {
    result_.status = CaseStatus::kError;
    result_.reason = e.what();
  }
  return false;
}

bool CaseRun::setup() {
  return guarded([this] {
    build_and_check();
    allocate_and_upload();
    if (options_.tune) tune();
    record();
    validate_and_dump();
    // Fault injection re-records after validation, which checks the case's own work.
    const double slowdown = slowdown_factor(options_.inject_slowdown, result_.variant, result_.impl);
    if (slowdown > 1) inject(slowdown);
    // Warm-up: clocks, caches and lazy driver work settle before timing.
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 50; ++i) {
      time_once();
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= options_.warmup_s) break;
    }
  });
}

bool CaseRun::compile() {
  return guarded([this] {
    build_and_check();
    CommandRecorder rec(ctx_, nullptr, result_, layout_, buffers_, pools_);
    case_->record(rec);
    result_.status = CaseStatus::kCompiled;
  });
}

void CaseRun::build_and_check() {
  const Params& p = result_.params;
  case_ = variant_.make(p);
  case_->configure(ctx_.launch());
  descs_ = case_->tensors();
  layout_ = tensor_layout(descs_);
  result_.cost = case_->cost();

  const PhysicalDeviceInfo& info = ctx_.info();
  double device_bytes = 0, host_bytes = 0;
  for (const auto& t : descs_) {
    if (!shape_is_valid(t.shape)) throw CaseRejected(fmt::format("tensor {} has an invalid shape", t.name));
    if (t.dtype == DType::kF16 && !ctx_.device().enabled().storage_buffer_16bit) {
      throw Unsupported("the device has no 16-bit storage (storageBuffer16BitAccess), needed for f16 tensors");
    }
    const double bytes = static_cast<double>(t.bytes());
    if (bytes > info.limits.max_storage_buffer_range) {
      const auto [need, limit] = format_bytes_pair(bytes, info.limits.max_storage_buffer_range);
      throw Unsupported(
          fmt::format("tensor {} needs {}, more than maxStorageBufferRange ({})", t.name, need, limit));
    }
    device_bytes += bytes;
    if (t.role != TensorRole::kScratch) host_bytes += bytes;
  }
  for (const auto& [name, bytes] : layout_.buffers) {
    const double b = static_cast<double>(bytes);
    if (info.limits.max_memory_allocation_size && b > static_cast<double>(info.limits.max_memory_allocation_size)) {
      const auto [need, limit] =
          format_bytes_pair(b, static_cast<double>(info.limits.max_memory_allocation_size));
      throw Unsupported(fmt::format("{} {} needs {}, more than maxMemoryAllocationSize ({})",
                                    layout_.tensors.count(name) ? "tensor" : "pack", name, need, limit));
    }
  }
  if (info.device_local_heap_bytes && device_bytes > 0.8 * static_cast<double>(info.device_local_heap_bytes)) {
    throw Unsupported(fmt::format("needs {} of device memory; the device-local heap has {}", mib(device_bytes),
                                  mib(static_cast<double>(info.device_local_heap_bytes))));
  }
  const double host = host_memory_bytes();
  if (host > 0 && 2 * host_bytes > 0.5 * host) {
    throw Unsupported(fmt::format("needs about {} of host memory for inputs and read-back; the host has {}",
                                  mib(2 * host_bytes), mib(host)));
  }
}

void CaseRun::allocate_and_upload() {
  Rng rng(fnv1a(result_.variant + "|" + result_.params.canonical(), 0xcbf29ce484222325ull ^ options_.seed));
  for (const auto& t : descs_) {
    if (t.role != TensorRole::kScratch) host_.emplace(t.name, HostTensor(t));
  }
  case_->fill_inputs(host_, rng);

  Device& dev = ctx_.device();
  // In declaration order (a pack at its first member), as tensors were
  // allocated before packs existed: where buffers land can move a kernel's time.
  for (const auto& t : descs_) {
    const std::string& buffer = layout_.at(t.name).buffer;
    if (!buffers_.count(buffer)) {
      buffers_[buffer] = Buffer::Create(dev, layout_.buffers.at(buffer), MemoryUse::kDevice).value();
    }
  }
  for (const auto& t : descs_) {
    if (t.role == TensorRole::kInput || t.role == TensorRole::kConstant) {
      const HostTensor& h = host_.at(t.name);
      const TensorPlacement& at = layout_.at(t.name);
      throw_if_error(upload(dev, *buffers_.at(at.buffer), h.data(), h.bytes(), at.offset));
    }
  }

  fill_outputs_with_nan();
}

void CaseRun::fill_outputs_with_nan() {
  // 0xFFFF.. is NaN in f32 and f16.
  Device& dev = ctx_.device();
  auto fill = CommandBuffer::Create(dev).value();
  throw_if_error(fill->begin(CommandBuffer::kOneTimeSubmit));
  fill->compute_barrier();  // after the uploads and any earlier run's writes
  for (const auto& t : descs_) {
    if (t.role != TensorRole::kOutput) continue;
    const TensorPlacement& at = layout_.at(t.name);
    fill->fill(*buffers_.at(at.buffer), 0xFFFFFFFFu, at.offset, at.span());
  }
  throw_if_error(fill->end());
  throw_if_error(fill->submit_and_wait());
}

void CaseRun::record(int passes) {
  Device& dev = ctx_.device();
  if (dev.info().timestamps_supported()) {
    timestamps_ = TimestampQueryPool::Create(dev, 2).value();
    result_.timing = "gpu-timestamp";
  } else {
    result_.timing = "wall-clock";
  }
  cmd_ = CommandBuffer::Create(dev).value();
  // The descriptor sets of an earlier recording went with its command
  // buffer: each recording starts its own pools, so that re-recording
  // (--tune, --inject-slowdown) never fills one past kSetsPerPool (the
  // recorder counts only the sets it allocated itself).
  pools_.clear();
  throw_if_error(cmd_->begin());
  // Earlier submissions' uploads (copies, on a discrete GPU) and writes
  // (the NaN fill, the last timed run) become visible to this one: a fence
  // wait orders them but makes nothing visible to later device work.
  cmd_->compute_barrier();
  if (timestamps_) {
    cmd_->reset_queries(*timestamps_);
    cmd_->write_timestamp(*timestamps_, 0, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
  }
  CommandRecorder rec(ctx_, cmd_.get(), result_, layout_, buffers_, pools_);
  record_passes(*case_, rec, passes);
  if (timestamps_) cmd_->write_timestamp(*timestamps_, 1, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
  // Where the operands are mapped (--memory host) the readback is a memcpy:
  // the kernels' writes must reach the host domain before the fence signals.
  cmd_->host_read_barrier();
  throw_if_error(cmd_->end());
}

void CaseRun::select_and_check(const TuningChoice& choice) {
  case_->select_tuning(choice);
  if (!same_tensors(case_->tensors(), descs_)) {
    throw std::logic_error(
        fmt::format("{}: tuning {}={} changes the case's tensors", result_.variant, choice.knob, choice.value));
  }
}

std::optional<TuningChoice> CaseRun::preset_choice(const std::vector<TuningChoice>& choices) const {
  if (options_.tune_from.empty()) return std::nullopt;
  const auto preset = options_.tune_from.find(ctx_.info().name, case_key(result_.variant, result_.impl, result_.dtype,
                                                                         params_to_json(result_.params)));
  // A choice the case no longer offers (its planner changed) is timed anew.
  if (!preset || std::find(choices.begin(), choices.end(), *preset) == choices.end()) return std::nullopt;
  return preset;
}

void CaseRun::tune() {
  const std::vector<TuningChoice> choices = case_->tuning_choices(ctx_.launch());
  if (choices.size() < 2) return;
  CaseResult::Tuning tuning;
  tuning.knob = choices.front().knob;
  tuning.planned = tuning.chosen = choices.front().value;
  if (const auto preset = preset_choice(choices)) {
    tuning.chosen = preset->value;
    tuning.from = options_.tune_from.source();
    select_and_check(*preset);
    result_.tuning = std::move(tuning);
    return;
  }
  for (const TuningChoice& choice : choices) tuning.candidates.push_back({choice.value});
  std::vector<std::vector<double>> ns(choices.size());
  // Round -1 builds each choice's pipelines (llvmpipe compiles at first use)
  // and runs it once; then one sample of each choice per round, so that a
  // change in the machine's load falls on all of them alike.
  for (int round = -1; round < kTuningSamples; ++round) {
    for (size_t i = 0; i < choices.size(); ++i) {
      CaseResult::TuningCandidate& c = tuning.candidates[i];
      if (c.status != CaseStatus::kOk) continue;
      try {
        if (round < 0) {
          select_and_check(choices[i]);
        } else {
          case_->select_tuning(choices[i]);
        }
        record();
        if (round < 0) {
          const Device::FirstRun first_run(ctx_.device());  // compiles: not bounded by --timeout
          throw_if_error(cmd_->submit_and_wait());
        } else {
          ns[i].push_back(raw_sample().ns);
        }
      } catch (const Unsupported& e) {
        c.status = CaseStatus::kUnsupported;
        c.reason = e.what();
      }
    }
  }
  // The planner's choice stands unless another is kTuningMargin faster: a
  // difference within the machine's noise would only make runs disagree.
  double best_ns = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    CaseResult::TuningCandidate& c = tuning.candidates[i];
    if (c.status != CaseStatus::kOk) continue;
    c.median_ns = time_stats(ns[i]).median;
    if (best_ns == 0 || c.median_ns < best_ns) {
      best_ns = c.median_ns;
      tuning.chosen = c.value;
    }
  }
  const CaseResult::TuningCandidate& planned = tuning.candidates.front();
  if (planned.status == CaseStatus::kOk && best_ns >= planned.median_ns * (1 - kTuningMargin)) {
    tuning.chosen = planned.value;
  }
  case_->select_tuning({tuning.knob, tuning.chosen});
  result_.pipelines.clear();  // the chosen plan's, recorded next
  fill_outputs_with_nan();    // the candidates wrote the outputs
  result_.tuning = std::move(tuning);
}

void CaseRun::validate_and_dump() {
  Device& dev = ctx_.device();
  {
    // The first run: includes any lazy shader compilation, which --timeout does not bound.
    const Device::FirstRun first_run(dev);
    throw_if_error(cmd_->submit_and_wait());
  }
  for (auto& [name, t] : host_) {
    if (t.desc().role != TensorRole::kOutput) continue;
    const TensorPlacement& at = layout_.at(name);
    throw_if_error(download(dev, *buffers_.at(at.buffer), t.data(), t.bytes(), at.offset));
  }
  if (options_.validate) {
    const int64_t total = case_->reference_rows();
    const auto rows = sample_rows(total, case_->reference_row_cost(), options_.reference_budget);
    Reference ref(descs_);
    case_->reference(host_, rows, ref);
    if (auto why = unrepresentable_output(ref)) throw CaseRejected(*why);
    result_.validation = compare_outputs(ref, host_, case_->tolerance());
    result_.validation.rows_checked = static_cast<int64_t>(rows.size());
    result_.validation.rows_total = total;
    result_.status = result_.validation.passed ? CaseStatus::kOk : CaseStatus::kFailed;
    if (!result_.validation.passed) result_.reason = "validation failed: " + result_.validation.detail;
  } else {
    result_.status = CaseStatus::kOk;
  }
  if (!options_.dump_dir.empty()) dump_case(options_.dump_dir, result_.id, result_.variant, result_.params, host_);
  host_.clear();  // not needed for timing
}

void CaseRun::inject(double slowdown) {
  const SlowdownPasses p = slowdown_passes(slowdown);
  if (p.divisor > 1) {
    // What a submission costs with nothing timed: the part of a sample the
    // divisor must leave alone.
    record(0);
    std::vector<double> ns, cpu;
    for (int i = 0; i < kFixedCostSamples; ++i) {
      const Sample s = raw_sample();
      ns.push_back(s.ns);
      cpu.push_back(s.cpu_ns);
    }
    fixed_cost_ = {time_stats(ns).median, time_stats(cpu).median};
  }
  divisor_ = p.divisor;
  result_.injected_slowdown = {slowdown, p.passes, p.divisor, fixed_cost_.ns, fixed_cost_.cpu_ns};
  record(p.passes);
}

CaseRun::Sample CaseRun::raw_sample() {
  const double cpu_start = process_cpu_ns();
  const auto start = std::chrono::steady_clock::now();
  throw_if_error(cmd_->submit_and_wait());
  const auto end = std::chrono::steady_clock::now();
  Sample s;
  s.cpu_ns = process_cpu_ns() - cpu_start;
  if (!timestamps_) {
    s.ns = std::chrono::duration<double, std::nano>(end - start).count();
  } else {
    s.ns = timestamps_->elapsed_ns(timestamps_->results().value(), 0, 1);
  }
  return s;
}

CaseRun::Sample CaseRun::time_sample() {
  Sample s = raw_sample();
  if (divisor_ > 1) {
    s.ns = fixed_cost_.ns + (s.ns - fixed_cost_.ns) / divisor_;
    s.cpu_ns = fixed_cost_.cpu_ns + (s.cpu_ns - fixed_cost_.cpu_ns) / divisor_;
  }
  return s;
}

}  // namespace pebench
