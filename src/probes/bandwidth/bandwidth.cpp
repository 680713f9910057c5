// Bandwidth family: streaming DRAM bandwidth (read, write, copy with 4, 8 and 16 bytes per
// access, over a search of cache operators, unroll factors and grid shapes) and the access
// patterns (stride, offset, layout, transpose) measured beside what the sector model predicts.
//
// Conventions (also written into every result):
//  - GB/s = 1e9 bytes per second. A streaming kernel counts the bytes it reads plus the bytes it
//    writes (copy: both arrays). A pattern kernel counts useful bytes: the elements it asks for
//    x 4 B, per direction; what the hardware moves is what the sector model predicts from that.
//  - The theoretical peak is memory clock x 2 (double data rate) x bus width / 8, from the
//    device's maximum memory clock and bus width; every bandwidth is shown beside it.
//  - Timing: CUDA events around K back-to-back launches (K sized for about 3 ms per sample),
//    preceded by one untimed launch so that the start event is stamped when the GPU finishes
//    real work, not while it waits for the host; the protocol repeats samples until stable.
//  - Every kernel's output is verified after its timed runs: the output array is overwritten
//    with other random data, the kernel runs once more, a compare kernel counts the elements
//    that differ from the host's formula (must be 0) and the host re-checks spots it copies back.
//    Read kernels XOR everything they read; the host computes the same XOR from the formula.
#include "probes/bandwidth/bandwidth.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#include "analysis/sector_model.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "counters/counters.hpp"
#include "probes/bandwidth/bandwidth_kernels.hpp"

