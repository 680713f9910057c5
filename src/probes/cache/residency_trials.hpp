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

/// The seed of repetition `repeat` of a placement: a scattered one selects other lines each
/// time (independent draws of the sets' loads); 0 for a contiguous one.
std::uint64_t scatter_seed(const Placement& p, int repeat);

/// The two placements analysis::residency::judge_cap_rule compares, from `base` (its set-aside,
/// hint or window, traffic): the bytes of the set-aside's whole ways (k = floor(ways x
/// set-aside / L2)) contiguous ("cap_even": a hashed index gives every set k lines) and
/// scattered ("cap_scattered": lines selected at share 1/4 over a span four times larger, or at
/// 1/3 or 1/2 where that span would pass max_span, 0 for none), so that a set gets
/// Binomial(k / share, share) lines. A windowed base's window covers the whole region. None
/// when ways is 0, the set-aside holds no whole way or no span fits.
std::vector<Placement> cap_placements(Placement base, std::uint64_t l2_bytes, int ways,
                                      std::uint64_t max_span);

/// Adds finding `key` (a category of finding::labels::kL2EvictLastCapRule's labels) and the
/// curve "cap_rule" from the samples' cap_even / cap_scattered trials, judged at the largest
/// set-aside they ran at (nothing when there are none: results recorded before them).
void add_cap_rule(ExperimentResult& r, const analysis::residency::Samples& s,
                  const analysis::residency::Classifier& c, const FindingKey& key,
                  const std::string& method);

/// The region both controls use: read at once (near and far hits) or never placed (misses).
inline constexpr std::uint64_t kControlBytes = std::uint64_t{8} << 20;
/// `bytes` rounded down to whole MiB, at least 1 MiB (regions, windows and set-asides asked).
std::uint64_t whole_mib(double bytes);
/// The controls' classification as result.statistics.
nlohmann::json classification_statistics(const analysis::residency::Classifier& c);

}  // namespace gpuprobe::probes::residency
