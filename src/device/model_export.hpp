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

}  // namespace gpuprobe::device
