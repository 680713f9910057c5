#include "core/device.hpp"

#include <string>

#include "core/error.hpp"
#include "core/text_input.hpp"

namespace gpuprobe::device {

void check_chain_offset(const ChainSpec& spec) {
  if (spec.offset_bytes % spec.node_stride_bytes != 0)
    throw UsageError("chain offset " + std::to_string(spec.offset_bytes) +
                     " B is not a multiple of the node stride (" +
                     std::to_string(spec.node_stride_bytes) + " B)");
}

std::string to_string(LoadOp op) {
  switch (op) {
    case LoadOp::kDefault:
      return "default";
    case LoadOp::kCa:
      return "ca";
    case LoadOp::kCg:
      return "cg";
    case LoadOp::kCv:
      return "cv";
    case LoadOp::kNc:
      return "nc";
  }
  return "?";
}

LoadOp parse_load_op(const std::string& text) {
  for (LoadOp op : all_load_ops())
    if (to_string(op) == text) return op;
  throw UsageError("unknown load operator " + text_input::quoted(text) +
                   "; allowed: default, ca, cg, cv, nc");
}

bool caches_in_l1(LoadOp op) { return op != LoadOp::kCg && op != LoadOp::kCv; }

std::vector<LoadOp> all_load_ops() {
  return {LoadOp::kDefault, LoadOp::kCa, LoadOp::kCg, LoadOp::kCv, LoadOp::kNc};
}

double dram_peak_gb_s(const DeviceInfo& d) {
  return d.mem_clock_max_mhz * 1e6 * 2.0 * d.mem_bus_width_bits / 8.0 / 1e9;
}

nlohmann::json to_json(const ClockReading& c) {
  if (!c.valid) return {{"valid", false}, {"time_utc", c.time_utc}};
  return {{"valid", true},
          {"time_utc", c.time_utc},
          {"sm_clock_mhz", c.sm_mhz},
          {"mem_clock_mhz", c.mem_mhz},
          {"power_w", c.power_w},
          {"power_limit_w", c.power_limit_w},
          {"temperature_c", c.temperature_c},
          {"throttle_reasons_mask", c.throttle_reasons},
          {"throttle_reasons", c.throttle_names}};
}

SampledChase Device::sampled_chase(Chain&, const ChaseParams&, std::uint32_t) {
  throw UsageError("this device cannot time single steps of a chase (sampled_chase)");
}

}  // namespace gpuprobe::device
