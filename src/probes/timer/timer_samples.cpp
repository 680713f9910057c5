// The JSON conversion of timer.overhead's samples.
#include "probes/timer/timer_samples.hpp"

namespace gpuprobe::probes::timer {

using nlohmann::json;

void to_json(json& j, const TimerSamples& s) {
  j = json::object();
  j["clock64_pair"] = s.clock64_pair;
  j["clock32_pair"] = s.clock32_pair;
  j["clock64_gap"] = s.clock64_gap;
  j["clock32_gap"] = s.clock32_gap;
  j["clock64_stream"] = s.clock64_stream;
  j["clock32_stream"] = s.clock32_stream;
  j["globaltimer_read"] = s.globaltimer_read;
  j["globaltimer_pair"] = s.globaltimer_pair;
  j["change_ns"] = s.change_ns;
  j["change_cycles"] = s.change_cycles;
  j["spin_reads"] = s.spin_reads;
  j["event_back_to_back_ns"] = s.event_back_to_back_ns;
  j["event_one_empty_kernel_ns"] = s.event_one_empty_kernel_ns;
  j["event_two_empty_kernels_ns"] = s.event_two_empty_kernels_ns;
  j["host_launch_and_sync_ns"] = s.host_launch_and_sync_ns;
  j["event_replicate_sizes"] = s.event_replicate_sizes;
  j["event_queued_two_empty_kernels_ns"] = s.event_queued_two_empty_kernels_ns;
  j["event_queued_back_to_back_ns"] = s.event_queued_back_to_back_ns;
  j["event_queued_replicate_sizes"] = s.event_queued_replicate_sizes;
  j["event_queued_back_to_back_replicate_sizes"] = s.event_queued_back_to_back_replicate_sizes;
  if (s.event_queued_one_empty_kernel_ns)
    j["event_queued_one_empty_kernel_ns"] = *s.event_queued_one_empty_kernel_ns;
  j["event_queued_late"] = s.event_queued_late;
}

void from_json(const json& j, TimerSamples& s) {
  j.at("clock64_pair").get_to(s.clock64_pair);
  j.at("clock32_pair").get_to(s.clock32_pair);
  j.at("clock64_gap").get_to(s.clock64_gap);
  j.at("clock32_gap").get_to(s.clock32_gap);
  j.at("clock64_stream").get_to(s.clock64_stream);
  j.at("clock32_stream").get_to(s.clock32_stream);
  j.at("globaltimer_read").get_to(s.globaltimer_read);
  j.at("globaltimer_pair").get_to(s.globaltimer_pair);
  j.at("change_ns").get_to(s.change_ns);
  j.at("change_cycles").get_to(s.change_cycles);
  j.at("spin_reads").get_to(s.spin_reads);
  j.at("event_back_to_back_ns").get_to(s.event_back_to_back_ns);
  j.at("event_one_empty_kernel_ns").get_to(s.event_one_empty_kernel_ns);
  j.at("event_two_empty_kernels_ns").get_to(s.event_two_empty_kernels_ns);
  j.at("host_launch_and_sync_ns").get_to(s.host_launch_and_sync_ns);
  // Added later: absent in older results.
  if (j.contains("event_replicate_sizes"))
    j.at("event_replicate_sizes").get_to(s.event_replicate_sizes);
  if (j.contains("event_queued_two_empty_kernels_ns"))
    j.at("event_queued_two_empty_kernels_ns").get_to(s.event_queued_two_empty_kernels_ns);
  if (j.contains("event_queued_back_to_back_ns"))
    j.at("event_queued_back_to_back_ns").get_to(s.event_queued_back_to_back_ns);
  if (j.contains("event_queued_replicate_sizes"))
    j.at("event_queued_replicate_sizes").get_to(s.event_queued_replicate_sizes);
  if (j.contains("event_queued_back_to_back_replicate_sizes"))
    j.at("event_queued_back_to_back_replicate_sizes")
        .get_to(s.event_queued_back_to_back_replicate_sizes);
  if (j.contains("event_queued_one_empty_kernel_ns"))
    s.event_queued_one_empty_kernel_ns =
        j.at("event_queued_one_empty_kernel_ns").get<std::vector<double>>();
  s.event_queued_late = j.value("event_queued_late", std::uint64_t{0});
}

}  // namespace gpuprobe::probes::timer
