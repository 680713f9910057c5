// The JSON conversions of the link family's samples (link_samples.hpp).
#include "probes/link/link_samples.hpp"

namespace gpuprobe::probes::link {

using nlohmann::json;

namespace {
/// A member that reads as `fallback` when absent (the layouts older results hold).
template <typename V>
void read_or(const json& j, const char* key, V& v, V fallback) {
  const auto it = j.find(key);
  v = it == j.end() ? std::move(fallback) : it->template get<V>();
}
}  // namespace

void to_json(json& j, const HostTransfer& t) {
  j = {{"direction", t.direction}, {"memory", t.memory},   {"method", t.method},
       {"bytes", t.bytes},         {"seconds", t.seconds}, {"status", t.status}};
  write_optional(j, "replicate", t.replicate);
  write_optional(j, "host_cpu", t.host_cpu);
  write_optional(j, "converged", t.converged);
  write_optional(j, "reason", t.reason);
}
void from_json(const json& j, HostTransfer& t) {
  read_or(j, "status", t.status, std::string("passed"));
  read_optional(j, "replicate", t.replicate);
  read_optional(j, "host_cpu", t.host_cpu);
  j.at("direction").get_to(t.direction);
  j.at("memory").get_to(t.memory);
  j.at("method").get_to(t.method);
  j.at("bytes").get_to(t.bytes);
  j.at("seconds").get_to(t.seconds);
  read_optional(j, "converged", t.converged);
  read_optional(j, "reason", t.reason);
}

void to_json(json& j, const HostChaseReplicate& c) {
  j = {{"ns_per_load", c.ns_per_load}};
  write_optional(j, "cycles_per_load", c.cycles_per_load);
}
void from_json(const json& j, HostChaseReplicate& c) {
  j.at("ns_per_load").get_to(c.ns_per_load);
  read_optional(j, "cycles_per_load", c.cycles_per_load);
}
void to_json(json& j, const HostChase& c) {
  j = {{"ns_per_load", c.ns_per_load}, {"cycles_per_load", c.cycles_per_load}};
  write_optional(j, "replicates", c.replicates);
}
void from_json(const json& j, HostChase& c) {
  read_or(j, "ns_per_load", c.ns_per_load, {});
  read_or(j, "cycles_per_load", c.cycles_per_load, {});
  read_optional(j, "replicates", c.replicates);
}
void to_json(json& j, const HostSamples& s) {
  j = {{"points", s.points}};
  write_optional(j, "host_chase", s.host_chase);
}
void from_json(const json& j, HostSamples& s) {
  j.at("points").get_to(s.points);
  read_optional(j, "host_chase", s.host_chase);
}

void to_json(json& j, const PeerTransfer& t) {
  j = {{"src", t.src},     {"dst", t.dst},         {"metric", t.metric},
       {"bytes", t.bytes}, {"seconds", t.seconds}, {"status", t.status}};
  write_optional(j, "reason", t.reason);
}
void from_json(const json& j, PeerTransfer& t) {
  read_or(j, "status", t.status, std::string("passed"));
  j.at("src").get_to(t.src);
  j.at("dst").get_to(t.dst);
  j.at("metric").get_to(t.metric);
  j.at("bytes").get_to(t.bytes);
  j.at("seconds").get_to(t.seconds);
  read_optional(j, "reason", t.reason);
}
void to_json(json& j, const PeerChase& c) {
  j = {{"src", c.src},
       {"dst", c.dst},
       {"ns_per_load", c.ns_per_load},
       {"cycles_per_load", c.cycles_per_load}};
}
void from_json(const json& j, PeerChase& c) {
  j.at("src").get_to(c.src);
  j.at("dst").get_to(c.dst);
  j.at("ns_per_load").get_to(c.ns_per_load);
  read_or(j, "cycles_per_load", c.cycles_per_load, {});
}
void to_json(json& j, const PeerSamples& s) {
  j = {{"gpus", s.gpus}, {"topology", s.topology}, {"pairs", s.pairs}, {"latency", s.latency}};
  write_optional(j, "names", s.names);
  write_optional(j, "pci_bus_ids", s.pci_bus_ids);
  write_optional(j, "access", s.access);
}
void from_json(const json& j, PeerSamples& s) {
  read_or(j, "gpus", s.gpus, 0);
  read_optional(j, "names", s.names);
  read_optional(j, "pci_bus_ids", s.pci_bus_ids);
  read_optional(j, "access", s.access);
  read_or(j, "topology", s.topology, {});
  read_or(j, "pairs", s.pairs, {});
  read_or(j, "latency", s.latency, {});
}

void PeerSamples::check() const {
  require_samples(
      gpus >= 0 && gpus <= kMaxPeerGpus,
      "gpus " + std::to_string(gpus) + " is not within 0.." + std::to_string(kMaxPeerGpus));
  const auto check_pair = [&](const char* what, int src, int dst) {
    require_samples(src >= 0 && src < gpus && dst >= 0 && dst < gpus && src != dst,
                    std::string(what) + " " + std::to_string(src) + "->" + std::to_string(dst) +
                        " is not a pair of two of the " + std::to_string(gpus) + " GPUs");
  };
  for (const auto& p : pairs) check_pair("pair", p.src, p.dst);
  for (const auto& l : latency) check_pair("chase", l.src, l.dst);
}

}  // namespace gpuprobe::probes::link
