#include "probes/cache/sequence_session.hpp"

#include "core/error.hpp"
#include "core/units.hpp"

namespace gpuprobe::probes::cache_structure {

using measure::cache::Level;
using units::kMiB;

std::optional<Session> open_session(Context& ctx, std::uint64_t bytes, std::uint64_t span,
                                    int carveout_percent) {
  auto* seq = as_sequencer(ctx.device);
  if (seq == nullptr) return std::nullopt;
  Session s;
  s.seq = seq;
  if (bytes + 64 * kMiB > ctx.device.free_memory())
    throw UsageError("needs " + std::to_string(bytes) + " B of free device memory");
  s.buffer = seq->alloc_probe_buffer(bytes);
  auto* buf = s.buffer.get();
  s.probe.run = [seq, buf](const AccessSequence& a) { return seq->run_sequence(*buf, a); };
  s.probe.buffer_bytes = span;
  s.probe.seed = ctx.options.seed;
  s.probe.sm = 0;
  s.probe.carveout_percent = carveout_percent;
  // A margin below the sequencer's stated maximum: the CUDA sequencer refused launches of
  // exactly max_sequence_length() accesses on the H200 (cudaFuncSetAttribute: invalid argument).
  s.probe.max_sequence = seq->max_sequence_length() - seq->max_sequence_length() / 16;
  s.probe.max_sweep = seq->max_sweep_length();
  s.probe.contiguous_bytes = seq->physically_contiguous_bytes();
  // The L1 is read only by sequences that the sequencer stages whole (device/sequence.hpp).
  if (carveout_percent == 0)
    s.probe.max_sequence = std::min(s.probe.max_sequence, kSequenceStagedAccesses);
  return s;
}

void waive(ExperimentResult& r, const std::string& why) {
  r.status = Status::kWaived;
  r.reason = why;
}

}  // namespace gpuprobe::probes::cache_structure
