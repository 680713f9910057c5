// link.peer: every ordered pair of GPUs of the node. Copy engine (cudaMemcpyPeerAsync) and SM
// kernels writing into / reading from the peer's memory, one way and both ways at once, the
// driver's cudaMemcpyPeer beside them, a dependent chase through the peer's memory, and NVML's
// topology label of the pair. Every destination is poisoned before and checked after each copy.
// No multicast object is ever created (see link.hpp).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/confidence.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "device/device_buffer.hpp"
#include "probes/link/link.hpp"
#include "probes/link/link_common.hpp"
#include "probes/link/link_kernels.hpp"
#include "probes/link/link_samples.hpp"
#include "probes/link/topology.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
using namespace link;

/// Large enough that a 400 GB/s link runs for over half a millisecond per copy.
constexpr std::uint64_t kDefaultPeerBytes = 256ull << 20;
constexpr std::uint32_t kChaseStride = 4096, kChaseNodes = 1024, kChaseSteps = 512;

/// The metrics of one ordered pair, in the order they are measured and printed.
const std::vector<std::string> kBandwidthMetrics = {"copy_engine",       "cuda_memcpy_peer",
                                                    "sm_write",          "sm_read",
                                                    "copy_engine_bidir", "sm_write_bidir"};

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::vector<std::vector<bool>> peer_access(int n) {
  std::vector<std::vector<bool>> access(n, std::vector<bool>(n, false));
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, a, b) == cudaSuccess) access[a][b] = can != 0;
      cudaGetLastError();
    }
  return access;
}

/// Makes `device` current for the scope, restoring the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    GP_CUDA_CHECK(cudaGetDevice(&previous_));
    GP_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

/// Per GPU: a source holding its pattern, a destination the peers write into, a mismatch
/// counter, a stream and events, all created on that GPU.
struct GpuSide {
  int ordinal = 0;
  int sm_count = 0;
  std::unique_ptr<PeerBuffer> src, dst, bad;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<Event> e0, e1;
};

std::uint32_t salt_of(int gpu) { return 0x5000u + static_cast<std::uint32_t>(gpu); }

/// The GPUs of the node as one run uses them: each one's side, the transfer size, and the
/// timed, checked copies and chases between them.
struct PeerRig {
  int n = 0;
  std::uint64_t bytes = 0;
  std::size_t words = 0;
  std::vector<std::vector<bool>> access;
  std::vector<std::string> bus_ids, names;
  std::vector<GpuSide> side;

