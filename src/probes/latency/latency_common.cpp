// The latency family's shared helpers (latency_common.hpp).
#include "probes/latency/latency_common.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "measure/adaptive_sweep.hpp"
#include "measure/chase_point.hpp"

namespace gpuprobe::probes::latency {

using device::LoadOp;
using nlohmann::json;

using measure::measure_chase;
using units::kKiB;
using units::kMiB;

std::uint64_t default_max_working_set(const device::Device& dev) { return 4 * dev.info().l2_bytes; }

json clock_for_ns(const std::vector<double>& measured, const device::Device& dev) {
  std::vector<double> valid;
  for (double c : measured)
    if (c > 0) valid.push_back(c);
  if (!valid.empty())
    return {{"sm_clock_mhz", stats::median(valid)},
            {"sm_clock_source", "clock64 cycles / %globaltimer ns during the chases"}};
  const auto reading = dev.read_clocks();
  if (reading.valid && reading.sm_mhz > 0)
    return {{"sm_clock_mhz", reading.sm_mhz}, {"sm_clock_source", "NVML current SM clock"}};
  return {{"sm_clock_mhz", dev.info().sm_clock_max_mhz},
          {"sm_clock_source", "device maximum SM clock (no reading available)"}};
}

double ns_of(double cycles, const json& parameters) {
  const double mhz = parameters.value("sm_clock_mhz", 0.0);
  return mhz > 0 ? cycles / mhz * 1e3 : 0.0;
}

Finding latency_finding(const std::string& name, double cycles, double confidence,
                        const std::string& method, const json& parameters) {
  Finding f{name, cycles, "cycles", confidence, method, json::object()};
  f.extra["value_ns"] = ns_of(cycles, parameters);
  return f;
}

double plateau_confidence(const analysis::Plateau& p) { return p.confidence; }

std::vector<analysis::CurvePoint> curve_of(const std::vector<ChaseSample>& points) {
  std::vector<analysis::CurvePoint> curve;
  for (const auto& p : points)
    curve.push_back({p.working_set_bytes, p.cycles_median, p.cycles_mad});
  return curve;
}

bool is_l1_knee(std::size_t i, const analysis::Transition& t, bool l1_possible, double l2) {
  return i == 0 && l1_possible && t.estimate < 4.0 * kMiB && (l2 <= 0 || t.estimate < l2 / 16);
}
bool is_l2_knee(const analysis::Transition& t, double l2) {
  return l2 <= 0 || (t.estimate >= l2 / 8 && t.estimate <= 2 * l2);
}
std::optional<std::size_t> near_partition_knee(const analysis::LevelAnalysis& levels,
                                               bool l1_possible, double l2) {
  std::vector<std::size_t> l2_knees;
  for (std::size_t i = 0; i < levels.transitions.size(); ++i) {
    const auto& t = levels.transitions[i];
    if (is_l1_knee(i, t, l1_possible, l2)) continue;
    if (is_l2_knee(t, l2)) l2_knees.push_back(i);
  }
  if (l2_knees.size() < 2) return std::nullopt;
  return l2_knees.front();
}

bool on_plateau(double cycles, const analysis::Plateau& p) {
  const analysis::SegmentOptions seg;
  return std::fabs(cycles - p.level) <=
         std::max(seg.rel_tolerance * p.level, seg.noise_k * p.noise);
}

Curve curve_table(const std::string& name, const std::vector<ChaseRow>& points,
                  const json& parameters) {
  Curve c{name,
          {"working_set_bytes", "cycles_median", "cycles_min", "cycles_p5", "cycles_p95",
           "cycles_mad", "n", "ns_median", "sm_clock_mhz_measured"},
          {}};
  for (const auto& p : points) {
    const auto& s = p.cycles_per_load;
    c.rows.push_back({p.working_set_bytes, s.median, s.required(s.min, "min"), s.p5_or_throw(),
                      s.p95_or_throw(), s.required(s.mad, "mad"),
                      static_cast<double>(s.required_n()), ns_of(s.median, parameters),
                      p.sm_clock_mhz_measured});
  }
  std::sort(c.rows.begin(), c.rows.end(), [](const auto& a, const auto& b) {
    return a[0].template get<double>() < b[0].template get<double>();
  });
  c.hints = chart_hints("latency against working set: " + name, "working_set_bytes", "bytes",
                        "cycles_median", "cycles per load", true)
                .marked();
  return c;
}

analysis::SweepOptions sweep_options(std::uint64_t lo, std::uint64_t hi, std::uint32_t align) {
  analysis::SweepOptions s;
  s.x_min = static_cast<double>(std::max<std::uint64_t>(lo, align));
  s.x_max = static_cast<double>(hi);
  s.coarse_per_octave = 2;
  s.resolution = 0.015;
  s.align = align;
  return s;
}

json sweep_points(Context& ctx, LoadOp op, int carveout, const analysis::SweepOptions& sweep,
                  std::vector<double>& clocks) {
  std::vector<measure::ChasePoint> measured;
  auto measure = [&](double x) {
    const auto p = measure_chase(ctx, op, static_cast<std::uint64_t>(x), carveout);
    measured.push_back(p);
    clocks.push_back(p.clock_mhz);
    return analysis::CurvePoint{static_cast<double>(p.working_set), p.cycles.summary.median,
                                p.cycles.summary.mad};
  };
  measure::adaptive_sweep(measure, sweep);
  std::sort(measured.begin(), measured.end(),
            [](const measure::ChasePoint& a, const measure::ChasePoint& b) {
              return static_cast<double>(a.working_set) < static_cast<double>(b.working_set);
            });
  json points = json::array();
  for (const auto& p : measured) points.push_back(to_json(p));
  return points;
}

void check_sizes(const device::Device& dev, const RunOptions& o) {
  if (o.node_stride < 8 || o.node_stride % 8 != 0 || o.node_stride > 4096)
    throw UsageError("node stride " + std::to_string(o.node_stride) +
                     " B is not allowed; use a multiple of 8 between 8 and 4096");
  const std::uint64_t hi = o.max_size ? o.max_size : default_max_working_set(dev);
  const std::uint64_t lo = o.min_size ? o.min_size : kKiB;
  if (lo < o.node_stride)
    throw UsageError("--min-size " + units::format_bytes(lo) + " is smaller than one node (" +
                     std::to_string(o.node_stride) + " B)");
  if (hi < lo)
    throw UsageError("--max-size " + units::format_bytes(hi) + " is smaller than --min-size " +
                     units::format_bytes(lo));
  const std::uint64_t free = dev.free_memory();
  // The chain, its successor table and the L2 flush buffer must fit.
  const std::uint64_t need = hi + hi / o.node_stride * 4 + 2 * dev.info().l2_bytes + (512 * kMiB);
  if (need > free)
    throw UsageError("working set " + units::format_bytes(hi) +
                     " does not fit in free GPU memory (" + units::format_bytes(free) +
                     " free); choose --max-size below " +
                     units::format_bytes(free > need - hi ? free - (need - hi) : 0));
}

}  // namespace gpuprobe::probes::latency
