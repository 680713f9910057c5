#include "cli/profiles.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace gpuprobe::cli {

const std::vector<Profile>& profiles() {
  static const std::vector<Profile> all = {
      {"quick",
       "what a fleet health check needs (gpuprobe check): latency of L1, L2 and DRAM, DRAM and L2 "
       "bandwidth, FMA and tensor throughput, the host link and the L2 partition groups; the "
       "default load operator only, 16 B accesses only, FFMA only",
       {{"latency.chase",
         "L1, L2 and DRAM latency (l1.hit_latency.default, l2.hit_latency.default, "
         "dram.latency.default) at 16 KiB, an eighth of the L2 and 4 x L2 (the full run's "
         "latency.sweep finds the capacities; the quick profile leaves them out)"},
        {"cache.l2.partition", "the partition groups (l2.partition.*)"},
        {"compute.throughput", "FFMA throughput (compute.ffma.throughput)"},
        {"bandwidth.read", "DRAM read bandwidth (dram.read_bandwidth)"},
        {"bandwidth.write", "DRAM write bandwidth (dram.write_bandwidth)"},
        {"bandwidth.copy", "DRAM copy bandwidth (dram.copy_bandwidth)"},
        {"bandwidth.hierarchy", "L2 bandwidth (hierarchy.l2.read_bandwidth)"},
        {"hopper.wgmma.throughput", "tensor-core (WGMMA) throughput on Hopper"},
        {"link.host",
         "the host link both ways over pinned memory (PCIe width, generation and NUMA placement "
         "show here): bandwidth at 64 MiB, latency at 16 B"}},
       {"default"},
       {"compute.throughput.op=ffma", "bandwidth.read.width_bytes=16",
        "bandwidth.write.width_bytes=16", "bandwidth.copy.width_bytes=16",
        "link.host.memory=pinned", "link.host.bytes=16,4096,1048576,67108864"}},
  };
  return all;
}

const Profile& find_profile(const std::string& name) {
  std::string known;
  for (const auto& p : profiles()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw UsageError("--profile " + name + ": no such profile; known: " + known);
}

std::vector<const Experiment*> apply_profile(const Profile& p, RunOptions& o, bool loads_given) {
  const auto& registry = Registry::builtin();
  std::vector<std::string> ids;
  for (const auto& [id, why] : p.experiments) ids.push_back(id);
  auto chosen = registry.select(ids);
  registry.add_required(chosen);
  if (!loads_given && !p.loads.empty()) {
    o.loads.clear();
    for (const auto& l : p.loads) o.loads.push_back(device::parse_load_op(l));
  }
  // What the user set, by --axis or a family option (--word-sizes), wins, as --loads does.
  for (const auto& text : p.axes) {
    AxisOverride a = parse_axis_override(text);
    const bool user_set = std::any_of(
        o.axis_overrides.begin(), o.axis_overrides.end(),
        [&](const AxisOverride& u) { return u.experiment == a.experiment && u.axis == a.axis; });
    if (!user_set) o.axis_overrides.push_back(std::move(a));
  }
  check_axis_overrides(registry, o.axis_overrides);
  return chosen;
}

void list_profile(const Profile& p, std::ostream& out) {
  out << "profile " << p.name << ": " << p.description << "\n";
  std::size_t width = 0;
  for (const auto& [id, why] : p.experiments) width = std::max(width, id.size());
  for (const auto& [id, why] : p.experiments)
    out << "  " << id << std::string(width + 2 - id.size(), ' ') << why << "\n";
  if (!p.loads.empty()) {
    out << "options: --loads ";
    for (std::size_t i = 0; i < p.loads.size(); ++i) out << (i ? "," : "") << p.loads[i];
    out << "\n";
  }
  for (const auto& a : p.axes) out << "options: --axis " << a << "\n";
}

}  // namespace gpuprobe::cli
