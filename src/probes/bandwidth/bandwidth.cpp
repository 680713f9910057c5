// Bandwidth family: streaming DRAM bandwidth (read, write, copy with 4, 8 and 16 bytes per
// access, over a search of cache operators, unroll factors and grid shapes) and the access
// patterns (stride, offset, layout, transpose) measured beside what the sector model predicts.
//
// Conventions (also written into every result):
//  - GB/s = 1e9 bytes per second. A streaming kernel counts the bytes it reads plus the bytes it
//    writes (copy: both arrays). A pattern kernel counts useful bytes: the elements it asks for
//    x 4 B, per direction; what the hardware moves is what the sector model predicts from that.
//  - The theoretical peak is memory clock x 2 (double data rate) x bus width / 8, from the
//    device's maximum memory clock and bus width; every bandwidth is shown beside it.
//  - Timing: CUDA events around K back-to-back launches (K sized for about 3 ms per sample),
//    preceded by one untimed launch so that the start event is stamped when the GPU finishes
//    real work, not while it waits for the host; the protocol repeats samples until stable.
//  - Every kernel's output is verified after its timed runs: the output array is overwritten
//    with other random data, the kernel runs once more, a compare kernel counts the elements
//    that differ from the host's formula (must be 0) and the host re-checks spots it copies back.
//    Read kernels XOR everything they read; the host computes the same XOR from the formula.
#include "probes/bandwidth/bandwidth.hpp"

#include "probes/bandwidth/bandwidth_common.hpp"

namespace gpuprobe::probes {

void register_bandwidth_experiments(Registry& registry) {
  registry.add(bwhost::make_stream_experiment(analysis::StreamKind::kRead));
  registry.add(bwhost::make_stream_experiment(analysis::StreamKind::kWrite));
  registry.add(bwhost::make_stream_experiment(analysis::StreamKind::kCopy));
  registry.add(bwhost::make_stride_experiment());
  registry.add(bwhost::make_offset_experiment());
  registry.add(bwhost::make_layout_experiment());
  registry.add(bwhost::make_transpose_experiment());
}

}  // namespace gpuprobe::probes
