// NVML loading, throttle-reason decoding, the checked-call macro and the environment record.
// Runs without a GPU; the tests that describe "no NVML / no GPU" behaviour skip themselves on a
// machine that has them.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/environment.hpp"
#include "core/error.hpp"
#include "core/nvml.hpp"

namespace gpuprobe {
namespace {

using Names = std::vector<std::string>;

bool nvml_library_loadable() {
  void* lib = dlopen(nvml::Nvml::kDefaultLibrary, RTLD_NOW | RTLD_LOCAL);
  if (lib) dlclose(lib);
  return lib != nullptr;
}

bool cuda_device_present() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
}

const std::regex kIsoUtc(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)");

// Every reader of an Nvml that could not be initialised must answer nullopt, even for a handle
// that looks valid (a call through to NVML would crash on it).
void expect_all_readers_empty(const nvml::Nvml& n, nvml::Handle d) {
  EXPECT_FALSE(n.device_by_pci_bus_id("0000:01:00.0"));
  EXPECT_FALSE(n.device_by_uuid("GPU-00000000-0000-0000-0000-000000000000"));
  EXPECT_FALSE(n.driver_version());
  EXPECT_FALSE(n.nvml_version());
  EXPECT_FALSE(n.name(d));
  EXPECT_FALSE(n.uuid(d));
  EXPECT_FALSE(n.serial(d));
  EXPECT_FALSE(n.sm_clock_mhz(d));
  EXPECT_FALSE(n.mem_clock_mhz(d));
  EXPECT_FALSE(n.sm_clock_max_mhz(d));
  EXPECT_FALSE(n.mem_clock_max_mhz(d));
  EXPECT_FALSE(n.applications_sm_clock_mhz(d));
  EXPECT_FALSE(n.applications_mem_clock_mhz(d));
  EXPECT_FALSE(n.default_applications_sm_clock_mhz(d));
  EXPECT_FALSE(n.default_applications_mem_clock_mhz(d));
  EXPECT_FALSE(n.power_w(d));
  EXPECT_FALSE(n.power_limit_w(d));
  EXPECT_FALSE(n.temperature_c(d));
  EXPECT_FALSE(n.clocks_event_reasons(d));
  EXPECT_FALSE(n.ecc_mode(d));
  EXPECT_FALSE(n.persistence_mode_enabled(d));
  EXPECT_FALSE(n.mig_mode_enabled(d));
  EXPECT_FALSE(n.performance_state(d));
  EXPECT_FALSE(n.compute_mode(d));
  EXPECT_FALSE(n.memory_bus_width_bits(d));
  EXPECT_FALSE(n.compute_processes(d));
}

TEST(ThrottleReasons, EmptyMaskHasNoNames) { EXPECT_EQ(nvml::throttle_reason_names(0), Names{}); }

TEST(ThrottleReasons, EachDocumentedBitHasItsName) {
  EXPECT_EQ(nvml::throttle_reason_names(0x1), Names{"gpu_idle"});
  EXPECT_EQ(nvml::throttle_reason_names(0x2), Names{"applications_clocks_setting"});
  EXPECT_EQ(nvml::throttle_reason_names(0x4), Names{"sw_power_cap"});
  EXPECT_EQ(nvml::throttle_reason_names(0x8), Names{"hw_slowdown"});
  EXPECT_EQ(nvml::throttle_reason_names(0x10), Names{"sync_boost"});
  EXPECT_EQ(nvml::throttle_reason_names(0x20), Names{"sw_thermal_slowdown"});
  EXPECT_EQ(nvml::throttle_reason_names(0x40), Names{"hw_thermal_slowdown"});
  EXPECT_EQ(nvml::throttle_reason_names(0x80), Names{"hw_power_brake_slowdown"});
  EXPECT_EQ(nvml::throttle_reason_names(0x100), Names{"display_clock_setting"});
}

TEST(ThrottleReasons, CombinedMaskListsBitsLowestFirst) {
  EXPECT_EQ(nvml::throttle_reason_names(nvml::reason::kHwThermalSlowdown |
                                        nvml::reason::kSwPowerCap | nvml::reason::kGpuIdle),
            (Names{"gpu_idle", "sw_power_cap", "hw_thermal_slowdown"}));
}

TEST(ThrottleReasons, UnknownBitsAreNamedByPosition) {
  EXPECT_EQ(nvml::throttle_reason_names(std::uint64_t{1} << 11), Names{"unknown_bit_11"});
  EXPECT_EQ(nvml::throttle_reason_names((std::uint64_t{1} << 63) | 0x4),
            (Names{"sw_power_cap", "unknown_bit_63"}));
}

TEST(Nvml, MissingLibraryIsUnavailableWithReason) {
  nvml::Nvml n("libgpuprobe-no-such-nvml.so.1");
  EXPECT_FALSE(n.available());
  EXPECT_NE(n.unavailable_reason().find("libgpuprobe-no-such-nvml.so.1"), std::string::npos)
      << n.unavailable_reason();
  expect_all_readers_empty(n, nvml::Handle{});
  expect_all_readers_empty(n, nvml::Handle{reinterpret_cast<void*>(0x1000)});
}

TEST(Nvml, LibraryWithoutNvmlSymbolsIsUnavailable) {
  nvml::Nvml n("libc.so.6");
  EXPECT_FALSE(n.available());
  EXPECT_NE(n.unavailable_reason().find("nvmlInit"), std::string::npos) << n.unavailable_reason();
  expect_all_readers_empty(n, nvml::Handle{reinterpret_cast<void*>(0x1000)});
}

TEST(Nvml, ProcessWideInstanceReportsNoNvmlHere) {
  if (nvml_library_loadable()) GTEST_SKIP() << "this machine has NVML";
  const nvml::Nvml& n = nvml::Nvml::instance();
  EXPECT_EQ(&n, &nvml::Nvml::instance());
  EXPECT_FALSE(n.available());
  EXPECT_NE(n.unavailable_reason().find("libnvidia-ml.so.1"), std::string::npos)
      << n.unavailable_reason();
  expect_all_readers_empty(n, nvml::Handle{reinterpret_cast<void*>(0x1000)});
}

TEST(Nvml, ProcessWideInstanceReadsTheGpuWhenPresent) {
  if (!nvml_library_loadable() || !cuda_device_present()) GTEST_SKIP() << "needs NVML and a GPU";
  const nvml::Nvml& n = nvml::Nvml::instance();
  ASSERT_TRUE(n.available()) << n.unavailable_reason();
  char bus_id[64] = {};
  ASSERT_EQ(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0), cudaSuccess);
  const auto d = n.device_by_pci_bus_id(bus_id);
  ASSERT_TRUE(d) << bus_id;
  EXPECT_GT(n.sm_clock_max_mhz(*d).value_or(0), 0u);
  EXPECT_GT(n.power_limit_w(*d).value_or(0), 0.0);
  EXPECT_TRUE(n.clocks_event_reasons(*d));
  EXPECT_TRUE(n.compute_processes(*d));
}

