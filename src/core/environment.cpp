#include "core/environment.hpp"

#include <cuda_runtime_api.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/nvml.hpp"

namespace gpuprobe::env {

using nlohmann::json;

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  char ms[8];
  std::snprintf(ms, sizeof ms, ".%03dZ", static_cast<int>(millis));
  return std::string(date) + ms;
}

std::string format_gpu_uuid(const unsigned char (&b)[16]) {
  char buf[48];
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

double theoretical_dram_bandwidth_bytes_per_s(double mem_clock_khz, int bus_width_bits) {
  return mem_clock_khz * 1000.0 * 2.0 * bus_width_bits / 8.0;
}

std::string parse_cpu_model(const std::string& cpuinfo_text) {
  // x86 says "model name"; other architectures use one of the others.
  static const char* kKeys[] = {"model name", "Model", "cpu model", "Processor", "Hardware", "cpu"};
  std::map<std::string, std::string> first;
  std::istringstream in(cpuinfo_text);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    std::string value = line.substr(colon + 1);
    auto trim = [](std::string& s) {
      const auto b = s.find_first_not_of(" \t");
      const auto e = s.find_last_not_of(" \t\r");
      s = b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    trim(key);
    trim(value);
    if (!value.empty()) first.emplace(key, value);  // keeps the first occurrence
  }
  for (const char* key : kKeys) {
    auto it = first.find(key);
    if (it != first.end()) return it->second;
  }
  return "";
}

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// PRETTY_NAME from /etc/os-release, quotes removed; empty when absent.
std::string os_pretty_name() {
  std::istringstream in(read_file("/etc/os-release"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string value = line.substr(std::strlen("PRETTY_NAME="));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\''))
      value = value.substr(1, value.size() - 2);
    return value;
  }
  return "";
}

std::optional<std::uint64_t> mem_total_bytes() {
  std::istringstream in(read_file("/proc/meminfo"));
  std::string key, unit;
  std::uint64_t value = 0;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemTotal:") return value * 1024;  // reported in kB (KiB)
  }
  return std::nullopt;
}

template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string compute_mode_name(int mode) {
  switch (mode) {
    case cudaComputeModeDefault:
      return "default";
    case cudaComputeModeExclusive:
      return "exclusive_thread";
    case cudaComputeModeProhibited:
      return "prohibited";
    case cudaComputeModeExclusiveProcess:
      return "exclusive_process";
    default:
      return "unknown_" + std::to_string(mode);
  }
}

/// How a CUDA device was matched to an NVML device.
struct NvmlMatch {
  nvml::Handle handle;
  std::string method;  ///< "pci_bus_id" or "uuid"
};

/// The NVML device of CUDA device `ordinal`, found by PCI bus id (CUDA and NVML number devices
/// differently), else by UUID. Never throws; a successful match is cached.
std::optional<NvmlMatch> match_nvml_device(int ordinal) {
  static std::mutex mutex;
  static std::map<int, NvmlMatch> cache;
  nvml::Nvml& nvml = nvml::Nvml::instance();
  if (!nvml.available()) return std::nullopt;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(ordinal);
    if (it != cache.end()) return it->second;
  }
  // A failed CUDA query here must not linger as the "last error" that a later launch check
  // would blame on its kernel; only our own failure is cleared.
  auto query = [](cudaError_t rc) {
    if (rc != cudaSuccess) cudaGetLastError();
    return rc == cudaSuccess;
  };
  std::optional<NvmlMatch> match;
  char bus_id[64] = {};
  if (query(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal))) {
    if (auto h = nvml.device_by_pci_bus_id(bus_id)) match = NvmlMatch{*h, "pci_bus_id"};
  }
  if (!match) {
    cudaDeviceProp prop{};
    if (query(cudaGetDeviceProperties(&prop, ordinal))) {
      unsigned char bytes[16];
      std::memcpy(bytes, prop.uuid.bytes, sizeof bytes);
      if (auto h = nvml.device_by_uuid(format_gpu_uuid(bytes))) match = NvmlMatch{*h, "uuid"};
    }
  }
  if (match) {
    std::lock_guard<std::mutex> lock(mutex);
    cache.emplace(ordinal, *match);
  }
  return match;
}

