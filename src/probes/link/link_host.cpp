// link.host: host <-> device bandwidth and latency. Every copy lands in a poisoned destination
// and is checked word by word against the source pattern before its time counts.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#ifdef __linux__
#include <sched.h>
#endif

#include "core/confidence.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "device/device_buffer.hpp"
#include "measure/gpu.hpp"
#include "measure/replicates.hpp"
#include "probes/link/link.hpp"
#include "probes/link/link_common.hpp"
#include "probes/link/link_kernels.hpp"
#include "probes/link/link_samples.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
using namespace link;

/// From small-transfer latency (one 16-byte word) to a size where a 55 GB/s link runs for over
/// a millisecond, a factor of 16 apart, plus 4 and 16 MiB where bandwidth settles.
const std::vector<std::uint64_t> kDefaultSizes = {16,         256,        4096,        65536,
                                                  1ull << 20, 4ull << 20, 16ull << 20, 64ull << 20};
constexpr std::uint32_t kSaltH2d = 0x1234, kSaltD2h = 0x4321;
// The host chase: nodes one 4 KiB page apart (no two share a line or a page-sized prefetch),
// 1024 of them, 256 timed loads from a different start each repetition.
constexpr std::uint32_t kChaseStride = 4096, kChaseNodes = 1024, kChaseSteps = 256;
/// Replicates of every finding's copy (and of the chase), each a round of the experiment: five
/// rounds of the protocol's repetitions shared five ways (at least 3 each, after a warm-up)
/// cost about what three rounds of five did, and Student's t with 4 degrees of freedom instead
/// of 2 reads a spread from them that is itself less uncertain.
constexpr int kLinkReplicates = 5;

