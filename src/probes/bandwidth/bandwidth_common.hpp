#pragma once
// What the streaming and access-pattern experiments of the bandwidth family share (internal to
// src/probes/bandwidth/): sizes, the peak, the GPU rig that times and verifies a kernel, the
// common experiment base and the pattern helpers.
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
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/sector_model.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/units.hpp"
#include "measure/cuda_event.hpp"
#include "probes/bandwidth/bandwidth.hpp"
#include "probes/bandwidth/bandwidth_kernels.hpp"
#include "probes/bandwidth/bandwidth_samples.hpp"

namespace gpuprobe::probes::bwhost {

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

inline const std::vector<int> kDefaultStrides = {1, 2, 3, 4, 8, 16, 32};
inline const std::vector<int> kDefaultWidths = {4, 8, 16};
constexpr int kMaxStride = 64;
constexpr int kMaxOffset = 64;
constexpr int kDefaultMaxOffset = 32;

// ---------------------------------------------------------------------------------------------
// Sizes, peak, options

std::uint64_t default_array_bytes(const device::DeviceInfo& d);
/// The bytes per array this run asks for (the array_bytes axis: --axis or --array-size), 0 when
/// the default (16 x L2) applies.
std::uint64_t requested_array_bytes(const AxisValues& axes);
/// Bytes per array actually used: the request (or 16 x L2) rounded down to 4 KiB, so that every
/// vector width divides it.
std::uint64_t array_bytes(const device::DeviceInfo& d, const AxisValues& axes);
using device::dram_peak_gb_s;
/// `v` with `baseline` added, sorted, without repeats: every sweep also measures its baseline.
std::vector<int> with_baseline(std::vector<int> v, int baseline);
inline double percent_of(double value, double peak) {
  return peak > 0 ? value / peak * 100.0 : 0.0;
}
std::uint32_t derive_seed(std::uint64_t seed, std::uint32_t salt);
/// Transpose matrix dimension: the largest multiple of 32 whose n x n floats fit in one array.
std::uint64_t transpose_n(std::uint64_t array);
json common_parameters(const device::DeviceInfo& d, const AxisValues& axes);
/// The bytes per array, declared by every experiment of this file's family: no value by default
/// (16 x L2, chosen at run time), one value when --axis or --array-size sets it. `what` says
/// which array.
Axis array_bytes_axis(const std::string& what);

// ---------------------------------------------------------------------------------------------
// Timing and verification

struct Timed {
  Measurement gb_s;
  int launches_per_sample = 1;
  double calibration_launch_ms = 0;
};
/// The measurement with its samples ("values"), launches per sample and percent of peak.
json to_json(const Timed& t, double peak);

/// XOR of the bit patterns of value(lo + j * stride, seed) for j < m, on the host (threaded).
std::uint32_t host_xor(std::uint64_t lo, std::uint64_t stride, std::uint64_t m, std::uint32_t seed);

/// host_xor(new_lo, 1, m, seed) from x = host_xor(lo, 1, m, seed): the two ranges differ only in
/// |new_lo - lo| elements at each end, so only those are computed (the offset rows' reads cover
/// the same quarter-billion words shifted by at most 32).
std::uint32_t host_xor_shifted(std::uint32_t x, std::uint64_t lo, std::uint64_t new_lo,
                               std::uint64_t m, std::uint32_t seed);

/// Everything one experiment needs on the GPU: its stream, its timing events and the
/// verification counters. Selects the device first.

class Bench {
 public:
  explicit Bench(Context& ctx)
      : info_(select(ctx.device.info())),
        protocol_(ctx.options.protocol),
        counters_(2 * sizeof(unsigned long long)),
        xor_word_(sizeof(std::uint32_t)) {}

