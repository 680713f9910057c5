#pragma once
// The environment record stored with every result: host, CUDA runtime and driver, the GPU's
// properties, and NVML readings (clocks, power, throttle reasons, other processes).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/device.hpp"

namespace gpuprobe::env {

/// Now, in UTC, ISO-8601 with milliseconds: "2026-11-29T18:11:05.123Z".
std::string utc_now_iso8601();

/// The 16 UUID bytes in the form NVML and nvidia-smi print:
/// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lowercase hexadecimal).
std::string format_gpu_uuid(const unsigned char (&bytes)[16]);

/// Peak DRAM bandwidth in bytes/s: memory clock × 2 (double data rate) × bus width / 8.
double theoretical_dram_bandwidth_bytes_per_s(double mem_clock_khz, int bus_width_bits);

/// The CPU model named in the text of /proc/cpuinfo ("model name", or what other
/// architectures use instead); empty when none is found.
std::string parse_cpu_model(const std::string& cpuinfo_text);

/// One reading of clocks, power, temperature and throttle reasons of CUDA device
/// `cuda_ordinal`, from NVML (the NVML device is matched by PCI bus id, then UUID). Never
/// throws: valid = false when NVML is unavailable or the device cannot be matched or its SM and
/// memory clocks cannot be read. When valid, a field NVML cannot read (power, temperature) is
/// NaN, which to_json writes as null; an unreadable throttle mask is 0.
device::ClockReading read_clocks(int cuda_ordinal);

/// What the readings taken while an experiment ran show: {"samples": n, "interval_ms"} and,
/// over the valid readings, "sm_clock_mhz", "power_w" and "temperature_c" as
/// {"min", "median", "max"}, the union of the throttle-reason masks ("throttle_reasons_mask",
/// "throttle_reasons") and "throttled" (any reason but gpu_idle). Invalid readings are skipped;
/// with none valid only "samples" (0) and "note" remain.
nlohmann::json summarize_clock_samples(const std::vector<device::ClockReading>& samples,
                                       double interval_ms);

/// Reads `read` every `interval_ms` on a background thread from construction until stop() (or
/// destruction), so that clocks and power are known while an experiment runs, not only before
/// and after. The first reading is taken at once; a reading that is invalid (no NVML, a
/// modelled GPU) ends the sampling.
class ClockSampler {
 public:
  ClockSampler(std::function<device::ClockReading()> read, double interval_ms);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;
  /// Stops the thread (idempotent) and returns summarize_clock_samples of what it read.
  nlohmann::json stop();

 private:
  void loop();
  std::function<device::ClockReading()> read_;
  double interval_ms_;
  std::vector<device::ClockReading> samples_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

/// The full environment of CUDA device `cuda_ordinal`: time, host, CUDA driver and runtime
/// versions, the device's properties, and an "nvml" block (readings, or why NVML is missing).
/// Throws CudaError when a CUDA call fails (no GPU, no driver) and UsageError when the ordinal
/// names no device.
nlohmann::json capture_cuda_environment(int cuda_ordinal);

/// Hostname, OS and kernel, CPU model and count, memory, and the time; needs no GPU.
nlohmann::json capture_host_environment();

}  // namespace gpuprobe::env