namespace gpuprobe::probes {
namespace {

using analysis::StreamKind;
using bw::DeviceArray;
using bw::ExpectMode;
using bw::ExpectSpec;
using bw::IndexScheme;
using bw::LoadFlavor;
using bw::StoreFlavor;
using bw::StreamVariant;
using nlohmann::json;

using units::kKiB;
using units::kMiB;
constexpr std::uint64_t kGiB = 1024 * kMiB;
/// Smallest array a user may ask for.
constexpr std::uint64_t kMinArrayBytes = kMiB;
/// Headroom left free beside the arrays (context, counters, the runtime's own needs).
constexpr std::uint64_t kHeadroomBytes = 256 * kMiB;
/// Each timed sample lasts about this long.
constexpr double kTargetSampleMs = 3.0;
constexpr int kMaxLaunchesPerSample = 1000;
constexpr unsigned kThreadsPerBlock = 256;
constexpr int kMaxBlocksPerSm = 8;  ///< 8 x 256 = 2048 threads, the most an SM holds
constexpr unsigned kMaxThreadsPerSm = 2048;
/// Largest distance between a copy's destination and the start of its allocation.
constexpr std::uint64_t kMaxDstShift = 2 * 1024 * 1024;

const std::vector<int> kDefaultStrides = {1, 2, 3, 4, 8, 16, 32};
const std::vector<int> kDefaultWidths = {4, 8, 16};
constexpr int kMaxStride = 64;
constexpr int kMaxOffset = 64;
constexpr int kDefaultMaxOffset = 32;

// ---------------------------------------------------------------------------------------------
// Sizes, peak, options

std::uint64_t default_array_bytes(const device::DeviceInfo& d) {
  return d.l2_bytes > 0 ? 16 * d.l2_bytes : kGiB;
}

/// Bytes per array actually used: the request (or 16 x L2) rounded down to 4 KiB, so that every
/// vector width divides it.
std::uint64_t array_bytes(const device::DeviceInfo& d, const RunOptions& o) {
  const std::uint64_t want = o.array_bytes ? o.array_bytes : default_array_bytes(d);
  return want / (4 * kKiB) * (4 * kKiB);
}

using device::dram_peak_gb_s;

/// `v` with `baseline` added, sorted, without repeats: every sweep also measures its baseline.
std::vector<int> with_baseline(std::vector<int> v, int baseline) {
  if (std::find(v.begin(), v.end(), baseline) == v.end()) v.push_back(baseline);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

double percent_of(double value, double peak) { return peak > 0 ? value / peak * 100.0 : 0.0; }

std::uint32_t derive_seed(std::uint64_t seed, std::uint32_t salt) {
  return bw::mix32(static_cast<std::uint32_t>(seed) ^
                   bw::mix32(static_cast<std::uint32_t>(seed >> 32) + salt));
}

/// Transpose matrix dimension: the largest multiple of 32 whose n x n floats fit in one array.
std::uint64_t transpose_n(std::uint64_t array) {
  auto n = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(array / 4)));
  while (n * n * 4 > array) --n;
  return n / 32 * 32;
}

json common_parameters(const device::DeviceInfo& d, const RunOptions& o) {
  const std::uint64_t array = array_bytes(d, o);
  return {{"array_bytes", array},
          {"array_bytes_requested", o.array_bytes ? o.array_bytes : default_array_bytes(d)},
          {"array_source", o.array_bytes ? "--array-size" : "default: 16 x L2"},
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

// ---------------------------------------------------------------------------------------------
// Timing and verification

struct Timed {
  Measurement gb_s;
  int launches_per_sample = 1;
  double calibration_launch_ms = 0;
};

json to_json(const Timed& t, double peak) {
  json j = to_json(t.gb_s);
  j["values"] = t.gb_s.values;
  j["launches_per_sample"] = t.launches_per_sample;
  j["calibration_launch_ms"] = t.calibration_launch_ms;
  j["percent_of_peak_median"] = percent_of(t.gb_s.summary.median, peak);
  return j;
}

/// Everything one experiment needs on the GPU: its stream, its timing events and the
/// verification counters. Selects the device first.
std::uint32_t host_xor(std::uint64_t lo, std::uint64_t stride, std::uint64_t m,
                       std::uint32_t seed);

/// Throws UsageError unless every value lies in [lo, hi]: "<noun> <value> is not allowed; use
/// <allowed>".
void require_in_range(const std::vector<int>& values, int lo, int hi, const std::string& noun,
                      const std::string& allowed) {
  for (int v : values)
    if (v < lo || v > hi)
      throw UsageError(noun + " " + std::to_string(v) + " is not allowed; use " + allowed);
}

class Bench {
 public:
  explicit Bench(Context& ctx)
      : info_(select(ctx.device.info())),
        protocol_(ctx.options.protocol),
        counters_(2 * sizeof(unsigned long long)),
        xor_word_(sizeof(std::uint32_t)) {}

  const device::DeviceInfo& info() const { return info_; }
  cudaStream_t stream() const { return stream_.get(); }
  bw::Launch launch(int blocks_per_sm, unsigned threads = kThreadsPerBlock) const {
    return {static_cast<unsigned>(std::max(1, info_.sm_count) * std::max(1, blocks_per_sm)),
            threads, stream_.get()};
  }

  /// Repeats timed samples of back-to-back launches until the protocol is satisfied; returns
  /// GB/s per sample from `bytes_per_launch`.
  Timed measure(const std::function<void()>& launch_once, double bytes_per_launch) {
    Timed t;
    // Calibration: the first launch is untimed (and keeps the GPU busy while the host records
    // the start event); the second is timed to size the samples.
    launch_once();
    record(start_);
    launch_once();
    record(stop_);
    t.calibration_launch_ms = elapsed_ms();
    t.launches_per_sample = static_cast<int>(
        std::clamp(std::ceil(kTargetSampleMs / std::max(t.calibration_launch_ms, 1e-4)), 1.0,
                   static_cast<double>(kMaxLaunchesPerSample)));
    const int k = t.launches_per_sample;
    auto once = [&](int) {
      launch_once();
      record(start_);
      for (int i = 0; i < k; ++i) launch_once();
      record(stop_);
      const double ms = elapsed_ms();
      return bytes_per_launch * k / (ms * 1e6);
    };
    t.gb_s = repeat_until_stable(once, protocol_);
    return t;
  }

  /// Verifies p[0..n) element by element against `spec` on the device (mismatch count must be
  /// 0), then re-checks spots on the host. Returns the number of elements the host checked.
  std::uint64_t check(const float* p, std::uint64_t n, const ExpectSpec& spec,
                      const std::string& what) {
    auto* mismatches = counters_.as<unsigned long long>();
    auto* first_bad = mismatches + 1;
    GP_CUDA_CHECK(cudaMemsetAsync(mismatches, 0, sizeof(unsigned long long), stream()));
    GP_CUDA_CHECK(cudaMemsetAsync(first_bad, 0xff, sizeof(unsigned long long), stream()));
    bw::launch_compare(p, n, spec, mismatches, first_bad, info_.sm_count, stream());
    unsigned long long host[2] = {0, 0};
    GP_CUDA_CHECK(cudaMemcpyAsync(host, mismatches, sizeof host, cudaMemcpyDeviceToHost, stream()));
    GP_CUDA_CHECK(cudaStreamSynchronize(stream()));
    if (host[0] != 0) {
      std::uint32_t got = 0;
      GP_CUDA_CHECK(cudaMemcpy(&got, p + host[1], sizeof got, cudaMemcpyDeviceToHost));
      char buf[160];
      std::snprintf(buf, sizeof buf, ": element %llu is 0x%08x, expected 0x%08x", host[1], got,
                    bw::expected_bits(spec, host[1]));
      throw VerificationError(what + ": " + std::to_string(host[0]) + " of " + std::to_string(n) +
                              " elements differ from the expected values" + buf);
    }
    return spot_check(p, n, spec, what);
  }

  /// Runs `launch_with_output` (which XORs what it reads into the word it is given) once and
  /// checks the XOR against `expected`.
  void check_xor(const std::function<void(std::uint32_t*)>& launch_with_output,
                 std::uint32_t expected, const std::string& what) {
    auto* word = xor_word_.as<std::uint32_t>();
    GP_CUDA_CHECK(cudaMemsetAsync(word, 0, sizeof(std::uint32_t), stream()));
    launch_with_output(word);
    std::uint32_t got = 0;
    GP_CUDA_CHECK(cudaMemcpyAsync(&got, word, sizeof got, cudaMemcpyDeviceToHost, stream()));
    GP_CUDA_CHECK(cudaStreamSynchronize(stream()));
    if (got != expected) {
      char buf[96];
      std::snprintf(buf, sizeof buf, ": XOR of everything read is 0x%08x, expected 0x%08x", got,
                    expected);
      throw VerificationError(what + buf);
    }
  }

  /// Verifies the strided copy or read `launch` runs: element j < m (j-th with stride `step`)
  /// of the source from src_lo, written (copy) to the same position from dst_lo. A copy runs
  /// again over a poisoned destination of n elements, checked element by element (returns the
  /// elements the host spot-checked); a read runs again, checked by the XOR of what it read.
  std::uint64_t check_pattern(const std::function<void(std::uint32_t*)>& launch, bool copy,
                              float* dst, std::uint64_t n, std::uint32_t seed_src,
                              std::uint32_t seed_poison, std::uint64_t src_lo,
                              std::uint64_t dst_lo, std::uint64_t step, std::uint64_t m,
                              const std::string& what) {
    if (!copy) {
      check_xor(launch, host_xor(src_lo, step, m, seed_src), what);
      return 0;
    }
    fill(dst, n, seed_poison);
    launch(nullptr);
    ExpectSpec spec;
    spec.seed_in = seed_src;
    spec.seed_poison = seed_poison;
    spec.lo = dst_lo;
    spec.hi = dst_lo + m * step;
    spec.step = step;
    spec.src_shift = static_cast<std::int64_t>(src_lo) - static_cast<std::int64_t>(dst_lo);
    return check(dst, n, spec, what);
  }

  void fill(float* p, std::uint64_t n, std::uint32_t seed, std::uint64_t mul = 1,
            std::uint64_t add = 0) {
    bw::launch_fill(p, n, mul, add, seed, info_.sm_count, stream());
  }
  void sync() { GP_CUDA_CHECK(cudaStreamSynchronize(stream())); }

 private:
  static const device::DeviceInfo& select(const device::DeviceInfo& d) {
    GP_CUDA_CHECK(cudaSetDevice(d.ordinal));
    return d;
  }
  void record(const bw::Event& e) { GP_CUDA_CHECK(cudaEventRecord(e.get(), stream())); }
  double elapsed_ms() {
    GP_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    float ms = 0;
    GP_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return ms;
  }
  std::uint64_t spot_check(const float* p, std::uint64_t n, const ExpectSpec& spec,
                           const std::string& what) {
    constexpr std::uint64_t kRun = 64;
    std::vector<std::uint64_t> starts = {0, n > kRun ? n - kRun : 0};
    std::uint32_t state = spec.seed_in ^ 0x5bd1e995u;
    for (int i = 0; i < 14 && n > kRun; ++i) {
      state = bw::mix32(state + static_cast<std::uint32_t>(i));
      starts.push_back((static_cast<std::uint64_t>(state) << 16 ^ bw::mix32(state)) % (n - kRun));
    }
    std::uint64_t checked = 0;
    std::vector<std::uint32_t> host(kRun);
    for (auto s : starts) {
      const std::uint64_t len = std::min(kRun, n - s);
      GP_CUDA_CHECK(cudaMemcpy(host.data(), p + s, len * 4, cudaMemcpyDeviceToHost));
      for (std::uint64_t i = 0; i < len; ++i) {
        const std::uint32_t want = bw::expected_bits(spec, s + i);
        if (host[i] != want) {
          char buf[128];
          std::snprintf(buf, sizeof buf,
                        ": host spot check: element %llu is 0x%08x, expected 0x%08x",
                        static_cast<unsigned long long>(s + i), host[i], want);
          throw VerificationError(what + buf);
        }
      }
      checked += len;
    }
    return checked;
  }

  const device::DeviceInfo& info_;
  ProtocolOptions protocol_;
  bw::Stream stream_;
  bw::Event start_, stop_;
  DeviceArray counters_;
  DeviceArray xor_word_;
};

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

using stats::spread_confidence;

Finding bandwidth_finding(const std::string& name, const json& stats, double peak,
                          const std::string& method) {
  Finding f{name,   stats.at("median").get<double>(),
            "GB/s", spread_confidence(stats),
            method, json::object()};
  f.extra["peak_gb_s"] = peak;
  f.extra["percent_of_peak"] = percent_of(f.value, peak);
  f.extra["min_gb_s"] = stats.at("min");
  f.extra["p5_gb_s"] = stats.at("p5");
  f.extra["p95_gb_s"] = stats.at("p95");
  f.extra["repetitions"] = stats.at("n");
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

// ---------------------------------------------------------------------------------------------
// The experiments' common part: waiver and validation.

class BandwidthExperiment : public Experiment {
 public:
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return waive_on_model(info, kNoBandwidthModel);
  }
  void validate(const device::Device& dev, const RunOptions& o) const override {
    const auto& d = dev.info();
    if (o.array_bytes && o.array_bytes < kMinArrayBytes)
      throw UsageError("--array-size " + units::format_bytes(o.array_bytes) +
                       " is too small; use at least 1 MiB (default 16 x L2 = " +
                       units::format_bytes(default_array_bytes(d)) + ")");
    check_options(o);
    const std::uint64_t array = array_bytes(d, o);
    const double arrays = arrays_allocated();
    const auto need =
        static_cast<std::uint64_t>(arrays * static_cast<double>(array)) + kHeadroomBytes;
    const std::uint64_t free = dev.free_memory();
    if (need > free) {
      const double fit =
          free > kHeadroomBytes ? static_cast<double>(free - kHeadroomBytes) / arrays : 0;
      throw UsageError(id() + " needs " + units::format_bytes(need) + " of GPU memory (" +
                       describe_arrays(arrays) + " of " + units::format_bytes(array) +
                       " + headroom) but " + units::format_bytes(free) +
                       " is free; choose --array-size at most " +
                       units::format_bytes(static_cast<std::uint64_t>(fit) / kMiB * kMiB));
    }
  }

 protected:
  /// How many arrays of array_bytes the experiment allocates at once.
  virtual double arrays_allocated() const = 0;
  virtual void check_options(const RunOptions&) const {}

 private:
  static std::string describe_arrays(double a) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g arrays", a);
    return buf;
  }
};

// ---------------------------------------------------------------------------------------------
// bandwidth.read / bandwidth.write / bandwidth.copy

std::vector<int> widths_of(const RunOptions& o) {
  std::vector<int> w = o.word_sizes.empty() ? kDefaultWidths : o.word_sizes;
  std::sort(w.begin(), w.end());
  w.erase(std::unique(w.begin(), w.end()), w.end());
  return w;
}

json variant_json(const StreamVariant& v, StreamKind kind) {
  json j = {{"width_bytes", v.width_bytes},
            {"unroll", v.unroll},
            {"scheme", bw::to_string(v.scheme)},
            {"passes", v.passes}};
  j["load"] = kind == StreamKind::kWrite ? "-" : bw::to_string(v.load);
  j["store"] = kind == StreamKind::kRead ? "-" : bw::to_string(v.store);
  return j;
}

class StreamExperiment : public BandwidthExperiment {
 public:
  explicit StreamExperiment(StreamKind kind) : kind_(kind) {}
  std::string id() const override { return "bandwidth." + analysis::to_string(kind_); }
  std::string description() const override {
    switch (kind_) {
      case StreamKind::kRead:
        return "DRAM read bandwidth: grid-stride loads of 4/8/16 B per thread over an array of "
               "16 x L2, searching cache operators, unroll and grid shape";
      case StreamKind::kWrite:
        return "DRAM write bandwidth: grid-stride stores of 4/8/16 B per thread over an array of "
               "16 x L2 (plus the driver's cudaMemset for reference)";
      case StreamKind::kCopy:
        return "DRAM copy bandwidth (bytes read + written): 4/8/16 B per thread between two "
               "arrays of 16 x L2 (plus the driver's cudaMemcpy for reference)";
    }
    return "";
  }
  json axes() const override {
    return {{"width_bytes", kDefaultWidths},
            {"load", kind_ == StreamKind::kWrite ? json::array()
                                                 : json{"ld.global", "ld.global.nc", "ld.global.cs",
                                                        "ld.global.nc.L1::no_allocate.L2::256B",
                                                        "+ L2 evict_first policy"}},
            {"store", kind_ == StreamKind::kRead
                          ? json::array()
                          : json{"st.global", "st.global.cs",
                                 "st.global.L1::no_allocate + L2 evict_first policy"}},
            {"unroll", {1, 2, 4, 8}},
            {"blocks_per_sm", {1, 2, 4, "max (occupancy, <= 8)"}},
            {"array_bytes", "16 x L2 (--array-size)"}};
  }
  void run(Context& ctx, ExperimentResult& r) const override;
  void analyze(ExperimentResult& r) const override;

 protected:
  double arrays_allocated() const override { return kind_ == StreamKind::kCopy ? 2 : 1; }
  void check_options(const RunOptions& o) const override {
    for (int w : o.word_sizes)
      if (w != 4 && w != 8 && w != 16)
        throw UsageError("word size " + std::to_string(w) + " B is not allowed; use 4, 8 or 16");
  }

 private:
  StreamKind kind_;
};

void StreamExperiment::run(Context& ctx, ExperimentResult& r) const {
  Bench bench(ctx);
  const auto& info = bench.info();
  const auto& o = ctx.options;
  const std::uint64_t array = array_bytes(info, o);
  const std::uint64_t n = array / 4;
  const double peak = dram_peak_gb_s(info);
  const auto bytes = analysis::stream_bytes(kind_, array);
  const std::uint32_t seed_src = derive_seed(o.seed, 11);
  const std::uint32_t seed_poison = derive_seed(o.seed, 12);
  const bool reads = kind_ != StreamKind::kWrite;
  const bool writes = kind_ != StreamKind::kRead;

  DeviceArray src, dst;
  if (reads) {
    src = DeviceArray(array);
    bench.fill(src.as<float>(), n, seed_src);
  }
  if (writes) {
    // A copy may write at a distance from the start of its allocation (stage dst_shift).
    dst = DeviceArray(array + (kind_ == StreamKind::kCopy ? kMaxDstShift : 0));
    bench.fill(dst.as<float>(), dst.bytes() / 4, seed_poison);
  }
  bench.sync();
  const std::uint32_t expected_xor = kind_ == StreamKind::kRead ? host_xor(0, 1, n, seed_src) : 0;

  const std::string kind_name = analysis::to_string(kind_);
  std::uint32_t write_value_counter = 0;
  auto next_write_bits = [&] {
    // A fresh non-zero float per verification, so a launch that skips elements leaves the
    // previous value (or the poison) behind.
    return bw::value_bits(++write_value_counter, derive_seed(o.seed, 13));
  };

  /// One point of the search: the kernel and how it is launched.
  struct Config {
    StreamVariant v;
    int blocks_per_sm = kMaxBlocksPerSm;
    unsigned threads = kThreadsPerBlock;
    std::uint64_t dst_shift = 0;  ///< bytes between the destination allocation and the copy's dst
    /// One grid covering the whole array (each thread does `unroll` vectors once, no loop), as
    /// simple copy kernels do, instead of a persistent grid of blocks_per_sm x SMs.
    bool cover = false;
  };

  json rows = json::array();
  std::set<std::string> measured;
  auto key_of = [](const Config& c) {
    std::ostringstream k;
    k << c.v.width_bytes << "B/ld" << static_cast<int>(c.v.load) << "/st"
      << static_cast<int>(c.v.store) << "/u" << c.v.unroll << "/s" << static_cast<int>(c.v.scheme)
      << "/p" << c.v.passes << "/" << c.blocks_per_sm << "x" << c.threads << "/shift" << c.dst_shift
      << (c.cover ? "/cover" : "");
    return k.str();
  };
  auto max_bps = [&](const Config& c) {
    const int occ = bw::stream_blocks_per_sm(kind_name, c.v, c.threads);
    if (occ < 1)
      throw std::runtime_error("a " + kind_name + " kernel cannot be resident with " +
                               std::to_string(c.threads) + " threads");
    return std::min(occ, static_cast<int>(kMaxThreadsPerSm / c.threads));
  };

  auto launch_kernel = [&](const Config& c, const bw::Launch& l, std::uint32_t bits,
                           std::uint32_t* xor_out) {
    float* d = writes ? dst.as<float>() + c.dst_shift / 4 : nullptr;
    switch (kind_) {
      case StreamKind::kRead:
        bw::launch_stream_read(c.v, l, src.as<float>(), n, xor_out);
        break;
      case StreamKind::kWrite:
        bw::launch_stream_write(c.v, l, d, n, bits);
        break;
      case StreamKind::kCopy:
        bw::launch_stream_copy(c.v, l, src.as<float>(), d, n);
        break;
    }
  };

  std::pair<std::string, double> fastest{"", -1.0};
  std::function<void()> fastest_launch;
  std::pair<double, double> fastest_bytes;  // DRAM bytes read, written per launch (intended)
  // Measures one configuration, then verifies it.
  auto run_config = [&](const std::string& stage, Config c) {
    // A covering grid gives each thread the same vectors in every pass: a second pass would
    // re-read what the first just brought into the caches (seen on the H200: 14 TB/s "DRAM").
    if (c.cover && c.v.passes > 1) return;
    const int cap = max_bps(c);
    c.blocks_per_sm = std::clamp(c.blocks_per_sm, 1, cap);
    const std::string key = key_of(c);
    if (!measured.insert(key).second) return;
    auto l = bench.launch(c.blocks_per_sm, c.threads);
    if (c.cover) {
      const std::uint64_t vectors = n / static_cast<std::uint64_t>(c.v.width_bytes / 4);
      const std::uint64_t per_block = static_cast<std::uint64_t>(c.threads) * c.v.unroll;
      l.blocks = static_cast<unsigned>((vectors + per_block - 1) / per_block);
    }
    const std::uint32_t timed_bits = next_write_bits();
    const auto t = bench.measure([&] { launch_kernel(c, l, timed_bits, nullptr); },
                                 static_cast<double>(bytes.counted_bytes()) * c.v.passes);
    const std::string what = id() + " " + key;
    std::uint64_t spot = 0;
    if (kind_ == StreamKind::kRead) {
      // One pass: an even number of passes would XOR the data away.
      Config once = c;
      once.v.passes = 1;
      bench.check_xor([&](std::uint32_t* out) { launch_kernel(once, l, 0, out); }, expected_xor,
                      what);
    } else {
      float* d = dst.as<float>() + c.dst_shift / 4;
      bench.fill(dst.as<float>(), dst.bytes() / 4, seed_poison);
      ExpectSpec spec;
      spec.seed_in = seed_src;
      spec.seed_poison = seed_poison;
      std::uint32_t bits = 0;
      if (kind_ == StreamKind::kWrite) {
        bits = next_write_bits();
        spec.mode = ExpectMode::kConstant;
        spec.constant_bits = bits;
      } else {
        spec.mode = ExpectMode::kWindow;
        spec.lo = 0;
        spec.hi = n;
        spec.step = 1;
      }
      launch_kernel(c, l, bits, nullptr);
      spot = bench.check(d, n, spec, what);
    }
    json row = variant_json(c.v, kind_);
    row["stage"] = stage;
    row["reference"] = false;
    row["blocks_per_sm"] = c.blocks_per_sm;
    row["blocks_per_sm_max"] = cap;
    row["threads_per_block"] = l.threads;
    row["threads_per_sm"] = static_cast<std::uint64_t>(c.blocks_per_sm) * l.threads;
    row["blocks"] = l.blocks;
    row["dst_shift_bytes"] = c.dst_shift;
    row["grid"] = c.cover ? "covers the array, one iteration per thread" : "persistent";
    // What the resident threads of one SM access in one iteration: the loads in flight of a
    // read or copy kernel, the stores issued back to back of a write kernel.
    row["bytes_in_flight_per_sm"] =
        static_cast<std::uint64_t>(c.blocks_per_sm) * l.threads * c.v.unroll * c.v.width_bytes;
    row["read_bytes_per_launch"] = bytes.read_bytes * c.v.passes;
    row["write_bytes_per_launch"] = bytes.write_bytes * c.v.passes;
    row["counted_bytes_per_launch"] = bytes.counted_bytes() * c.v.passes;
    row["gb_s"] = to_json(t, peak);
    row["verified"] = true;
    row["verified_with_passes"] = kind_ == StreamKind::kRead ? 1 : c.v.passes;
    row["host_spot_checked_elements"] = spot;
    rows.push_back(row);
    if (t.gb_s.summary.median > fastest.second) {  // --counters reads the fastest kernel
      fastest = {key, t.gb_s.summary.median};
      fastest_launch = [&launch_kernel, &bench, c, l, timed_bits] {
        launch_kernel(c, l, timed_bits, nullptr);
        bench.sync();
      };
      fastest_bytes = {bytes.read_bytes * c.v.passes, bytes.write_bytes * c.v.passes};
    }
  };

  auto best_row = [&](const std::function<bool(const json&)>& pick) -> json {
    json best;
    double top = -1;
    for (const auto& row : rows) {
      if (row.at("reference").get<bool>() || !pick(row)) continue;
      const double med = row.at("gb_s").at("median").get<double>();
      if (med > top) {
        top = med;
        best = row;
      }
    }
    return best;
  };

  const auto widths = widths_of(o);
  const int search_width = widths.back();
  auto at_search_width = [&](const json& row) { return row.at("width_bytes") == search_width; };
  // Stage 1: cache operators, at the search width, unroll 4, a full SM.
  std::vector<std::pair<LoadFlavor, StoreFlavor>> flavors;
  const std::vector<LoadFlavor> loads = {LoadFlavor::kPlain, LoadFlavor::kNc, LoadFlavor::kCs,
                                         LoadFlavor::kNcNa256, LoadFlavor::kNcNaEf256};
  const std::vector<StoreFlavor> stores = {StoreFlavor::kPlain, StoreFlavor::kCs,
                                           StoreFlavor::kNaEf};
  for (auto lf : reads ? loads : std::vector<LoadFlavor>{LoadFlavor::kPlain})
    for (auto sf : writes ? stores : std::vector<StoreFlavor>{StoreFlavor::kPlain})
      flavors.emplace_back(lf, sf);
  for (const auto& [lf, sf] : flavors)
    run_config("cache_operator",
               Config{StreamVariant{search_width, lf, sf, 4, IndexScheme::kGrid}});
  LoadFlavor best_load = LoadFlavor::kPlain;
  StoreFlavor best_store = StoreFlavor::kPlain;
  {
    const json b = best_row(at_search_width);
    for (const auto& [lf, sf] : flavors)
      if (b.at("load") == (reads ? bw::to_string(lf) : "-") &&
          b.at("store") == (writes ? bw::to_string(sf) : "-")) {
        best_load = lf;
        best_store = sf;
      }
  }
  auto config_of = [&](const json& row) {
    Config c;
    c.v.width_bytes = row.at("width_bytes");
    c.v.load = best_load;
    c.v.store = best_store;
    c.v.unroll = row.at("unroll");
    c.v.scheme = row.at("scheme") == "grid" ? IndexScheme::kGrid : IndexScheme::kBlock;
    c.v.passes = row.at("passes");
    c.blocks_per_sm = row.at("blocks_per_sm");
    c.threads = row.at("threads_per_block");
    c.dst_shift = row.at("dst_shift_bytes");
    c.cover = row.value("grid", "persistent") != "persistent";
    return c;
  };
  // Stage 2: bytes in flight: unroll x resident blocks x index scheme, with the best operators.
  for (int u : {1, 2, 4, 8})
    for (int bps : {1, 2, 4, kMaxBlocksPerSm})
      for (auto scheme : {IndexScheme::kGrid, IndexScheme::kBlock}) {
        if (u == 1 && scheme == IndexScheme::kBlock) continue;  // the same kernel as grid
        run_config("bytes_in_flight",
                   Config{StreamVariant{search_width, best_load, best_store, u, scheme}, bps});
      }
  // Stage 3: block shape: threads per block x resident threads per SM, unroll 4 and 8, with the
  // best operators and index scheme.
  {
    const Config base = config_of(best_row(at_search_width));
    for (unsigned threads : {128u, 256u, 512u, 1024u})
      for (unsigned per_sm : {256u, 384u, 512u, 640u, 768u, 1024u, 1536u, 2048u}) {
        if (per_sm % threads != 0) continue;
        for (int u : {4, 8}) {
          Config c = base;
          c.threads = threads;
          c.blocks_per_sm = static_cast<int>(per_sm / threads);
          c.v.unroll = u;
          run_config("block_shape", c);
        }
      }
  }
  // Stage 4 (copy): where the destination lies relative to the source, in DRAM terms.
  if (kind_ == StreamKind::kCopy) {
    const Config base = config_of(best_row(at_search_width));
    for (std::uint64_t shift : {2 * kKiB, 64 * kKiB, kMiB + 256 * kKiB}) {
      Config c = base;
      c.dst_shift = shift;
      run_config("dst_shift", c);
    }
  }
  // Stage 5: the other widths, with the best operators, scheme, block shape and placement.
  {
    const Config base = config_of(best_row(at_search_width));
    for (int w : widths) {
      if (w == search_width) continue;
      for (int u : {2, 4, 8})
        for (int per_sm_scale : {1, 2}) {
          Config c = base;
          c.v.width_bytes = w;
          c.v.unroll = u;
          c.blocks_per_sm = base.blocks_per_sm * per_sm_scale;
          run_config("width", c);
        }
    }
  }
  // Stage 5b: a grid that covers the array once (the plain copy kernel of seed 002 and most
  // tutorials), at the search width, with the best operators.
  for (unsigned threads : {256u, 512u, 1024u})
    for (int u : {1, 2, 4}) {
      Config c{StreamVariant{search_width, best_load, best_store, u, IndexScheme::kGrid}};
      c.threads = threads;
      c.cover = true;
      run_config("covering_grid", c);
    }
  // Stage 5c: the best covering grid with every other operator pair of stage 1 (the operator
  // that suits a persistent loop need not suit a grid that touches each vector once).
  {
    const Config base = config_of(best_row([&](const json& row) {
      return at_search_width(row) && row.value("grid", "persistent") != "persistent";
    }));
    for (const auto& [lf, sf] : flavors) {
      if (lf == base.v.load && sf == base.v.store) continue;
      Config c = base;
      c.v.load = lf;
      c.v.store = sf;
      run_config("covering_grid_operator", c);
    }
  }
  // Stage 6: the best persistent kernel sweeping the array 2 and 4 times per launch, which
  // amortises the launch and the ramp-up / tail of every launch (each pass streams from DRAM
  // again because a persistent thread's vectors in one pass are 16 x L2 apart from the next).
  {
    const Config base = config_of(best_row([&](const json& row) {
      return at_search_width(row) && row.value("grid", "persistent") == "persistent";
    }));
    for (int passes : {2, 4}) {
      Config c = base;
      c.v.passes = passes;
      run_config("passes", c);
    }
  }
  // The driver's own kernels, for reference (not candidates for the findings).
  if (kind_ != StreamKind::kRead) {
    std::function<void()> ref;
    ExpectSpec spec;
    spec.seed_in = seed_src;
    spec.seed_poison = seed_poison;
    std::string label;
    if (kind_ == StreamKind::kCopy) {
      label = "cudaMemcpyAsync device to device";
      ref = [&] {
        GP_CUDA_CHECK(cudaMemcpyAsync(dst.as<float>(), src.as<float>(), array,
                                      cudaMemcpyDeviceToDevice, bench.stream()));
      };
      spec.mode = ExpectMode::kWindow;
      spec.hi = n;
    } else {
      label = "cudaMemsetAsync 0x3f";
      ref = [&] { GP_CUDA_CHECK(cudaMemsetAsync(dst.as<float>(), 0x3f, array, bench.stream())); };
      spec.mode = ExpectMode::kConstant;
      spec.constant_bits = 0x3f3f3f3fu;
    }
    const auto t = bench.measure(ref, static_cast<double>(bytes.counted_bytes()));
    bench.fill(dst.as<float>(), dst.bytes() / 4, seed_poison);
    ref();
    const auto spot = bench.check(dst.as<float>(), n, spec, id() + " " + label);
    json row = {{"stage", "driver_reference"},
                {"reference", true},
                {"label", label},
                {"width_bytes", 0},
                {"load", "-"},
                {"store", "-"},
                {"unroll", 0},
                {"scheme", "-"},
                {"passes", 1},
                {"blocks_per_sm", 0},
                {"blocks_per_sm_max", 0},
                {"threads_per_block", 0},
                {"threads_per_sm", 0},
                {"blocks", 0},
                {"dst_shift_bytes", 0},
                {"bytes_in_flight_per_sm", 0},
                {"read_bytes_per_launch", bytes.read_bytes},
                {"write_bytes_per_launch", bytes.write_bytes},
                {"counted_bytes_per_launch", bytes.counted_bytes()},
                {"gb_s", to_json(t, peak)},
                {"verified", true},
                {"host_spot_checked_elements", spot}};
    rows.push_back(row);
  }

  note_protocol(r);
  r.parameters = common_parameters(info, o);
  r.parameters["kind"] = kind_name;
  r.parameters["elements"] = n;
  r.parameters["widths_bytes"] = widths;
  r.parameters["search_width_bytes"] = search_width;
  r.parameters["counted_bytes"] = kind_ == StreamKind::kCopy
                                      ? "bytes read + bytes written (2 x array)"
                                  : kind_ == StreamKind::kRead ? "bytes read (array)"
                                                               : "bytes written (array)";
  r.parameters["search"] =
      "stage cache_operator: every operator at the widest access, unroll 4, 8 x 256 threads per "
      "SM; stage bytes_in_flight: the best operators with unroll 1/2/4/8 x 1/2/4/8 blocks of 256 "
      "x grid/block index scheme; stage block_shape: 128..1024 threads per block x 256..2048 "
      "threads per SM x unroll 4/8; stage dst_shift (copy): destination 2 KiB, 64 KiB, 1.25 MiB "
      "past its allocation's start; stage width: the other widths with unroll 2/4/8; stage "
      "passes: the best kernel sweeping the array 2 and 4 times per launch. Each stage starts "
      "from the best configuration so far";
  r.parameters["seed_data"] = seed_src;
  r.samples = {{"variants", rows}};
  r.statistics = {{"variants_measured", rows.size()}};
  if (counters::requested(ctx) && fastest_launch) {
    // Bytes the fastest kernel meant to move against what DRAM moved; 2 % of the array either way.
    const double slack = 0.02 * static_cast<double>(array);
    auto check = [&](const char* what, const char* metric, double intended) {
      return counters::Expectation{what, metric, "", "bytes", intended, slack, false,
                                   "bytes the kernel reads / writes per launch"};
    };
    r.samples["counters"] = counters::collect(
        ctx, {{{fastest.first, {{"kernel", fastest.first}}, fastest_launch,
                {check("DRAM bytes read per launch", "dram__bytes_read.sum", fastest_bytes.first),
                 check("DRAM bytes written per launch", "dram__bytes_write.sum",
                       fastest_bytes.second)}}}});
  }

  Curve c{"variants",
          {"stage",
           "width_bytes",
           "load",
           "store",
           "unroll",
           "scheme",
           "passes",
           "threads_per_block",
           "blocks_per_sm",
           "dst_shift_bytes",
           "bytes_in_flight_per_sm",
           "launches_per_sample",
           "gb_s_median",
           "gb_s_min",
           "gb_s_p5",
           "gb_s_p95",
           "n",
           "peak_gb_s",
           "percent_of_peak",
           "verified"},
          {}};
  for (const auto& row : rows) {
    const auto& s = row.at("gb_s");
    c.rows.push_back({row.at("stage"),
                      row.at("width_bytes"),
                      row.contains("label") ? row.at("label") : row.at("load"),
                      row.at("store"),
                      row.at("unroll"),
                      row.at("scheme"),
                      row.at("passes"),
                      row.at("threads_per_block"),
                      row.at("blocks_per_sm"),
                      row.at("dst_shift_bytes"),
                      row.at("bytes_in_flight_per_sm"),
                      s.at("launches_per_sample"),
                      s.at("median"),
                      s.at("min"),
                      s.at("p5"),
                      s.at("p95"),
                      s.at("n"),
                      peak,
                      s.at("percent_of_peak_median"),
                      row.at("verified")});
  }
  c.hints = chart_hints(id() + ": bandwidth against access width (best kernel per width)",
                        "width_bytes", "bytes", "gb_s_median", "GB/s", true)
                .best("max")
                .points();
  r.curves.push_back(c);
}

void StreamExperiment::analyze(ExperimentResult& r) const {
  counters::cross_check(r);
  const auto& rows = r.samples.at("variants");
  const double peak = r.parameters.value("peak_gb_s", 0.0);
  const std::string base = "dram." + analysis::to_string(kind_) + "_bandwidth";
  auto describe = [](const json& row) {
    std::ostringstream d;
    d << row.at("width_bytes").get<int>() << " B/thread";
    if (row.at("load") != "-") d << ", " << row.at("load").get<std::string>();
    if (row.at("store") != "-") d << ", " << row.at("store").get<std::string>();
    d << ", unroll " << row.at("unroll").get<int>() << ", " << row.at("scheme").get<std::string>()
      << " index, ";
    if (row.value("grid", "persistent") != "persistent")
      d << "a grid covering the array (" << row.at("blocks").get<std::uint64_t>() << " blocks of "
        << row.at("threads_per_block").get<int>() << " threads)";
    else
      d << row.at("blocks_per_sm").get<int>() << " x " << row.at("threads_per_block").get<int>()
        << " threads per SM";
    if (row.value("passes", 1) > 1)
      d << ", " << row.at("passes").get<int>() << " passes per launch";
    if (row.value("dst_shift_bytes", 0) > 0)
      d << ", destination " << row.at("dst_shift_bytes").get<std::uint64_t>()
        << " B into its allocation";
    return d.str();
  };
  auto finding_of = [&](const std::string& name, const json& row, const std::string& method) {
    auto f = bandwidth_finding(name, row.at("gb_s"), peak, method);
    f.extra["bytes_per_thread"] = row.at("width_bytes");
    f.extra["variant"] = {{"load", row.at("load")},
                          {"store", row.at("store")},
                          {"unroll", row.at("unroll")},
                          {"scheme", row.at("scheme")},
                          {"passes", row.value("passes", 1)},
                          {"dst_shift_bytes", row.value("dst_shift_bytes", 0)},
                          {"blocks_per_sm", row.at("blocks_per_sm")},
                          {"threads_per_block", row.at("threads_per_block")}};
    f.extra["counted_bytes_per_launch"] = row.at("counted_bytes_per_launch");
    f.extra["verified"] = row.at("verified");
    return f;
  };
  std::map<int, const json*> best_by_width;
  const json* best = nullptr;
  std::size_t candidates = 0;
  for (const auto& row : rows) {
    if (row.at("reference").get<bool>()) continue;
    ++candidates;
    const double med = row.at("gb_s").at("median").get<double>();
    auto& bw_best = best_by_width[row.at("width_bytes").get<int>()];
    if (!bw_best || med > bw_best->at("gb_s").at("median").get<double>()) bw_best = &row;
    if (!best || med > best->at("gb_s").at("median").get<double>()) best = &row;
  }
  if (best) {
    r.findings.push_back(finding_of(base, *best,
                                    "best median over " + std::to_string(candidates) +
                                        " verified kernel variants: " + describe(*best)));
  }
  // The best kernel that sweeps the array once per launch, when the overall best does not.
  if (best && best->value("passes", 1) > 1) {
    const json* single = nullptr;
    for (const auto& row : rows)
      if (!row.at("reference").get<bool>() && row.value("passes", 1) == 1 &&
          (!single || row.at("gb_s").at("median").get<double>() >
                          single->at("gb_s").at("median").get<double>()))
        single = &row;
    if (single)
      r.findings.push_back(finding_of(base + ".single_pass", *single,
                                      "best median over kernels that sweep the array once per "
                                      "launch: " +
                                          describe(*single)));
  }
  for (const auto& [w, row] : best_by_width)
    r.findings.push_back(
        finding_of(base + ".width_" + std::to_string(w) + "b", *row,
                   "best median at " + std::to_string(w) + " B per access: " + describe(*row)));
  for (const auto& row : rows) {
    if (!row.at("reference").get<bool>()) continue;
    auto f = bandwidth_finding(
        base + (kind_ == StreamKind::kCopy ? ".cudamemcpy_reference" : ".cudamemset_reference"),
        row.at("gb_s"), peak, "the driver's own kernel: " + row.at("label").get<std::string>());
    f.extra["counted_bytes_per_launch"] = row.at("counted_bytes_per_launch");
    r.findings.push_back(f);
  }
  // Evidence for saturation: the best median at each amount of data in flight per SM.
  std::map<std::uint64_t, double> by_flight;
  std::map<int, double> by_unroll;
  for (const auto& row : rows) {
    if (row.at("reference").get<bool>()) continue;
    const double med = row.at("gb_s").at("median").get<double>();
    auto& f = by_flight[row.at("bytes_in_flight_per_sm").get<std::uint64_t>()];
    f = std::max(f, med);
    if (row.at("stage") == "bytes_in_flight") {
      auto& u = by_unroll[row.at("unroll").get<int>()];
      u = std::max(u, med);
    }
  }
  json flight = json::array();
  for (const auto& [b, g] : by_flight)
    flight.push_back({{"bytes_in_flight_per_sm", b},
                      {"best_gb_s", g},
                      {"percent_of_peak", percent_of(g, peak)}});
  json unroll = json::array();
  for (const auto& [u, g] : by_unroll)
    unroll.push_back({{"unroll", u}, {"best_gb_s", g}, {"percent_of_peak", percent_of(g, peak)}});
  r.statistics["best_by_bytes_in_flight_per_sm"] = flight;
  r.statistics["best_by_unroll"] = unroll;
}

// ---------------------------------------------------------------------------------------------
// Access patterns: shared pieces

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

const std::string kUsefulConvention =
    "useful bytes = elements the kernel asks for x 4 B, per direction (a copy counts read and "
    "write); moved bytes = useful / efficiency, where the sector model's request efficiency = "
    "useful / (32-B sectors per warp request x 32) (L1 <-> L2) and its DRAM efficiency = useful / "
    "distinct 32-B (or 64-B) pieces over the whole stream (L2 <-> DRAM, sectors shared by "
    "neighbouring requests counted once)";

Finding efficiency_finding(const std::string& name, double measured, double predicted_request,
                           double predicted_dram, const json& stats, const std::string& method) {
  Finding f{name, measured * 100.0, "%", spread_confidence(stats), method, json::object()};
  f.extra["measured_efficiency_percent"] = measured * 100.0;
  f.extra["predicted_request_efficiency_percent"] = predicted_request * 100.0;
  f.extra["predicted_dram_efficiency_percent"] = predicted_dram * 100.0;
  return f;
}

// ---------------------------------------------------------------------------------------------
// bandwidth.stride

class StrideExperiment : public BandwidthExperiment {
 public:
  std::string id() const override { return "bandwidth.stride"; }
  std::string description() const override {
    return "strided float access (strides 1..32): strided copy and strided read, useful GB/s "
           "beside the sectors per warp request the sector model predicts";
  }
  json axes() const override {
    return {{"stride_elements", kDefaultStrides},
            {"variant", {"copy", "read"}},
            {"element_bytes", 4},
            {"span_bytes", "16 x L2 (--array-size)"}};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    Bench bench(ctx);
    const auto& info = bench.info();
    const auto& o = ctx.options;
    const std::uint64_t array = array_bytes(info, o);
    const std::uint64_t n = array / 4;
    const double peak = dram_peak_gb_s(info);
    const std::vector<int> strides =
        with_baseline(o.strides.empty() ? kDefaultStrides : o.strides, 1);
    const std::uint32_t seed_src = derive_seed(o.seed, 21), seed_poison = derive_seed(o.seed, 22);
    DeviceArray src(array), dst(array);
    bench.fill(src.as<float>(), n, seed_src);
    bench.fill(dst.as<float>(), n, seed_poison);
    bench.sync();
    const auto l = bench.launch(pattern_bps());
    json rows = json::array();
    for (const std::string variant : {"copy", "read"}) {
      const bool copy = variant == "copy";
      for (int s : strides) {
        const std::uint64_t m = n / static_cast<std::uint64_t>(s);
        const auto acc = analysis::strided_bytes(m, s, 0, copy);
        // Two launch shapes: the persistent grid, and a grid that covers the span once (four
        // elements per thread, no loop), as plain strided kernels do; the faster one is the row.
        bw::Launch cover = l;
        {
          const std::uint64_t per_block = static_cast<std::uint64_t>(l.threads) * 4;
          cover.blocks =
              static_cast<unsigned>(std::max<std::uint64_t>((m + per_block - 1) / per_block, 1));
        }
        const bw::Launch* shape = &l;
        auto launch = [&](std::uint32_t* out) {
          if (copy)
            bw::launch_strided_copy(*shape, src.as<float>(), dst.as<float>(), 0, 0, s, m);
          else
            bw::launch_strided_read(*shape, src.as<float>(), 0, s, m, out);
        };
        const auto t_persistent = bench.measure([&] { launch(nullptr); }, acc.useful_bytes);
        shape = &cover;
        const auto t_cover = bench.measure([&] { launch(nullptr); }, acc.useful_bytes);
        const bool cover_wins = t_cover.gb_s.summary.median > t_persistent.gb_s.summary.median;
        shape = cover_wins ? &cover : &l;
        const auto& t = cover_wins ? t_cover : t_persistent;
        const std::string what = id() + " " + variant + " stride " + std::to_string(s);
        const std::uint64_t spot = bench.check_pattern(launch, copy, dst.as<float>(), n, seed_src,
                                                       seed_poison, 0, 0, s, m, what);
        json row = pattern_row(t, acc.useful_bytes, peak);
        row["variant"] = variant;
        row["stride_elements"] = s;
        row["elements"] = m;
        row["grid"] = cover_wins ? "covering" : "persistent";
        row["blocks"] = shape->blocks;
        row["persistent_grid_gb_s_median"] = t_persistent.gb_s.summary.median;
        row["covering_grid_gb_s_median"] = t_cover.gb_s.summary.median;
        row["model"] = model_json({4, s, 0, 0, analysis::kWarpThreads});
        row["moved_bytes_per_launch_request_model"] = acc.moved_bytes_request;
        row["moved_bytes_per_launch_dram_model"] = acc.moved_bytes_stream;
        row["verified"] = true;
        row["host_spot_checked_elements"] = spot;
        rows.push_back(row);
      }
    }
    note_protocol(r);
    r.parameters = common_parameters(info, o);
    r.parameters["strides"] = strides;
    r.parameters["elements_in_span"] = n;
    r.parameters["blocks_per_sm"] = l.blocks / std::max(1, info.sm_count);
    r.parameters["unroll"] = 4;
    r.parameters["kernels"] = "copy: dst[j*s] = src[j*s]; read: XOR of src[j*s]; j < span/s, float";
    r.parameters["convention"] = kUsefulConvention;
    r.samples = {{"rows", rows}};
    if (counters::requested(ctx)) {  // sectors per load request against the sector model
      counters::Declaration d;
      for (const auto& row : rows) {
        if (row.at("variant") != "read") continue;
        const int s = row.at("stride_elements");
        const std::uint64_t m = n / static_cast<std::uint64_t>(s);
        d.probes.push_back(
            {"read, stride " + std::to_string(s), {{"stride_elements", s}},
             [&bench, &src, l, s, m] {
               bw::launch_strided_read(l, src.as<float>(), 0, s, m, nullptr);
               bench.sync();
             },
             {{"global load sectors per request", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
               "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "sectors/request",
               row.at("model").at("sectors_per_request").get<double>(), 0.05, true,
               "sector model: 32-byte sectors a warp's 32 strided 4-byte loads touch"}}});
      }
      r.samples["counters"] = counters::collect(ctx, d);
    }
    Curve c{
        "table",
        {"variant", "stride_elements", "useful_gb_s_median", "useful_gb_s_min", "useful_gb_s_p5",
         "useful_gb_s_p95", "n", "sectors_per_request", "request_efficiency", "dram_efficiency_32b",
         "dram_efficiency_64b", "copy_dram_efficiency_rmw_32b", "copy_dram_efficiency_rmw_64b",
         "moved_gb_s_dram_model", "peak_gb_s", "percent_of_peak_moved_dram_model",
         "model_useful_gb_s"},
        {}};
    // The sector model's line: stride 1's useful GB/s scaled by the DRAM efficiency it predicts.
    std::map<std::string, double> at_stride1;
    for (const auto& row : rows)
      if (row.at("stride_elements") == 1)
        at_stride1[row.at("variant")] = row.at("useful_gb_s").at("median").get<double>() /
                                        row.at("model").at("dram_efficiency_32b").get<double>();
    for (const auto& row : rows) {
      const auto& s = row.at("useful_gb_s");
      const auto& m = row.at("model");
      const double moved = s.at("median").get<double>() / m.at("dram_efficiency_32b").get<double>();
      c.rows.push_back({row.at("variant"), row.at("stride_elements"), s.at("median"), s.at("min"),
                        s.at("p5"), s.at("p95"), s.at("n"), m.at("sectors_per_request"),
                        m.at("request_efficiency"), m.at("dram_efficiency_32b"),
                        m.at("dram_efficiency_64b"), m.at("copy_dram_efficiency_rmw_32b"),
                        m.at("copy_dram_efficiency_rmw_64b"), moved, peak,
                        percent_of(moved, peak),
                        at_stride1[row.at("variant")] * m.at("dram_efficiency_32b").get<double>()});
    }
    c.hints = chart_hints("bandwidth.stride: useful GB/s against stride, with the sector model",
                          "stride_elements", "elements", "useful_gb_s_median", "GB/s", true)
                  .by({"variant"})
                  .with_model({"model_useful_gb_s"});
    r.curves.push_back(c);
    r.statistics = {{"rows_measured", rows.size()}};
  }
  void analyze(ExperimentResult& r) const override {
    counters::cross_check(r);
    const double peak = r.parameters.value("peak_gb_s", 0.0);
    std::map<std::string, double> base;
    for (const auto& row : r.samples.at("rows"))
      if (row.at("stride_elements") == 1)
        base[row.at("variant")] = row.at("useful_gb_s").at("median").get<double>();
    for (const auto& row : r.samples.at("rows")) {
      const int s = row.at("stride_elements");
      const std::string variant = row.at("variant");
      const auto& st = row.at("useful_gb_s");
      const double useful = st.at("median").get<double>();
      const auto& m = row.at("model");
      if (s == 1) {
        auto f = bandwidth_finding("dram.strided_" + variant + ".s1_bandwidth", st, peak,
                                   "median useful GB/s of the unit-stride float " + variant +
                                       " (the baseline of the stride efficiencies)");
        r.findings.push_back(f);
        continue;
      }
      const double b = base.count(variant) ? base[variant] : 0;
      const double measured = b > 0 ? useful / b : 0;
      auto f = efficiency_finding(
          "dram.strided_" + variant + ".s" + std::to_string(s) + "_efficiency", measured,
          m.at("request_efficiency").get<double>(), m.at("dram_efficiency_32b").get<double>(), st,
          "useful GB/s at stride " + std::to_string(s) +
              " / useful GB/s at stride 1; the sector "
              "model predicts " +
              std::to_string(m.at("sectors_per_request").get<int>()) + " sectors per warp request");
      f.extra["stride_elements"] = s;
      f.extra["useful_gb_s"] = useful;
      f.extra["sectors_per_request"] = m.at("sectors_per_request");
      f.extra["predicted_dram_efficiency_64b_percent"] =
          m.at("dram_efficiency_64b").get<double>() * 100;
      if (variant == "copy" && m.contains("copy_dram_efficiency_rmw_32b")) {
        f.extra["predicted_copy_efficiency_rmw_32b_percent"] =
            m.at("copy_dram_efficiency_rmw_32b").get<double>() * 100;
        f.extra["predicted_copy_efficiency_rmw_64b_percent"] =
            m.at("copy_dram_efficiency_rmw_64b").get<double>() * 100;
        f.extra["moved_gb_s_copy_rmw_32b_model"] =
            useful / m.at("copy_dram_efficiency_rmw_32b").get<double>();
      }
      // Which prediction the measurement sits closest to (relative distance).
      std::string closest;
      double distance = 0;
      for (const char* key : {"dram_efficiency_32b", "dram_efficiency_64b",
                              "copy_dram_efficiency_rmw_32b", "copy_dram_efficiency_rmw_64b"}) {
        if (!m.contains(key) || (variant != "copy" && std::string(key).rfind("copy", 0) == 0))
          continue;
        const double predicted = m.at(key).get<double>();
        const double d = std::fabs(measured - predicted) / predicted;
        if (closest.empty() || d < distance) {
          closest = key;
          distance = d;
        }
      }
      if (!closest.empty()) {
        f.extra["closest_model"] = closest;
        f.extra["closest_model_relative_error"] = distance;
      }
      f.extra["moved_gb_s_dram_model"] = useful / m.at("dram_efficiency_32b").get<double>();
      f.extra["peak_gb_s"] = peak;
      f.extra["percent_of_peak_moved_dram_model"] =
          percent_of(useful / m.at("dram_efficiency_32b").get<double>(), peak);
      r.findings.push_back(f);
    }
  }

 protected:
  double arrays_allocated() const override { return 2; }
  void check_options(const RunOptions& o) const override {
    require_in_range(o.strides, 1, kMaxStride, "stride", "element strides 1..64");
  }
};

// ---------------------------------------------------------------------------------------------
// bandwidth.offset

class OffsetExperiment : public BandwidthExperiment {
 public:
  std::string id() const override { return "bandwidth.offset"; }
  std::string description() const override {
    return "misaligned float copy (start offset 0..32 elements from a 256-B aligned base), plus "
           "copies misaligned on one side only and a misaligned read: useful GB/s beside the "
           "sectors and lines per warp request the model predicts";
  }
  json axes() const override {
    return {
        {"offset_elements", "0..32 (copy); 0, 1, 4, 8, 12, 16, 24, 31, 32 (diagnostic variants)"},
        {"variant", {"copy", "copy_src_misaligned", "copy_dst_misaligned", "read"}},
        {"element_bytes", 4},
        {"array_bytes", "16 x L2"}};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    Bench bench(ctx);
    const auto& info = bench.info();
    const auto& o = ctx.options;
    const std::uint64_t array = array_bytes(info, o);
    const std::uint64_t n = array / 4;
    const std::uint64_t m = n - kMaxOffset;  // the same element count at every offset
    const double peak = dram_peak_gb_s(info);
    std::vector<int> offsets = o.offsets, diagnostic = o.offsets;
    if (offsets.empty()) {
      for (int k = 0; k <= kDefaultMaxOffset; ++k) offsets.push_back(k);
      diagnostic = {0, 1, 4, 8, 12, 16, 24, 31, 32};
    }
    offsets = with_baseline(offsets, 0);
    diagnostic = with_baseline(diagnostic, 0);
    const std::uint32_t seed_src = derive_seed(o.seed, 31), seed_poison = derive_seed(o.seed, 32);
    DeviceArray src(array), dst(array);
    bench.fill(src.as<float>(), n, seed_src);
    bench.sync();
    const auto l = bench.launch(pattern_bps());
    json rows = json::array();
    const std::vector<std::string> variants = {"copy", "copy_src_misaligned", "copy_dst_misaligned",
                                               "read"};
    for (const auto& variant : variants) {
      const bool copy = variant != "read";
      for (int off : variant == "copy" ? offsets : diagnostic) {
        const std::uint64_t src_lo = variant == "copy_dst_misaligned" ? 0 : off;
        const std::uint64_t dst_lo = variant == "copy_src_misaligned" ? 0 : off;
        const double useful = static_cast<double>(m) * 4.0 * (copy ? 2.0 : 1.0);
        auto launch = [&](std::uint32_t* out) {
          if (copy)
            bw::launch_strided_copy(l, src.as<float>(), dst.as<float>(), src_lo, dst_lo, 1, m);
          else
            bw::launch_strided_read(l, src.as<float>(), src_lo, 1, m, out);
        };
        const auto t = bench.measure([&] { launch(nullptr); }, useful);
        const std::string what = id() + " " + variant + " offset " + std::to_string(off);
        const std::uint64_t spot = bench.check_pattern(launch, copy, dst.as<float>(), n, seed_src,
                                                       seed_poison, src_lo, dst_lo, 1, m, what);
        const analysis::WarpAccess rd{4, 1, static_cast<std::int64_t>(src_lo), 0,
                                      analysis::kWarpThreads};
        const analysis::WarpAccess wr{4, 1, static_cast<std::int64_t>(dst_lo), 0,
                                      analysis::kWarpThreads};
        const std::uint64_t sectors =
            analysis::sectors_per_request(rd) + (copy ? analysis::sectors_per_request(wr) : 0);
        json row = pattern_row(t, useful, peak);
        row["variant"] = variant;
        row["offset_elements"] = off;
        row["src_offset_elements"] = src_lo;
        row["dst_offset_elements"] = copy ? json(dst_lo) : json(nullptr);
        row["elements"] = m;
        row["read_model"] = model_json(rd);
        row["write_model"] = copy ? model_json(wr) : json(nullptr);
        row["sectors_per_warp"] = sectors;
        row["request_efficiency"] = (copy ? 256.0 : 128.0) / static_cast<double>(sectors * 32);
        row["verified"] = true;
        row["host_spot_checked_elements"] = spot;
        rows.push_back(row);
      }
    }
    note_protocol(r);
    r.parameters = common_parameters(info, o);
    r.parameters["offsets"] = offsets;
    r.parameters["diagnostic_offsets"] = diagnostic;
    r.parameters["elements"] = m;
    r.parameters["kernels"] =
        "copy: dst[off + j] = src[off + j]; copy_src_misaligned: dst[j] = src[off + j]; "
        "copy_dst_misaligned: dst[off + j] = src[j]; read: XOR of src[off + j]; j < n - 64, float";
    r.parameters["convention"] = kUsefulConvention;
    r.samples = {{"rows", rows}};
    if (counters::requested(ctx)) {  // sectors per load request against the sector model
      counters::Declaration d;
      for (const auto& row : rows) {
        if (row.at("variant") != "read") continue;
        const std::uint64_t off = row.at("src_offset_elements");
        d.probes.push_back(
            {"read, offset " + std::to_string(off), {{"offset_elements", off}},
             [&bench, &src, l, off, m] {
               bw::launch_strided_read(l, src.as<float>(), off, 1, m, nullptr);
               bench.sync();
             },
             {{"global load sectors per request", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
               "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "sectors/request",
               row.at("read_model").at("sectors_per_request").get<double>(), 0.05, true,
               "sector model: 32-byte sectors a warp's 32 consecutive 4-byte loads touch"}}});
      }
      r.samples["counters"] = counters::collect(ctx, d);
    }
    Curve c{"table",
            {"variant", "offset_elements", "useful_gb_s_median", "useful_gb_s_min",
             "useful_gb_s_p5", "useful_gb_s_p95", "n", "read_sectors_per_request",
             "read_lines_per_request", "write_sectors_per_request", "write_lines_per_request",
             "request_efficiency", "peak_gb_s", "percent_of_peak"},
            {}};
    for (const auto& row : rows) {
      const auto& s = row.at("useful_gb_s");
      const auto& rm = row.at("read_model");
      const auto& wm = row.at("write_model");
      c.rows.push_back({row.at("variant"), row.at("offset_elements"), s.at("median"), s.at("min"),
                        s.at("p5"), s.at("p95"), s.at("n"), rm.at("sectors_per_request"),
                        rm.at("lines_per_request"),
                        wm.is_null() ? json(0) : wm.at("sectors_per_request"),
                        wm.is_null() ? json(0) : wm.at("lines_per_request"),
                        row.at("request_efficiency"), peak, s.at("percent_of_peak_median")});
    }
    c.hints = chart_hints("bandwidth.offset: useful GB/s against start offset", "offset_elements",
                          "elements", "useful_gb_s_median", "GB/s")
                  .by({"variant"});
    r.curves.push_back(c);
    r.statistics = {{"rows_measured", rows.size()}};
  }
  void analyze(ExperimentResult& r) const override {
    counters::cross_check(r);
    const double peak = r.parameters.value("peak_gb_s", 0.0);
    std::map<std::string, std::vector<const json*>> by;
    for (const auto& row : r.samples.at("rows")) by[row.at("variant")].push_back(&row);
    for (const auto& [variant, rows] : by) {
      const json* aligned = nullptr;
      for (const auto* row : rows)
        if (row->at("offset_elements") == 0) aligned = row;
      if (!aligned) continue;
      const double base = aligned->at("useful_gb_s").at("median").get<double>();
      const std::string prefix = "dram.offset_" + variant;
      r.findings.push_back(bandwidth_finding(prefix + ".aligned_bandwidth",
                                             aligned->at("useful_gb_s"), peak,
                                             "median useful GB/s at offset 0 (" + variant + ")"));
      if (!(base > 0)) continue;
      // Offsets that break 32-B sector alignment, and offsets that keep sectors whole but split
      // every warp's 128-B request over two lines.
      struct Group {
        std::string name, what;
        std::function<bool(int)> in;
      };
      const std::vector<Group> groups = {
          {"sector_misaligned",
           "offsets that are not a multiple of 8 floats (5 sectors, 2 lines per request)",
           [](int off) { return off % 8 != 0; }},
          {"line_misaligned",
           "offsets that are a multiple of 8 but not of 32 floats (4 sectors, 2 lines per request)",
           [](int off) { return off % 8 == 0 && off % 32 != 0; }}};
      const json* worst = nullptr;
      for (const auto& g : groups) {
        std::vector<double> eff;
        double predicted = 0;
        const json* example = nullptr;
        for (const auto* row : rows) {
          const int off = row->at("offset_elements");
          if (!g.in(off)) continue;
          const double med = row->at("useful_gb_s").at("median").get<double>();
          eff.push_back(med / base);
          predicted = row->at("request_efficiency").get<double>();
          example = row;
          if (!worst || med < worst->at("useful_gb_s").at("median").get<double>()) worst = row;
        }
        if (eff.empty()) continue;
        const double mean =
            std::accumulate(eff.begin(), eff.end(), 0.0) / static_cast<double>(eff.size());
        auto f = efficiency_finding(prefix + "." + g.name + "_efficiency", mean, predicted, 1.0,
                                    example->at("useful_gb_s"),
                                    "mean useful GB/s over " + g.what +
                                        " / offset 0; the sector "
                                        "model predicts the request efficiency, and 100% at DRAM "
                                        "(neighbouring warps use the extra sector)");
        f.extra["offsets_averaged"] = eff.size();
        f.extra["read_lines_per_request"] = example->at("read_model").at("lines_per_request");
        r.findings.push_back(f);
      }
      if (worst) {
        auto f =
            efficiency_finding(prefix + ".worst_efficiency",
                               worst->at("useful_gb_s").at("median").get<double>() / base,
                               worst->at("request_efficiency").get<double>(), 1.0,
                               worst->at("useful_gb_s"), "slowest misaligned offset / offset 0");
        f.extra["offset_elements"] = worst->at("offset_elements");
        f.extra["useful_gb_s"] = worst->at("useful_gb_s").at("median");
        f.extra["peak_gb_s"] = peak;
        r.findings.push_back(f);
      }
    }
  }

 protected:
  double arrays_allocated() const override { return 2; }
  void check_options(const RunOptions& o) const override {
    require_in_range(o.offsets, 0, kMaxOffset, "offset", "start offsets 0..64 elements");
  }
};

// ---------------------------------------------------------------------------------------------
// bandwidth.layout

class LayoutExperiment : public BandwidthExperiment {
 public:
  std::string id() const override { return "bandwidth.layout"; }
  std::string description() const override {
    return "array of structs {float x, y, z} vs struct of three arrays: read all three fields, "
           "write one float per element; useful GB/s beside the sector model";
  }
  json axes() const override {
    return {{"layout", {"aos", "soa"}}, {"array_bytes", "16 x L2 (AoS)"}};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    Bench bench(ctx);
    const auto& info = bench.info();
    const auto& o = ctx.options;
    const std::uint64_t array = array_bytes(info, o);
    const std::uint64_t n = array / 12;
    const double peak = dram_peak_gb_s(info);
    const std::uint32_t seed = derive_seed(o.seed, 41), seed_poison = derive_seed(o.seed, 42);
    DeviceArray aos(n * 12), x(n * 4), y(n * 4), z(n * 4), out(n * 4);
    bench.fill(aos.as<float>(), 3 * n, seed);
    bench.fill(x.as<float>(), n, seed, 3, 0);
    bench.fill(y.as<float>(), n, seed, 3, 1);
    bench.fill(z.as<float>(), n, seed, 3, 2);
    bench.sync();
    const auto l = bench.launch(pattern_bps());
    const double useful = static_cast<double>(n) * 16.0;
    json rows = json::array();
    for (const std::string layout : {"aos", "soa"}) {
      auto launch = [&] {
        if (layout == "aos")
          bw::launch_layout_aos(l, aos.as<float>(), out.as<float>(), n);
        else
          bw::launch_layout_soa(l, x.as<float>(), y.as<float>(), z.as<float>(), out.as<float>(), n);
      };
      const auto t = bench.measure(launch, useful);
      bench.fill(out.as<float>(), n, seed_poison);
      launch();
      ExpectSpec spec;
      spec.mode = ExpectMode::kLayoutSum;
      spec.seed_in = seed;
      const auto spot = bench.check(out.as<float>(), n, spec, id() + " " + layout);
      // Sector model per warp: three field loads and one store.
      std::uint64_t load_sectors = 0;
      for (int f = 0; f < 3; ++f)
        load_sectors +=
            analysis::sectors_per_request(layout == "aos" ? analysis::WarpAccess{4, 3, f, 0, 32}
                                                          : analysis::WarpAccess{4, 1, 0, 0, 32});
      const std::uint64_t store_sectors = analysis::sectors_per_request({4, 1, 0, 0, 32});
      // The three AoS field loads touch the same 12 sectors: distinct sectors per warp.
      const std::uint64_t distinct_load_sectors =
          3 * analysis::sectors_per_request({4, 1, 0, 0, 32});
      const double useful_per_warp = 32.0 * 16.0;
      json row = pattern_row(t, useful, peak);
      row["layout"] = layout;
      row["elements"] = n;
      row["model"] = {
          {"load_sectors_per_warp", load_sectors},
          {"store_sectors_per_warp", store_sectors},
          {"distinct_sectors_per_warp", distinct_load_sectors + store_sectors},
          {"useful_bytes_per_warp", useful_per_warp},
          {"request_efficiency",
           useful_per_warp / static_cast<double>((load_sectors + store_sectors) * 32)},
          {"dram_efficiency_32b",
           useful_per_warp / static_cast<double>((distinct_load_sectors + store_sectors) * 32)}};
      row["verified"] = true;
      row["host_spot_checked_elements"] = spot;
      rows.push_back(row);
    }
    note_protocol(r);
    r.parameters = common_parameters(info, o);
    r.parameters["elements"] = n;
    r.parameters["kernel"] = "out[i] = (x + y) + z; AoS: one array of {x, y, z}; SoA: three arrays";
    r.parameters["useful_bytes_per_element"] = 16;
    r.parameters["convention"] = kUsefulConvention;
    r.samples = {{"rows", rows}};
    Curve c{"table",
            {"layout", "useful_gb_s_median", "useful_gb_s_min", "useful_gb_s_p5", "useful_gb_s_p95",
             "n", "load_sectors_per_warp", "store_sectors_per_warp", "request_efficiency",
             "dram_efficiency_32b", "peak_gb_s", "percent_of_peak"},
            {}};
    for (const auto& row : rows) {
      const auto& s = row.at("useful_gb_s");
      const auto& md = row.at("model");
      c.rows.push_back({row.at("layout"), s.at("median"), s.at("min"), s.at("p5"), s.at("p95"),
                        s.at("n"), md.at("load_sectors_per_warp"), md.at("store_sectors_per_warp"),
                        md.at("request_efficiency"), md.at("dram_efficiency_32b"), peak,
                        s.at("percent_of_peak_median")});
    }
    c.hints = table_hints("array-of-structs against struct-of-arrays");
    r.curves.push_back(c);
  }
  void analyze(ExperimentResult& r) const override {
    const double peak = r.parameters.value("peak_gb_s", 0.0);
    std::map<std::string, const json*> by;
    for (const auto& row : r.samples.at("rows")) by[row.at("layout")] = &row;
    for (const auto& [layout, row] : by) {
      const auto& md = row->at("model");
      auto f = bandwidth_finding(
          "dram.layout_" + layout + "_bandwidth", row->at("useful_gb_s"), peak,
          "median useful GB/s (12 B read + 4 B written per element); the "
          "sector model predicts " +
              std::to_string(md.at("load_sectors_per_warp").get<int>()) + " load sectors per warp");
      f.extra["predicted_request_efficiency_percent"] =
          md.at("request_efficiency").get<double>() * 100;
      f.extra["predicted_dram_efficiency_percent"] =
          md.at("dram_efficiency_32b").get<double>() * 100;
      r.findings.push_back(f);
    }
    if (by.count("aos") && by.count("soa")) {
      const double a = by["aos"]->at("useful_gb_s").at("median").get<double>();
      const double s = by["soa"]->at("useful_gb_s").at("median").get<double>();
      const auto& ma = by["aos"]->at("model");
      const auto& ms = by["soa"]->at("model");
      Finding f{"dram.layout_aos_over_soa",
                s > 0 ? a / s * 100 : 0,
                "%",
                spread_confidence(by["aos"]->at("useful_gb_s")),
                "AoS useful GB/s / SoA useful GB/s",
                json::object()};
      f.extra["predicted_request_ratio_percent"] = ma.at("request_efficiency").get<double>() /
                                                   ms.at("request_efficiency").get<double>() * 100;
      f.extra["predicted_dram_ratio_percent"] = ma.at("dram_efficiency_32b").get<double>() /
                                                ms.at("dram_efficiency_32b").get<double>() * 100;
      r.findings.push_back(f);
    }
  }

 protected:
  double arrays_allocated() const override { return 1.0 + 1.0 + 1.0 / 3.0; }
};

// ---------------------------------------------------------------------------------------------
// bandwidth.transpose

class TransposeExperiment : public BandwidthExperiment {
 public:
  std::string id() const override { return "bandwidth.transpose"; }
  std::string description() const override {
    return "float matrix transpose: naive, 32x32 shared tile, tile with a 33-float pitch, and a "
           "plain copy of the same bytes; beside the sector and bank model";
  }
  json axes() const override {
    return {{"kernel", {"copy", "naive", "tiled", "tiled_padded"}},
            {"matrix", "n x n floats, the largest multiple of 32 that fits in 16 x L2"}};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    Bench bench(ctx);
    const auto& info = bench.info();
    const auto& o = ctx.options;
    const std::uint64_t array = array_bytes(info, o);
    const std::uint64_t dim = transpose_n(array);
    if (dim < 32) throw UsageError("--array-size is too small for a 32 x 32 transpose");
    const std::uint64_t n = dim * dim;
    const double peak = dram_peak_gb_s(info);
    const std::uint32_t seed = derive_seed(o.seed, 51), seed_poison = derive_seed(o.seed, 52);
    DeviceArray in(n * 4), out(n * 4);
    bench.fill(in.as<float>(), n, seed);
    bench.sync();
    const auto l = bench.launch(pattern_bps());
    const double useful = static_cast<double>(n) * 8.0;
    json rows = json::array();
    for (int k = -1; k < 3; ++k) {
      const std::string name =
          k < 0 ? "copy" : analysis::to_string(static_cast<analysis::TransposeKind>(k));
      auto launch = [&] {
        if (k < 0)
          bw::launch_strided_copy(l, in.as<float>(), out.as<float>(), 0, 0, 1, n);
        else
          bw::launch_transpose(k, in.as<float>(), out.as<float>(), dim, bench.stream());
      };
      const auto t = bench.measure(launch, useful);
      bench.fill(out.as<float>(), n, seed_poison);
      launch();
      ExpectSpec spec;
      spec.seed_in = seed;
      spec.seed_poison = seed_poison;
      if (k < 0) {
        spec.mode = ExpectMode::kWindow;
        spec.hi = n;
      } else {
        spec.mode = ExpectMode::kTranspose;
        spec.n = dim;
      }
      const auto spot = bench.check(out.as<float>(), n, spec, id() + " " + name);
      json row = pattern_row(t, useful, peak);
      row["kernel"] = name;
      if (k < 0) {
        const analysis::WarpAccess row_access{4, 1, 0, 0, 32};
        row["model"] = {{"read_sectors_per_warp", analysis::sectors_per_request(row_access)},
                        {"write_sectors_per_warp", analysis::sectors_per_request(row_access)},
                        {"request_efficiency", 1.0},
                        {"dram_efficiency_32b", 1.0},
                        {"shared_store_ways", 0},
                        {"shared_load_ways", 0}};
      } else {
        const auto p = analysis::predict_transpose(static_cast<analysis::TransposeKind>(k), dim);
        row["model"] = {{"read_sectors_per_warp", p.read_sectors_per_warp},
                        {"write_sectors_per_warp", p.write_sectors_per_warp},
                        {"request_efficiency", p.request_efficiency},
                        {"dram_efficiency_32b", p.stream_efficiency},
                        {"shared_store_ways", p.shared_store_ways},
                        {"shared_load_ways", p.shared_load_ways},
                        {"tile_pitch_words", p.tile_pitch_words}};
      }
      row["verified"] = true;
      row["host_spot_checked_elements"] = spot;
      rows.push_back(row);
    }
    note_protocol(r);
    r.parameters = common_parameters(info, o);
    r.parameters["matrix_n"] = dim;
    r.parameters["matrix_bytes"] = n * 4;
    r.parameters["block"] = "32 x 8 threads per 32 x 32 tile (4 elements per thread)";
    r.parameters["convention"] =
        "useful bytes = n x n x 4 read + n x n x 4 written. " + kUsefulConvention;
    r.samples = {{"rows", rows}};
    Curve c{"table",
            {"kernel", "useful_gb_s_median", "useful_gb_s_min", "useful_gb_s_p5", "useful_gb_s_p95",
             "n", "read_sectors_per_warp", "write_sectors_per_warp", "request_efficiency",
             "shared_load_ways", "peak_gb_s", "percent_of_peak"},
            {}};
    for (const auto& row : rows) {
      const auto& s = row.at("useful_gb_s");
      const auto& md = row.at("model");
      c.rows.push_back({row.at("kernel"), s.at("median"), s.at("min"), s.at("p5"), s.at("p95"),
                        s.at("n"), md.at("read_sectors_per_warp"), md.at("write_sectors_per_warp"),
                        md.at("request_efficiency"), md.at("shared_load_ways"), peak,
                        s.at("percent_of_peak_median")});
    }
    c.hints = table_hints("transpose kernels");
    r.curves.push_back(c);
  }
  void analyze(ExperimentResult& r) const override {
    const double peak = r.parameters.value("peak_gb_s", 0.0);
    double copy = 0;
    for (const auto& row : r.samples.at("rows"))
      if (row.at("kernel") == "copy") copy = row.at("useful_gb_s").at("median").get<double>();
    for (const auto& row : r.samples.at("rows")) {
      const std::string k = row.at("kernel");
      const auto& md = row.at("model");
      auto f = bandwidth_finding(
          "transpose." + k + "_bandwidth", row.at("useful_gb_s"), peak,
          k == "copy" ? std::string("median useful GB/s of a plain copy of the same matrix")
                      : "median useful GB/s; model: " +
                            std::to_string(md.at("read_sectors_per_warp").get<int>()) + " + " +
                            std::to_string(md.at("write_sectors_per_warp").get<int>()) +
                            " sectors per warp, shared-memory load " +
                            std::to_string(md.at("shared_load_ways").get<int>()) + "-way");
      const double med = row.at("useful_gb_s").at("median").get<double>();
      f.extra["percent_of_copy"] = copy > 0 ? med / copy * 100 : 0.0;
      f.extra["predicted_request_efficiency_percent"] =
          md.at("request_efficiency").get<double>() * 100;
      f.extra["predicted_dram_efficiency_percent"] =
          md.at("dram_efficiency_32b").get<double>() * 100;
      f.extra["shared_load_ways"] = md.at("shared_load_ways");
      r.findings.push_back(f);
    }
  }

 protected:
  double arrays_allocated() const override { return 2; }
};

}  // namespace

void register_bandwidth_experiments(Registry& registry) {
  registry.add(std::make_unique<StreamExperiment>(StreamKind::kRead));
  registry.add(std::make_unique<StreamExperiment>(StreamKind::kWrite));
  registry.add(std::make_unique<StreamExperiment>(StreamKind::kCopy));
  registry.add(std::make_unique<StrideExperiment>());
  registry.add(std::make_unique<OffsetExperiment>());
  registry.add(std::make_unique<LayoutExperiment>());
  registry.add(std::make_unique<TransposeExperiment>());
}

}  // namespace gpuprobe::probes
