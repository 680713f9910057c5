#include "device/cuda_device.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/chain.hpp"
#include "core/cuda_check.hpp"
#include "core/environment.hpp"
#include "core/l2_residency.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "device/chase_kernels.hpp"
#include "device/cuda_residency.hpp"
#include "device/device_buffer.hpp"
#include "device/sequence.hpp"
#include "device/sequence_kernels.hpp"

namespace gpuprobe::device {
namespace {

constexpr int kMinCcMajor = 7;
constexpr int kMinCcMinor = 5;
// Free memory kept back when sizing working sets: the runtime and the flush buffer need room.
constexpr std::uint64_t kMemoryMargin = 512ull << 20;

class CudaChain : public Chain {
 public:
  CudaChain(const ChainSpec& spec, std::vector<std::uint32_t> order, DeviceBuffer buffer)
      : spec_(spec), order_(std::move(order)), buffer_(std::move(buffer)) {}
  const ChainSpec& spec() const override { return spec_; }
  std::uint64_t nodes() const override { return order_.size(); }
  const std::vector<std::uint32_t>& order() const { return order_; }
  std::uint64_t address_of(std::uint64_t step) const {
    return reinterpret_cast<std::uint64_t>(buffer_.as<char>()) + spec_.offset_bytes +
           static_cast<std::uint64_t>(analysis::node_after(order_, step)) * spec_.node_stride_bytes;
  }

 private:
  ChainSpec spec_;
  std::vector<std::uint32_t> order_;
  DeviceBuffer buffer_;
};

/// A chase must end on the node the host predicts from the chain's order.
void verify_end(const CudaChain& chain, const ChaseParams& params, std::uint64_t end_address,
                const char* what) {
  const std::uint64_t expected =
      chain.address_of(params.start_step + params.warmup_steps + params.timed_steps);
  if (end_address == expected) return;
  std::ostringstream msg;
  msg << what << " verification failed: ended on 0x" << std::hex << end_address
      << ", host predicted 0x" << expected;
  throw VerificationError(msg.str());
}

constexpr std::uint64_t kProbeAlignment = 2ull << 20;
// How long the sequence block waits for the placing block (~0.1 s at 2 GHz) before the launch
// is retried with more blocks.
constexpr std::uint64_t kPlacerTimeoutCycles = 200000000ull;
constexpr int kSequenceAttempts = 4;

class CudaProbeBuffer : public ProbeBuffer {
 public:
  explicit CudaProbeBuffer(std::uint64_t bytes) : raw_(bytes + kProbeAlignment), bytes_(bytes) {
    const auto raw = reinterpret_cast<std::uint64_t>(raw_.as<void>());
    base_ = (raw + kProbeAlignment - 1) / kProbeAlignment * kProbeAlignment;
  }
  std::uint64_t bytes() const override { return bytes_; }
  std::uint64_t* base() const { return reinterpret_cast<std::uint64_t*>(base_); }

 private:
  DeviceBuffer raw_;
  std::uint64_t bytes_;
  std::uint64_t base_ = 0;
};

std::string describe_offset(std::uint64_t offset) {
  std::ostringstream s;
  s << "0x" << std::hex << offset;
  return s.str();
}

int attribute(cudaDeviceAttr attr, int ordinal) {
  int value = 0;
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, ordinal));
  return value;
}

/// The driver's minimum allocation granularity for device memory on `ordinal`
/// (cuMemGetAllocationGranularity, reached through the runtime's driver entry point so that no
/// libcuda link is needed): the page in which cudaMalloc'd memory is physically contiguous
/// (2 MiB on Hopper). The smallest GPU page, 4 KiB, when the driver cannot say.
std::uint64_t device_page_bytes(int ordinal) {
  constexpr std::uint64_t kSmallestPage = 4096;
  using Query = CUresult (*)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuMemGetAllocationGranularity", &fn, 12000,
                                       cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || fn == nullptr) {
    (void)cudaGetLastError();
    return kSmallestPage;
  }
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = ordinal;
  size_t granularity = 0;
  if (reinterpret_cast<Query>(fn)(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
          CUDA_SUCCESS ||
      granularity < kSmallestPage || (granularity & (granularity - 1)) != 0)
    return kSmallestPage;
  return granularity;
}