  PeerRig(int gpus, std::uint64_t transfer_bytes)
      : n(gpus),
        bytes(transfer_bytes),
        words(transfer_bytes / 4),
        access(peer_access(gpus)),
        bus_ids(gpus),
        names(gpus),
        side(gpus) {
    for (int g = 0; g < n; ++g) {
      char bus[32] = {};
      GP_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), g));
      bus_ids[g] = bus;
      cudaDeviceProp prop{};
      GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, g));
      names[g] = prop.name;
      DeviceScope scope(g);
      side[g].ordinal = g;
      side[g].sm_count = prop.multiProcessorCount;
      side[g].src = std::make_unique<PeerBuffer>(g, bytes);
      side[g].dst = std::make_unique<PeerBuffer>(g, bytes);
      side[g].bad = std::make_unique<PeerBuffer>(g, sizeof(unsigned long long));
      side[g].stream = std::make_unique<Stream>();
      side[g].e0 = std::make_unique<Event>();
      side[g].e1 = std::make_unique<Event>();
      launch_fill(static_cast<std::uint32_t*>(side[g].src->get()), words, salt_of(g),
                  side[g].stream->get());
      GP_CUDA_CHECK(cudaStreamSynchronize(side[g].stream->get()));
      for (int p = 0; p < n; ++p) {
        if (p == g || !access[g][p]) continue;
        const cudaError_t rc = cudaDeviceEnablePeerAccess(p, 0);
        if (rc != cudaSuccess && rc != cudaErrorPeerAccessAlreadyEnabled) GP_CUDA_CHECK(rc);
        cudaGetLastError();
      }
    }
  }

  /// Poison and counter reset on the GPU's own (non-blocking) stream: the legacy stream a plain
  /// cudaMemset uses does not order it against the copies.
  void poison(int g) {
    DeviceScope scope(g);
    GP_CUDA_CHECK(cudaMemsetAsync(side[g].dst->get(), 0xff, bytes, side[g].stream->get()));
    GP_CUDA_CHECK(cudaStreamSynchronize(side[g].stream->get()));
  }
  /// Every word of `dst`'s destination holds `src_gpu`'s pattern (VerificationError if not).
  void verify(int dst, int src_gpu, const std::string& what) {
    DeviceScope scope(dst);
    auto* bad = static_cast<unsigned long long*>(side[dst].bad->get());
    GP_CUDA_CHECK(cudaMemsetAsync(bad, 0, sizeof(*bad), side[dst].stream->get()));
    launch_check(static_cast<const std::uint32_t*>(side[dst].dst->get()), words, salt_of(src_gpu),
                 bad, side[dst].stream->get());
    unsigned long long wrong = 0;
    GP_CUDA_CHECK(cudaMemcpyAsync(&wrong, bad, sizeof(wrong), cudaMemcpyDeviceToHost,
                                  side[dst].stream->get()));
    GP_CUDA_CHECK(cudaStreamSynchronize(side[dst].stream->get()));
    if (wrong)
      throw VerificationError("link.peer " + what + ": " + std::to_string(wrong) +
                              " wrong words on GPU " + std::to_string(dst));
  }
  CopyLaunch shape(int g) const { return CopyLaunch{side[g].sm_count * 4, 256, 4}; }

  /// cudaMemcpyPeer from a to b, host-timed until both GPUs are idle.
  double time_memcpy_peer(int a, int b) {
    DeviceScope scope(a);
    const auto t0 = std::chrono::steady_clock::now();
    GP_CUDA_CHECK(cudaMemcpyPeer(side[b].dst->get(), b, side[a].src->get(), a, bytes));
    // cudaMemcpyPeer may return before the copy ends (it is asynchronous with respect to
    // the host for device memory): the copy counts once both GPUs are idle.
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    {
      DeviceScope on_b(b);
      GP_CUDA_CHECK(cudaDeviceSynchronize());
    }
    return host_seconds_since(t0);
  }

  /// A copy engine or SM copy from a to b (both ways with "bidir"), timed by events on a's
  /// stream from a's first event to the end of the last copy.
  double time_async_copy(int a, int b, const std::string& metric) {
    const bool bidir = metric.find("bidir") != std::string::npos;
    auto& first = side[a];
    auto& second = side[b];
    {
      DeviceScope scope(a);
      GP_CUDA_CHECK(cudaEventRecord(first.e0->get(), first.stream->get()));
    }
    auto issue = [&](int from, int to) {
      DeviceScope scope(from);
      auto& sender = side[from];
      if (from != a) GP_CUDA_CHECK(cudaStreamWaitEvent(sender.stream->get(), first.e0->get(), 0));
      if (metric.rfind("copy_engine", 0) == 0) {
        GP_CUDA_CHECK(cudaMemcpyPeerAsync(side[to].dst->get(), to, sender.src->get(), from, bytes,
                                          sender.stream->get()));
      } else if (metric == "sm_read") {
        // `from` reads `to`'s source into its own destination: data moves to -> from.
        launch_sm_copy(side[to].src->get(), sender.dst->get(), bytes, shape(from),
                       sender.stream->get());
      } else {
        launch_sm_copy(sender.src->get(), side[to].dst->get(), bytes, shape(from),
                       sender.stream->get());
      }
    };
    issue(a, b);
    if (bidir) {
      issue(b, a);
      DeviceScope scope(b);
      GP_CUDA_CHECK(cudaEventRecord(second.e1->get(), second.stream->get()));
    }
    DeviceScope scope(a);
    if (bidir) GP_CUDA_CHECK(cudaStreamWaitEvent(first.stream->get(), second.e1->get(), 0));
    GP_CUDA_CHECK(cudaEventRecord(first.e1->get(), first.stream->get()));
    GP_CUDA_CHECK(cudaEventSynchronize(first.e1->get()));
    return elapsed_s(*first.e0, *first.e1);
  }

  /// One timed copy from a into b (or both ways), its destinations poisoned before and checked
  /// after; returns its seconds.
  double timed(int a, int b, const std::string& metric) {
    const bool bidir = metric.find("bidir") != std::string::npos;
    // The destinations this copy writes: b's (a's for sm_read, which pulls b's data to a).
    poison(metric == "sm_read" ? a : b);
    if (bidir) poison(a);
    const double seconds =
        metric == "cuda_memcpy_peer" ? time_memcpy_peer(a, b) : time_async_copy(a, b, metric);
    const std::string what = std::to_string(a) + "->" + std::to_string(b) + " " + metric;
    if (metric == "sm_read") {
      verify(a, b, what);
    } else {
      verify(b, a, what);
      if (bidir) verify(a, b, what);
    }
    return seconds;
  }

  /// Every bandwidth metric from a to b (both-ways ones once per pair), a failed check an error
  /// of that metric only.
  void measure_bandwidths(int a, int b, const ProtocolOptions& protocol,
                          std::vector<PeerTransfer>& pairs) {
    for (const auto& metric : kBandwidthMetrics) {
      const bool bidir = metric.find("bidir") != std::string::npos;
      if (bidir && (b < a || !access[b][a])) continue;  // both ways: once per pair
      PeerTransfer row;
      row.src = a;
      row.dst = b;
      row.metric = metric;
      row.bytes = bidir ? 2 * bytes : bytes;
      try {
        const auto m = repeat_until_stable([&](int) { return timed(a, b, metric); }, protocol);
        row.seconds = m.values;
        row.status = "passed";
      } catch (const VerificationError& e) {
        row.seconds.clear();
        row.status = "error";
        row.reason = e.what();
      }
      pairs.push_back(row);
    }
  }

  /// a's SM chases through b's memory: ns and cycles per dependent load.
  PeerChase chase_latency(int a, int b, std::uint64_t seed, const ProtocolOptions& protocol) {
    PeerBuffer mem(b, static_cast<std::size_t>(kChaseNodes) * kChaseStride);
    const auto base = reinterpret_cast<std::uint64_t>(mem.get());
    const auto order = cycle_order(kChaseNodes, seed + a * 131 + b);
    const auto image = chase_image(order, base, kChaseStride);
    {
      // From pageable memory cudaMemcpy may return before the DMA ends: wait for it.
      DeviceScope on_b(b);
      GP_CUDA_CHECK(cudaMemcpy(mem.get(), image.data(), image.size() * 8, cudaMemcpyDefault));
      GP_CUDA_CHECK(cudaDeviceSynchronize());
    }
    DeviceScope scope(a);
    PeerBuffer out(a, sizeof(ChaseOut));
    std::vector<double> cycles;
    auto once = [&](int rep) {
      const std::size_t k0 = static_cast<std::size_t>(rep + 64) * 257 % kChaseNodes;
      launch_remote_chase(
          reinterpret_cast<const std::uint64_t*>(base + std::uint64_t{order[k0]} * kChaseStride), 0,
          kChaseSteps, static_cast<ChaseOut*>(out.get()), side[a].stream->get());
      ChaseOut o{};
      GP_CUDA_CHECK(
          cudaMemcpyAsync(&o, out.get(), sizeof(o), cudaMemcpyDeviceToHost, side[a].stream->get()));
      GP_CUDA_CHECK(cudaStreamSynchronize(side[a].stream->get()));
      const std::uint64_t expected =
          base + std::uint64_t{order[(k0 + kChaseSteps) % kChaseNodes]} * kChaseStride;
      if (o.final_node != expected)
        throw VerificationError("link.peer chase " + std::to_string(a) + "->" + std::to_string(b) +
                                " ended on the wrong node");
      if (rep >= 0) cycles.push_back(static_cast<double>(o.cycles) / kChaseSteps);
      return static_cast<double>(o.ns) / kChaseSteps;
    };
    const auto m = repeat_until_stable(once, protocol);
    return PeerChase{a, b, m.values, cycles};
  }
};

