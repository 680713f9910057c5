#pragma once
// link.host's and link.peer's samples as types, converted from the recorded JSON once
// (core/samples.hpp's samples_as). link.peer's GPU indices are checked on load: they index
// the matrices its analysis builds, so one out of range is bad input, not a wild write.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/samples.hpp"

namespace gpuprobe::probes::link {

/// One (replicate, setup, size) copy of link.host: the seconds of each repetition.
struct HostTransfer {
  std::optional<int> replicate;  ///< absent in results written before replicates: 0
  std::optional<int> host_cpu;
  std::string direction, memory, method;
  std::uint64_t bytes = 0;
  std::vector<double> seconds;
  std::optional<bool> converged;
  std::string status = "passed";  ///< "error": a failed check (seconds empty, reason given)
  std::optional<std::string> reason;
};
/// One replicate of the chase through pinned host memory.
struct HostChaseReplicate {
  std::vector<double> ns_per_load;
  std::optional<std::vector<double>> cycles_per_load;
};
struct HostChase {
  std::vector<double> ns_per_load;      ///< pooled over replicates (absent: none)
  std::vector<double> cycles_per_load;  ///< pooled over replicates (absent: none)
  /// Absent in results written before replicates existed (one chase: ns_per_load).
  std::optional<std::vector<HostChaseReplicate>> replicates;
};
struct HostSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of link.host
  std::vector<HostTransfer> points;
  std::optional<HostChase> host_chase;
};

/// One (source, destination, metric) transfer of link.peer.
struct PeerTransfer {
  int src = 0, dst = 0;
  std::string metric;
  std::uint64_t bytes = 0;
  std::vector<double> seconds;
  std::string status = "passed";
  std::optional<std::string> reason;
};
/// A's SM chasing through B's memory.
struct PeerChase {
  int src = 0, dst = 0;
  std::vector<double> ns_per_load;
  std::vector<double> cycles_per_load;  ///< absent: none
};
/// The most GPUs a link.peer record may name (its matrices are gpus x gpus).
inline constexpr int kMaxPeerGpus = 256;
struct PeerSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of link.peer
  int gpus = 0;                       ///< absent: 0
  std::optional<std::vector<std::string>> names, pci_bus_ids;
  std::optional<std::vector<std::vector<bool>>> access;
  std::vector<std::vector<std::string>> topology;  ///< NVML's link per pair; absent: none
  std::vector<PeerTransfer> pairs;                 ///< absent: none
  std::vector<PeerChase> latency;                  ///< absent: none
  /// gpus within 0..kMaxPeerGpus; every pair's and chase's src and dst a GPU index below gpus,
  /// and different.
  void check() const;
};

void to_json(nlohmann::json& j, const HostTransfer& t);
void from_json(const nlohmann::json& j, HostTransfer& t);
void to_json(nlohmann::json& j, const HostChaseReplicate& c);
void from_json(const nlohmann::json& j, HostChaseReplicate& c);
void to_json(nlohmann::json& j, const HostChase& c);
void from_json(const nlohmann::json& j, HostChase& c);
void to_json(nlohmann::json& j, const HostSamples& s);
void from_json(const nlohmann::json& j, HostSamples& s);
void to_json(nlohmann::json& j, const PeerTransfer& t);
void from_json(const nlohmann::json& j, PeerTransfer& t);
void to_json(nlohmann::json& j, const PeerChase& c);
void from_json(const nlohmann::json& j, PeerChase& c);
void to_json(nlohmann::json& j, const PeerSamples& s);
void from_json(const nlohmann::json& j, PeerSamples& s);

}  // namespace gpuprobe::probes::link