class CudaDevice : public Device, public Sequencer, public L2Residency {
 public:
  explicit CudaDevice(int ordinal) : ordinal_(ordinal) {
    GP_CUDA_CHECK(cudaSetDevice(ordinal));
    cudaDeviceProp prop{};
    GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
    info_.kind = "cuda";
    info_.name = prop.name;
    info_.ordinal = ordinal;
    info_.cc_major = prop.major;
    info_.cc_minor = prop.minor;
    info_.sm_count = prop.multiProcessorCount;
    info_.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
    info_.global_mem_bytes = prop.totalGlobalMem;
    info_.shared_per_sm_bytes = prop.sharedMemPerMultiprocessor;
    info_.shared_per_block_optin_bytes = prop.sharedMemPerBlockOptin;
    info_.sm_clock_max_mhz = attribute(cudaDevAttrClockRate, ordinal) / 1000.0;
    info_.mem_clock_max_mhz = attribute(cudaDevAttrMemoryClockRate, ordinal) / 1000.0;
    info_.mem_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
    unsigned char uuid[16];
    std::memcpy(uuid, prop.uuid.bytes, sizeof uuid);
    info_.uuid = env::format_gpu_uuid(uuid);
    GP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    GP_CUDA_CHECK(cudaMalloc(&out_, sizeof(kernels::ChaseOut)));
    if (info_.cc_major >= 8) persisting_ = cuda_persisting_limits(ordinal);
  }

