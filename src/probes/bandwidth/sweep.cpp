// bandwidth.sweep: read bandwidth against working set in the L1 and L2 regimes; plateaus and
// capacities from the latency sweep's change-point analysis.
#include "core/confidence.hpp"
#include "core/finding_names.hpp"
#include "core/samples.hpp"
#include "measure/adaptive_sweep.hpp"
#include "probes/bandwidth/sweep_rig.hpp"

namespace gpuprobe::probes::bandwidth_rig {
namespace {

class BandwidthSweep : public RigExperiment {
 public:
  std::string id() const override { return "bandwidth.sweep"; }
  int samples_version() const override { return SweepSamples::kVersion; }
  std::vector<std::string> produces() const override {
    return {finding::kL1ReadBandwidth, finding::kL2ReadBandwidth, finding::kDramReadBandwidthSweep,
            "bandwidth.*"};
  }
  std::string description() const override {
    return "read bandwidth against working set, log-spaced 16 KiB per SM .. 4 x L2 and refined at "
           "the knees, in two regimes: each SM reading its own slice (ld.global.ca, B/clk/SM) "
           "and all SMs reading one region (ld.global.cg, GB/s); plateaus (L1, L2, DRAM) and "
           "capacities from the latency sweep's change-point analysis; every point is repeated "
           "to a spread target and verified";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(int_axis("l1_regime_working_set_bytes_per_sm", {}, "B",
                           "each SM reads its own slice: 16 KiB .. 4 x L2 / SMs, 3 per octave, "
                           "refined at the knees")),
            fixed(int_axis("l2_regime_working_set_bytes", {}, "B",
                           "all SMs read one region: 16 KiB x SMs .. 4 x L2, 3 per octave, "
                           "refined at the knees")),
            fixed(int_axis("load_bytes", {16}, "B",
                           "16-B loads, 2048 threads per SM, ~1 ms timed per launch"))};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& d = ctx.device.info();
    Rig rig(ctx, [&](std::uint32_t nsmid) { return data_bytes(d, nsmid); });
    const double sms = d.sm_count;
    const double top = 4.0 * static_cast<double>(d.l2_bytes);
    json l1_points = json::array(), l2_points = json::array();

    analysis::SweepOptions s1;
    s1.x_min = static_cast<double>(kL1RegimeMin);
    s1.x_max = static_cast<double>(align_down(top / sms, kSliceAlign));
    s1.coarse_per_octave = kCoarsePerOctave;
    s1.resolution = 0.03;
    s1.max_points = kMaxPointsPerRegime;
    s1.align = static_cast<double>(kSliceAlign);
    // One regime: the adaptive sweep over `so`, every point measured by `point` kept in `out`.
    auto sweep = [&](const analysis::SweepOptions& so, auto point, json& out) {
      measure::adaptive_sweep(
          [&](double x) {
            json p = point(static_cast<std::uint64_t>(x));
            const auto m = p.get<RigPoint>().measurement.value_or(RigMeasurement{});
            out.push_back(std::move(p));
            return analysis::CurvePoint{x, m.median, m.mad.value_or(0.0)};
          },
          so);
    };
    sweep(
        s1, [&](std::uint64_t w) { return rig.slices_point(w); }, l1_points);

    analysis::SweepOptions s2 = s1;
    s2.x_min = static_cast<double>(align_down(kL1RegimeMin * sms, kRegionAlign));
    s2.x_max = static_cast<double>(align_down(top, kRegionAlign));
    s2.align = static_cast<double>(kRegionAlign);
    sweep(
        s2, [&](std::uint64_t w) { return rig.shared_point(w); }, l2_points);