/// The transfer sizes of this run: the `bytes` axis within --min-size/--max-size, ascending.
std::vector<std::uint64_t> host_sizes(const RunOptions& o, const AxisValues& axes) {
  std::vector<std::uint64_t> sizes;
  for (auto s : axes.ints("bytes")) {
    const auto b = static_cast<std::uint64_t>(s);
    if ((o.min_size == 0 || b >= o.min_size) && (o.max_size == 0 || b <= o.max_size))
      sizes.push_back(b);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// The CPU the calling thread runs on (-1 where unknown): host-bound copies and launches
/// depend on it, so each row records it.
int current_cpu() {
#ifdef __linux__
  return sched_getcpu();
#else
  return -1;
#endif
}

struct Setup {
  std::string direction;  ///< "h2d" or "d2h"
  std::string memory;     ///< "pinned" or "pageable"
  std::string method;     ///< "copy_engine", "sm_kernel" or "cuda_memcpy"
};

/// The (direction, memory, method) combinations the axes select, in a fixed order (each
/// direction: pinned copy engine, SM kernel, cudaMemcpy, then pageable). An SM kernel reaches
/// only pinned (mapped) host memory, so pageable x sm_kernel is never a setup.
std::vector<Setup> host_setups(const AxisValues& axes) {
  std::vector<Setup> setups;
  for (const char* dir : {"h2d", "d2h"})
    for (const char* memory : {"pinned", "pageable"})
      for (const char* method : {"copy_engine", "sm_kernel", "cuda_memcpy"}) {
        const bool possible = std::string(memory) == "pinned" || std::string(method) != "sm_kernel";
        if (possible && axes.contains("direction", dir) && axes.contains("memory", memory) &&
            axes.contains("method", method))
          setups.push_back({dir, memory, method});
      }
  return setups;
}

class LinkHost : public Experiment {
 public:
  std::string id() const override { return "link.host"; }
  int samples_version() const override { return HostSamples::kVersion; }
  std::string description() const override {
    return "host <-> device bandwidth and latency, pinned and pageable: copy engine, SM kernels "
           "over mapped pinned memory and cudaMemcpy, 16 B .. 64 MiB, every copy verified; SM "
           "load latency of pinned host memory";
  }
  std::vector<Axis> typed_axes() const override {
    std::vector<std::int64_t> sizes(kDefaultSizes.begin(), kDefaultSizes.end());
    return {int_axis("bytes", sizes, "B",
                     "transfer sizes (bandwidth at the largest, latency at the smallest; "
                     "--min-size/--max-size bound them too)",
                     1, 1073741824.0),
            string_axis("direction", {"h2d", "d2h"}, "host to device, device to host"),
            string_axis("memory", {"pinned", "pageable"}, "host memory kind"),
            string_axis("method", {"copy_engine", "sm_kernel", "cuda_memcpy"},
                        "who copies (an SM kernel only over pinned memory)")};
  }
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return waive_on_model(info, "needs a CUDA GPU: the modelled GPU has no host link");
  }
  void validate(const device::Device&, const RunOptions& o) const override {
    const auto axes = axis_values(o);
    if (host_sizes(o, axes).empty())
      throw UsageError(
          "link.host: no transfer size between --min-size and --max-size (sizes: the "
          "link.host.bytes axis, by default 16 B .. 64 MiB)");
    if (host_setups(axes).empty())
      throw UsageError(
          "link.host: the axes leave nothing to measure (an SM kernel copies only pinned "
          "memory: link.host.method=sm_kernel needs link.host.memory to include pinned)");
  }

  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu g = open_gpu(ctx.device);
    const auto axes = axis_values(ctx.options);
    const auto sizes = host_sizes(ctx.options, axes);
    const auto setups = host_setups(axes);
    const CopyLaunch shape{g.sm_count * 4, 256, 4};
    // Every finding's (setup, size) is measured as kLinkReplicates independent replicates,
    // each with its own device, pinned and pageable buffers, stream and events (all made
    // first and held, so that each replicate's memory is really fresh), and each replicate is
    // a round over every setup: replicate j of one setup lies a whole round of the others away
    // from replicate j + 1. Pageable copies depend on the OS's pages and the driver's staging,
    // and host-bound latencies on the host's moment, which drift over seconds (issue 9, "Run
    // to run": with three replicates, the last two right after each other at the end of a
    // first one that also drew the whole curve, runs still moved 15-52 % beyond what each
    // stated). The sizes between, which only draw the curve, are measured once, each setup's
    // in one round, so that the rounds are evenly spread over the experiment's time. The
    // pinned chase takes a replicate per round too.
    const int k = kLinkReplicates;
    const ProtocolOptions protocol = measure::per_replicate(ctx.options.protocol, k);
    HostSamples samples;
    struct Chase {
      explicit Chase(std::uint64_t seed)
          : mem(static_cast<std::size_t>(kChaseNodes) * kChaseStride),
            base(reinterpret_cast<std::uint64_t>(mem.device())),
            order(cycle_order(kChaseNodes, seed)) {
        const auto image = chase_image(order, base, kChaseStride);
        std::memcpy(mem.host(), image.data(), image.size() * 8);
      }
      PinnedBuffer mem;
      std::uint64_t base;
      std::vector<std::uint32_t> order;
      device::DeviceArray<ChaseOut> out{1};
    };
    struct Round {
      Round(std::size_t max_bytes, std::uint64_t seed) : buffers(max_bytes), chase(seed) {}
      Buffers buffers;
      Chase chase;
    };
    Stream stream;
    std::vector<HostChaseReplicate> chase_replicates;
    std::vector<double> chase_ns, chase_cycles;
    auto chase_round = [&](Chase& c) {
      std::vector<double> cycles;
      auto chase_once = [&](int rep) {
        const std::size_t k0 = static_cast<std::size_t>(rep + 64) * 257 % kChaseNodes;
        const auto* first = reinterpret_cast<const std::uint64_t*>(
            c.base + static_cast<std::uint64_t>(c.order[k0]) * kChaseStride);
        launch_remote_chase(first, 0, kChaseSteps, c.out.get(), stream.get());
        GP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        const ChaseOut o = c.out.download().at(0);
        const std::uint64_t expected =
            c.base +
            static_cast<std::uint64_t>(c.order[(k0 + kChaseSteps) % kChaseNodes]) * kChaseStride;
        if (o.final_node != expected)
          throw VerificationError(
              "link.host chase over pinned host memory ended on the wrong node");
        if (rep >= 0) cycles.push_back(static_cast<double>(o.cycles) / kChaseSteps);
        return static_cast<double>(o.ns) / kChaseSteps;
      };
      const auto m = repeat_until_stable(chase_once, protocol);
      chase_replicates.push_back({m.values, cycles});
      chase_ns.insert(chase_ns.end(), m.values.begin(), m.values.end());
      chase_cycles.insert(chase_cycles.end(), cycles.begin(), cycles.end());
    };
    measure::replicate_fresh(
        k,
        [&](int j) {
          return std::make_unique<Round>(sizes.back(),
                                         ctx.options.seed + static_cast<std::uint64_t>(j));
        },
        [&](int replicate, Round& round) {
          measure_replicate(replicate, k, sizes, setups, shape, protocol, round.buffers,
                            samples.points);
          chase_round(round.chase);
          return 0;
        });

    r.parameters = {{"axes", axes.to_json()},
                    {"bytes", sizes},
                    {"sm_copy",
                     {{"blocks", shape.blocks},
                      {"threads_per_block", shape.threads},
                      {"sixteen_byte_words_in_flight_per_thread", shape.unroll}}},
                    {"chase",
                     {{"nodes", kChaseNodes},
                      {"node_stride_bytes", kChaseStride},
                      {"timed_steps", kChaseSteps},
                      {"load", "ld.global.cv.u64"}}},
                    {"gpu", to_json(g)}};
    r.protocol["timer"] =
        "cudaEvent pair around each copy-engine copy and SM kernel; host steady_clock around "
        "each synchronous cudaMemcpy; clock64 and %globaltimer inside the chase";
    r.protocol["l2_flush"] = "none (the copies cross the link; the chase loads with .cv)";
    r.protocol["replicates"] =
        std::to_string(k) +
        " independent replicates of every finding's copy and of the chase (fresh buffers, "
        "stream and events each), each replicate a round over every setup (so that one "
        "setup's replicates lie a round apart in time), the repetitions of the protocol shared "
        "among them; the sizes between the smallest and the largest once, each setup's in one "
        "round; findings: median of the replicate medians, confidence from the spread between "
        "them (Student's t)";
    r.protocol["verification"] =
        "destination poisoned (0xff) before every copy, then checked word by word against the "
        "source pattern (device: check kernel; host: memcmp); the chase's final node checked";
    samples.host_chase = HostChase{chase_ns, chase_cycles, chase_replicates};
    r.samples = samples;
  }

  void analyze(ExperimentResult& r) const override { analyze_link_host(r); }

 private:
  /// One replicate of every (setup, size), appended to `points`: fresh buffers throughout.
  /// One replicate's own buffers, stream and events.
  struct Buffers {
    explicit Buffers(std::size_t max_bytes)
        : dev(max_bytes / 4), pinned(max_bytes), pageable(max_bytes / 4), bad(1) {}
    device::DeviceArray<std::uint32_t> dev;
    PinnedBuffer pinned;
    std::vector<std::uint32_t> pageable;
    device::DeviceArray<unsigned long long> bad;
    Stream stream;
    Event start, stop;
  };

  static void measure_replicate(int replicate, int replicates,
                                const std::vector<std::uint64_t>& sizes,
                                const std::vector<Setup>& setups, const CopyLaunch& shape,
                                const ProtocolOptions& protocol, Buffers& b,
                                std::vector<HostTransfer>& points) {
    const std::size_t max_words = sizes.back() / 4;
    auto& dev = b.dev;
    auto& pinned = b.pinned;
    auto& pageable = b.pageable;
    auto& bad = b.bad;
    auto& stream = b.stream;
    auto& start = b.start;
    auto& stop = b.stop;

    // The sources: the host pattern (for h2d) in both host memories; the expected image of a
    // device -> host copy kept beside them for memcmp.
    std::vector<std::uint32_t> expect_d2h(max_words);
    for (std::size_t i = 0; i < max_words; ++i) expect_d2h[i] = pattern_word(i, kSaltD2h);

    auto fill_host_source = [&](void* p) {
      auto* w = static_cast<std::uint32_t*>(p);
      for (std::size_t i = 0; i < max_words; ++i) w[i] = pattern_word(i, kSaltH2d);
    };

    const int cpu = current_cpu();
    // Which host buffers hold the h2d pattern (a d2h copy overwrites its buffer).
    std::map<void*, bool> holds_pattern;
    for (std::size_t si = 0; si < setups.size(); ++si) {
      const auto& s = setups[si];
      const bool h2d = s.direction == "h2d";
      void* host = s.memory == "pinned" ? pinned.host() : static_cast<void*>(pageable.data());
      if (h2d) {
        if (!holds_pattern[host]) fill_host_source(host);
        holds_pattern[host] = true;
      } else {
        holds_pattern[host] = false;
        launch_fill(dev.get(), max_words, kSaltD2h, stream.get());
        GP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      }
      // A kernel reaches pinned memory through its mapped device address.
      void* host_for_kernel = s.memory == "pinned" ? pinned.device() : nullptr;
      for (const auto bytes : sizes) {
        // The findings come from the largest size (bandwidth) and the smallest (latency): the
        // sizes between are the curve, measured once, this setup's in one round (cost).
        if (bytes != sizes.front() && bytes != sizes.back() &&
            static_cast<int>(si % static_cast<std::size_t>(replicates)) != replicate)
          continue;
        const std::size_t words = bytes / 4;
        auto once = [&](int) {
          // Poison the destination (untimed) so that only this copy can make it right.
          if (h2d) {
            GP_CUDA_CHECK(cudaMemsetAsync(dev.get(), 0xff, bytes, stream.get()));
            GP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
          } else {
            std::memset(host, 0xff, bytes);
          }
          void* dst = h2d ? static_cast<void*>(dev.get()) : host;
          const void* src = h2d ? host : static_cast<const void*>(dev.get());
          const auto kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
          double seconds = 0;
          if (s.method == "cuda_memcpy") {
            const auto t0 = std::chrono::steady_clock::now();
            GP_CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
            // From pageable memory cudaMemcpy returns once the data is staged, before the DMA
            // into the device ends (CUDA runtime API, "API synchronization behavior"): the copy
            // is complete only after a synchronize, so that is part of its time.
            if (h2d && s.memory == "pageable") GP_CUDA_CHECK(cudaDeviceSynchronize());
            seconds = host_seconds_since(t0);
          } else {
            GP_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
            if (s.method == "copy_engine") {
              GP_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream.get()));
            } else {
              launch_sm_copy(h2d ? host_for_kernel : src, h2d ? dst : host_for_kernel, bytes, shape,
                             stream.get());
            }
            GP_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
            GP_CUDA_CHECK(cudaEventSynchronize(stop.get()));
            seconds = elapsed_s(start, stop);
          }
          std::size_t wrong = 0;
          if (h2d) {
            // On the check's own stream: the legacy stream does not order a non-blocking one.
            GP_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), stream.get()));
            launch_check(dev.get(), words, kSaltH2d, bad.get(), stream.get());
            GP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
            wrong = static_cast<std::size_t>(bad.download().at(0));
          } else if (std::memcmp(host, expect_d2h.data(), bytes) != 0) {
            const auto* w = static_cast<const std::uint32_t*>(host);
            for (std::size_t i = 0; i < words; ++i) wrong += w[i] != expect_d2h[i];
          }
          if (wrong)
            throw VerificationError("link.host " + s.direction + " " + s.memory + " " + s.method +
                                    " " + std::to_string(bytes) + " B: " + std::to_string(wrong) +
                                    " wrong words");
          return seconds;
        };
        HostTransfer row;
        row.replicate = replicate;
        row.host_cpu = cpu;
        row.direction = s.direction;
        row.memory = s.memory;
        row.method = s.method;
        row.bytes = bytes;
        // A failed check is an error of this row only: its neighbours keep their samples.
        try {
          const auto m = repeat_until_stable(once, protocol);
          row.seconds = m.values;
          row.converged = m.converged;
          row.status = "passed";
        } catch (const VerificationError& e) {
          row.seconds.clear();
          row.status = "error";
          row.reason = e.what();
        } catch (const CudaError& e) {
          if (e.sticky()) throw;
          row.seconds.clear();
          row.status = "error";
          row.reason = e.what();
        }
        points.push_back(row);
      }
    }
  }
};

}  // namespace