  ~CudaDevice() override {
    if (out_) cudaFree(out_);
    if (window_stream_) cudaStreamDestroy(window_stream_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  // L2Residency: the persisting set-aside, access-policy windows and eviction priorities.
  PersistingLimits persisting_limits() const override { return persisting_; }
  bool has_eviction_hints() const override { return info_.cc_major >= 8; }
  std::uint64_t persisting_set_aside() const override {
    std::size_t bytes = 0;
    GP_CUDA_CHECK(cudaDeviceGetLimit(&bytes, cudaLimitPersistingL2CacheSize));
    return bytes;
  }
  void set_persisting_set_aside(std::uint64_t bytes) override {
    const cudaError_t err = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes);
    if (err == cudaSuccess) return;
    // A refused limit is the driver's answer, not a broken device: clear it so that the next
    // launch check does not report it.
    (void)cudaGetLastError();
    throw UsageError("cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, " +
                     std::to_string(bytes) + ") refused: " + cudaGetErrorString(err));
  }
  void reset_persisting_lines() override { GP_CUDA_CHECK(cudaCtxResetPersistingL2Cache()); }
  void flush_l2() override {
    ensure_flush_buffer();
    kernels::launch_flush(flush_.as<std::uint64_t>(), flush_.bytes(), info_.sm_count, stream_);
    GP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void load_bulk(ProbeBuffer& buffer_base, const BulkLoads& loads) override {
    auto& buffer = dynamic_cast<CudaProbeBuffer&>(buffer_base);
    if (loads.windowed && !window_stream_)
      GP_CUDA_CHECK(cudaStreamCreateWithFlags(&window_stream_, cudaStreamNonBlocking));
    cuda_load_bulk(buffer.base(), buffer.bytes(), loads, persisting_, info_.sm_count, stream_,
                   window_stream_);
  }
  void store_bulk(ProbeBuffer& buffer_base, std::uint64_t offset, std::uint64_t bytes,
                  std::uint64_t mark) override {
    auto& buffer = dynamic_cast<CudaProbeBuffer&>(buffer_base);
    cuda_store_bulk(buffer.base(), buffer.bytes(), offset, bytes, mark, info_.sm_count, stream_);
  }
  void discard_bulk(ProbeBuffer& buffer_base, std::uint64_t offset, std::uint64_t bytes) override {
    auto& buffer = dynamic_cast<CudaProbeBuffer&>(buffer_base);
    cuda_discard_bulk(buffer.base(), buffer.bytes(), offset, bytes, info_.sm_count, stream_);
  }
  WordCensus census(ProbeBuffer& buffer_base, std::uint64_t offset, std::uint64_t bytes,
                    std::uint64_t mark) override {
    auto& buffer = dynamic_cast<CudaProbeBuffer&>(buffer_base);
    return cuda_census(buffer.base(), buffer.bytes(), offset, bytes, mark, info_.sm_count, stream_);
  }

  const DeviceInfo& info() const override { return info_; }

  std::uint64_t free_memory() const override {
    std::size_t free = 0, total = 0;
    GP_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
  }

  ClockReading read_clocks() const override { return env::read_clocks(ordinal_); }

  TimerCalibration calibrate_timer() override {
    DeviceBuffer out(2 * sizeof(std::uint64_t));
    kernels::launch_timer_calibration(out.as<std::uint64_t>(), stream_);
    std::uint64_t host[2] = {0, 0};
    GP_CUDA_CHECK(cudaMemcpyAsync(host, out.as<std::uint64_t>(), sizeof(host),
                                  cudaMemcpyDeviceToHost, stream_));
    GP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (host[0] == 0 || host[0] > 10000 || host[1] > 10000)
      throw VerificationError("timer calibration returned implausible values");
    return {static_cast<double>(host[0]), static_cast<double>(host[1])};
  }

  std::unique_ptr<Chain> make_chain(const ChainSpec& spec) override {
    if (spec.node_stride_bytes < 8 || spec.node_stride_bytes % 8 != 0)
      throw UsageError("node stride " + std::to_string(spec.node_stride_bytes) +
                       " B is not allowed; use a multiple of 8 bytes");
    if (spec.working_set_bytes < spec.node_stride_bytes)
      throw UsageError("working set " + units::format_bytes(spec.working_set_bytes) +
                       " is smaller than one node (" + std::to_string(spec.node_stride_bytes) +
                       " B)");
    check_chain_offset(spec);
    const std::uint64_t nodes64 = spec.working_set_bytes / spec.node_stride_bytes;
    if (nodes64 > 0xffffffffull)
      throw UsageError("working set " + units::format_bytes(spec.working_set_bytes) +
                       " has more than 2^32 nodes; use a larger node stride");
    ensure_flush_buffer();
    const std::uint64_t bytes = nodes64 * spec.node_stride_bytes;
    const std::uint64_t free = free_memory();
    if (spec.offset_bytes > free || bytes + spec.offset_bytes + nodes64 * 4 + kMemoryMargin > free)
      throw UsageError(std::string(spec.offset_bytes ? "working set and offset " : "working set ") +
                       units::format_bytes(bytes + spec.offset_bytes) +
                       (spec.offset_bytes ? " do" : " does") + " not fit in free GPU memory (" +
                       units::format_bytes(free) + " free, " + units::format_bytes(kMemoryMargin) +
                       " kept back)");
    const auto nodes = static_cast<std::uint32_t>(nodes64);
    auto order = analysis::random_cycle_order(nodes, spec.seed);
    const auto next = analysis::successors(order);
    DeviceBuffer chain(bytes + spec.offset_bytes);
    {
      DeviceBuffer next_dev(next.size() * sizeof(std::uint32_t));
      GP_CUDA_CHECK(cudaMemcpyAsync(next_dev.as<std::uint32_t>(), next.data(), next_dev.bytes(),
                                    cudaMemcpyHostToDevice, stream_));
      kernels::launch_build_chain(chain.as<std::uint64_t>() + spec.offset_bytes / 8,
                                  next_dev.as<std::uint32_t>(), nodes, spec.node_stride_bytes,
                                  stream_);
      // Push the freshly written chain out of the L2 so that every chase starts from memory.
      kernels::launch_flush(flush_.as<std::uint64_t>(), flush_.bytes(), info_.sm_count, stream_);
      GP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    return std::make_unique<CudaChain>(spec, std::move(order), std::move(chain));
  }

  ChaseTiming chase(Chain& chain_base, const ChaseParams& params) override {
    auto& chain = dynamic_cast<CudaChain&>(chain_base);
    const auto* start = reinterpret_cast<const std::uint64_t*>(chain.address_of(params.start_step));
    kernels::launch_chase(params.op, start, params.warmup_steps, params.timed_steps,
                          params.carveout_percent, out_, stream_);
    kernels::ChaseOut out{};
    GP_CUDA_CHECK(cudaMemcpyAsync(&out, out_, sizeof(out), cudaMemcpyDeviceToHost, stream_));
    GP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    verify_end(chain, params, out.end_address, "chase");
    ChaseTiming t;
    t.total_cycles = static_cast<double>(out.cycles);
    t.cycles_per_step =
        t.total_cycles / static_cast<double>(std::max<std::uint64_t>(1, params.timed_steps));
    t.smid = static_cast<int>(out.smid);
    t.elapsed_ns = static_cast<double>(out.globaltimer_ns);
    t.verified = true;
    return t;
  }

  SampledChase sampled_chase(Chain& chain_base, const ChaseParams& params,
                             std::uint32_t every) override {
    auto& chain = dynamic_cast<CudaChain&>(chain_base);
    if (every == 0) throw UsageError("sampled chase: every must be > 0");
    if (params.timed_steps == 0) throw UsageError("sampled chase: timed_steps must be > 0");
    const std::uint64_t n_samples = (params.timed_steps + every - 1) / every;
    if (n_samples > (std::uint64_t{1} << 28))
      throw UsageError("sampled chase: more than 2^28 samples; sample less often");
    DeviceBuffer samples(n_samples * sizeof(std::uint32_t));
    const auto* start = reinterpret_cast<const std::uint64_t*>(chain.address_of(params.start_step));
    kernels::launch_sampled_chase(params.op, start, params.warmup_steps, params.timed_steps, every,
                                  samples.as<std::uint32_t>(), params.carveout_percent, out_,
                                  stream_);
    kernels::ChaseOut out{};
    SampledChase r;
    r.cycles.resize(n_samples);
    GP_CUDA_CHECK(cudaMemcpyAsync(&out, out_, sizeof(out), cudaMemcpyDeviceToHost, stream_));
    GP_CUDA_CHECK(cudaMemcpyAsync(r.cycles.data(), samples.as<std::uint32_t>(), samples.bytes(),
                                  cudaMemcpyDeviceToHost, stream_));
    GP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    verify_end(chain, params, out.end_address, "sampled chase");
    const std::uint64_t first = params.start_step + params.warmup_steps;
    r.nodes.reserve(n_samples);
    for (std::uint64_t k = 0; k < n_samples; ++k)
      r.nodes.push_back(analysis::node_after(chain.order(), first + k * every));
    r.smid = static_cast<int>(out.smid);
    r.verified = true;
    return r;
  }

  ChaseTiming shared_chase(std::uint32_t bytes, std::uint32_t stride,
                           std::uint64_t timed_steps) override {
    if (stride < 4 || stride % 4 != 0)
      throw UsageError("shared-memory node stride must be a multiple of 4 bytes");
    if (bytes < stride || bytes > info_.shared_per_block_optin_bytes)
      throw UsageError("shared-memory working set " + units::format_bytes(bytes) +
                       " is outside 1 node .. " +
                       units::format_bytes(info_.shared_per_block_optin_bytes));
    const std::uint32_t nodes = bytes / stride;
    const auto order = analysis::random_cycle_order(nodes, 7);
    const auto next = analysis::successors(order);
    DeviceBuffer next_dev(next.size() * sizeof(std::uint32_t));
    GP_CUDA_CHECK(cudaMemcpyAsync(next_dev.as<std::uint32_t>(), next.data(), next_dev.bytes(),
                                  cudaMemcpyHostToDevice, stream_));
    kernels::launch_shared_chase(next_dev.as<std::uint32_t>(), nodes, stride, timed_steps, out_,
                                 stream_);
    kernels::ChaseOut out{};
    GP_CUDA_CHECK(cudaMemcpyAsync(&out, out_, sizeof(out), cudaMemcpyDeviceToHost, stream_));
    GP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    constexpr std::uint64_t kSettleSteps = 32;  // must match the kernel
    const std::uint64_t expected = analysis::node_after(order, kSettleSteps + timed_steps);
    if (out.end_address != expected)
      throw VerificationError("shared-memory chase ended on node " +
                              std::to_string(out.end_address) + ", host predicted " +
                              std::to_string(expected));
    ChaseTiming t;
    t.total_cycles = static_cast<double>(out.cycles);
    t.cycles_per_step = t.total_cycles / static_cast<double>(timed_steps);
    t.smid = static_cast<int>(out.smid);
    t.verified = true;
    return t;
  }

  std::unique_ptr<ProbeBuffer> alloc_probe_buffer(std::uint64_t bytes) override {
    if (bytes < 8 || bytes % 8 != 0)
      throw UsageError("probe buffer of " + std::to_string(bytes) +
                       " B: use a positive multiple of 8 bytes");
    ensure_flush_buffer();
    const std::uint64_t free = free_memory();
    if (bytes + kProbeAlignment + kMemoryMargin > free)
      throw UsageError("probe buffer of " + units::format_bytes(bytes) +
                       " does not fit in free GPU memory (" + units::format_bytes(free) +
                       " free, " + units::format_bytes(kMemoryMargin) + " kept back)");
    auto buffer = std::make_unique<CudaProbeBuffer>(bytes);
    kernels::launch_fill_offsets(buffer->base(), bytes, stream_);
    DeviceArray<unsigned long long> bad(1);
    GP_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), stream_));
    kernels::launch_check_offsets(buffer->base(), bytes, bad.get(), stream_);
    unsigned long long host_bad = 0;
    GP_CUDA_CHECK(
        cudaMemcpyAsync(&host_bad, bad.get(), sizeof host_bad, cudaMemcpyDeviceToHost, stream_));
    GP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (host_bad != 0)
      throw VerificationError("probe buffer: " + std::to_string(host_bad) +
                              " words do not hold their own offset after the fill");
    return buffer;
  }

