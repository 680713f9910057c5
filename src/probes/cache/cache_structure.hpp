#pragma once
#include <nlohmann/json.hpp>

#include "measure/cache_search.hpp"
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds cache.l1.ways and cache.l2.ways (each level's ways, set-index function, line size and
/// replacement class from one search) and latency.tlb: conflict-set construction, policy
/// sequences and TLB walks over Sequencer (src/analysis/cache_inference.*).
void register_cache_structure_experiments(Registry& registry);

/// latency.tlb's samples.levels as the experiment writes them (its analysis reads them back).
nlohmann::json tlb_levels_json(const analysis::cache::TlbResult& t);

}  // namespace gpuprobe::probes
