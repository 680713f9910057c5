#include "core/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>

namespace gpuprobe::nvml {

namespace {

// The few NVML types and constants used here, declared from the NVML API reference because no
// nvml.h is installed where the tool is built. C enums are int-sized on the ABIs we run on.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;

constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kErrorInsufficientSize = 7;

constexpr int kClockSm = 1;              // NVML_CLOCK_SM
constexpr int kClockMem = 2;             // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;       // NVML_TEMPERATURE_GPU
constexpr int kFeatureEnabled = 1;       // NVML_FEATURE_ENABLED (nvmlEnableState_t)
constexpr unsigned int kMigEnabled = 1;  // NVML_DEVICE_MIG_ENABLE
constexpr int kPstateUnknown = 32;       // NVML_PSTATE_UNKNOWN

// NVML_VALUE_NOT_AVAILABLE is (-1) stored in an unsigned field.
constexpr std::uint64_t kNotAvailableU64 = ~std::uint64_t{0};
constexpr std::uint32_t kNotAvailableU32 = ~std::uint32_t{0};

// Documented buffer sizes are at most 96 bytes (UUID_V2, NAME_V2); this leaves room.
constexpr unsigned int kStringBufferBytes = 256;

// nvmlProcessInfo_t has had three layouts, and nvmlDeviceGetComputeRunningProcesses_v3 has
// been paired with more than one of them across driver releases (R535.43-R535.86 wrote 32-byte
// entries, later drivers 24-byte ones). So the entry size is measured, not assumed: the
// buffer is filled with a sentinel, the driver writes into it, and the extent of what it
// wrote, divided by the count, must match one of the known layouts:
//   16 bytes (v1): unsigned int pid; unsigned long long usedGpuMemory;
//   24 bytes (v2): ... ; unsigned int gpuInstanceId; unsigned int computeInstanceId;
//   32 bytes (v3, short-lived): ... ; unsigned long long usedGpuCcProtectedMemory;
// Every layout starts with pid at offset 0 and usedGpuMemory at offset 8.
constexpr unsigned int kKnownEntryBytes[] = {16, 24, 32};
// Room per entry in the buffer: more than any known layout, so a driver with a larger layout
// than we know cannot write past the end; it is then reported as unreadable.
constexpr std::size_t kEntryRoomBytes = 64;

template <typename Fn>
bool resolve(void* lib, Fn& fn, std::initializer_list<const char*> names,
             std::string* chosen = nullptr) {
  for (const char* name : names) {
    if (void* sym = dlsym(lib, name)) {
      fn = reinterpret_cast<Fn>(sym);
      if (chosen) *chosen = name;
      return true;
    }
  }
  fn = nullptr;
  return false;
}

std::size_t written_extent(const std::vector<unsigned char>& buf, unsigned char sentinel) {
  for (std::size_t i = buf.size(); i > 0; --i)
    if (buf[i - 1] != sentinel) return i;
  return 0;
}

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*nvml_version)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*by_uuid)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*serial)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*max_clock_info)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*applications_clock)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*default_applications_clock)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*enforced_power_limit)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*clocks_event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*persistence_mode)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned int*, unsigned int*) = nullptr;
  nvmlReturn_t (*performance_state)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*compute_mode)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*memory_bus_width)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*compute_processes)(nvmlDevice_t, unsigned int*, void*) = nullptr;
  std::string compute_processes_symbol;
};

std::vector<std::string> throttle_reason_names(std::uint64_t mask) {
  static const struct {
    std::uint64_t bit;
    const char* name;
  } kNames[] = {
      {reason::kGpuIdle, "gpu_idle"},
      {reason::kApplicationsClocksSetting, "applications_clocks_setting"},
      {reason::kSwPowerCap, "sw_power_cap"},
      {reason::kHwSlowdown, "hw_slowdown"},
      {reason::kSyncBoost, "sync_boost"},
      {reason::kSwThermalSlowdown, "sw_thermal_slowdown"},
      {reason::kHwThermalSlowdown, "hw_thermal_slowdown"},
      {reason::kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {reason::kDisplayClockSetting, "display_clock_setting"},
      {reason::kBoardLimit, "board_limit"},
      {reason::kReliability, "reliability"},
  };
  std::vector<std::string> names;
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t value = std::uint64_t{1} << bit;
    if (!(mask & value)) continue;
    const char* name = nullptr;
    for (const auto& known : kNames)
      if (known.bit == value) name = known.name;
    names.push_back(name ? std::string(name) : "unknown_bit_" + std::to_string(bit));
  }
  return names;
}