  std::size_t max_sequence_length() const override { return kernels::kSequenceMaxAccesses; }

  std::size_t max_sweep_length() const override { return kernels::kSweepMaxLines; }

  std::uint64_t physically_contiguous_bytes() const override { return page_bytes_; }

  SequenceTiming run_sequence(ProbeBuffer& buffer_base, const AccessSequence& s) override {
    auto& buffer = dynamic_cast<CudaProbeBuffer&>(buffer_base);
    validate(buffer, s);
    if (s.sweep.empty()) return run_launch(buffer, s);
    // Three launches in order: [flush +] place, the sweep, then the sequence (no flush, no
    // place). A sweep whose blocks never reached the SM restarts the whole test with more.
    // Built without copying the sweep (an eviction test sweeps up to 4 M offsets).
    AccessSequence first = without_lists(s);
    first.place = s.place;
    first.timed_from = 0;
    AccessSequence last = without_lists(s);
    last.sequence = s.sequence;
    last.flush_l2 = false;
    for (int attempt = 0; attempt < kSequenceAttempts; ++attempt) {
      if (!first.place.empty()) {
        run_launch(buffer, first);
      } else if (s.flush_l2) {
        ensure_flush_buffer();
        kernels::launch_flush(flush_.as<std::uint64_t>(), flush_.bytes(), info_.sm_count, stream_);
      }
      if (run_sweep(buffer, s, attempt)) return run_launch(buffer, last);
    }
    throw VerificationError("sweep: no block reached SM " + std::to_string(s.sm) + " in " +
                            std::to_string(kSequenceAttempts) + " launches");
  }

