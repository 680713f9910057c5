#include "probes/bandwidth/bandwidth_common.hpp"

#include <algorithm>
#include <cmath>
#include <system_error>
#include <thread>

#include "core/confidence.hpp"
#include "core/error.hpp"

namespace gpuprobe::probes::bwhost {

using units::kKiB;
using units::kMiB;

std::uint64_t default_array_bytes(const device::DeviceInfo& d) {
  return d.l2_bytes > 0 ? 16 * d.l2_bytes : kGiB;
}

std::uint64_t requested_array_bytes(const AxisValues& axes) {
  const auto v = axes.ints("array_bytes");
  return v.empty() ? 0 : static_cast<std::uint64_t>(v.front());
}

std::uint64_t array_bytes(const device::DeviceInfo& d, const AxisValues& axes) {
  const std::uint64_t requested = requested_array_bytes(axes);
  const std::uint64_t want = requested ? requested : default_array_bytes(d);
  return want / (4 * kKiB) * (4 * kKiB);
}

std::vector<int> with_baseline(std::vector<int> v, int baseline) {
  if (std::find(v.begin(), v.end(), baseline) == v.end()) v.push_back(baseline);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

Axis array_bytes_axis(const std::string& what) {
  return int_axis("array_bytes", {}, "B",
                  what +
                      ": 16 x L2 unless set (--array-size sets it too; one value), rounded "
                      "down to 4 KiB",
                  1);
}

std::uint32_t derive_seed(std::uint64_t seed, std::uint32_t salt) {
  return bw::mix32(static_cast<std::uint32_t>(seed) ^
                   bw::mix32(static_cast<std::uint32_t>(seed >> 32) + salt));
}

std::uint64_t transpose_n(std::uint64_t array) {
  auto n = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(array / 4)));
  while (n * n * 4 > array) --n;
  return n / 32 * 32;
}

json common_parameters(const device::DeviceInfo& d, const AxisValues& axes) {
  const std::uint64_t array = array_bytes(d, axes), requested = requested_array_bytes(axes);
  return {{"array_bytes", array},
          {"array_bytes_requested", requested ? requested : default_array_bytes(d)},
          {"array_source", requested ? "--array-size" : "default: 16 x L2"},
          {"l2_bytes_reported", d.l2_bytes},
          {"array_over_l2",
           d.l2_bytes ? static_cast<double>(array) / static_cast<double>(d.l2_bytes) : 0.0},
          {"array_below_16x_l2", d.l2_bytes > 0 && array < 16 * d.l2_bytes},
          {"peak_gb_s", dram_peak_gb_s(d)},
          {"peak_formula",
           "memory clock (max) x 2 x bus width / 8 = " + std::to_string(d.mem_clock_max_mhz) +
               " MHz x 2 x " + std::to_string(d.mem_bus_width_bits) + " bit / 8"},
          {"sm_count", d.sm_count},
          {"threads_per_block", kThreadsPerBlock},
          {"gb", "1e9 bytes"}};
}

json to_json(const Timed& t, double peak) {
  json j = to_json(t.gb_s);
  j["values"] = t.gb_s.values;
  j["launches_per_sample"] = t.launches_per_sample;
  j["calibration_launch_ms"] = t.calibration_launch_ms;
  j["percent_of_peak_median"] = percent_of(t.gb_s.summary.median, peak);
  return j;
}

/// XOR of the bit patterns of value(lo + j * stride, seed) for j < m, on the host (threaded).
std::uint32_t host_xor(std::uint64_t lo, std::uint64_t stride, std::uint64_t m,
                       std::uint32_t seed) {
  const unsigned parts = std::clamp(std::thread::hardware_concurrency(), 1u, 32u);
  std::vector<std::uint32_t> part(parts, 0);
  auto work = [&](unsigned k) {
    const std::uint64_t a = m / parts * k + std::min<std::uint64_t>(k, m % parts);
    const std::uint64_t b = a + m / parts + (k < m % parts ? 1 : 0);
    std::uint32_t x = 0;
    for (std::uint64_t j = a; j < b; ++j) x ^= bw::value_bits(lo + j * stride, seed);
    part[k] = x;
  };
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < parts; ++k) {
    try {
      threads.emplace_back(work, k);
    } catch (const std::system_error&) {
      work(k);  // no thread to be had: do this part here
    }
  }
  for (auto& t : threads) t.join();
  std::uint32_t x = 0;
  for (auto p : part) x ^= p;
  return x;
}

std::uint32_t host_xor_shifted(std::uint32_t x, std::uint64_t lo, std::uint64_t new_lo,
                               std::uint64_t m, std::uint32_t seed) {
  // [lo, lo + m) and [new_lo, new_lo + m) share all but d elements at each end; XOR removes the
  // ones only the old range holds and adds the ones only the new one holds.
  const std::uint64_t a = std::min(lo, new_lo), d = std::max(lo, new_lo) - a;
  if (d >= m) return host_xor(new_lo, 1, m, seed);
  if (d > (std::uint64_t{1} << 16))
    return x ^ host_xor(a, 1, d, seed) ^ host_xor(a + m, 1, d, seed);
  for (std::uint64_t j = 0; j < d; ++j)
    x ^= bw::value_bits(a + j, seed) ^ bw::value_bits(a + m + j, seed);
  return x;
}

