#pragma once
// timer.overhead's samples as a type: what its analysis reads, converted from the recorded JSON
// once (a missing or wrong-typed field throws nlohmann's one-line error there; timer.cpp
// checks the arrays whole before judging them).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace gpuprobe::probes::timer {

struct TimerSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of timer.overhead
  // In-kernel timers, pooled over the probe's launches (cycles unless said otherwise).
  std::vector<double> clock64_pair, clock32_pair;      ///< back-to-back reads
  std::vector<double> clock64_gap, clock32_gap;        ///< around 0..31 dependent adds
  std::vector<double> clock64_stream, clock32_stream;  ///< first to last of 32 reads, per launch
  std::vector<double> globaltimer_read;          ///< clock64 span around one used %globaltimer read
  std::vector<double> globaltimer_pair;          ///< ns between back-to-back %globaltimer reads
  std::vector<double> change_ns, change_cycles;  ///< each %globaltimer change seen in the spin
  std::vector<double> spin_reads;                ///< reads of the spin, per launch
  // CUDA events (ns) and the host's launch + synchronize.
  std::vector<double> event_back_to_back_ns, event_one_empty_kernel_ns, event_two_empty_kernels_ns,
      host_launch_and_sync_ns;
  std::vector<std::size_t> event_replicate_sizes;  ///< empty in results written before
  /// Queued behind a kernel that holds the stream; absent in results written before.
  std::optional<std::vector<double>> event_queued_one_empty_kernel_ns;
  std::vector<double> event_queued_two_empty_kernels_ns, event_queued_back_to_back_ns;
  std::vector<std::size_t> event_queued_replicate_sizes, event_queued_back_to_back_replicate_sizes;
  std::uint64_t event_queued_late = 0;
};

void to_json(nlohmann::json& j, const TimerSamples& s);
void from_json(const nlohmann::json& j, TimerSamples& s);

}  // namespace gpuprobe::probes::timer
