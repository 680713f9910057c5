#pragma once
// The link family: how fast and how far the memories around a GPU are.
//   link.host  host <-> device bandwidth and latency (pinned and pageable; copy engine, SM
//              kernels over mapped pinned memory, and the driver's cudaMemcpy beside them)
//   link.peer  every ordered pair of GPUs of the node: copy-engine and SM read / write
//              bandwidth one way and both ways, peer-memory chase latency, NVML topology.
//              Loads the whole node, so `characterize --gpus` runs it once, alone.
// Neither ever creates a multicast object (cuMulticastCreate): NVLink multicast on shared
// machines can put GPUs out of service; multi-GPU runs keep NCCL_NVLS_ENABLE=0,
// TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1 set (docs/LINKS.md).
#include <optional>
#include <string>
#include <vector>

#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds link.host and link.peer.
void register_link_experiments(Registry& registry);

/// link.host's conclusions from its samples (pure; exposed for tests on synthetic samples).
void analyze_link_host(ExperimentResult& result);
/// link.peer's conclusions from its samples (pure; exposed for tests on synthetic samples).
void analyze_link_peer(ExperimentResult& result);

/// Why link.peer does not apply: `gpus` CUDA devices, `access[a][b]` whether a can access b's
/// memory (a != b); nullopt when at least one ordered pair has peer access.
std::optional<std::string> peer_waiver(int gpus, const std::vector<std::vector<bool>>& access);

/// The terminal matrix of one link.peer metric (rows: source GPU, columns: destination), from
/// the statistics analyze_link_peer writes; empty when the metric is absent.
std::string peer_matrix_text(const nlohmann::json& statistics, const std::string& metric);

/// The environment variables a multi-GPU run keeps set so that no library turns on NVLink
/// multicast (NVLS): name, value.
const std::vector<std::pair<std::string, std::string>>& multicast_off_environment();

}  // namespace gpuprobe::probes
