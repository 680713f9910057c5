#include "core/experiment.hpp"
#include "probes/bandwidth/bandwidth.hpp"
#include "probes/bandwidth/bandwidth_sweep.hpp"
#include "probes/ordering/ordering.hpp"
#include "probes/hopper/hopper.hpp"
#include "probes/compute/compute.hpp"
#include "probes/smem/smem.hpp"
#include "probes/timer/timer.hpp"
#include "probes/cache/fetch_granularity.hpp"
#include "probes/cache/prefetch.hpp"
#include "probes/cache/l2_residency.hpp"
#include "probes/cache/l2_partition.hpp"
#include "probes/cache/cache_structure.hpp"
#include "probes/cache/l2_far_hit.hpp"
#include "probes/cache/l2_mixture.hpp"
#include "probes/cache/l2_sharing.hpp"
#include "probes/cache/cold_capacity.hpp"
#include "probes/latency/latency.hpp"
#include "probes/link/link.hpp"
#include "probes/hopper/tma.hpp"
#include "probes/hopper/pipeline.hpp"

namespace gpuprobe {

const Registry& Registry::builtin() {
  static const Registry registry = [] {
    Registry r;
    probes::register_latency_experiments(r);
    probes::register_l2_partition_experiments(r);
    probes::register_l2_far_hit_experiments(r);
    probes::register_l2_mixture_experiments(r);
    probes::register_l2_sharing_experiments(r);
    probes::register_cold_capacity_experiments(r);
    probes::register_fetch_granularity_experiments(r);
    probes::register_prefetch_experiments(r);
    probes::register_cache_structure_experiments(r);
    probes::register_l2_residency_experiments(r);
    probes::register_smem_experiments(r);
    probes::register_compute_experiments(r);
    probes::register_timer_experiments(r);
    probes::register_bandwidth_experiments(r);
    probes::register_bandwidth_sweep_experiments(r);
    probes::register_ordering_experiments(r);
    probes::register_hopper_experiments(r);
    probes::register_tma_experiments(r);
    probes::register_pipeline_experiments(r);
    probes::register_link_experiments(r);
    return r;
  }();
  return registry;
}

}  // namespace gpuprobe