json nvml_block(int ordinal, const std::string& cuda_uuid) {
  nvml::Nvml& nvml = nvml::Nvml::instance();
  json j;
  j["library"] = nvml.library();
  j["available"] = nvml.available();
  if (!nvml.available()) {
    j["reason"] = nvml.unavailable_reason();
    return j;
  }
  j["driver_version"] = or_null(nvml.driver_version());
  j["nvml_version"] = or_null(nvml.nvml_version());
  const auto match = match_nvml_device(ordinal);
  if (!match) {
    j["device_matched"] = false;
    j["reason"] = "no NVML device has this CUDA device's PCI bus id or UUID";
    return j;
  }
  const nvml::Handle d = match->handle;
  j["device_matched"] = true;
  j["match_method"] = match->method;
  const auto uuid = nvml.uuid(d);
  j["uuid"] = or_null(uuid);
  j["uuid_matches_cuda"] = uuid ? json(*uuid == cuda_uuid) : json(nullptr);
  j["name"] = or_null(nvml.name(d));
  j["serial"] = or_null(nvml.serial(d));
  j["persistence_mode_enabled"] = or_null(nvml.persistence_mode_enabled(d));
  const auto ecc = nvml.ecc_mode(d);
  j["ecc_enabled"] = ecc ? json(ecc->current_enabled) : json(nullptr);
  j["ecc_enabled_pending"] = ecc ? json(ecc->pending_enabled) : json(nullptr);
  const auto mig = nvml.mig_mode_enabled(d);
  j["mig_enabled"] = or_null(mig);
  j["compute_mode"] = or_null(nvml.compute_mode(d));
  const auto pstate = nvml.performance_state(d);
  j["performance_state"] = pstate ? json("P" + std::to_string(*pstate)) : json(nullptr);
  j["power_limit_w"] = or_null(nvml.power_limit_w(d));
  j["power_w"] = or_null(nvml.power_w(d));
  j["temperature_c"] = or_null(nvml.temperature_c(d));
  j["sm_clock_mhz"] = or_null(nvml.sm_clock_mhz(d));
  j["mem_clock_mhz"] = or_null(nvml.mem_clock_mhz(d));
  j["sm_clock_max_mhz"] = or_null(nvml.sm_clock_max_mhz(d));
  const auto mem_max = nvml.mem_clock_max_mhz(d);
  j["mem_clock_max_mhz"] = or_null(mem_max);
  const auto app_sm = nvml.applications_sm_clock_mhz(d);
  const auto app_mem = nvml.applications_mem_clock_mhz(d);
  const auto def_sm = nvml.default_applications_sm_clock_mhz(d);
  const auto def_mem = nvml.default_applications_mem_clock_mhz(d);
  j["applications_sm_clock_mhz"] = or_null(app_sm);
  j["applications_mem_clock_mhz"] = or_null(app_mem);
  j["default_applications_sm_clock_mhz"] = or_null(def_sm);
  j["default_applications_mem_clock_mhz"] = or_null(def_mem);
  if (app_sm && app_mem && def_sm && def_mem)
    j["applications_clocks_changed"] = *app_sm != *def_sm || *app_mem != *def_mem;
  else
    j["applications_clocks_changed"] = nullptr;
  const auto bus = nvml.memory_bus_width_bits(d);
  j["mem_bus_width_bits"] = or_null(bus);
  if (mem_max && bus)
    j["dram_bandwidth_theoretical_gb_s"] =
        theoretical_dram_bandwidth_bytes_per_s(*mem_max * 1000.0, static_cast<int>(*bus)) / 1e9;
  const auto mask = nvml.clocks_event_reasons(d);
  j["throttle_reasons_mask"] = or_null(mask);
  j["throttle_reasons"] = mask ? json(nvml::throttle_reason_names(*mask)) : json(nullptr);

  json procs;
  const auto list = nvml.compute_processes(d);
  const unsigned int own_pid = static_cast<unsigned int>(getpid());
  procs["own_pid"] = own_pid;
  if (!list) {
    procs["readable"] = false;
  } else {
    procs["readable"] = true;
    procs["source"] = list->symbol;
    procs["entry_bytes"] = list->entry_bytes;
    json others = json::array();
    for (const auto& p : list->processes) {
      if (p.pid == own_pid) continue;
      json o{{"pid", p.pid}, {"used_memory_bytes", or_null(p.used_memory_bytes)}};
      if (mig.value_or(false)) {
        o["gpu_instance_id"] = or_null(p.gpu_instance_id);
        o["compute_instance_id"] = or_null(p.compute_instance_id);
      }
      others.push_back(std::move(o));
    }
    procs["other_count"] = others.size();
    procs["others"] = std::move(others);
  }
  // NVML reports host PIDs; inside a container this process's own entry cannot be recognised
  // and appears among the others.
  j["compute_processes"] = std::move(procs);
  return j;
}

}  // namespace

