#include "core/experiment.hpp"
#include "probes/bandwidth.hpp"
#include "probes/bandwidth_sweep.hpp"
#include "probes/ordering.hpp"
#include "probes/hopper.hpp"
#include "probes/compute.hpp"
#include "probes/fetch_granularity.hpp"
#include "probes/l2_partition.hpp"
#include "probes/latency.hpp"
#include "probes/tma.hpp"
#include "probes/pipeline.hpp"

namespace gpuprobe {

const Registry& Registry::builtin() {
  static const Registry registry = [] {
    Registry r;
    probes::register_latency_experiments(r);
    probes::register_l2_partition_experiments(r);
    probes::register_fetch_granularity_experiments(r);
    probes::register_compute_experiments(r);
    probes::register_bandwidth_experiments(r);
    probes::register_bandwidth_sweep_experiments(r);
    probes::register_ordering_experiments(r);
    probes::register_hopper_experiments(r);
    probes::register_tma_experiments(r);
    probes::register_pipeline_experiments(r);
    return r;
  }();
  return registry;
}

}  // namespace gpuprobe