namespace {
/// A finding's extras from its replicates: the standard error at the top (as before
/// replicates), the replicates' summary under "replicates".
json replicates_extra(const confidence::ReplicateSummary& rs) {
  return {{"standard_error", rs.standard_error}, {"replicates", confidence::to_json(rs)}};
}
/// Every replicate's samples in one summary (the spread a reader sees beside the value).
stats::Summary pooled_summary(const std::vector<std::vector<double>>& replicates) {
  std::vector<double> pooled;
  for (const auto& x : replicates) pooled.insert(pooled.end(), x.begin(), x.end());
  return stats::summarize(pooled);
}
}  // namespace

namespace {
/// Per (direction, memory, method): each replicate's samples at the largest size (bandwidth,
/// GB/s) or at the smallest (latency, us). Results written before replicates existed hold one
/// replicate (0) per row.
struct SizedSamples {
  std::uint64_t bytes = 0;
  std::map<int, std::vector<double>> replicates;
};
using SamplesByPath = std::map<std::string, SizedSamples>;

std::vector<std::vector<double>> replicates_of(const SizedSamples& s) {
  std::vector<std::vector<double>> v;
  for (const auto& [rep, samples] : s.replicates) v.push_back(samples);
  return v;
}

/// link.host.<path>.bandwidth at each path's largest size; returns each path's summary.
std::map<std::string, confidence::ReplicateSummary> add_bandwidth_findings(
    ExperimentResult& r, const SamplesByPath& largest) {
  std::map<std::string, confidence::ReplicateSummary> bandwidth;
  for (const auto& [key, v] : largest) {
    const auto all = replicates_of(v);
    const auto rs = confidence::summarize_replicate_samples(all);
    bandwidth[key] = rs;
    const auto sum = pooled_summary(all);
    Finding f{"link.host." + key + ".bandwidth",
              rs.value,
              "GB/s",
              rs.precision,
              "median over " + std::to_string(rs.replicates) +
                  " independent replicates (fresh buffers) of the median over repetitions of "
                  "bytes / time of one verified copy of " +
                  units::format_bytes(v.bytes),
              replicates_extra(rs)};
    f.extra["bytes"] = v.bytes;
    f.extra["spread"] = 1.4826 * sum.mad;
    f.extra["p5_gb_s"] = sum.p5;
    f.extra["p95_gb_s"] = sum.p95;
    r.findings.push_back(f);
  }
  return bandwidth;
}

/// link.host.<path>.latency at each path's smallest size (none where it measured one size).
void add_latency_findings(ExperimentResult& r, const SamplesByPath& smallest,
                          const SamplesByPath& largest) {
  for (const auto& [key, v] : smallest) {
    if (v.bytes == largest.at(key).bytes) continue;  // one size only: no latency point
    const auto all = replicates_of(v);
    const auto rs = confidence::summarize_replicate_samples(all);
    Finding f{"link.host." + key + ".latency",
              rs.value,
              "us",
              rs.precision,
              "median over " + std::to_string(rs.replicates) +
                  " independent replicates of the median over repetitions of the time of one "
                  "verified copy of " +
                  units::format_bytes(v.bytes) + " (launch or call included)",
              replicates_extra(rs)};
    f.extra["bytes"] = v.bytes;
    f.extra["spread"] = 1.4826 * pooled_summary(all).mad;
    r.findings.push_back(f);
  }
}

/// gpuprobe's best pinned path against the driver's cudaMemcpy, each direction: the ratio is
/// formed within each replicate (the two copies measured minutes apart would drift apart), and
/// its confidence comes from the spread of those ratios.
void add_best_over_memcpy_findings(
    ExperimentResult& r, const std::map<std::string, confidence::ReplicateSummary>& bandwidth,
    const SamplesByPath& largest) {
  for (const std::string dir : {"h2d", "d2h"}) {
    const std::string ref = dir + ".pinned.cuda_memcpy";
    if (!bandwidth.count(ref)) continue;
    std::string best;
    for (const std::string m : {"copy_engine", "sm_kernel"}) {
      const std::string k = dir + ".pinned." + m;
      if (bandwidth.count(k) && (best.empty() || bandwidth.at(k).value > bandwidth.at(best).value))
        best = k;
    }
    if (best.empty() || bandwidth.at(ref).value <= 0) continue;
    std::vector<double> ratios, ratio_ses;
    const auto& b = largest.at(best).replicates;
    const auto& c = largest.at(ref).replicates;
    for (const auto& [rep, samples] : b) {
      if (!c.count(rep)) continue;
      const double mb = stats::median(samples), mc = stats::median(c.at(rep));
      if (mc <= 0 || mb <= 0) continue;
      ratios.push_back(mb / mc);
      ratio_ses.push_back(mb / mc *
                          std::hypot(confidence::median_standard_error(samples) / mb,
                                     confidence::median_standard_error(c.at(rep)) / mc));
    }
    if (ratios.empty()) continue;
    auto rs = confidence::summarize_replicates(ratios, ratio_ses);
    const bool single = ratios.size() == 1;
    const double ratio = single ? bandwidth.at(best).value / bandwidth.at(ref).value : rs.value;
    const double conf =
        single ? confidence::combine({bandwidth.at(best).precision, bandwidth.at(ref).precision})
               : rs.precision;
    Finding f{"link.host." + dir + ".best_over_cuda_memcpy",
              ratio,
              "ratio",
              conf,
              "largest-size bandwidth of the faster of copy engine (cudaMemcpyAsync) and SM "
              "kernel over pinned memory / that of cudaMemcpy, formed within each replicate; "
              "median over replicates",
              replicates_extra(rs)};
    f.extra["best_method"] = best;
    f.extra["best_gb_s"] = bandwidth.at(best).value;
    f.extra["cuda_memcpy_gb_s"] = bandwidth.at(ref).value;
    r.findings.push_back(f);
  }
}

/// link.host.pinned.sm_load_latency from the dependent chase through pinned host memory.
void add_host_chase_finding(ExperimentResult& r, const std::optional<HostChase>& chase) {
  if (!chase) return;
  const auto& ns = chase->ns_per_load;
  const auto& cyc = chase->cycles_per_load;
  // Results written before replicates existed hold one chase.
  std::vector<std::vector<double>> reps;
  if (chase->replicates)
    for (const auto& x : *chase->replicates) reps.push_back(x.ns_per_load);
  if (reps.empty()) reps.push_back(ns);
  if (!ns.empty()) {
    const auto rs = confidence::summarize_replicate_samples(reps);
    Finding f{"link.host.pinned.sm_load_latency",
              rs.value,
              "ns",
              rs.precision,
              "one thread's dependent ld.global.cv chain through pinned host memory (nodes 4 "
              "KiB apart): %globaltimer ns per load, median over replicates (each its own "
              "pinned chain) of the median over repetitions",
              replicates_extra(rs)};
    f.extra["cycles"] = stats::median_or_zero(cyc);
    f.extra["spread"] = 1.4826 * stats::summarize(ns).mad;
    r.findings.push_back(f);
  }
}
}  // namespace

