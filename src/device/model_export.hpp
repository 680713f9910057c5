#pragma once
// Closing the loop between measurement and model: a model configuration read from JSON (the
// keys to_json(ModelConfig) writes), and one built from a recorded gpuprobe result, so that a
// measured GPU can be replayed as `--device model:<file.json>`.
#include <nlohmann/json.hpp>

#include "device/model_device.hpp"

namespace gpuprobe::device {

/// A ModelConfig from the keys to_json(ModelConfig) writes. Throws UsageError naming a missing
/// or invalid key.
ModelConfig model_config_from_json(const nlohmann::json& j);

/// The cache hierarchy a recorded result measured, as a model: L1 capacities at the carveouts,
/// the L2 near partition and total, and every level's latency. What the result cannot tell
/// (associativity, replacement policy) is set to plausible values and listed under
/// "not_measured" in the returned JSON. Throws UsageError when the result lacks the latency
/// findings.
nlohmann::json model_from_result(const nlohmann::json& result);

/// The model's L1D and L2 in GPGPU-Sim / Accel-Sim cache configuration syntax (docs/MODEL.md):
/// "-gpgpu_cache:dl1 <S|N>:<sets>:<line>:<ways>,<rep>:<wr>:<alloc>:<wr_alloc>:<set_index>,
/// <mshr>:<entries>:<merge>,<miss_queue>:<result_fifo>,<data_port_width>" and the same for dl2,
/// with comment lines ("#") saying what was measured and what the syntax cannot hold (tree-PLRU
/// and random replacement, an arbitrary XOR set hash). Throws UsageError for a model JSON
/// without the cache fields.
std::string accelsim_config(const nlohmann::json& model);

/// One parsed cache line of accelsim_config's output (for checks and tests).
struct AccelsimCache {
  std::string option;  ///< "-gpgpu_cache:dl1"
  char type = 'N';     ///< N normal, S sectored
  std::uint64_t sets = 0;
  std::uint32_t line_bytes = 0, ways = 0;
  char replacement = 'L', set_index = 'L';
};
/// Parses "-gpgpu_cache:<x> <config>"; throws UsageError when the line does not follow it.
AccelsimCache parse_accelsim_cache_line(const std::string& line);

}  // namespace gpuprobe::device
