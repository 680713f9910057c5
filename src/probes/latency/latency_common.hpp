#pragma once
// What the latency family's experiments share: the SM clock that turns cycles into ns, the
// sweep's knee naming, the plateau band, the curve table and the adaptive sweep of chases.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/levels.hpp"
#include "core/device.hpp"
#include "core/experiment.hpp"
#include "probes/latency/latency_samples.hpp"

namespace gpuprobe::probes::latency {

std::uint64_t default_max_working_set(const device::Device& dev);

/// The SM clock used to turn cycles into ns: measured in-kernel when possible, else NVML's
/// reading, else the device's maximum (each choice is recorded).
nlohmann::json clock_for_ns(const std::vector<double>& measured, const device::Device& dev);

/// Cycles in ns at the parameters' sm_clock_mhz (0 when no clock is recorded).
double ns_of(double cycles, const nlohmann::json& parameters);

Finding latency_finding(const std::string& name, double cycles, double confidence,
                        const std::string& method, const nlohmann::json& parameters);

/// A plateau's confidence is the level finder's (core/confidence.hpp: the precision of its level
/// times its separation from the neighbouring levels).
double plateau_confidence(const analysis::Plateau& p);

/// The level finder's curve from typed chase points (working set, median, MAD).
std::vector<analysis::CurvePoint> curve_of(const std::vector<ChaseSample>& points);

/// How analyze_sweep names knees: the first an L1 knee when it lies far below the reported L2
/// (the L2 size only as a prior), others L2 knees when within a factor of 8 of it.
bool is_l1_knee(std::size_t i, const analysis::Transition& t, bool l1_possible, double l2);
bool is_l2_knee(const analysis::Transition& t, double l2);
/// The L2 near-partition knee: the first of two or more L2 knees.
std::optional<std::size_t> near_partition_knee(const analysis::LevelAnalysis& levels,
                                               bool l1_possible, double l2);
/// Whether a point at `cycles` is on plateau `p`: the level finder's own band.
bool on_plateau(double cycles, const analysis::Plateau& p);

/// The table of a sweep's points, sorted by working set, charted as latency against it.
Curve curve_table(const std::string& name, const std::vector<ChaseRow>& points,
                  const nlohmann::json& parameters);

analysis::SweepOptions sweep_options(std::uint64_t lo, std::uint64_t hi, std::uint32_t align);

/// The adaptive sweep of chases with `op` at `carveout`: every point measured (sorted by working
/// set, each as measure::to_json writes it), each one's in-kernel SM clock appended to `clocks`.
nlohmann::json sweep_points(Context& ctx, device::LoadOp op, int carveout,
                            const analysis::SweepOptions& sweep, std::vector<double>& clocks);

/// The node stride and working-set range are usable and fit in free GPU memory (UsageError).
void check_sizes(const device::Device& dev, const RunOptions& o);

/// latency.chase (latency_chase.cpp).
std::unique_ptr<Experiment> make_latency_chase();

}  // namespace gpuprobe::probes::latency