 private:
  /// One sweep launch; false when no block started on the SM (the caller repeats the test).
  bool run_sweep(const CudaProbeBuffer& buffer, const AccessSequence& s, int attempt) {
    const auto n = static_cast<std::uint32_t>(s.sweep.size());
    if (sweep_offsets_.size() < n) {
      sweep_offsets_ = DeviceArray<std::uint64_t>(n);
      uploaded_sweep_.clear();
    }
    if (sweep_status_.size() == 0) sweep_status_ = DeviceArray<kernels::SweepStatus>(1);
    // An eviction decision runs the same test two or three times: its offsets go up once.
    if (uploaded_sweep_ != s.sweep) {
      GP_CUDA_CHECK(cudaMemcpyAsync(sweep_offsets_.get(), s.sweep.data(), n * sizeof(std::uint64_t),
                                    cudaMemcpyHostToDevice, stream_));
      uploaded_sweep_ = s.sweep;
    }
    GP_CUDA_CHECK(cudaMemsetAsync(sweep_status_.get(), 0, sizeof(kernels::SweepStatus), stream_));
    kernels::SweepParams p;
    p.base = reinterpret_cast<std::uint64_t>(buffer.base());
    p.offsets = sweep_offsets_.get();
    p.n = n;
    p.rounds = static_cast<std::uint32_t>(s.sweep_rounds);
    p.sm = s.sm;
    p.status = sweep_status_.get();
    kernels::launch_sweep(s.op, p, static_cast<unsigned>((4 << attempt) * info_.sm_count), stream_);
    kernels::SweepStatus st{};
    GP_CUDA_CHECK(cudaMemcpyAsync(&st, p.status, sizeof st, cudaMemcpyDeviceToHost, stream_));
    GP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (st.blocks == 0) return false;
    if (st.bad != 0)
      throw VerificationError("sweep: " + std::to_string(st.bad) +
                              " loads returned a value other than their offset");
    const std::uint64_t expected = static_cast<std::uint64_t>(n) * p.rounds;
    if (st.done != expected)
      throw VerificationError("sweep: " + std::to_string(st.done) + " loads ran, " +
                              std::to_string(expected) + " were asked for");
    return true;
  }