/// How the copies and chases are made, for the record.
json peer_parameters(std::uint64_t bytes) {
  return {{"bytes", bytes},
          {"sm_copy",
           {{"blocks_per_sm", 4},
            {"threads_per_block", 256},
            {"sixteen_byte_words_in_flight_per_thread", 4}}},
          {"chase",
           {{"nodes", kChaseNodes},
            {"node_stride_bytes", kChaseStride},
            {"timed_steps", kChaseSteps},
            {"load", "ld.global.cv.u64"}}},
          {"multicast", "never created (no cuMulticastCreate); see docs/LINKS.md"}};
}

class LinkPeer : public Experiment {
 public:
  std::string id() const override { return "link.peer"; }
  int samples_version() const override { return PeerSamples::kVersion; }
  std::string description() const override {
    return "every ordered GPU pair: copy-engine and SM read/write bandwidth one way and both "
           "ways, cudaMemcpyPeer beside them, peer-memory chase latency, NVML topology "
           "(whole node; waived on one GPU or without peer access)";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(int_axis("bytes", {static_cast<std::int64_t>(kDefaultPeerBytes)}, "B",
                           "bytes per transfer")),
            fixed(string_axis("metric", kBandwidthMetrics, "copy paths measured per pair"))};
  }
  bool whole_node() const override { return true; }
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    if (auto why = waive_on_model(info, "needs CUDA GPUs: the modelled GPU has no peers"))
      return why;
    const int n = device_count();
    return peer_waiver(n, peer_access(n));
  }

  void run(Context& ctx, ExperimentResult& r) const override {
    const std::uint64_t bytes =
        ctx.options.array_bytes ? ctx.options.array_bytes / 16 * 16 : kDefaultPeerBytes;
    PeerRig rig(device_count(), bytes);
    const int n = rig.n;
    const auto& access = rig.access;
    const auto topology = nvml_topology(rig.bus_ids);
    PeerSamples samples;
    samples.gpus = n;
    samples.names = rig.names;
    samples.pci_bus_ids = rig.bus_ids;
    samples.access = access;
    samples.topology = topology;
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (a == b || !access[a][b]) continue;
        rig.measure_bandwidths(a, b, ctx.options.protocol, samples.pairs);
        samples.latency.push_back(rig.chase_latency(a, b, ctx.options.seed, ctx.options.protocol));
      }
    }
    r.parameters = peer_parameters(bytes);
    r.protocol["timer"] =
        "cudaEvent pair on the source GPU's stream (both ways: the peer's stream waits on the "
        "first event, the source's on the peer's last); host steady_clock around cudaMemcpyPeer; "
        "clock64 and %globaltimer in the chase";
    r.protocol["l2_flush"] = "none (256 MiB copies; the chase loads with .cv)";
    r.protocol["verification"] =
        "destination poisoned before every copy and checked word by word on its GPU";
    r.samples = samples;
  }

  void analyze(ExperimentResult& r) const override { analyze_link_peer(r); }
};