    // Written whole (the Rig's every field), in working-set order.
    const auto typed_l1 = l1_points.get<std::vector<RigPoint>>();
    const auto typed_l2 = l2_points.get<std::vector<RigPoint>>();
    json a = json::array(), b = json::array();
    for (std::size_t i : working_set_order(typed_l1)) a.push_back(l1_points[i]);
    for (std::size_t i : working_set_order(typed_l2)) b.push_back(l2_points[i]);
    r.parameters = {
        {"sm_count", d.sm_count},
        {"l2_bytes_reported", d.l2_bytes},
        {"threads_per_block", bws::kThreads},
        {"nsmid", rig.nsmid()},
        {"l1_regime",
         {{"load", "ld.global.ca.v4.u32 (16 B, L1-allocating)"},
          {"blocks_per_sm", rig.occupancy(0)},
          {"shared_memory_carveout_preference", "0 % (largest L1), kernel attribute"},
          {"layout",
           "SM s reads slice s (W bytes per SM), split among its blocks; "
           "one untimed pass per launch warms the L1"},
          {"value",
           "median over SMs of bytes / (SM's last block end - first block "
           "start) in %clock64 cycles"}}},
        {"l2_regime",
         {{"load", "ld.global.cg.v4.u32 (16 B, L2 only)"},
          {"blocks_per_sm", rig.occupancy(1)},
          {"layout", "the grid reads one region of W bytes per pass, grid-stride"},
          {"value", "bytes / (last block end - first block start) in %globaltimer ns"}}},
        {"points_per_octave_coarse", kCoarsePerOctave},
        {"knee_resolution", s1.resolution},
        {"target_timed_ns_per_launch", kTargetTimedNs},
        {"verification",
         "every launch: each block's wrapping 32-bit sum of the words it read equals "
         "the host's sum of value_bits(i, seed) over the same words x passes"},
        {"gb", "1e9 bytes"},
        {"data_seed", rig.seed()}};
    r.samples = {{"l1_regime", {{"points", a}}}, {"l2_regime", {{"points", b}}}};
    r.statistics = {{"points_measured", a.size() + b.size()},
                    {"verified_launches", rig.verified_launches()}};
    r.curves.push_back(curve_table("l1_regime", sorted_points(typed_l1), true));
    r.curves.push_back(curve_table("l2_regime", sorted_points(typed_l2), false));
  }