  SequenceTiming run_launch(CudaProbeBuffer& buffer, const AccessSequence& s) {
    const auto n_place = static_cast<std::uint32_t>(s.place.size());
    const auto n_seq = static_cast<std::uint32_t>(s.sequence.size());
    std::vector<std::uint64_t> offsets(s.place);
    offsets.insert(offsets.end(), s.sequence.begin(), s.sequence.end());
    if (seq_offsets_.size() < std::max<std::size_t>(offsets.size(), 1))
      seq_offsets_ = DeviceArray<std::uint64_t>(max_sequence_length());
    if (seq_cycles_.size() == 0) seq_cycles_ = DeviceArray<std::uint32_t>(max_sequence_length());
    if (seq_status_.size() == 0) seq_status_ = DeviceArray<kernels::SequenceStatus>(1);
    if (!offsets.empty())
      GP_CUDA_CHECK(cudaMemcpyAsync(seq_offsets_.get(), offsets.data(),
                                    offsets.size() * sizeof(std::uint64_t), cudaMemcpyHostToDevice,
                                    stream_));
    kernels::SequenceParams p;
    p.base = reinterpret_cast<std::uint64_t>(buffer.base());
    p.offsets = seq_offsets_.get();
    p.n_place = n_place;
    p.n_seq = n_seq;
    p.place_sm = s.place.empty() ? -1 : s.place_sm;
    p.sm = s.sm;
    p.cycles = seq_cycles_.get();
    p.status = seq_status_.get();
    p.timeout_cycles = kPlacerTimeoutCycles;
    kernels::SequenceStatus st{};
    // A launch whose blocks never reached the chosen SMs is repeated with more blocks (after a
    // fresh flush when one was asked for, so the repeat starts from the same state).
    for (int attempt = 0; attempt < kSequenceAttempts; ++attempt) {
      if (s.flush_l2) {
        ensure_flush_buffer();
        kernels::launch_flush(flush_.as<std::uint64_t>(), flush_.bytes(), info_.sm_count, stream_);
      }
      GP_CUDA_CHECK(cudaMemsetAsync(p.status, 0, sizeof(kernels::SequenceStatus), stream_));
      const unsigned blocks = static_cast<unsigned>((4 << attempt) * info_.sm_count);
      kernels::launch_sequence(s.op, p, blocks, s.carveout_percent, stream_);
      GP_CUDA_CHECK(cudaMemcpyAsync(&st, p.status, sizeof st, cudaMemcpyDeviceToHost, stream_));
      GP_CUDA_CHECK(cudaStreamSynchronize(stream_));
      if (st.flags & kernels::kSeqMismatch) break;
      if (st.flags & kernels::kSeqRan) break;
    }
    if (st.flags & kernels::kSeqMismatch) {
      const std::uint32_t i = st.first_bad - 1;
      throw VerificationError("sequence: access " + std::to_string(i) + " at offset " +
                              describe_offset(i < offsets.size() ? offsets[i] : 0) +
                              " loaded a value other than its offset");
    }
    if (!(st.flags & kernels::kSeqRan) || (n_place > 0 && !(st.flags & kernels::kSeqPlaced)))
      throw VerificationError("sequence: no block reached SM " + std::to_string(s.sm) +
                              (n_place > 0 ? " / placing SM " + std::to_string(s.place_sm) : "") +
                              " in " + std::to_string(kSequenceAttempts) + " launches");
    if (s.sm >= 0 && st.smid != static_cast<std::uint32_t>(s.sm))
      throw VerificationError("sequence ran on SM " + std::to_string(st.smid) + ", not on SM " +
                              std::to_string(s.sm));
    if (p.place_sm >= 0 && st.place_smid != static_cast<std::uint32_t>(p.place_sm))
      throw VerificationError("placement ran on SM " + std::to_string(st.place_smid) +
                              ", not on SM " + std::to_string(p.place_sm));
    SequenceTiming t;
    t.smid = static_cast<int>(st.smid);
    t.verified = true;
    if (n_seq > s.timed_from) {
      std::vector<std::uint32_t> c(n_seq);
      GP_CUDA_CHECK(cudaMemcpyAsync(c.data(), seq_cycles_.get(), n_seq * sizeof(std::uint32_t),
                                    cudaMemcpyDeviceToHost, stream_));
      GP_CUDA_CHECK(cudaStreamSynchronize(stream_));
      t.cycles.assign(c.begin() + s.timed_from, c.end());
    }
    return t;
  }