std::string pair_key(int a, int b) { return std::to_string(a) + "_" + std::to_string(b); }

}  // namespace

std::optional<std::string> peer_waiver(int gpus, const std::vector<std::vector<bool>>& access) {
  if (gpus < 2)
    return "needs two or more GPUs: this node has " + std::to_string(gpus) +
           " (no peer to measure)";
  for (int a = 0; a < gpus; ++a)
    for (int b = 0; b < gpus; ++b)
      if (a != b && a < static_cast<int>(access.size()) && b < static_cast<int>(access[a].size()) &&
          access[a][b])
        return std::nullopt;
  return "peer access is off between every pair of the " + std::to_string(gpus) +
         " GPUs (cudaDeviceCanAccessPeer = 0)";
}

const std::vector<std::pair<std::string, std::string>>& multicast_off_environment() {
  static const std::vector<std::pair<std::string, std::string>> env = {
      {"NCCL_NVLS_ENABLE", "0"},
      {"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"},
      {"NVSHMEM_DISABLE_NVLS", "1"}};
  return env;
}

void analyze_link_peer(ExperimentResult& r) {
  r.findings.clear();
  r.curves.clear();
  const auto samples = samples_as<PeerSamples>(r);
  const int n = samples.gpus;
  const auto& topology = samples.topology;
  auto topo = [&](int a, int b) {
    return topology.size() > static_cast<std::size_t>(a) &&
                   topology[a].size() > static_cast<std::size_t>(b)
               ? topology[a][b]
               : std::string("unknown");
  };
  auto empty_matrix = [&] {
    json m = json::array();
    for (int a = 0; a < n; ++a) m.push_back(json(std::vector<json>(n, nullptr)));
    return m;
  };
  json matrix = json::object();
  Curve table{"pairs",
              {"src", "dst", "topology", "metric", "gb_s", "p5_gb_s", "p95_gb_s", "repetitions"},
              {}};
  std::map<std::string, std::pair<double, std::vector<double>>> by;  // "a_b.metric"
  json failing = json::array();
  for (const auto& p : samples.pairs) {
    if (p.status != "passed") {
      failing.push_back(p);
      continue;
    }
    const int a = p.src, b = p.dst;
    const std::string& metric = p.metric;
    const double bytes = static_cast<double>(p.bytes);
    std::vector<double> gb_s;
    for (double s : p.seconds) gb_s.push_back(s > 0 ? bytes / s / 1e9 : 0);
    if (gb_s.empty()) continue;
    const auto sum = stats::summarize(gb_s);
    if (!matrix.contains(metric)) matrix[metric] = empty_matrix();
    matrix[metric][a][b] = sum.median;
    if (metric.find("bidir") != std::string::npos) matrix[metric][b][a] = sum.median;
    by[pair_key(a, b) + "." + metric] = {sum.median, gb_s};
    table.rows.push_back({a, b, topo(a, b), metric, sum.median, sum.p5, sum.p95, sum.n});
    r.findings.push_back({"link.peer." + pair_key(a, b) + "." + metric + ".bandwidth",
                          sum.median,
                          "GB/s",
                          confidence::precision(gb_s, sum.median),
                          "median over repetitions of bytes / time of one verified " +
                              units::format_bytes(static_cast<std::uint64_t>(bytes)) +
                              " transfer, GPU " + std::to_string(a) + " -> " + std::to_string(b),
                          {{"topology", topo(a, b)},
                           {"spread", 1.4826 * sum.mad},
                           {"p5_gb_s", sum.p5},
                           {"p95_gb_s", sum.p95},
                           {"standard_error", confidence::median_standard_error(gb_s)}}});
  }
  // The best path of a pair against the driver's cudaMemcpyPeer.
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      const std::string k = pair_key(a, b) + ".";
      if (!by.count(k + "cuda_memcpy_peer")) continue;
      std::string best;
      for (const std::string m : {"copy_engine", "sm_write", "sm_read"})
        if (by.count(k + m) && (best.empty() || by[k + m].first > by[k + best].first)) best = m;
      if (best.empty()) continue;
      const auto& ref = by[k + "cuda_memcpy_peer"];
      const auto& top = by[k + best];
      if (ref.first <= 0) continue;
      r.findings.push_back({"link.peer." + pair_key(a, b) + ".best_over_cuda_memcpy_peer",
                            top.first / ref.first,
                            "ratio",
                            confidence::combine({confidence::precision(top.second, top.first),
                                                 confidence::precision(ref.second, ref.first)}),
                            "one-way bandwidth of the fastest of copy engine, SM write and SM read "
                            "/ cudaMemcpyPeer in the same run",
                            {{"best_metric", best}, {"topology", topo(a, b)}}});
    }
  for (const auto& l : samples.latency) {
    const int a = l.src, b = l.dst;
    const auto& ns = l.ns_per_load;
    if (ns.empty()) continue;
    const double med = stats::median(ns);
    if (!matrix.contains("latency_ns")) matrix["latency_ns"] = empty_matrix();
    matrix["latency_ns"][a][b] = med;
    r.findings.push_back({"link.peer." + pair_key(a, b) + ".load_latency",
                          med,
                          "ns",
                          confidence::precision(ns, med),
                          "one thread on GPU " + std::to_string(a) +
                              ": dependent ld.global.cv chain through GPU " + std::to_string(b) +
                              "'s memory, %globaltimer ns per load, median over repetitions",
                          {{"topology", topo(a, b)},
                           {"spread", 1.4826 * stats::summarize(ns).mad},
                           {"cycles", stats::median_or_zero(l.cycles_per_load)},
                           {"standard_error", confidence::median_standard_error(ns)}}});
  }
  r.curves.push_back(table);
  r.statistics = {
      {"matrix", matrix}, {"topology", topology}, {"pairs_failing_verification", failing}};
  std::string text;
  for (const auto& [metric, m] : matrix.items()) text += peer_matrix_text(r.statistics, metric);
  r.statistics["matrix_text"] = text;
}

