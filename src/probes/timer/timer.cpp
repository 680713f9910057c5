// timer.overhead: the cost and resolution of the GPU's timers (%clock, clock64, %globaltimer)
// and of CUDA events. It uses the CUDA runtime directly and is waived on a modelled GPU.
#include "probes/timer/timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "core/confidence.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "measure/cuda_event.hpp"
#include "measure/gpu.hpp"
#include "measure/replicates.hpp"
#include "probes/timer/timer_kernels.hpp"
#include "probes/timer/timer_samples.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
namespace timer_kernels = kernels;

using measure::CudaEvent;

// ---- timer.overhead ---------------------------------------------------------------------------

constexpr std::uint32_t kMaxSpinReads = 4u << 20;
/// How long a kernel holds the stream busy ahead of a queued event interval: several times
/// what the host takes to enqueue two events and two empty kernels (timer.event.empty_kernel's
/// idle-GPU figure, microseconds), so that the GPU reaches the first event
/// only after the second has been enqueued.
constexpr std::uint64_t kHoldNs = 50000;

template <std::size_t N>
void append(json& a, const std::uint32_t (&v)[N], std::size_t n = N) {
  for (std::size_t i = 0; i < std::min(n, N); ++i) a.push_back(v[i]);
}

std::uint64_t gcd_of_positive(const std::vector<double>& v) {
  std::uint64_t g = 0;
  for (double x : v)
    if (x > 0) g = std::gcd(g, static_cast<std::uint64_t>(x));
  return g;
}

double min_positive(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    if (x > 0 && (m == 0 || x < m)) m = x;
  return m;
}

/// Smallest gap between distinct values: the quantum the values come in.
double min_distinct_gap(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double gap = 0;
  for (std::size_t i = 1; i < v.size(); ++i) {
    const double d = v[i] - v[i - 1];
    if (d > 1e-6 && (gap == 0 || d < gap)) gap = d;
  }
  return gap;
}

/// Occurrences of `value` in `v`.
std::size_t count_of(const std::vector<double>& v, double value) {
  return static_cast<std::size_t>(std::count(v.begin(), v.end(), value));
}

/// Agreement of the smallest value: how many samples read exactly it (a minimum seen once
/// among many is weak evidence of what the operation costs).
double min_agreement(const std::vector<double>& v) {
  return confidence::agreement(count_of(v, *std::min_element(v.begin(), v.end())), v.size());
}

/// Agreement of a greatest common divisor: how many non-zero values are whole multiples of it.
double gcd_agreement(const std::vector<double>& v, double gcd) {
  std::size_t n = 0, k = 0;
  for (double x : v) {
    if (x <= 0) continue;
    ++n;
    if (gcd > 0 && std::fmod(x, gcd) == 0) ++k;
  }
  return confidence::agreement(k, n);
}

/// Agreement of a quantum: how many gaps between consecutive distinct values are whole
/// multiples of it (within 1 %).
double quantum_agreement(std::vector<double> v, double quantum) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::size_t n = 0, k = 0;
  for (std::size_t i = 1; i < v.size(); ++i) {
    const double q = (v[i] - v[i - 1]) / quantum;
    ++n;
    if (quantum > 0 && std::fabs(q - std::round(q)) <= 0.01) ++k;
  }
  return confidence::agreement(k, n);
}