 public:
  nlohmann::json environment() const override { return env::capture_cuda_environment(ordinal_); }

  nlohmann::json chase_kernel_info() const override {
    auto describe = [](const cudaFuncAttributes& a, int block, const char* grid) {
      return nlohmann::json{{"grid", grid},
                            {"block_threads", block},
                            {"registers_per_thread", a.numRegs},
                            {"static_shared_bytes", a.sharedSizeBytes},
                            {"local_bytes", a.localSizeBytes},
                            {"ptx_version", a.ptxVersion},
                            {"binary_version", a.binaryVersion}};
    };
    nlohmann::json j;
    for (LoadOp op : all_load_ops())
      j["global_chase_" + to_string(op)] = describe(kernels::chase_attributes(op), 1, "1 block");
    j["shared_chase"] = describe(kernels::shared_chase_attributes(), 256,
                                 "1 block (256 threads fill shared memory, thread 0 chases)");
    j["occupancy"] = "one thread on one SM; the rest of the GPU idle";
    return j;
  }

 private:
  /// s's settings without its three lists (every field but place, sequence and sweep).
  static AccessSequence without_lists(const AccessSequence& s) {
    AccessSequence h;
    h.op = s.op;
    h.timed_from = s.timed_from;
    h.sm = s.sm;
    h.place_sm = s.place_sm;
    h.flush_l2 = s.flush_l2;
    h.carveout_percent = s.carveout_percent;
    h.sweep_rounds = s.sweep_rounds;
    return h;
  }

  void ensure_flush_buffer() {
    if (flush_.bytes() > 0) return;
    // Twice the L2 streamed through evicts everything a chase left there.
    flush_ = DeviceBuffer(std::max<std::uint64_t>(2 * info_.l2_bytes, 64ull << 20));
    GP_CUDA_CHECK(cudaMemsetAsync(flush_.as<void>(), 1, flush_.bytes(), stream_));
  }