device::ClockReading read_clocks(int cuda_ordinal) {
  device::ClockReading r;
  r.time_utc = utc_now_iso8601();
  const auto match = match_nvml_device(cuda_ordinal);
  if (!match) return r;
  nvml::Nvml& nvml = nvml::Nvml::instance();
  const nvml::Handle d = match->handle;
  const auto sm = nvml.sm_clock_mhz(d);
  const auto mem = nvml.mem_clock_mhz(d);
  if (!sm || !mem) return r;
  constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  r.valid = true;
  r.sm_mhz = *sm;
  r.mem_mhz = *mem;
  r.power_w = nvml.power_w(d).value_or(kUnknown);
  r.power_limit_w = nvml.power_limit_w(d).value_or(kUnknown);
  const auto temp = nvml.temperature_c(d);
  r.temperature_c = temp ? static_cast<double>(*temp) : kUnknown;
  r.throttle_reasons = nvml.clocks_event_reasons(d).value_or(0);
  r.throttle_names = nvml::throttle_reason_names(r.throttle_reasons);
  return r;
}

json summarize_clock_samples(const std::vector<device::ClockReading>& samples,
                             double interval_ms) {
  json j{{"samples", samples.size()}, {"interval_ms", interval_ms}};
  std::vector<double> sm, power, temp;
  std::uint64_t mask = 0;
  for (const auto& c : samples) {
    if (!c.valid) continue;
    sm.push_back(c.sm_mhz);
    if (std::isfinite(c.power_w)) power.push_back(c.power_w);
    if (std::isfinite(c.temperature_c)) temp.push_back(c.temperature_c);
    mask |= c.throttle_reasons;
  }
  if (sm.empty()) {
    j["note"] = "no valid reading (NVML not available)";
    return j;
  }
  auto range = [](std::vector<double> v) -> json {
    if (v.empty()) return nullptr;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    const double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return {{"min", v.front()}, {"median", med}, {"max", v.back()}};
  };
  j["sm_clock_mhz"] = range(sm);
  j["power_w"] = range(power);
  j["temperature_c"] = range(temp);
  j["throttle_reasons_mask"] = mask;
  j["throttle_reasons"] = nvml::throttle_reason_names(mask);
  const std::uint64_t idle_bit = 0x1;  // gpu_idle is not a throttle
  j["throttled"] = (mask & ~idle_bit) != 0;
  return j;
}

ClockSampler::ClockSampler(std::function<device::ClockReading()> read, double interval_ms)
    : read_(std::move(read)), interval_ms_(interval_ms) {
  thread_ = std::thread([this] { loop(); });
}

ClockSampler::~ClockSampler() { stop(); }

void ClockSampler::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    device::ClockReading c = read_();
    lock.lock();
    const bool valid = c.valid;
    samples_.push_back(std::move(c));
    if (!valid) break;
    wake_.wait_for(lock, std::chrono::duration<double, std::milli>(interval_ms_),
                   [this] { return stop_; });
  }
}

json ClockSampler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  return summarize_clock_samples(samples_, interval_ms_);
}

json capture_host_environment() {
  json h;
  h["time_utc"] = utc_now_iso8601();
  char host[256] = {};
  h["hostname"] = gethostname(host, sizeof host - 1) == 0 ? std::string(host) : std::string();
  h["os"] = os_pretty_name();
  struct utsname u {};
  if (uname(&u) == 0) {
    h["kernel_name"] = u.sysname;
    h["kernel_release"] = u.release;
    h["kernel_version"] = u.version;
    h["machine"] = u.machine;
  }
  h["cpu_model"] = parse_cpu_model(read_file("/proc/cpuinfo"));
  h["logical_cpu_count"] = std::thread::hardware_concurrency();
  h["memory_total_bytes"] = or_null(mem_total_bytes());
  return h;
}

