// The JSON conversions of compute.latency's and compute.throughput's samples.
#include "probes/compute/compute_samples.hpp"

namespace gpuprobe::probes::compute {

using nlohmann::json;

void to_json(json& j, const LatencyPoint& p) {
  j = {{"op", p.op},
       {"instruction", p.instruction},
       {"steps", p.steps},
       {"cycles_per_instruction", p.cycles_per_instruction},
       {"sm_clock_mhz_measured", p.sm_clock_mhz_measured}};
}
void from_json(const json& j, LatencyPoint& p) {
  j.at("cycles_per_instruction").get_to(p.cycles_per_instruction);
  p.sm_clock_mhz_measured = j.value("sm_clock_mhz_measured", 0.0);
  j.at("op").get_to(p.op);
  j.at("instruction").get_to(p.instruction);
  j.at("steps").get_to(p.steps);
}
void to_json(json& j, const LatencySamples& s) { j = {{"points", s.points}}; }
void from_json(const json& j, LatencySamples& s) { j.at("points").get_to(s.points); }

void to_json(json& j, const ThroughputPoint& p) {
  j = {{"op", p.op},
       {"accumulators", p.accumulators},
       {"warps_per_sm", p.warps_per_sm},
       {"ops_per_clk_per_sm", p.ops_per_clk_per_sm},
       {"ops_per_s_median", p.ops_per_s_median},
       {"sm_clock_mhz_measured", p.sm_clock_mhz_measured}};
}
void from_json(const json& j, ThroughputPoint& p) {
  j.at("op").get_to(p.op);
  j.at("ops_per_clk_per_sm").get_to(p.ops_per_clk_per_sm);
  j.at("accumulators").get_to(p.accumulators);
  j.at("warps_per_sm").get_to(p.warps_per_sm);
  j.at("ops_per_s_median").get_to(p.ops_per_s_median);
  j.at("sm_clock_mhz_measured").get_to(p.sm_clock_mhz_measured);
}
void to_json(json& j, const ThroughputSamples& s) { j = {{"points", s.points}}; }
void from_json(const json& j, ThroughputSamples& s) { j.at("points").get_to(s.points); }

}  // namespace gpuprobe::probes::compute