TEST(CudaCheck, SuccessDoesNotThrow) { EXPECT_NO_THROW(GP_CUDA_CHECK(cudaSuccess)); }

TEST(CudaCheck, FailureCarriesCallFileLineAndName) {
  const int line = __LINE__ + 2;
  try {
    GP_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_FALSE(e.sticky());
    EXPECT_NE(what.find("cudaErrorInvalidValue"), std::string::npos) << what;
    EXPECT_NE(what.find("test_environment.cpp:" + std::to_string(line)), std::string::npos) << what;
  }
}

TEST(CudaCheck, ContextKillingErrorsAreSticky) {
  for (cudaError_t err :
       {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorAssert,
        cudaErrorMisalignedAddress, cudaErrorIllegalInstruction, cudaErrorHardwareStackError,
        cudaErrorInvalidAddressSpace, cudaErrorInvalidPc}) {
    EXPECT_TRUE(cuda::is_sticky(err)) << cudaGetErrorName(err);
    try {
      GP_CUDA_CHECK(err);
      ADD_FAILURE() << "no exception for " << cudaGetErrorName(err);
    } catch (const CudaError& e) {
      EXPECT_TRUE(e.sticky()) << e.what();
    }
  }
  EXPECT_FALSE(cuda::is_sticky(cudaErrorMemoryAllocation));
  EXPECT_FALSE(cuda::is_sticky(cudaErrorInvalidConfiguration));
}