json capture_cuda_environment(int cuda_ordinal) {
  json env;
  env["time_utc"] = utc_now_iso8601();
  env["host"] = capture_host_environment();

  int driver = 0, runtime = 0, count = 0;
  GP_CUDA_CHECK(cudaDriverGetVersion(&driver));
  GP_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  GP_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (cuda_ordinal < 0 || cuda_ordinal >= count)
    throw UsageError("no CUDA device " + std::to_string(cuda_ordinal) + "; this machine has " +
                     std::to_string(count) + " (ordinals 0.." + std::to_string(count - 1) + ")");
  env["cuda"] = {{"driver_supports_cuda_version", cuda_version_string(driver)},
                 {"runtime_version", cuda_version_string(runtime)},
                 {"device_count", count}};

  cudaDeviceProp p{};
  GP_CUDA_CHECK(cudaGetDeviceProperties(&p, cuda_ordinal));
  // CUDA 13 removed clockRate and memoryClockRate from cudaDeviceProp: attributes instead.
  int clock_khz = 0, mem_clock_khz = 0, bus_bits = 0, ecc = 0, compute_mode = 0;
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, cuda_ordinal));
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, cuda_ordinal));
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, cuda_ordinal));
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&ecc, cudaDevAttrEccEnabled, cuda_ordinal));
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&compute_mode, cudaDevAttrComputeMode, cuda_ordinal));
  char bus_id[64] = {};
  GP_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_ordinal));

  unsigned char uuid_bytes[16];
  std::memcpy(uuid_bytes, p.uuid.bytes, sizeof uuid_bytes);
  const std::string uuid = format_gpu_uuid(uuid_bytes);

  json g;
  g["ordinal"] = cuda_ordinal;
  g["name"] = std::string(p.name);
  g["uuid"] = uuid;
  g["pci_bus_id"] = std::string(bus_id);
  g["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
  g["cc_major"] = p.major;
  g["cc_minor"] = p.minor;
  g["sm_count"] = p.multiProcessorCount;
  g["l2_bytes"] = p.l2CacheSize;
  g["persisting_l2_max_bytes"] = p.persistingL2CacheMaxSize;
  g["access_policy_max_window_bytes"] = p.accessPolicyMaxWindowSize;
  g["global_memory_bytes"] = p.totalGlobalMem;
  g["const_mem_bytes"] = p.totalConstMem;
  g["shared_per_sm_bytes"] = p.sharedMemPerMultiprocessor;
  g["shared_per_block_bytes"] = p.sharedMemPerBlock;
  g["shared_per_block_optin_bytes"] = p.sharedMemPerBlockOptin;
  g["reserved_shared_per_block_bytes"] = p.reservedSharedMemPerBlock;
  g["registers_per_sm"] = p.regsPerMultiprocessor;
  g["registers_per_block"] = p.regsPerBlock;
  g["max_threads_per_sm"] = p.maxThreadsPerMultiProcessor;
  g["max_threads_per_block"] = p.maxThreadsPerBlock;
  g["max_blocks_per_sm"] = p.maxBlocksPerMultiProcessor;
  g["warp_size_threads"] = p.warpSize;
  g["sm_clock_max_mhz"] = clock_khz / 1000.0;
  g["mem_clock_max_mhz"] = mem_clock_khz / 1000.0;
  g["mem_bus_width_bits"] = bus_bits;
  g["dram_bandwidth_theoretical_gb_s"] =
      theoretical_dram_bandwidth_bytes_per_s(mem_clock_khz, bus_bits) / 1e9;
  g["ecc_enabled"] = ecc != 0;
  g["compute_mode"] = compute_mode_name(compute_mode);
  g["mps_enabled"] = p.mpsEnabled != 0;
  g["integrated"] = p.integrated != 0;
  g["multi_gpu_board"] = p.isMultiGpuBoard != 0;
  g["cluster_launch"] = p.clusterLaunch != 0;
  g["numa_node"] = p.deviceNumaId;
  g["host_numa_node"] = p.hostNumaId;
  env["gpu"] = std::move(g);

  env["nvml"] = nvml_block(cuda_ordinal, uuid);
  env["clocks"] = device::to_json(read_clocks(cuda_ordinal));
  return env;
}

}  // namespace gpuprobe::env