double stats_precision(const GbpsStats& stats) {
  return stats.values ? confidence::precision(*stats.values, stats.median) : 0.0;
}

Finding bandwidth_finding(const std::string& name, const GbpsStats& stats, double peak,
                          const std::string& method) {
  Finding f{name, stats.median, "GB/s", stats_precision(stats), method, json::object()};
  f.extra["peak_gb_s"] = peak;
  f.extra["percent_of_peak"] = percent_of(f.value, peak);
  f.extra["min_gb_s"] = stats.min;
  f.extra["p5_gb_s"] = stats.p5;
  f.extra["p95_gb_s"] = stats.p95;
  f.extra["repetitions"] = stats.n;
  return f;
}

void note_protocol(ExperimentResult& r) {
  r.protocol["timer"] =
      "CUDA events around K back-to-back launches (K sized for ~3 ms per sample), after one "
      "untimed launch so the start event is stamped when the GPU finishes real work";
  r.protocol["l2_flush"] = "none: each array is 16 x L2 by default, so a pass streams from DRAM";
  r.protocol["verification"] =
      "after the timed runs: output overwritten with other random data, one more launch, a "
      "compare kernel counts mismatches against the formula (must be 0), the host re-checks "
      "16 runs of 64 elements; read kernels: XOR of all data read == host XOR from the formula";
}

json model_json(const analysis::WarpAccess& a) {
  return {{"sectors_per_request", analysis::sectors_per_request(a)},
          {"lines_per_request", analysis::lines_per_request(a)},
          {"useful_bytes_per_request", analysis::useful_bytes_per_request(a)},
          {"request_efficiency", analysis::request_efficiency(a)},
          {"dram_efficiency_32b", analysis::stream_efficiency(a, 32)},
          {"dram_efficiency_64b", analysis::stream_efficiency(a, 64)},
          {"copy_dram_efficiency_rmw_32b", analysis::copy_stream_efficiency(a, 32, true)},
          {"copy_dram_efficiency_rmw_64b", analysis::copy_stream_efficiency(a, 64, true)}};
}

int pattern_bps() {
  const int occ = bw::pattern_blocks_per_sm(kThreadsPerBlock);
  if (occ < 1) throw std::runtime_error("the pattern kernels cannot be resident with 256 threads");
  return std::min(occ, kMaxBlocksPerSm);
}

/// One pattern measurement: useful bytes per launch, the timing, and what the model predicts.
json pattern_row(const Timed& t, double useful_bytes, double peak) {
  return {{"useful_bytes_per_launch", useful_bytes}, {"useful_gb_s", to_json(t, peak)}};
}

extern const std::string kUsefulConvention;
const std::string kUsefulConvention =
    "useful bytes = elements the kernel asks for x 4 B, per direction (a copy counts read and "
    "write); moved bytes = useful / efficiency, where the sector model's request efficiency = "
    "useful / (32-B sectors per warp request x 32) (L1 <-> L2) and its DRAM efficiency = useful / "
    "distinct 32-B (or 64-B) pieces over the whole stream (L2 <-> DRAM, sectors shared by "
    "neighbouring requests counted once)";

Curve pattern_table(const json& rows, const std::vector<std::string>& keys,
                    const std::vector<std::string>& columns,
                    const std::function<std::vector<json>(const json& row)>& cells) {
  Curve c{"table", keys, {}};
  for (const char* k :
       {"useful_gb_s_median", "useful_gb_s_min", "useful_gb_s_p5", "useful_gb_s_p95", "n"})
    c.columns.push_back(k);
  c.columns.insert(c.columns.end(), columns.begin(), columns.end());
  for (const auto& row : rows) {
    std::vector<json> r;
    for (const auto& k : keys) r.push_back(row.at(k));
    const auto& s = row.at("useful_gb_s");
    for (const char* k : {"median", "min", "p5", "p95", "n"}) r.push_back(s.at(k));
    for (auto& v : cells(row)) r.push_back(std::move(v));
    c.rows.push_back(std::move(r));
  }
  return c;
}

namespace {

Finding efficiency_with(const std::string& name, double measured, double predicted_request,
                        double predicted_dram, double precision, const std::string& method) {
  Finding f{name, measured * 100.0, "%", precision, method, json::object()};
  f.extra["measured_efficiency_percent"] = measured * 100.0;
  f.extra["predicted_request_efficiency_percent"] = predicted_request * 100.0;
  f.extra["predicted_dram_efficiency_percent"] = predicted_dram * 100.0;
  return f;
}

}  // namespace

Finding efficiency_finding(const std::string& name, double measured, double predicted_request,
                           double predicted_dram, const GbpsStats& stats,
                           const std::string& method) {
  return efficiency_with(name, measured, predicted_request, predicted_dram, stats_precision(stats),
                         method);
}

}  // namespace gpuprobe::probes::bwhost
