#pragma once
// How two GPUs are connected, as NVML reports it (nvidia-smi topo -m's labels): "NV<links>"
// over NVLink (direct or through NVSwitches), else the PCIe common ancestor: PIX, PXB, PHB, NODE,
// SYS. NVML is loaded at run time; every entry says why when it cannot be read.
#include <string>
#include <vector>

namespace gpuprobe::probes::link {

/// labels[a][b] for the GPUs at these PCI bus ids ("" on the diagonal).
std::vector<std::vector<std::string>> nvml_topology(const std::vector<std::string>& pci_bus_ids);

/// The nvidia-smi label of an NVML topology level (nvmlGpuTopologyLevel_t value).
std::string topology_level_label(int level);

}  // namespace gpuprobe::probes::link
