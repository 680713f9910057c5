#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/experiment.hpp"
#include "measure/cache_search.hpp"
#include "probes/cache/cache_samples.hpp"

namespace gpuprobe::probes {

/// Adds cache.l1.ways and cache.l2.ways (each level's ways, set-index function, line size and
/// replacement class from one search) and latency.tlb: conflict-set construction, policy
/// sequences and TLB walks over Sequencer (src/measure/cache_search.hpp).
void register_cache_structure_experiments(Registry& registry);

/// latency.tlb (probes/cache/tlb.cpp), which register_cache_structure_experiments adds.
std::unique_ptr<Experiment> make_tlb_experiment();

/// latency.tlb's samples.levels as the experiment writes them (its analysis reads them back).
std::vector<cache_samples::TlbLevel> tlb_levels(const analysis::cache::TlbResult& t);

}  // namespace gpuprobe::probes
