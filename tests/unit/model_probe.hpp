#pragma once
// The cache-inference tests' oracle: a Probe whose sequences run on a modelled GPU's probe
// buffer, with the device's own sequence and sweep limits (as the experiments set them).
#include <cstdint>

#include "device/model_device.hpp"
#include "measure/cache_search.hpp"

namespace gpuprobe::test {

inline constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;

inline measure::cache::Probe probe_on(device::ModelDevice& dev, ProbeBuffer& buf,
                                      std::uint64_t span, std::uint64_t seed) {
  measure::cache::Probe p;
  p.run = [&dev, &buf](const AccessSequence& s) { return dev.run_sequence(buf, s); };
  p.buffer_bytes = span;
  p.seed = seed;
  p.max_sequence = dev.max_sequence_length();
  p.max_sweep = dev.max_sweep_length();
  return p;
}

}  // namespace gpuprobe::test