TEST(Environment, FormatsUuidLikeNvml) {
  const unsigned char bytes[16] = {0x5e, 0x1a, 0x8a, 0x2c, 0x00, 0xff, 0x12, 0x34,
                                   0xab, 0xcd, 0x01, 0x23, 0x45, 0x67, 0x89, 0xef};
  EXPECT_EQ(env::format_gpu_uuid(bytes), "GPU-5e1a8a2c-00ff-1234-abcd-0123456789ef");
}

TEST(Environment, TheoreticalBandwidthIsDoubleDataRateTimesBusWidth) {
  // H200: 3201 MHz HBM3e clock, 6144-bit bus -> 4916.7 GB/s.
  EXPECT_NEAR(env::theoretical_dram_bandwidth_bytes_per_s(3201000, 6144) / 1e9, 4916.736, 1e-6);
  EXPECT_EQ(env::theoretical_dram_bandwidth_bytes_per_s(1000, 8), 2e6);
}

TEST(Environment, ParsesCpuModel) {
  EXPECT_EQ(env::parse_cpu_model("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                                 "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
                                 "processor\t: 1\nmodel name\t: other\n"),
            "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(env::parse_cpu_model("processor : 0\nCPU part : 0xd4f\nHardware : NVIDIA Grace\n"),
            "NVIDIA Grace");
  EXPECT_EQ(env::parse_cpu_model(""), "");
}

TEST(Environment, TimeIsIsoUtcNow) {
  const std::string t = env::utc_now_iso8601();
  EXPECT_TRUE(std::regex_match(t, kIsoUtc)) << t;
  std::tm tm{};
  ASSERT_NE(strptime(t.c_str(), "%Y-%m-%dT%H:%M:%S", &tm), nullptr);
  EXPECT_LE(std::abs(std::difftime(timegm(&tm), std::time(nullptr))), 5.0) << t;
}

TEST(Environment, ReadClocksIsInvalidWithoutNvml) {
  if (nvml_library_loadable()) GTEST_SKIP() << "this machine has NVML";
  const device::ClockReading c = env::read_clocks(0);
  EXPECT_FALSE(c.valid);
  EXPECT_TRUE(std::regex_match(c.time_utc, kIsoUtc)) << c.time_utc;
  EXPECT_EQ(device::to_json(c)["valid"], false);
}

TEST(Environment, ReadClocksIsValidWithNvmlAndGpu) {
  if (!nvml_library_loadable() || !cuda_device_present()) GTEST_SKIP() << "needs NVML and a GPU";
  const device::ClockReading c = env::read_clocks(0);
  ASSERT_TRUE(c.valid);
  EXPECT_GT(c.sm_mhz, 0);
  EXPECT_GT(c.mem_mhz, 0);
}

TEST(Environment, HostRecordHasHostnameKernelAndTime) {
  const nlohmann::json h = env::capture_host_environment();
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(h.at("hostname"), std::string(host));
  EXPECT_FALSE(h.at("kernel_release").get<std::string>().empty());
  EXPECT_TRUE(std::regex_match(h.at("time_utc").get<std::string>(), kIsoUtc)) << h.dump();
  EXPECT_GT(h.at("logical_cpu_count").get<unsigned>(), 0u);
}

