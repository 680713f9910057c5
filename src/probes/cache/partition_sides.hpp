#pragma once
// Shared by cache.l2.far_hit and cache.l2.sharing: which L2 partition serves which line to which
// SM, found with the cache-structure sequences (device/sequence.hpp). After an L2 flush a
// reference SM reads the probed lines; the measured SM then times its first and second read of
// each. A reference on the other side makes the first reads split into near and far hits.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "analysis/l2_far_hit.hpp"
#include "device/sequence.hpp"

namespace gpuprobe::probes::sides {

inline constexpr std::uint64_t kPage = 2ull << 20;
inline constexpr std::uint64_t kLine = 128;
inline constexpr std::uint64_t kRegion = 64ull << 10;  ///< one warm line per region

/// Whether `offset` is the (never probed) line that warms its 64 KiB region's translation.
bool is_warm_line(std::uint64_t offset);
/// The warm line of every 64 KiB region of `pages` pages.
std::vector<std::uint64_t> warm_lines(std::uint64_t pages);
/// `per_page` random lines (never a warm line) in each of `pages` pages, in random order.
std::vector<std::uint64_t> random_lines(std::uint64_t pages, int per_page, std::uint64_t seed);

struct Round {
  std::vector<double> first, second;
};
/// After a flush, `reference` reads `lines` (none when reference < 0); then `measured` reads
/// `warm` untimed and times its first and second read of every line (ld.global.cg).
Round run_round(Sequencer& seq, ProbeBuffer& buf, const std::vector<std::uint64_t>& warm,
                const std::vector<std::uint64_t>& lines, int reference, int measured,
                bool second = true);

struct Reference {
  int sm = -1;  ///< -1: no candidate split the first reads (one partition)
  nlohmann::json tried = nlohmann::json::array();
  analysis::FarHitResult first_round;  ///< the analysis of the accepted candidate's round
};
/// Tries up to `candidates` SMs spread over the GPU as the reference for `measured`; the first
/// whose placement splits the measured SM's first reads into two classes is kept.
Reference find_reference(Sequencer& seq, ProbeBuffer& buf, const std::vector<std::uint64_t>& warm,
                         const std::vector<std::uint64_t>& lines, int measured, int sm_count,
                         int candidates);

}  // namespace gpuprobe::probes::sides
