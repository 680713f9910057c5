#pragma once
// The adaptive sweep over a curve's x (working set, footprint): it calls back into a
// measurement until analysis::find_levels has what it needs, so it lives with the measuring;
// analysis/levels.hpp judges the points it returns.
#include <functional>
#include <vector>

#include "analysis/levels.hpp"

namespace gpuprobe::measure {

/// Measures x, returns the point. May throw; the exception propagates.
using MeasureFn = std::function<analysis::CurvePoint(double x)>;

/// Adaptive sweep: coarse log-spaced points over [x_min, x_max], then bisection (in log x) of
/// every transition until it is bracketed to `resolution`, then points inside plateaus whose
/// level rests on fewer than `min_level_points`. Returns all points, sorted by x.
std::vector<analysis::CurvePoint> adaptive_sweep(const MeasureFn& measure,
                                                 const analysis::SweepOptions& sweep,
                                                 const analysis::SegmentOptions& segment = {});

}  // namespace gpuprobe::measure