  void analyze(ExperimentResult& r) const override {
    const double l2 = r.parameters.value("l2_bytes_reported", 0.0);
    auto s = samples_as<SweepSamples>(r);
    // ---- L1 regime: first plateau = L1, first transition = L1 capacity (bytes per SM).
    const auto a = sorted_points(std::move(s.l1_points));
    if (!a.empty()) {
      const auto L = analysis::find_levels(curve_of(a));
      r.statistics["l1_regime_levels"] = levels_json(L, "B/clk/SM");
      if (!L.plateaus.empty() && L.plateaus.front().first == 0) {
        const auto& p = L.plateaus.front();
        Finding f{finding::kL1ReadBandwidth.name,
                  p.level,
                  "B/clk/SM",
                  plateau_confidence(a, p),
                  "median of the first plateau of the L1 regime (each SM reading its own slice "
                  "with 16-B ld.global.ca, full occupancy, %clock64 per SM); " +
                      L.method,
                  json::object()};
        f.extra["gb_s_total"] = plateau_median(a, p, &RigPoint::gb_s);
        f.extra["percent_of_128_b_per_clk"] = p.level / kWavefrontBytes * 100.0;
        f.extra["slowest_sm_bytes_per_clk"] =
            plateau_median(a, p, &RigPoint::bytes_per_clk_per_sm_slowest_sm);
        f.extra["working_set_bytes_per_sm_range"] = {p.x_min, p.x_max};
        r.findings.push_back(f);
      }
      if (!L.transitions.empty() && L.plateaus.front().first == 0) {
        const auto& t = L.transitions.front();
        Finding f{"bandwidth.l1_capacity",
                  t.estimate,
                  "bytes",
                  knee_confidence(a, L, t),
                  "largest working set per SM on the L1 bandwidth plateau (knee bracketed by "
                  "bisection); " +
                      L.method,
                  json::object()};
        f.extra["bracket_bytes"] = {t.x_last_on, t.x_first_off};
        f.extra["per"] = "SM";
        f.extra["level_below_b_per_clk"] = t.level_below;
        f.extra["level_above_b_per_clk"] = t.level_above;
        r.findings.push_back(f);
      }
    }
    // ---- L2 regime: the highest plateau that starts inside the L2 = L2; the last knee within
    //      [L2/8, 2 x L2] after it = L2 capacity; the last plateau past the L2 = DRAM.
    const auto b = sorted_points(std::move(s.l2_points));
    if (b.empty()) return;
    const auto L = analysis::find_levels(curve_of(b));
    r.statistics["l2_regime_levels"] = levels_json(L, "GB/s");
    std::optional<std::size_t> l2p;
    for (std::size_t i = 0; i < L.plateaus.size(); ++i) {
      if (l2 > 0 && L.plateaus[i].x_min >= l2) continue;
      if (!l2p || L.plateaus[i].level > L.plateaus[*l2p].level) l2p = i;
    }
    if (l2p) {
      const auto& p = L.plateaus[*l2p];
      Finding f{finding::kL2ReadBandwidth.name,
                p.level,
                "GB/s",
                plateau_confidence(b, p),
                "median of the highest plateau below the L2 size in the L2 regime (all SMs "
                "reading one region with 16-B ld.global.cg, %globaltimer); " +
                    L.method,
                json::object()};
      f.extra["bytes_per_clk_per_sm"] = plateau_median(b, p, &RigPoint::bytes_per_clk_per_sm);
      f.extra["tb_per_s"] = p.level / 1e3;
      f.extra["working_set_bytes_range"] = {p.x_min, p.x_max};
      json by_ws = json::array();
      for (const auto& q : b) {
        const double w = static_cast<double>(q.working_set_bytes.value_or(0));
        if (w >= 4.0 * kMiB && (l2 <= 0 || w <= 1.5 * l2)) by_ws.push_back({w, primary_median(q)});
      }
      f.extra["gb_s_by_working_set_bytes"] = by_ws;
      r.findings.push_back(f);
    }
    std::vector<std::size_t> knees;
    for (std::size_t i = 0; i < L.transitions.size(); ++i) {
      const auto& t = L.transitions[i];
      if (l2p && t.below < *l2p) continue;
      if (l2 <= 0 || (t.estimate >= l2 / 8 && t.estimate <= 2 * l2)) knees.push_back(i);
    }
    if (!knees.empty()) {
      const auto& t = L.transitions[knees.back()];
      Finding f{"bandwidth.l2_capacity",
                t.estimate,
                "bytes",
                knee_confidence(b, L, t),
                "largest working set on the last plateau before the DRAM level of the L2 regime "
                "(knee bracketed by bisection); " +
                    L.method,
                json::object()};
      f.extra["bracket_bytes"] = {t.x_last_on, t.x_first_off};
      f.extra["level_below_gb_s"] = t.level_below;
      f.extra["level_above_gb_s"] = t.level_above;
      if (knees.size() > 1) {
        json earlier = json::array();
        for (std::size_t k = 0; k + 1 < knees.size(); ++k) {
          const auto& e = L.transitions[knees[k]];
          earlier.push_back({{"last_on_bytes", e.x_last_on},
                             {"first_off_bytes", e.x_first_off},
                             {"level_below_gb_s", e.level_below},
                             {"level_above_gb_s", e.level_above},
                             {"confidence", e.confidence}});
        }
        f.extra["earlier_knees_inside_l2"] = earlier;
        f.extra["note"] =
            "bandwidth falls in steps before the L2 capacity (e.g. the far L2 "
            "partition): see earlier_knees_inside_l2";
      }
      r.findings.push_back(f);
    }
    // A DRAM level is claimed only from working sets of at least 8 x L2: below that, repeated
    // passes still hit the L2 often enough to read above the DRAM peak. The sweep stops at
    // 4 x L2, so DRAM bandwidth
    // is bandwidth.read's finding; the curve past L2 is kept in the samples.
    std::optional<analysis::Plateau> last;
    if (!L.plateaus.empty()) last = L.plateaus.back();
    if (last && l2 > 0 && last->x_min >= 8 * l2 && (!l2p || *l2p + 1 != L.plateaus.size())) {
      Finding f{finding::kDramReadBandwidthSweep.name,
                last->level,
                "GB/s",
                plateau_confidence(b, *last),
                "median of the last plateau (working sets of 8 x L2 and more) of the L2 regime; " +
                    L.method,
                json::object()};
      f.extra["working_set_bytes_range"] = {last->x_min, last->x_max};
      f.extra["bytes_per_clk_per_sm"] = plateau_median(b, *last, &RigPoint::bytes_per_clk_per_sm);
      r.findings.push_back(f);
    }
  }

 private:
  /// The L2 regime reads up to 4 x L2; the L1 regime up to 4 x L2 / SMs per slice, one slice
  /// per possible SM id.
  std::uint64_t data_bytes(const device::DeviceInfo& d, std::uint32_t nsmid) const override {
    const std::uint64_t sms = static_cast<std::uint64_t>(std::max(d.sm_count, 1));
    const std::uint64_t slice =
        align_down(4.0 * static_cast<double>(d.l2_bytes) / sms, kSliceAlign);
    return std::max<std::uint64_t>(4 * d.l2_bytes + 2 * kMiB, slice * nsmid) / (64 * kKiB) *
               (64 * kKiB) +
           64 * kKiB;
  }
};

}  // namespace

std::unique_ptr<Experiment> make_sweep_experiment() { return std::make_unique<BandwidthSweep>(); }

}  // namespace gpuprobe::probes::bandwidth_rig
