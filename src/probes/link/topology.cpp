#include "probes/link/topology.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstring>

namespace gpuprobe::probes::link {
namespace {

// The NVML ABI pieces used here, as nvml.h declares them (no nvml.h is needed to build).
using Ret = int;
using Dev = void*;
struct PciInfo {  // nvmlPciInfo_t
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
constexpr int kMaxLinks = 18;      // NVML_NVLINK_MAX_LINKS
constexpr int kP2pCapsNvlink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kP2pStatusOk = 0;    // NVML_P2P_STATUS_OK

template <class F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

bool same_bus(const char* a, const std::string& b) {
  // NVML writes 8-digit domains ("00000000:1B:00.0"), CUDA 4-digit ones: compare the tails.
  const std::string x(a);
  const auto tail = [](const std::string& s) {
    const auto c = s.find(':');
    std::string t = c == std::string::npos ? s : s.substr(c + 1);
    for (auto& ch : t) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return t;
  };
  return tail(x) == tail(b);
}

}  // namespace

std::string topology_level_label(int level) {
  switch (level) {
    case 0:
      return "SELF";
    case 10:
      return "PIX";
    case 20:
      return "PXB";
    case 30:
      return "PHB";
    case 40:
      return "NODE";
    case 50:
      return "SYS";
    default:
      return "level " + std::to_string(level);
  }
}

std::vector<std::vector<std::string>> nvml_topology(const std::vector<std::string>& ids) {
  const std::size_t n = ids.size();
  std::vector<std::vector<std::string>> labels(n, std::vector<std::string>(n));
  auto fill_all = [&](const std::string& why) {
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b)
        if (a != b) labels[a][b] = "unknown (" + why + ")";
  };
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fill_all("NVML not loadable");
    return labels;
  }
  auto init = sym<Ret (*)()>(lib, "nvmlInit_v2");
  auto shutdown = sym<Ret (*)()>(lib, "nvmlShutdown");
  auto by_bus = sym<Ret (*)(const char*, Dev*)>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  auto ancestor = sym<Ret (*)(Dev, Dev, int*)>(lib, "nvmlDeviceGetTopologyCommonAncestor");
  auto p2p = sym<Ret (*)(Dev, Dev, int, int*)>(lib, "nvmlDeviceGetP2PStatus");
  auto link_state = sym<Ret (*)(Dev, unsigned, int*)>(lib, "nvmlDeviceGetNvLinkState");
  auto remote = sym<Ret (*)(Dev, unsigned, PciInfo*)>(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  if (!init || !by_bus || init() != 0) {
    fill_all("NVML init failed");
    dlclose(lib);
    return labels;
  }
  std::vector<Dev> dev(n, nullptr);
  for (std::size_t i = 0; i < n; ++i)
    if (by_bus(ids[i].c_str(), &dev[i]) != 0) dev[i] = nullptr;
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      if (!dev[a] || !dev[b]) {
        labels[a][b] = "unknown (no NVML handle)";
        continue;
      }
      int status = -1;
      const bool nvlink =
          p2p && p2p(dev[a], dev[b], kP2pCapsNvlink, &status) == 0 && status == kP2pStatusOk;
      if (nvlink && link_state) {
        int direct = 0, active = 0;
        for (unsigned l = 0; l < kMaxLinks; ++l) {
          int on = 0;
          if (link_state(dev[a], l, &on) != 0 || !on) continue;
          ++active;
          PciInfo info{};
          if (remote && remote(dev[a], l, &info) == 0 && same_bus(info.bus_id, ids[b])) ++direct;
        }
        // Through NVSwitches no link ends at the peer: every active link carries its traffic.
        labels[a][b] = "NV" + std::to_string(direct ? direct : active);
        continue;
      }
      int level = -1;
      labels[a][b] = ancestor && ancestor(dev[a], dev[b], &level) == 0
                         ? topology_level_label(level)
                         : "unknown (no common ancestor)";
    }
  }
  if (shutdown) shutdown();
  dlclose(lib);
  return labels;
}

}  // namespace gpuprobe::probes::link
