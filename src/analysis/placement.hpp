#pragma once
// The L2 placement unit from phi by block size (cache.l2.mixture): how alike two sampled loads'
// fates are (near hit or not) by the smallest aligned block that holds both. Where the set
// index places whole blocks of some size, phi stays at its small-block level up to that size
// and falls past it.
#include <cstddef>
#include <vector>

namespace gpuprobe::analysis {

/// phi at one block size, with its standard error.
struct PhiLevel {
  double block_bytes = 0, phi = 0, se = 0;
};

/// One candidate unit's fit: phi = a up to the unit and a d^log2(b / unit) above it.
struct PlacementFit {
  std::size_t at = 0;  ///< index of the unit among the levels
  double chi2 = 0, a = 0, d = 1;
};

/// Every candidate unit (a level with at least two levels above it) fitted by weighted least
/// squares (weights 1 / se^2; d on a grid of 0.01 in 0 .. 1, a in closed form), in level order.
/// The unit is the candidate of least chi^2 over all levels at once: a single level's dip or
/// bump moves it less than a scan that stops at the first level significantly below the
/// smallest block's. Fewer than three levels: no candidates.
std::vector<PlacementFit> fit_placement_units(const std::vector<PhiLevel>& levels);

/// The best and the next best of fit_placement_units (by chi^2), and the chi^2 of phi constant
/// over every size (no unit); found false with fewer than two candidates (four levels). How
/// clearly the best unit wins: confidence::separation(sqrt(z2)), z2 the smaller of the next
/// best's and the constant's chi^2 less the best's (`z2()`).
struct PlacementUnit {
  bool found = false;
  std::vector<PlacementFit> fits;  ///< fit_placement_units(levels), in level order
  PlacementFit best, runner_up;
  double flat_chi2 = 0;
  double z2() const;
};
PlacementUnit best_placement_unit(const std::vector<PhiLevel>& levels);

}  // namespace gpuprobe::analysis