/// `v` cut into consecutive blocks of `sizes` (the event replicates); one block when the sizes
/// do not add up to v (results written before the event samples came as replicates).
std::vector<std::vector<double>> split_blocks(const std::vector<double>& v,
                                              const std::vector<std::size_t>& sizes) {
  std::size_t total = 0;
  for (auto n : sizes) total += n;
  if (sizes.empty() || total != v.size()) return {v};
  std::vector<std::vector<double>> out;
  std::size_t at = 0;
  for (auto n : sizes) {
    out.emplace_back(v.begin() + static_cast<std::ptrdiff_t>(at),
                     v.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
  }
  return out;
}

/// What the host knows the probe kernel must have written; throws VerificationError otherwise.
void verify_probe(const kernels::TimerProbeOut& t, std::uint32_t max_spin_reads) {
  auto fail = [](const std::string& why) { throw VerificationError("timer.overhead: " + why); };
  for (int i = 1; i < kernels::kTimerStreamReads; ++i) {
    if (t.clock64_stream[i] < t.clock64_stream[i - 1])
      fail("clock64 went backwards within 32 consecutive reads (read " + std::to_string(i) + ")");
    if (t.clock32_stream[i] < t.clock32_stream[i - 1])
      fail("%clock went backwards within 32 consecutive reads (read " + std::to_string(i) + ")");
  }
  if (t.clock64_stream[0] != 0 || t.clock32_stream[0] != 0)
    fail("the first read of a stream is not the reference it is measured from");
  if (t.changes > static_cast<std::uint32_t>(kernels::kTimerMaxChanges))
    fail(std::to_string(t.changes) + " changes recorded, more than the spin keeps");
  // The spin ends when it has seen every change it keeps or read as often as it was allowed.
  if (t.changes != static_cast<std::uint32_t>(kernels::kTimerMaxChanges) &&
      t.spin_reads != max_spin_reads)
    fail("the spin stopped after " + std::to_string(t.spin_reads) + " reads and " +
         std::to_string(t.changes) + " changes, neither limit");
  if (t.spin_reads < t.changes) fail("fewer spin reads than changes seen");
  for (std::uint32_t i = 0; i < t.changes; ++i)
    if (t.change_ns[i] == 0) fail("a recorded %globaltimer change has size 0");
}

/// timer.overhead's samples, converted and checked whole: every array a finding reads beside
/// another is there when that one is (one line naming the array otherwise).
timer::TimerSamples typed_samples(const json& samples) {
  timer::TimerSamples s;
  try {
    s = samples.get<timer::TimerSamples>();
  } catch (const json::exception& e) {
    throw UsageError("timer.overhead: samples are not what this gpuprobe writes (" +
                     std::string(e.what()) + ")");
  }
  const auto need = [](const std::vector<double>& given, const char* name,
                       const std::vector<double>& needed, const char* needed_name) {
    if (!given.empty() && needed.empty())
      throw UsageError(std::string("timer.overhead: samples.") + name + " has values but " +
                       needed_name + " is empty");
  };
  need(s.clock64_pair, "clock64_pair", s.clock64_stream, "clock64_stream");
  need(s.clock32_pair, "clock32_pair", s.clock32_stream, "clock32_stream");
  need(s.event_one_empty_kernel_ns, "event_one_empty_kernel_ns", s.event_back_to_back_ns,
       "event_back_to_back_ns");
  need(s.event_one_empty_kernel_ns, "event_one_empty_kernel_ns", s.event_two_empty_kernels_ns,
       "event_two_empty_kernels_ns");
  need(s.event_one_empty_kernel_ns, "event_one_empty_kernel_ns", s.host_launch_and_sync_ns,
       "host_launch_and_sync_ns");
  if (s.change_ns.size() != s.change_cycles.size())
    throw UsageError("timer.overhead: samples.change_ns and change_cycles differ in length (" +
                     std::to_string(s.change_ns.size()) + " and " +
                     std::to_string(s.change_cycles.size()) + ")");
  return s;
}

/// Adds one finding to r.
void add(ExperimentResult& r, const std::string& name, double v, const std::string& unit,
         double conf, const std::string& method, json extra = json::object()) {
  r.findings.push_back(Finding{name, v, unit, conf, method, extra});
}

/// clock64's and %clock's overhead and resolution, and %globaltimer's read overhead.
void add_clock_findings(ExperimentResult& r, const timer::TimerSamples& s) {
  const auto& c64 = s.clock64_pair;
  const auto& c32 = s.clock32_pair;
  const auto& change_cycles = s.change_cycles;
  if (!c64.empty()) {
    const double stream = stats::median(s.clock64_stream) / (timer_kernels::kTimerStreamReads - 1);
    add(r, "timer.clock64.overhead", *std::min_element(c64.begin(), c64.end()), "cycles",
        min_agreement(c64), "smallest difference of two back-to-back clock64 reads",
        {{"median", stats::median(c64)}, {"cycles_per_read_in_a_stream", stream}});
    auto all = c64;
    for (double x : s.clock64_gap) all.push_back(x);
    for (double x : change_cycles) all.push_back(x);
    const double gcd = static_cast<double>(gcd_of_positive(all));
    add(r, "timer.clock64.resolution", gcd, "cycles", gcd_agreement(all, gcd),
        "greatest common divisor of every non-zero clock64 difference observed (back-to-back, "
        "around 0..31 dependent adds, between %globaltimer changes): the tick is at most this",
        {{"smallest_nonzero_difference", min_positive(all)}});
  }
  if (!c32.empty()) {
    const double stream = stats::median(s.clock32_stream) / (timer_kernels::kTimerStreamReads - 1);
    add(r, "timer.clock.overhead", *std::min_element(c32.begin(), c32.end()), "cycles",
        min_agreement(c32), "smallest difference of two back-to-back %clock reads",
        {{"median", stats::median(c32)}, {"cycles_per_read_in_a_stream", stream}});
    auto all = c32;
    for (double x : s.clock32_gap) all.push_back(x);
    const double gcd = static_cast<double>(gcd_of_positive(all));
    add(r, "timer.clock.resolution", gcd, "cycles", gcd_agreement(all, gcd),
        "greatest common divisor of every non-zero %clock difference observed (back-to-back "
        "and around 0..31 dependent adds)",
        {{"smallest_nonzero_difference", min_positive(all)}});
  }
  const auto& gread = s.globaltimer_read;
  if (!gread.empty() && !c64.empty())
    add(r, "timer.globaltimer.overhead",
        *std::min_element(gread.begin(), gread.end()) - *std::min_element(c64.begin(), c64.end()),
        "cycles", confidence::combine({min_agreement(gread), min_agreement(c64)}),
        "smallest clock64 span around one %globaltimer read whose value is used, minus the "
        "clock64 back-to-back overhead");
}

/// %globaltimer's resolution and update period, from the changes seen while spinning on it.
void add_globaltimer_findings(ExperimentResult& r, const timer::TimerSamples& s) {
  const auto& change_ns = s.change_ns;
  const auto& change_cycles = s.change_cycles;
  if (!change_ns.empty()) {
    const double sum_cycles = std::accumulate(change_cycles.begin(), change_cycles.end(), 0.0);
    const double sum_ns = std::accumulate(change_ns.begin(), change_ns.end(), 0.0);
    const double mhz = sum_ns > 0 ? sum_cycles / sum_ns * 1e3 : 0;
    std::map<std::uint64_t, int> sizes;
    for (double x : change_ns) ++sizes[static_cast<std::uint64_t>(x)];
    json common = json::array();
    for (const auto& [ns, count] : sizes)
      common.push_back({{"increment_ns", ns}, {"count", count}});
    if (common.size() > 8) common.erase(common.begin() + 8, common.end());
    add(r, "timer.globaltimer.resolution", min_positive(change_ns), "ns",
        confidence::agreement(count_of(change_ns, min_positive(change_ns)), change_ns.size()),
        "smallest non-zero change of %globaltimer seen while spinning on it",
        {{"median_increment_ns", stats::median(change_ns)},
         {"increments", common},
         {"changes_observed", change_ns.size()},
         {"back_to_back_smallest_nonzero_ns", min_positive(s.globaltimer_pair)}});
    // Intervals between observed changes are quantised to whole spin iterations, and when
    // the spin reads no faster than the timer updates (about one read per change) they only
    // bound the period from above. Every observed increment is a whole number of updates, so
    // when the timer tracks real time (the SM clock computed from it is plausible) the
    // update period is the greatest common divisor of the increments.
    const double spins = std::accumulate(s.spin_reads.begin(), s.spin_reads.end(), 0.0);
    const double mean_cycles = sum_cycles / static_cast<double>(change_cycles.size());
    const double cycles_per_read = spins > 0 ? sum_cycles / spins : 0.0;
    const double reads_per_change = cycles_per_read > 0 ? mean_cycles / cycles_per_read : 0.0;
    const bool resolved = reads_per_change >= 2.0;
    const double gcd_ns = static_cast<double>(gcd_of_positive(change_ns));
    std::vector<double> interval_ns;
    for (double c : change_cycles) interval_ns.push_back(mhz > 0 ? c / mhz * 1e3 : 0.0);
    // Resolved: how precisely the intervals pin their centre; bounded only: how many
    // increments are exactly one update of the claimed period.
    const double period = resolved ? mean_cycles / mhz * 1e3 : gcd_ns;
    if (mhz > 0)
      add(r, "timer.globaltimer.update_period", period, "ns",
          resolved ? confidence::precision(interval_ns, period)
                   : confidence::agreement(count_of(change_ns, gcd_ns), change_ns.size()),
          resolved ? "mean clock64 cycles between %globaltimer changes seen in a spin that reads "
                     "at least twice per change / SM clock (clock64 cycles over %globaltimer ns)"
                   : "the spin reads about once per change, so intervals only bound the period; "
                     "value = greatest common divisor of the observed increments (each a whole "
                     "number of updates of a timer that tracks real time)",
          {{"spin_resolves_updates", resolved},
           {"mean_interval_between_changes_ns", mean_cycles / mhz * 1e3},
           {"mean_cycles_between_changes", mean_cycles},
           {"spin_read_interval_ns", cycles_per_read / mhz * 1e3},
           {"reads_per_change", reads_per_change},
           {"increment_gcd_ns", gcd_ns},
           {"mean_increment_ns", sum_ns / static_cast<double>(change_ns.size())},
           {"sm_clock_mhz_from_globaltimer", mhz}});
  }
}

/// CUDA events' resolution, back-to-back interval and the interval around an empty kernel.
void add_event_findings(ExperimentResult& r, const timer::TimerSamples& s) {
  const auto& b2b = s.event_back_to_back_ns;
  const auto& one = s.event_one_empty_kernel_ns;
  const auto& two = s.event_two_empty_kernels_ns;
  if (!one.empty()) {
    auto all = b2b;
    all.insert(all.end(), one.begin(), one.end());
    all.insert(all.end(), two.begin(), two.end());
    const double quantum = min_distinct_gap(all);
    add(r, "timer.event.resolution", quantum, "ns", quantum_agreement(all, quantum),
        "smallest gap between distinct cudaEventElapsedTime values over all event samples",
        {{"smallest_nonzero_elapsed_ns", min_positive(all)}});
    const auto& sizes = s.event_replicate_sizes;
    // Every event interval is read in ticks of the event timer: its value is known to within
    // half a tick, whatever the samples agree on.
    const auto ticked = [&](const confidence::ReplicateSummary& x) {
      return confidence::at_resolution(x, quantum);
    };
    const auto rb = ticked(confidence::summarize_replicate_samples(split_blocks(b2b, sizes)));
    // Two events recorded on an idle GPU time the host's second record call (the GPU reaches
    // the first at once), which moves from run to run while every block inside a run reads one
    // tick. Queued behind a kernel that holds the stream, the
    // two events are the GPU's own interval: reported when it is at least a tick.
    const auto& qb = s.event_queued_back_to_back_ns;
    const bool queued_b2b =
        qb.size() >= static_cast<std::size_t>(kMinRepetitions) && stats::median(qb) > 0;
    if (queued_b2b) {
      const auto& qs = s.event_queued_back_to_back_replicate_sizes;
      const auto rq = ticked(confidence::summarize_replicate_samples(split_blocks(qb, qs)));
      add(r, "timer.event.back_to_back", rq.value, "ns", rq.precision,
          "cudaEventElapsedTime of two events recorded back to back behind a kernel that "
          "holds the stream busy (the GPU's interval, not the host's record call): median "
          "over replicates of the median over samples; standard error at least a tick / "
          "sqrt(12)",
          {{"min_ns", *std::min_element(qb.begin(), qb.end())},
           {"idle_gpu_median_ns", rb.value},
           {"standard_error", rq.standard_error},
           {"replicates", confidence::to_json(rq)}});
    } else {
      json eb = {{"min_ns", *std::min_element(b2b.begin(), b2b.end())},
                 {"standard_error", rb.standard_error},
                 {"replicates", confidence::to_json(rb)}};
      if (!qb.empty()) eb["queued_median_ns"] = stats::median(qb);
      add(r, "timer.event.back_to_back", rb.value, "ns", rb.precision,
          "cudaEventElapsedTime of two events recorded back to back on an idle GPU (the "
          "host's second record call included; queued behind a busy stream the interval is "
          "below one tick): median over replicates (blocks of samples apart in time, each "
          "its own events) of the median over samples; standard error at least a tick / "
          "sqrt(12)",
          eb);
    }
    const auto& q2 = s.event_queued_two_empty_kernels_ns;
    const double host_sync = stats::median(s.host_launch_and_sync_ns);
    if (s.event_queued_one_empty_kernel_ns) {
      // The GPU's own interval (stream held busy while the host enqueued it).
      const auto& q1 = *s.event_queued_one_empty_kernel_ns;
      const auto& qs = s.event_queued_replicate_sizes;
      if (q1.size() >= static_cast<std::size_t>(kMinRepetitions)) {
        const auto rq = ticked(confidence::summarize_replicate_samples(split_blocks(q1, qs)));
        json ek = {
            {"min_ns", *std::min_element(q1.begin(), q1.end())},
            {"second_kernel_adds_ns", q2.empty() ? 0.0 : stats::median(q2) - stats::median(q1)},
            {"idle_gpu_median_ns", stats::median(one)},
            {"host_launch_and_sync_median_ns", host_sync},
            {"samples_late", s.event_queued_late},
            {"standard_error", rq.standard_error},
            {"replicates", confidence::to_json(rq)}};
        add(r, "timer.event.empty_kernel", rq.value, "ns", rq.precision,
            "cudaEventElapsedTime around one empty <<<1,1>>> kernel enqueued behind a kernel "
            "that holds the stream busy (the GPU's interval, not the host's launch call): "
            "median over replicates (blocks of samples apart in time, each its own events) "
            "of the median over samples",
            ek);
      } else {
        r.statistics["not_reported"] = {
            {"findings", "timer.event.empty_kernel"},
            {"why", std::to_string(q1.size()) +
                        " queued samples: the GPU reached the first event before the host had "
                        "enqueued the second in the others"}};
      }
    } else {
      // Results written before the queued samples: the idle-GPU interval.
      const auto ro = ticked(confidence::summarize_replicate_samples(split_blocks(one, sizes)));
      json ek = {{"min_ns", *std::min_element(one.begin(), one.end())},
                 {"second_kernel_adds_ns", stats::median(two) - stats::median(one)},
                 {"host_launch_and_sync_median_ns", host_sync},
                 {"standard_error", ro.standard_error},
                 {"replicates", confidence::to_json(ro)}};
      add(r, "timer.event.empty_kernel", ro.value, "ns", ro.precision,
          "cudaEventElapsedTime around one empty <<<1,1>>> kernel on an idle GPU (the host's "
          "launch call included)",
          ek);
    }
  }
}

class TimerOverhead : public CudaRuntimeExperiment {
 public:
  std::string id() const override { return "timer.overhead"; }
  std::vector<std::string> produces() const override {
    return {"timer.clock64.*", "timer.clock.*", "timer.globaltimer.*", "timer.event.*"};
  }
  std::string description() const override {
    return "cost and resolution of %clock, clock64 and %globaltimer in a kernel, and of CUDA "
           "events around nothing and around an empty kernel";
  }
  std::vector<Axis> typed_axes() const override {
    return {int_axis("runs", {3}, "launches",
                     "launches of the in-kernel timer probe (its samples are pooled)", 1, 1000),
            int_axis("event_samples", {64}, "samples",
                     "CUDA-event samples of each kind (back to back, one and two empty kernels)", 3,
                     100000)};
  }
  void validate(const device::Device&, const RunOptions& o) const override {
    const auto axes = axis_values(o);
    for (const char* name : {"runs", "event_samples"})
      if (axes.ints(name).size() != 1)
        throw UsageError(std::string("--axis timer.overhead.") + name + " takes one value");
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    timer_kernels::DeviceArray<timer_kernels::TimerProbeOut> probe(1);
    json s = {{"clock64_pair", json::array()},     {"clock32_pair", json::array()},
              {"clock64_gap", json::array()},      {"clock32_gap", json::array()},
              {"clock64_stream", json::array()},   {"clock32_stream", json::array()},
              {"globaltimer_read", json::array()}, {"globaltimer_pair", json::array()},
              {"change_ns", json::array()},        {"change_cycles", json::array()},
              {"spin_reads", json::array()}};
    timer_kernels::launch_timer_probe(probe.get(), 1024, nullptr);  // warm-up (module load, caches)
    synchronize();
    const auto axes = axis_values(ctx.options);
    const auto runs = axes.int32s("runs").front();
    const auto event_samples = axes.int32s("event_samples").front();
    // The event samples come as replicates (contiguous blocks, each with its own events),
    // placed between the probe launches so that they lie apart in time. Events around a kernel
    // launched on an idle GPU time the host's launch call (the GPU reaches the first event at
    // once and then waits for the kernel to be submitted), which drifts from run to run by more
    // than the blocks of one run, a few ms apart, can see. So each sample is also taken
    // with the stream held busy by a kernel that spins for kHoldNs: the events and the kernel
    // are all enqueued before the GPU reaches them, and the interval is the GPU's own. A
    // queued sample counts only if the first event was still pending once the second had been
    // enqueued (cudaEventQuery); the idle-GPU figure stays, as an extra.
    const int blocks = std::clamp(event_samples / kMinRepetitions, 1, measure::kReplicates);
    json b2b = json::array(), one = json::array(), two = json::array(), host = json::array();
    json q_one = json::array(), q_two = json::array(), q_b2b = json::array();
    json block_sizes = json::array(), queued_sizes = json::array(),
         queued_b2b_sizes = json::array();
    std::size_t late = 0;
    timer_kernels::DeviceArray<std::uint64_t> held(1);
    // Whether `e` is still pending (the GPU has not reached it).
    auto pending = [](const CudaEvent& e) {
      const cudaError_t q = cudaEventQuery(e.get());
      if (q == cudaErrorNotReady) {
        (void)cudaGetLastError();  // not an error: clears it so that the next check sees none
        return true;
      }
      GP_CUDA_CHECK(q);
      return false;
    };
    // One queued interval around `kernels` empty kernels; false when the GPU got there first.
    auto queued = [&](CudaEvent& e0, CudaEvent& e1, int kernels, json& into) {
      timer_kernels::launch_hold(kHoldNs, held.get(), nullptr);
      e0.record();
      for (int k = 0; k < kernels; ++k) timer_kernels::launch_empty(nullptr);
      e1.record();
      const bool in_time = pending(e0);
      e1.synchronize();
      const std::uint64_t spun = held.to_host().front();
      if (spun < kHoldNs)
        throw VerificationError("timer.overhead: the holding kernel spun " + std::to_string(spun) +
                                " ns of " + std::to_string(kHoldNs));
      if (in_time) into.push_back(measure::elapsed_ns(e0, e1));
      return in_time;
    };
    auto event_block = [&](int j) {
      CudaEvent e0, e1;
      const int n = event_samples / blocks + (j < event_samples % blocks ? 1 : 0);
      timer_kernels::launch_empty(nullptr);
      synchronize();
      std::size_t queued_here = 0, queued_b2b_here = 0;
      for (int i = 0; i < n; ++i) {
        if (queued(e0, e1, 1, q_one))
          ++queued_here;
        else
          ++late;
        queued(e0, e1, 2, q_two);
        if (queued(e0, e1, 0, q_b2b)) ++queued_b2b_here;
        e0.record();
        e1.record();
        e1.synchronize();
        b2b.push_back(measure::elapsed_ns(e0, e1));
        e0.record();
        timer_kernels::launch_empty(nullptr);
        e1.record();
        e1.synchronize();
        one.push_back(measure::elapsed_ns(e0, e1));
        e0.record();
        timer_kernels::launch_empty(nullptr);
        timer_kernels::launch_empty(nullptr);
        e1.record();
        e1.synchronize();
        two.push_back(measure::elapsed_ns(e0, e1));
        const auto h0 = std::chrono::steady_clock::now();
        timer_kernels::launch_empty(nullptr);
        synchronize();
        host.push_back(
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - h0)
                .count());
      }
      block_sizes.push_back(n);
      queued_sizes.push_back(queued_here);
      queued_b2b_sizes.push_back(queued_b2b_here);
    };
    for (int j = 0; j < std::max(runs, blocks); ++j) {
      if (j < blocks) event_block(j);
      if (j >= runs) continue;
      timer_kernels::launch_timer_probe(probe.get(), kMaxSpinReads, nullptr);
      synchronize();
      const auto t = probe.to_host().front();
      verify_probe(t, kMaxSpinReads);
      append(s["clock64_pair"], t.clock64_pair);
      append(s["clock32_pair"], t.clock32_pair);
      append(s["clock64_gap"], t.clock64_gap);
      append(s["clock32_gap"], t.clock32_gap);
      // Span from the first to the last of 32 consecutive reads.
      s["clock64_stream"].push_back(t.clock64_stream[timer_kernels::kTimerStreamReads - 1]);
      s["clock32_stream"].push_back(t.clock32_stream[timer_kernels::kTimerStreamReads - 1]);
      append(s["globaltimer_read"], t.globaltimer_read);
      append(s["globaltimer_pair"], t.globaltimer_pair);
      // The first change of a spin ends a period that began before the spin: dropped.
      const std::size_t n = std::min<std::size_t>(t.changes, timer_kernels::kTimerMaxChanges);
      for (std::size_t i = 1; i < n; ++i) {
        s["change_ns"].push_back(t.change_ns[i]);
        s["change_cycles"].push_back(t.change_cycles[i]);
      }
      s["spin_reads"].push_back(t.spin_reads);
    }
    s["event_replicate_sizes"] = block_sizes;
    s["event_queued_one_empty_kernel_ns"] = q_one;
    s["event_queued_two_empty_kernels_ns"] = q_two;
    s["event_queued_replicate_sizes"] = queued_sizes;
    s["event_queued_late"] = late;
    s["event_queued_back_to_back_ns"] = q_b2b;
    s["event_queued_back_to_back_replicate_sizes"] = queued_b2b_sizes;
    s["event_back_to_back_ns"] = b2b;
    s["event_one_empty_kernel_ns"] = one;
    s["event_two_empty_kernels_ns"] = two;
    s["host_launch_and_sync_ns"] = host;
    r.parameters = {{"kernel",
                     "one thread; back-to-back pairs, reads around 0..31 dependent adds, "
                     "32 consecutive reads, and a spin on %globaltimer recording each "
                     "change (its size in ns and the clock64 cycles since the last)"},
                    {"runs", runs},
                    {"event_samples", event_samples},
                    {"event_hold_ns", kHoldNs},
                    {"event_replicates",
                     std::to_string(blocks) +
                         " contiguous blocks of the event samples, each with its own pair of "
                         "events, between the probe launches; the event findings: median of "
                         "the blocks' medians, confidence from the spread between them"},
                    {"gpu", to_json(gpu)}};
    r.samples = s;
  }
  int samples_version() const override { return timer::TimerSamples::kVersion; }
  void analyze(ExperimentResult& r) const override {
    const auto s = typed_samples(r.samples);
    add_clock_findings(r, s);
    add_globaltimer_findings(r, s);
    add_event_findings(r, s);
  }
};
}  // namespace

void register_timer_experiments(Registry& registry) {
  registry.add(std::make_unique<TimerOverhead>());
}

}  // namespace gpuprobe::probes
