#pragma once
// NVML, loaded at run time: libnvidia-ml.so.1 is opened with dlopen and every function resolved
// with dlsym, so the tool builds and runs where there is no NVML (CI, laptops). Nothing here
// throws or crashes when NVML is missing or a call fails: every reader returns std::nullopt.
// Read-only: the tool never changes clocks, power limits or any other GPU setting.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::nvml {

/// Bits of the clocks-event reason mask (called clocks-throttle reasons before NVML R535), with
/// the values nvml.h documents.
namespace reason {
inline constexpr std::uint64_t kGpuIdle = 0x1;
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kSwPowerCap = 0x4;
inline constexpr std::uint64_t kHwSlowdown = 0x8;
inline constexpr std::uint64_t kSyncBoost = 0x10;
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;
inline constexpr std::uint64_t kBoardLimit = 0x200;   ///< newer drivers only
inline constexpr std::uint64_t kReliability = 0x400;  ///< newer drivers only
}  // namespace reason

/// One name per set bit, lowest bit first ("gpu_idle", "sw_power_cap", ...); a bit NVML does
/// not document is named "unknown_bit_<n>". An empty mask gives an empty list.
std::vector<std::string> throttle_reason_names(std::uint64_t mask);

/// An NVML device (nvmlDevice_t). Only meaningful for the Nvml that returned it; a
/// default-constructed Handle makes every reader return nullopt.
struct Handle {
  void* raw = nullptr;
};

/// A process with a compute context on the device. NVML reports PIDs of the host's PID
/// namespace, so inside a container they may not match getpid().
struct ProcessInfo {
  unsigned int pid = 0;
  std::optional<std::uint64_t> used_memory_bytes;   ///< nullopt: NVML cannot tell (e.g. WDDM)
  std::optional<unsigned int> gpu_instance_id;      ///< MIG only
  std::optional<unsigned int> compute_instance_id;  ///< MIG only
};

/// The compute processes and how they were read (which symbol, what entry size was detected).
struct ProcessList {
  std::vector<ProcessInfo> processes;
  std::string symbol;            ///< e.g. "nvmlDeviceGetComputeRunningProcesses_v3"
  unsigned int entry_bytes = 0;  ///< the per-entry size the driver actually wrote
};

struct EccMode {
  bool current_enabled = false;
  bool pending_enabled = false;  ///< what applies after the next reboot
};

class Nvml {
 public:
  static constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";

  /// The process-wide NVML, loaded and initialised on first use.
  static Nvml& instance();

  /// Opens `library` and calls nvmlInit_v2; on any failure the object is unavailable.
  explicit Nvml(const std::string& library = kDefaultLibrary);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return initialized_; }
  /// Why NVML cannot be used ("cannot load libnvidia-ml.so.1: ..."); empty when available.
  std::string unavailable_reason() const { return reason_; }
  const std::string& library() const { return library_; }

  /// The device at a PCI address in "domain:bus:device.function" form (hexadecimal), e.g. what
  /// cudaDeviceGetPCIBusId returns. Prefer this to ordinals: CUDA and NVML order GPUs differently.
  std::optional<Handle> device_by_pci_bus_id(const std::string& bus_id) const;
  /// The device with this UUID ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx").
  std::optional<Handle> device_by_uuid(const std::string& uuid) const;

  /// The kernel driver's version, e.g. "570.124.06".
  std::optional<std::string> driver_version() const;
  /// NVML's own version, e.g. "12.570.124.06".
  std::optional<std::string> nvml_version() const;

  std::optional<std::string> name(Handle d) const;
  std::optional<std::string> uuid(Handle d) const;
  /// Board serial number; many boards (and all consumer ones) do not report it.
  std::optional<std::string> serial(Handle d) const;

  /// Current clocks, MHz.
  std::optional<unsigned int> sm_clock_mhz(Handle d) const;
  std::optional<unsigned int> mem_clock_mhz(Handle d) const;
  /// Maximum (boost) clocks, MHz.
  std::optional<unsigned int> sm_clock_max_mhz(Handle d) const;
  std::optional<unsigned int> mem_clock_max_mhz(Handle d) const;
  /// Applications clocks (target clocks under load) now, and their default; they differ when
  /// someone has set them.
  std::optional<unsigned int> applications_sm_clock_mhz(Handle d) const;
  std::optional<unsigned int> applications_mem_clock_mhz(Handle d) const;
  std::optional<unsigned int> default_applications_sm_clock_mhz(Handle d) const;
  std::optional<unsigned int> default_applications_mem_clock_mhz(Handle d) const;

  /// Board power draw in watts (NVML reports milliwatts; on recent GPUs a short average).
  std::optional<double> power_w(Handle d) const;
  /// The power limit the driver enforces after all limiters, in watts.
  std::optional<double> power_limit_w(Handle d) const;
  /// GPU die temperature, degrees Celsius.
  std::optional<unsigned int> temperature_c(Handle d) const;

  /// Current clocks-event (throttle) reason mask; see namespace reason.
  std::optional<std::uint64_t> clocks_event_reasons(Handle d) const;

  std::optional<EccMode> ecc_mode(Handle d) const;
  std::optional<bool> persistence_mode_enabled(Handle d) const;
  std::optional<bool> mig_mode_enabled(Handle d) const;
  /// Performance state: 0 for P0 (maximum performance) .. 15; nullopt when unknown.
  std::optional<int> performance_state(Handle d) const;
  /// "default", "exclusive_thread", "prohibited" or "exclusive_process".
  std::optional<std::string> compute_mode(Handle d) const;
  /// Memory bus width in bits.
  std::optional<unsigned int> memory_bus_width_bits(Handle d) const;

  /// Processes with a compute context on the device (this process included, if it has one).
  std::optional<ProcessList> compute_processes(Handle d) const;

  struct Api;  // resolved function pointers (defined in nvml.cpp)

 private:
  std::string library_;
  std::string reason_;
  void* lib_ = nullptr;
  bool initialized_ = false;
  std::unique_ptr<Api> api_;
};

}  // namespace gpuprobe::nvml
