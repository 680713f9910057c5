#pragma once
// The trial both L2-residency experiments repeat (cache.l2.persisting, cache.l2.eviction_priority):
// reset the persisting lines and flush the L2, place a region (plain loads, under an access-
// policy window, or with an eviction priority), stream plain traffic over other lines, then
// load sampled lines of the region once each, timed, from SM 0 (ld.global.cg, dependent).
#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "analysis/l2_residency.hpp"
#include "core/experiment.hpp"
#include "core/l2_residency.hpp"
#include "core/sequence.hpp"

namespace gpuprobe::probes::residency {

/// What one trial asks.
struct Placement {
  std::string group;
  int repeat = 0;
  std::uint64_t set_aside_bytes = 0;  ///< cudaLimitPersistingL2CacheSize for the trial
  std::uint64_t region_offset = 0, region_bytes = 0;
  bool place = true;  ///< false: probe the region without placing it (the "gone" control)
  bool windowed = false;
  AccessWindow window;  ///< over the whole region when windowed
  EvictionHint hint = EvictionHint::kNone;
  double hint_fraction = 1.0;
  /// A scattered placement: only the region's lines core/line_select.hpp selects at this share
  /// and seed are placed, and sampled (1: the whole region).
  double select_share = 1.0;
  std::uint64_t select_seed = 0;
  std::uint64_t traffic_bytes = 0;
};

/// Sampled lines per trial: enough that a fraction is known to about 2 %.
inline constexpr int kSampledLines = 512;
inline constexpr std::uint64_t kPage = 2ull << 20;
inline constexpr std::uint64_t kLine = 128;

class TrialRunner {
 public:
  /// The traffic lines start at `traffic_offset` of `buffer`.
  TrialRunner(L2Residency& l2, Sequencer& seq, ProbeBuffer& buffer, std::uint64_t traffic_offset,
              std::uint64_t seed);
  analysis::residency::Trial run(const Placement& p);
  /// Requests a set-aside, records what the driver did (never throws for a refusal).
  analysis::residency::SetAsideRequest request(std::uint64_t bytes);

 private:
  void set_aside(std::uint64_t bytes);

  L2Residency& l2_;
  Sequencer& seq_;
  ProbeBuffer& buffer_;
  std::uint64_t traffic_offset_;
  std::mt19937_64 rng_;
  std::uint64_t current_set_aside_ = ~std::uint64_t{0};
};

/// The region both controls use: read at once (near and far hits) or never placed (misses).
inline constexpr std::uint64_t kControlBytes = std::uint64_t{8} << 20;
/// `bytes` rounded down to whole MiB, at least 1 MiB (regions, windows and set-asides asked).
std::uint64_t whole_mib(double bytes);
/// The controls' classification as result.statistics.
nlohmann::json classification_statistics(const analysis::residency::Classifier& c);

}  // namespace gpuprobe::probes::residency