Nvml& Nvml::instance() {
  static Nvml nvml;
  return nvml;
}

Nvml::Nvml(const std::string& library) : library_(library), api_(std::make_unique<Api>()) {
  dlerror();  // clear any stale error
  lib_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    const char* why = dlerror();
    reason_ = "cannot load " + library + ": " + (why ? why : "not found");
    return;
  }
  Api& a = *api_;
  std::string init_symbol;
  if (!resolve(lib_, a.init, {"nvmlInit_v2", "nvmlInit"}, &init_symbol) ||
      !resolve(lib_, a.shutdown, {"nvmlShutdown"})) {
    reason_ = library + " has no nvmlInit_v2/nvmlShutdown: not an NVML library";
    dlclose(lib_);
    lib_ = nullptr;
    return;
  }
  resolve(lib_, a.error_string, {"nvmlErrorString"});
  const nvmlReturn_t rc = a.init();
  if (rc != kSuccess) {
    const char* text = a.error_string ? a.error_string(rc) : nullptr;
    reason_ = init_symbol + " failed: " + (text ? text : "NVML error " + std::to_string(rc));
    dlclose(lib_);
    lib_ = nullptr;
    return;
  }
  initialized_ = true;

  // Versioned names first: an unversioned symbol keeps its oldest ABI.
  resolve(lib_, a.driver_version, {"nvmlSystemGetDriverVersion"});
  resolve(lib_, a.nvml_version, {"nvmlSystemGetNVMLVersion"});
  resolve(lib_, a.by_pci_bus_id,
          {"nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId"});
  resolve(lib_, a.by_uuid, {"nvmlDeviceGetHandleByUUID"});
  resolve(lib_, a.name, {"nvmlDeviceGetName"});
  resolve(lib_, a.uuid, {"nvmlDeviceGetUUID"});
  resolve(lib_, a.serial, {"nvmlDeviceGetSerial"});
  resolve(lib_, a.clock_info, {"nvmlDeviceGetClockInfo"});
  resolve(lib_, a.max_clock_info, {"nvmlDeviceGetMaxClockInfo"});
  resolve(lib_, a.applications_clock, {"nvmlDeviceGetApplicationsClock"});
  resolve(lib_, a.default_applications_clock, {"nvmlDeviceGetDefaultApplicationsClock"});
  resolve(lib_, a.power_usage, {"nvmlDeviceGetPowerUsage"});
  resolve(lib_, a.enforced_power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  resolve(lib_, a.temperature, {"nvmlDeviceGetTemperature"});
  // Renamed in R535; the old name remains as a deprecated alias on newer drivers.
  resolve(lib_, a.clocks_event_reasons,
          {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  resolve(lib_, a.ecc_mode, {"nvmlDeviceGetEccMode"});
  resolve(lib_, a.persistence_mode, {"nvmlDeviceGetPersistenceMode"});
  resolve(lib_, a.mig_mode, {"nvmlDeviceGetMigMode"});
  resolve(lib_, a.performance_state, {"nvmlDeviceGetPerformanceState"});
  resolve(lib_, a.compute_mode, {"nvmlDeviceGetComputeMode"});
  resolve(lib_, a.memory_bus_width, {"nvmlDeviceGetMemoryBusWidth"});
  resolve(lib_, a.compute_processes,
          {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
           "nvmlDeviceGetComputeRunningProcesses"},
          &a.compute_processes_symbol);
}

Nvml::~Nvml() {
  // The library stays mapped: the process-wide instance is destroyed during exit, when other
  // static destructors or NVML's own atexit work may still refer to it.
  if (initialized_ && api_->shutdown) api_->shutdown();
}

namespace {

template <typename Fn, typename... Args>
std::optional<std::string> read_string(Fn fn, Args... args) {
  if (!fn) return std::nullopt;
  char buf[kStringBufferBytes] = {};
  if (fn(args..., buf, kStringBufferBytes) != kSuccess) return std::nullopt;
  buf[kStringBufferBytes - 1] = '\0';
  return std::string(buf);
}

template <typename T, typename Fn, typename... Args>
std::optional<T> read_value(Fn fn, Args... args) {
  if (!fn) return std::nullopt;
  T value{};
  if (fn(args..., &value) != kSuccess) return std::nullopt;
  return value;
}

}  // namespace

std::optional<Handle> Nvml::device_by_pci_bus_id(const std::string& bus_id) const {
  if (!initialized_ || !api_->by_pci_bus_id) return std::nullopt;
  nvmlDevice_t dev = nullptr;
  if (api_->by_pci_bus_id(bus_id.c_str(), &dev) != kSuccess || !dev) return std::nullopt;
  return Handle{dev};
}

std::optional<Handle> Nvml::device_by_uuid(const std::string& uuid) const {
  if (!initialized_ || !api_->by_uuid) return std::nullopt;
  nvmlDevice_t dev = nullptr;
  if (api_->by_uuid(uuid.c_str(), &dev) != kSuccess || !dev) return std::nullopt;
  return Handle{dev};
}

std::optional<std::string> Nvml::driver_version() const {
  if (!initialized_) return std::nullopt;
  return read_string(api_->driver_version);
}

std::optional<std::string> Nvml::nvml_version() const {
  if (!initialized_) return std::nullopt;
  return read_string(api_->nvml_version);
}

// Every device reader goes through this guard: NVML unusable or a null handle -> nullopt.
#define GP_NVML_DEVICE_GUARD(d) \
  if (!initialized_ || !(d).raw) return std::nullopt

std::optional<std::string> Nvml::name(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_string(api_->name, d.raw);
}

std::optional<std::string> Nvml::uuid(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_string(api_->uuid, d.raw);
}

std::optional<std::string> Nvml::serial(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_string(api_->serial, d.raw);
}

std::optional<unsigned int> Nvml::sm_clock_mhz(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_value<unsigned int>(api_->clock_info, d.raw, kClockSm);
}

std::optional<unsigned int> Nvml::mem_clock_mhz(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_value<unsigned int>(api_->clock_info, d.raw, kClockMem);
}

std::optional<unsigned int> Nvml::sm_clock_max_mhz(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_value<unsigned int>(api_->max_clock_info, d.raw, kClockSm);
}

std::optional<unsigned int> Nvml::mem_clock_max_mhz(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_value<unsigned int>(api_->max_clock_info, d.raw, kClockMem);
}

std::optional<unsigned int> Nvml::applications_sm_clock_mhz(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_value<unsigned int>(api_->applications_clock, d.raw, kClockSm);
}

std::optional<unsigned int> Nvml::applications_mem_clock_mhz(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_value<unsigned int>(api_->applications_clock, d.raw, kClockMem);
}

std::optional<unsigned int> Nvml::default_applications_sm_clock_mhz(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_value<unsigned int>(api_->default_applications_clock, d.raw, kClockSm);
}

std::optional<unsigned int> Nvml::default_applications_mem_clock_mhz(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_value<unsigned int>(api_->default_applications_clock, d.raw, kClockMem);
}

std::optional<double> Nvml::power_w(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  auto mw = read_value<unsigned int>(api_->power_usage, d.raw);
  if (!mw) return std::nullopt;
  return *mw / 1000.0;
}

std::optional<double> Nvml::power_limit_w(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  auto mw = read_value<unsigned int>(api_->enforced_power_limit, d.raw);
  if (!mw) return std::nullopt;
  return *mw / 1000.0;
}

std::optional<unsigned int> Nvml::temperature_c(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_value<unsigned int>(api_->temperature, d.raw, kTemperatureGpu);
}

std::optional<std::uint64_t> Nvml::clocks_event_reasons(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  auto mask = read_value<unsigned long long>(api_->clocks_event_reasons, d.raw);
  if (!mask) return std::nullopt;
  return static_cast<std::uint64_t>(*mask);
}

std::optional<EccMode> Nvml::ecc_mode(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  if (!api_->ecc_mode) return std::nullopt;
  int current = 0, pending = 0;
  if (api_->ecc_mode(d.raw, &current, &pending) != kSuccess) return std::nullopt;
  return EccMode{current == kFeatureEnabled, pending == kFeatureEnabled};
}

std::optional<bool> Nvml::persistence_mode_enabled(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  auto mode = read_value<int>(api_->persistence_mode, d.raw);
  if (!mode) return std::nullopt;
  return *mode == kFeatureEnabled;
}

std::optional<bool> Nvml::mig_mode_enabled(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  if (!api_->mig_mode) return std::nullopt;
  unsigned int current = 0, pending = 0;
  if (api_->mig_mode(d.raw, &current, &pending) != kSuccess) return std::nullopt;
  return current == kMigEnabled;
}

std::optional<int> Nvml::performance_state(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  auto state = read_value<int>(api_->performance_state, d.raw);
  if (!state || *state < 0 || *state >= kPstateUnknown) return std::nullopt;
  return state;
}

std::optional<std::string> Nvml::compute_mode(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  auto mode = read_value<int>(api_->compute_mode, d.raw);
  if (!mode) return std::nullopt;
  switch (*mode) {
    case 0:
      return std::string("default");
    case 1:
      return std::string("exclusive_thread");
    case 2:
      return std::string("prohibited");
    case 3:
      return std::string("exclusive_process");
    default:
      return "unknown_" + std::to_string(*mode);
  }
}

std::optional<unsigned int> Nvml::memory_bus_width_bits(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  return read_value<unsigned int>(api_->memory_bus_width, d.raw);
}

std::optional<ProcessList> Nvml::compute_processes(Handle d) const {
  GP_NVML_DEVICE_GUARD(d);
  auto fn = api_->compute_processes;
  if (!fn) return std::nullopt;
  ProcessList out;
  out.symbol = api_->compute_processes_symbol;

  unsigned int count = 0;
  nvmlReturn_t rc = fn(d.raw, &count, nullptr);
  if (rc == kSuccess) return out;  // nothing running
  if (rc != kErrorInsufficientSize) return std::nullopt;

  // Two reads with different sentinels: a byte the driver wrote cannot equal both, so the
  // larger of the two extents is exactly where the written entries end.
  constexpr unsigned char kSentinelA = 0xA5, kSentinelB = 0x5A;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const unsigned int capacity = count + 8;  // processes may start between the calls
    std::vector<unsigned char> a(capacity * kEntryRoomBytes, kSentinelA);
    std::vector<unsigned char> b(capacity * kEntryRoomBytes, kSentinelB);
    unsigned int na = capacity, nb = capacity;
    const nvmlReturn_t ra = fn(d.raw, &na, a.data());
    const nvmlReturn_t rb = fn(d.raw, &nb, b.data());
    if (ra == kErrorInsufficientSize || rb == kErrorInsufficientSize || na != nb) {
      count = std::max({count, na, nb});  // the list changed under us: read again
      continue;
    }
    if (ra != kSuccess || rb != kSuccess) return std::nullopt;
    if (na == 0) return out;

    const std::size_t extent =
        std::max(written_extent(a, kSentinelA), written_extent(b, kSentinelB));
    unsigned int entry = 0;
    for (unsigned int size : kKnownEntryBytes) {
      // Every layout ends with a field of 4 or 8 bytes that the driver writes.
      const std::size_t end = std::size_t{na} * size;
      if (extent <= end && extent + 8 > end) entry = size;
    }
    if (entry == 0) return std::nullopt;  // a layout we do not know: refuse to guess
    out.entry_bytes = entry;

    for (unsigned int i = 0; i < na; ++i) {
      const unsigned char* p = b.data() + std::size_t{i} * entry;
      std::uint32_t pid = 0;
      std::uint64_t used = 0;
      std::memcpy(&pid, p, sizeof pid);
      std::memcpy(&used, p + 8, sizeof used);
      ProcessInfo info;
      info.pid = pid;
      if (used != kNotAvailableU64) info.used_memory_bytes = used;
      if (entry >= 24) {
        std::uint32_t gi = 0, ci = 0;
        std::memcpy(&gi, p + 16, sizeof gi);
        std::memcpy(&ci, p + 20, sizeof ci);
        if (gi != kNotAvailableU32) info.gpu_instance_id = gi;
        if (ci != kNotAvailableU32) info.compute_instance_id = ci;
      }
      out.processes.push_back(info);
    }
    return out;
  }
  return std::nullopt;
}

#undef GP_NVML_DEVICE_GUARD

}  // namespace gpuprobe::nvml
