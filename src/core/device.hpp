#pragma once
// The seam between experiments and hardware: the primitive measurements every probe is built
// from. Implemented by the CUDA device (real GPU) and by the modelled GPU (cache simulator).
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/load_op.hpp"

namespace gpuprobe::device {

/// What the device is. Sizes in bytes, clocks in MHz.
struct DeviceInfo {
  std::string kind;  ///< "cuda" or "model"
  std::string name;  ///< e.g. "NVIDIA H200" or "model:h200"
  int ordinal = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::uint64_t l2_bytes = 0;
  std::uint64_t global_mem_bytes = 0;
  std::uint64_t shared_per_sm_bytes = 0;           ///< max shared memory per SM
  std::uint64_t shared_per_block_optin_bytes = 0;  ///< max dynamic shared memory per block
  std::uint64_t l1_shared_unified_bytes = 0;       ///< 0 when unknown
  double sm_clock_max_mhz = 0;
  double mem_clock_max_mhz = 0;
  int mem_bus_width_bits = 0;
  std::string uuid;
  nlohmann::json extra = nlohmann::json::object();  ///< anything else worth recording
};

/// Theoretical DRAM bandwidth in GB/s (1e9 B/s): memory clock x 2 x bus width / 8.
double dram_peak_gb_s(const DeviceInfo& d);

/// One reading of the clocks and power state; valid = false when it cannot be read (no NVML).
struct ClockReading {
  bool valid = false;
  double sm_mhz = 0, mem_mhz = 0;
  double power_w = 0, power_limit_w = 0;
  double temperature_c = 0;
  std::uint64_t throttle_reasons = 0;
  std::vector<std::string> throttle_names;
  std::string time_utc;
};
nlohmann::json to_json(const ClockReading& c);

/// A random cyclic pointer chain over a working set, resident on the device.
struct ChainSpec {
  std::uint64_t working_set_bytes = 0;
  std::uint32_t node_stride_bytes = 128;  ///< distance between nodes; 8 = one node per element
  std::uint64_t seed = 1;
  /// The chain starts this many bytes into its allocation (a multiple of the node stride; the
  /// allocation holds offset + working set): chases of one size at different offsets read other
  /// physical pages (the frames of an allocation enter the L2's set index on the H200).
  std::uint64_t offset_bytes = 0;
};

/// Throws UsageError when spec.offset_bytes is not a multiple of the node stride (> 0), as
/// every Device::make_chain requires.
void check_chain_offset(const ChainSpec& spec);

class Chain {
 public:
  virtual ~Chain() = default;
  virtual const ChainSpec& spec() const = 0;
  virtual std::uint64_t nodes() const = 0;
};

struct ChaseParams {
  LoadOp op = LoadOp::kCa;
  std::uint64_t warmup_steps = 0;  ///< untimed steps before the timed ones (fills the caches)
  std::uint64_t timed_steps = 0;
  /// Position in the cycle where the chase starts (0 = the chain's first node); lets repeated
  /// cold runs start on lines the previous run did not touch.
  std::uint64_t start_step = 0;
  int carveout_percent = -1;  ///< preferred shared-memory carveout; -1 leaves the driver default
};

struct ChaseTiming {
  double cycles_per_step = 0;  ///< timed cycles / timed steps (timer overhead not subtracted)
  double total_cycles = 0;
  int smid = -1;          ///< the SM the chase ran on
  double elapsed_ns = 0;  ///< %globaltimer over the timed steps (0 when not available)
  bool verified = false;  ///< the chase ended on the node the host predicted
};

/// Per-step latencies of one chase: sample k is timed step k * every (steps counted from
/// start_step + warmup_steps), each read around its own load (%clock64 before and after, the
/// timer's cost included), with the chain node it loaded.
struct SampledChase {
  std::vector<std::uint32_t> cycles;
  std::vector<std::uint32_t> nodes;
  int smid = -1;
  bool verified = false;  ///< the chase ended on the node the host predicted
};

struct TimerCalibration {
  double clock64_overhead_cycles = 0;  ///< cost of back-to-back clock64() reads
  double clock32_overhead_cycles = 0;  ///< the same for %clock
};

/// What make_chain does to the L2 on a GPU, for the protocol of every experiment that chases.
inline constexpr const char* kChainL2FlushProtocol = "2 x L2 streamed after every chain is built";

/// A GPU, real or modelled. All sizes are bytes; latencies are SM cycles.
class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;
  /// Free device memory now, in bytes.
  virtual std::uint64_t free_memory() const = 0;
  virtual ClockReading read_clocks() const = 0;
  virtual TimerCalibration calibrate_timer() = 0;

  /// Builds the chain on the device. Throws UsageError when it does not fit in free memory.
  virtual std::unique_ptr<Chain> make_chain(const ChainSpec& spec) = 0;
  /// One single-thread dependent chase; throws VerificationError if it ends on the wrong node.
  virtual ChaseTiming chase(Chain& chain, const ChaseParams& params) = 0;
  /// One single-thread chase that times every `every`-th timed step on its own (the mixture
  /// of a region's loads, not only their mean). Devices without it throw UsageError.
  virtual SampledChase sampled_chase(Chain& chain, const ChaseParams& params, std::uint32_t every);
  /// Single-thread chase through a random cycle in shared memory of `bytes` bytes.
  virtual ChaseTiming shared_chase(std::uint32_t bytes, std::uint32_t node_stride_bytes,
                                   std::uint64_t timed_steps) = 0;
  /// Full environment record (CUDA runtime, driver, NVML readings, processes...).
  virtual nlohmann::json environment() const = 0;
  /// Launch shape and resources of the chase kernels (grid, block, registers, shared memory).
  virtual nlohmann::json chase_kernel_info() const { return nlohmann::json::object(); }
};

/// Opens "cuda:<n>", "<n>" or "model:<name>"; throws UsageError with the choices on failure.
std::unique_ptr<Device> open_device(const std::string& spec);

}  // namespace gpuprobe::device