TEST(Environment, CudaRecordThrowsCudaErrorWithoutGpu) {
  if (cuda_device_present()) GTEST_SKIP() << "this machine has a GPU";
  try {
    env::capture_cuda_environment(0);
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("environment.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("failed at"), std::string::npos) << what;
  }
}

TEST(Environment, CudaRecordDescribesTheGpu) {
  if (!cuda_device_present()) GTEST_SKIP() << "needs a GPU";
  const nlohmann::json e = env::capture_cuda_environment(0);
  const auto& g = e.at("gpu");
  EXPECT_GT(g.at("sm_count").get<int>(), 0);
  EXPECT_GT(g.at("l2_bytes").get<long>(), 0);
  EXPECT_EQ(g.at("uuid").get<std::string>().rfind("GPU-", 0), 0u);
  EXPECT_GT(g.at("dram_bandwidth_theoretical_gb_s").get<double>(), 0);
  EXPECT_TRUE(e.at("nvml").contains("available"));
  EXPECT_THROW(env::capture_cuda_environment(1 << 20), UsageError);
}

}  // namespace
}  // namespace gpuprobe

namespace gpuprobe {
namespace {

device::ClockReading reading(bool valid, double sm, double power, std::uint64_t mask) {
  device::ClockReading c;
  c.valid = valid;
  c.sm_mhz = sm;
  c.power_w = power;
  c.temperature_c = 40;
  c.throttle_reasons = mask;
  return c;
}

TEST(ClockSamples, SummarizesValidReadingsOnly) {
  const auto j =
      env::summarize_clock_samples({reading(true, 1980, 300, 0x1), reading(false, 0, 0, 0xFF),
                                    reading(true, 1755, 650, 0x4), reading(true, 1800, 500, 0)},
                                   50);
  EXPECT_EQ(j.at("samples"), 4);
  EXPECT_DOUBLE_EQ(j.at("sm_clock_mhz").at("min").get<double>(), 1755);
  EXPECT_DOUBLE_EQ(j.at("sm_clock_mhz").at("median").get<double>(), 1800);
  EXPECT_DOUBLE_EQ(j.at("sm_clock_mhz").at("max").get<double>(), 1980);
  EXPECT_DOUBLE_EQ(j.at("power_w").at("max").get<double>(), 650);
  // The invalid reading's mask is ignored; gpu_idle (0x1) alone is not a throttle, 0x4 is.
  EXPECT_EQ(j.at("throttle_reasons_mask"), 0x5u);
  EXPECT_TRUE(j.at("throttled").get<bool>());
  const auto idle = env::summarize_clock_samples({reading(true, 1980, 100, 0x1)}, 50);
  EXPECT_FALSE(idle.at("throttled").get<bool>());
  const auto none = env::summarize_clock_samples({reading(false, 0, 0, 0)}, 50);
  EXPECT_FALSE(none.contains("sm_clock_mhz"));
  EXPECT_TRUE(none.contains("note"));
}

TEST(ClockSamples, SamplerReadsUntilStoppedAndStopsOnAnInvalidReading) {
  std::atomic<int> calls{0};
  env::ClockSampler s([&] { return reading(true, 1000 + calls++, 100, 0); }, 1.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  const auto j = s.stop();
  const int n = calls.load();
  EXPECT_GE(n, 2);
  EXPECT_EQ(j.at("samples"), n);
  EXPECT_EQ(s.stop().at("samples"), n);  // idempotent, no reading after the stop
  std::atomic<int> invalid_calls{0};
  env::ClockSampler t(
      [&] {
        ++invalid_calls;
        return reading(false, 0, 0, 0);
      },
      1.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(t.stop().at("samples"), 1);
  EXPECT_EQ(invalid_calls.load(), 1);
}

}  // namespace
}  // namespace gpuprobe