void analyze_link_host(ExperimentResult& r) {
  const auto samples = samples_as<HostSamples>(r);
  r.findings.clear();
  r.curves.clear();
  Curve table{"table",
              {"replicate", "direction", "memory", "method", "bytes", "median_us", "gb_s",
               "p5_gb_s", "p95_gb_s", "repetitions"},
              {},
              // One chart per direction, a line per memory kind and method (the best replicate).
              chart_hints("host link bandwidth against transfer size (best replicate)", "bytes",
                          "bytes", "gb_s", "GB/s", true)
                  .by({"memory", "method"})
                  .best("max")
                  .split_by({"direction"})};
  std::map<std::string, SizedSamples> largest, smallest;
  json failing = json::array();
  for (const auto& p : samples.points) {
    if (p.status != "passed") {
      failing.push_back(p);
      continue;
    }
    const double bytes = static_cast<double>(p.bytes);
    const auto& seconds = p.seconds;
    if (seconds.empty()) continue;
    const int rep = p.replicate.value_or(0);
    std::vector<double> gb_s, us;
    for (double s : seconds) {
      gb_s.push_back(s > 0 ? bytes / s / 1e9 : 0.0);
      us.push_back(s * 1e6);
    }
    const auto sum = stats::summarize(gb_s);
    const std::string key = p.direction + "." + p.memory + "." + p.method;
    table.rows.push_back({rep, p.direction, p.memory, p.method, p.bytes,
                          stats::median(seconds) * 1e6, sum.median, sum.p5, sum.p95, sum.n});
    const auto b = p.bytes;
    for (auto* m : {&largest, &smallest}) {
      SizedSamples& at = (*m)[key];
      const bool better = at.replicates.empty() || (m == &largest ? b > at.bytes : b < at.bytes);
      if (better) at = SizedSamples{b, {}};
      if (better || b == at.bytes) at.replicates[rep] = m == &largest ? gb_s : us;
    }
  }
  r.curves.push_back(table);
  const auto bandwidth = add_bandwidth_findings(r, largest);
  add_latency_findings(r, smallest, largest);
  add_best_over_memcpy_findings(r, bandwidth, largest);
  add_host_chase_finding(r, samples.host_chase);
  json bandwidth_gb_s = json::object();
  for (const auto& [key, v] : bandwidth) bandwidth_gb_s[key] = v.value;
  r.statistics = {{"bandwidth_gb_s", bandwidth_gb_s}, {"points_failing_verification", failing}};
}

namespace link_registration {
std::unique_ptr<Experiment> make_link_host() { return std::make_unique<LinkHost>(); }
}  // namespace link_registration

}  // namespace gpuprobe::probes
