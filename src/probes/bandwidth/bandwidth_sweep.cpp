// bandwidth.sweep and bandwidth.hierarchy.
//
// Why these exist (issue 3, items 3 and 4): seed 003's "memory hierarchy" table measured a 4 KB
// sequential dependent chain (a latency walk that one cache line set holds, i.e. neither a
// bandwidth nor a hierarchy) and a single 64 MB run (one sample, of a size that may be neither
// in L2 nor well past it), so its numbers mean little. This tool instead:
//  - sweeps the working set log-spaced (3 points per octave, refined at the knees) in two
//    regimes and finds the plateaus (L1, L2, DRAM) and the capacities between them with the same
//    change-point analysis as latency.sweep (analysis::find_levels on log bandwidth);
//      L1 regime: every SM reads its own private slice of W bytes (W per SM) with ld.global.ca
//        16-B loads at full occupancy; bytes per SM cycle from %clock64 per SM;
//      L2 regime: the whole grid reads one region of W bytes (total) with ld.global.cg (L1
//        bypassed); GB/s from %globaltimer over the timed part of every block;
//  - repeats every point until the protocol's spread target holds, sizing each launch to about
//    1 ms of timed reads, and verifies every launch: each block's wrapping sum of the words it
//    read is compared with the host's sum of the same words (data from a hash of the index);
//  - puts register file, shared memory, L1, L2 and DRAM bandwidth in one table beside the
//    latencies the latency family measured (bandwidth.hierarchy).
// Conventions: GB/s = 1e9 bytes/s; bytes counted are bytes the kernel asks for (16-B loads,
// every byte used); B/clk/SM uses the SM clock measured in the kernel (cycles / globaltimer).
#include "probes/bandwidth/bandwidth_sweep.hpp"

#include "probes/bandwidth/sweep_rig.hpp"

namespace gpuprobe::probes {

void register_bandwidth_sweep_experiments(Registry& registry) {
  registry.add(bandwidth_rig::make_sweep_experiment());
  registry.add(bandwidth_rig::make_hierarchy_experiment());
}

}  // namespace gpuprobe::probes
