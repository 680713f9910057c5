#pragma once
// What the family's sequence experiments (cache.l1.ways, cache.l2.ways, latency.tlb) share: a
// probe buffer on the device's Sequencer with the search's Probe over it and the waiver (the
// calibration's record is probes/cache/ways_samples.hpp's CalibrationRecord).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/experiment.hpp"
#include "device/sequence.hpp"
#include "measure/cache_search.hpp"

namespace gpuprobe::probes::cache_structure {

inline constexpr const char* kNoSequencer =
    "this device has no access-sequence primitive (Sequencer)";

/// The probe buffer, the oracle over it and the budget it spent.
struct Session {
  Sequencer* seq = nullptr;
  std::unique_ptr<ProbeBuffer> buffer;
  measure::cache::Probe probe;
};

/// nullopt when the device has no sequencer (the caller waives). `span` = candidate pool.
std::optional<Session> open_session(Context& ctx, std::uint64_t bytes, std::uint64_t span,
                                    int carveout_percent = -1);

void waive(ExperimentResult& r, const std::string& why);

}  // namespace gpuprobe::probes::cache_structure