std::string peer_matrix_text(const json& statistics, const std::string& metric) {
  if (!statistics.contains("matrix") || !statistics["matrix"].contains(metric)) return "";
  const json& m = statistics["matrix"][metric];
  const json topology = statistics.value("topology", json::array());
  const std::size_t n = m.size();
  std::ostringstream out;
  out << "link.peer " << metric << (metric == "latency_ns" ? " (ns)" : " (GB/s)")
      << ", row = source GPU, column = destination; [topology]\n";
  char cell[64];
  out << "      ";
  for (std::size_t b = 0; b < n; ++b) {
    std::snprintf(cell, sizeof(cell), "%18s", ("GPU" + std::to_string(b)).c_str());
    out << cell;
  }
  out << "\n";
  for (std::size_t a = 0; a < n; ++a) {
    std::snprintf(cell, sizeof(cell), "GPU%-3zu", a);
    out << cell;
    for (std::size_t b = 0; b < n; ++b) {
      std::string t = a < topology.size() && b < topology[a].size() && topology[a][b].is_string()
                          ? topology[a][b].get<std::string>()
                          : "";
      if (t.size() > 6) t = t.substr(0, 6);
      if (a == b) {
        std::snprintf(cell, sizeof(cell), "%18s", "-");
      } else if (m[a][b].is_number()) {
        std::snprintf(cell, sizeof(cell), "%10.1f [%-5s]", m[a][b].get<double>(), t.c_str());
      } else {
        std::snprintf(cell, sizeof(cell), "%10s [%-5s]", "n/a", t.c_str());
      }
      out << cell;
    }
    out << "\n";
  }
  return out.str();
}

namespace link_registration {
std::unique_ptr<Experiment> make_link_host();
}

void register_link_experiments(Registry& registry) {
  registry.add(link_registration::make_link_host());
  registry.add(std::make_unique<LinkPeer>());
}

}  // namespace gpuprobe::probes