  void validate(const CudaProbeBuffer& buffer, const AccessSequence& s) const {
    const std::size_t total = s.place.size() + s.sequence.size();
    if (total > max_sequence_length())
      throw UsageError("sequence of " + std::to_string(total) + " accesses (place + sequence) " +
                       "exceeds the " + std::to_string(max_sequence_length()) +
                       " one call may hold");
    if (s.timed_from > s.sequence.size())
      throw UsageError("timed_from " + std::to_string(s.timed_from) + " is beyond the " +
                       std::to_string(s.sequence.size()) + " accesses of the sequence");
    for (int sm : {s.sm, s.place_sm})
      if (sm < -1 || sm >= info_.sm_count)
        throw UsageError("SM " + std::to_string(sm) + " does not exist (0.." +
                         std::to_string(info_.sm_count - 1) + ", or -1 for any)");
    if (!s.sweep.empty()) {
      if (s.sweep.size() > max_sweep_length())
        throw UsageError("sweep of " + std::to_string(s.sweep.size()) + " lines exceeds the " +
                         std::to_string(max_sweep_length()) + " one call may hold");
      if (s.sm < 0)
        throw UsageError("a sweep runs on the sequence's SM: give sm >= 0 (0.." +
                         std::to_string(info_.sm_count - 1) + ")");
      if (s.sweep_rounds < 1 || s.sweep_rounds > 16)
        throw UsageError("sweep_rounds " + std::to_string(s.sweep_rounds) + ": allowed 1..16");
    }
    for (const auto* list : {&s.place, &s.sequence, &s.sweep})
      for (std::uint64_t o : *list)
        if (o % 8 != 0 || o + 8 > buffer.bytes())
          throw UsageError("offset " + describe_offset(o) +
                           " is unaligned or outside the probe buffer of " +
                           units::format_bytes(buffer.bytes()));
  }

  int ordinal_;
  std::uint64_t page_bytes_ = device_page_bytes(ordinal_);
  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  cudaStream_t window_stream_ = nullptr;  // bulk loads under an access-policy window
  PersistingLimits persisting_;
  kernels::ChaseOut* out_ = nullptr;
  DeviceBuffer flush_;
  DeviceArray<std::uint64_t> seq_offsets_;
  DeviceArray<std::uint32_t> seq_cycles_;
  DeviceArray<kernels::SequenceStatus> seq_status_;
  DeviceArray<std::uint64_t> sweep_offsets_;
  std::vector<std::uint64_t> uploaded_sweep_;  ///< what sweep_offsets_ holds
  DeviceArray<kernels::SweepStatus> sweep_status_;
};

}  // namespace

const std::uint64_t* cuda_probe_base(const ProbeBuffer& buffer) {
  const auto* b = dynamic_cast<const CudaProbeBuffer*>(&buffer);
  return b ? b->base() : nullptr;
}

std::unique_ptr<Device> make_cuda_device(int ordinal) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    throw UsageError(std::string("no CUDA device found (") +
                     (rc != cudaSuccess ? cudaGetErrorString(rc) : "device count is 0") +
                     "); try --device model:h200 to run against the modelled GPU");
  }
  if (ordinal < 0 || ordinal >= count)
    throw UsageError("CUDA device " + std::to_string(ordinal) +
                     " does not exist; this machine has " + std::to_string(count) + " (0.." +
                     std::to_string(count - 1) + ")");
  const int major = attribute(cudaDevAttrComputeCapabilityMajor, ordinal);
  const int minor = attribute(cudaDevAttrComputeCapabilityMinor, ordinal);
  if (major < kMinCcMajor || (major == kMinCcMajor && minor < kMinCcMinor))
    throw UsageError("GPU " + std::to_string(ordinal) + " has compute capability " +
                     std::to_string(major) + "." + std::to_string(minor) +
                     "; gpuprobe supports 7.5 and newer (CUDA 13 dropped older GPUs)");
  return std::make_unique<CudaDevice>(ordinal);
}

}  // namespace gpuprobe::device