  const device::DeviceInfo& info() const { return info_; }
  /// Replaces the repetition protocol of later measurements.
  void set_protocol(const ProtocolOptions& p) { protocol_ = p; }
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
                              std::uint32_t seed_poison, std::uint64_t src_lo, std::uint64_t dst_lo,
                              std::uint64_t step, std::uint64_t m, const std::string& what) {
    if (!copy) {
      std::uint32_t want = 0;
      if (step == 1 && xor_memo_.valid && xor_memo_.seed == seed_src && xor_memo_.m == m) {
        want = host_xor_shifted(xor_memo_.x, xor_memo_.lo, src_lo, m, seed_src);
      } else {
        want = host_xor(src_lo, step, m, seed_src);
        if (step == 1) xor_memo_ = XorMemo{true, seed_src, m, src_lo, want};
      }
      check_xor(launch, want, what);
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
  void record(const measure::CudaEvent& e) { GP_CUDA_CHECK(cudaEventRecord(e.get(), stream())); }
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
  measure::CudaStream stream_;
  measure::CudaEvent start_, stop_;
  DeviceArray counters_;
  DeviceArray xor_word_;
  /// The last contiguous (step 1) host XOR: the next one over the same count shifts it.
  struct XorMemo {
    bool valid = false;
    std::uint32_t seed = 0;
    std::uint64_t m = 0, lo = 0;
    std::uint32_t x = 0;
  };
  XorMemo xor_memo_;
};

/// confidence::precision of a to_json(Timed) record's samples around its median (the typed
/// record, bandwidth_samples.hpp; 0 without samples).
double stats_precision(const GbpsStats& stats);
/// A GB/s finding from a measurement (to_json(Timed)): the median, with the confidence of
/// stats_precision.
Finding bandwidth_finding(const std::string& name, const GbpsStats& stats, double peak,
                          const std::string& method);
void note_protocol(ExperimentResult& r);

// ---------------------------------------------------------------------------------------------
// The experiments' common part: waiver and validation.

class BandwidthExperiment : public Experiment {
 public:
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return waive_on_model(info, kNoBandwidthModel);
  }
  void validate(const device::Device& dev, const RunOptions& o) const override {
    const auto& d = dev.info();
    const auto axes = axis_values(o);
    if (axes.ints("array_bytes").size() > 1)
      throw UsageError(id() + ".array_bytes takes one value (the bytes per array)");
    const std::uint64_t requested = requested_array_bytes(axes);
    if (requested && requested < kMinArrayBytes)
      throw UsageError("--array-size " + units::format_bytes(requested) +
                       " is too small; use at least 1 MiB (default 16 x L2 = " +
                       units::format_bytes(default_array_bytes(d)) + ")");
    const std::uint64_t array = array_bytes(d, axes);
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

 private:
  static std::string describe_arrays(double a) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g arrays", a);
    return buf;
  }
};

// ---------------------------------------------------------------------------------------------
// Access patterns: shared pieces

json model_json(const analysis::WarpAccess& a);
int pattern_bps();
/// One pattern measurement: useful bytes per launch, the timing, and what the model predicts.
json pattern_row(const Timed& t, double useful_bytes, double peak);
extern const std::string kUsefulConvention;
/// The "table" curve of a pattern experiment: per sample row, the row's values of `keys`, its
/// useful GB/s median, min, p5, p95 and n, then `cells(row)` under `columns`.
Curve pattern_table(const json& rows, const std::vector<std::string>& keys,
                    const std::vector<std::string>& columns,
                    const std::function<std::vector<json>(const json& row)>& cells);
Finding efficiency_finding(const std::string& name, double measured, double predicted_request,
                           double predicted_dram, const GbpsStats& stats,
                           const std::string& method);

/// The table curves of the pattern experiments from their sample rows (pure; stride.cpp,
/// layout.cpp).
Curve stride_table(const json& rows, double peak);
Curve offset_table(const json& rows, double peak);
Curve layout_table(const json& rows, double peak);
Curve transpose_table(const json& rows, double peak);

// The experiments (stream.cpp, stride.cpp, layout.cpp).
std::unique_ptr<Experiment> make_stream_experiment(StreamKind kind);
std::unique_ptr<Experiment> make_stride_experiment();
std::unique_ptr<Experiment> make_offset_experiment();
std::unique_ptr<Experiment> make_layout_experiment();
std::unique_ptr<Experiment> make_transpose_experiment();

}  // namespace gpuprobe::probes::bwhost
