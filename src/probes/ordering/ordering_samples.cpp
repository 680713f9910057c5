// The JSON conversions of the ordering family's samples (ordering_samples.hpp).
#include "probes/ordering/ordering_samples.hpp"

namespace gpuprobe::probes::ordering {

using nlohmann::json;

void to_json(json& j, const FenceCase& c) {
  j = {{"config", c.config},
       {"threads", c.threads},
       {"fence", c.fence},
       {"cycles_per_step", c.cycles_per_step},
       {"slowest_warp_cycles_per_step_median", c.slowest_warp_cycles_per_step_median},
       {"sm_clock_mhz_measured", c.sm_clock_mhz_measured}};
  write_optional(j, "steps_per_thread", c.steps_per_thread);
}
void from_json(const json& j, FenceCase& c) {
  j.at("config").get_to(c.config);
  j.at("threads").get_to(c.threads);
  j.at("fence").get_to(c.fence);
  read_optional(j, "steps_per_thread", c.steps_per_thread);
  j.at("cycles_per_step").get_to(c.cycles_per_step);
  j.at("slowest_warp_cycles_per_step_median").get_to(c.slowest_warp_cycles_per_step_median);
  j.at("sm_clock_mhz_measured").get_to(c.sm_clock_mhz_measured);
}
void to_json(json& j, const FenceSamples& s) { j = {{"cases", s.cases}}; }
void from_json(const json& j, FenceSamples& s) { j.at("cases").get_to(s.cases); }

void to_json(json& j, const AtomicLatency& l) {
  j = {{"scope", l.scope},
       {"order", l.order},
       {"cycles_per_op", l.cycles_per_op},
       {"ns_per_op_median", l.ns_per_op_median}};
  write_optional(j, "steps", l.steps);
}
void from_json(const json& j, AtomicLatency& l) {
  j.at("scope").get_to(l.scope);
  j.at("order").get_to(l.order);
  read_optional(j, "steps", l.steps);
  j.at("cycles_per_op").get_to(l.cycles_per_op);
  j.at("ns_per_op_median").get_to(l.ns_per_op_median);
}

void to_json(json& j, const AtomicThroughput& t) {
  j = {{"mode", t.mode},
       {"scope", t.scope},
       {"order", t.order},
       {"ops_per_s", t.ops_per_s},
       {"ops_per_clk_gpu_median", t.ops_per_clk_gpu_median},
       {"sm_clock_mhz_measured", t.sm_clock_mhz_measured}};
  write_optional(j, "steps_per_thread", t.steps_per_thread);
  write_optional(j, "ops_per_launch", t.ops_per_launch);
  write_optional(j, "ops_per_s_replicates", t.ops_per_s_replicates);
}
void from_json(const json& j, AtomicThroughput& t) {
  j.at("mode").get_to(t.mode);
  j.at("scope").get_to(t.scope);
  j.at("order").get_to(t.order);
  read_optional(j, "steps_per_thread", t.steps_per_thread);
  read_optional(j, "ops_per_launch", t.ops_per_launch);
  j.at("ops_per_s").get_to(t.ops_per_s);
  read_optional(j, "ops_per_s_replicates", t.ops_per_s_replicates);
  j.at("ops_per_clk_gpu_median").get_to(t.ops_per_clk_gpu_median);
  j.at("sm_clock_mhz_measured").get_to(t.sm_clock_mhz_measured);
}
void to_json(json& j, const AtomicSamples& s) {
  j = {{"latency", s.latency}, {"throughput", s.throughput}};
}
void from_json(const json& j, AtomicSamples& s) {
  j.at("latency").get_to(s.latency);
  j.at("throughput").get_to(s.throughput);
}
void AtomicSamples::check() const {
  for (const auto& t : throughput)
    require_samples(!t.ops_per_s_replicates || !t.ops_per_s_replicates->empty(),
                    "ordering.atomic throughput " + t.mode + "." + t.scope + "." + t.order +
                        " has an empty ops_per_s_replicates");
}

void to_json(json& j, const LitmusRun& v) {
  j = {{"variant", v.variant},
       {"protocol", v.protocol},
       {"synchronizing", v.synchronizing},
       {"completed", v.completed},
       {"stale_reads", v.stale_reads},
       {"timed_out", v.timed_out},
       {"producer_smid", v.producer_smid},
       {"consumer_smid", v.consumer_smid},
       {"ns_per_iteration", v.ns_per_iteration}};
  write_optional(j, "iterations", v.iterations);
  write_optional(j, "first_stale_iteration", v.first_stale_iteration);
  write_optional(j, "first_stale_value", v.first_stale_value);
  write_optional(j, "final_data", v.final_data);
  write_optional(j, "final_flag", v.final_flag);
  write_optional(j, "final_ack", v.final_ack);
}
void from_json(const json& j, LitmusRun& v) {
  j.at("variant").get_to(v.variant);
  j.at("protocol").get_to(v.protocol);
  j.at("synchronizing").get_to(v.synchronizing);
  read_optional(j, "iterations", v.iterations);
  j.at("completed").get_to(v.completed);
  j.at("stale_reads").get_to(v.stale_reads);
  j.at("timed_out").get_to(v.timed_out);
  read_optional(j, "first_stale_iteration", v.first_stale_iteration);
  read_optional(j, "first_stale_value", v.first_stale_value);
  j.at("producer_smid").get_to(v.producer_smid);
  j.at("consumer_smid").get_to(v.consumer_smid);
  read_optional(j, "final_data", v.final_data);
  read_optional(j, "final_flag", v.final_flag);
  read_optional(j, "final_ack", v.final_ack);
  j.at("ns_per_iteration").get_to(v.ns_per_iteration);
}
void to_json(json& j, const LitmusSamples& s) { j = {{"variants", s.variants}}; }
void from_json(const json& j, LitmusSamples& s) { j.at("variants").get_to(s.variants); }

}  // namespace gpuprobe::probes::ordering
