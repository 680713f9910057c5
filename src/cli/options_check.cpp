#include "cli/options_check.hpp"

#include <string>

#include "core/error.hpp"

namespace gpuprobe::cli {
namespace {

// The widest ranges any experiment accepts: bandwidth.stride takes element strides 1..64 and
// bandwidth.offset start offsets 0..64 elements (smem.bank_conflicts narrows strides to 1..32).
constexpr int kMaxStride = 64;
constexpr int kMaxOffset = 64;

}  // namespace

void check_common_options(const RunOptions& o, const OptionsGiven& given) {
  for (const auto& name : given.empty) throw UsageError(name + " is empty; give a value");
  // CLI11's range check lets NaN through (every comparison with it is false).
  const double spread = o.protocol.target_spread;
  if (!(spread >= 0.0 && spread <= 1.0))
    throw UsageError("--spread " + std::to_string(spread) +
                     " is not allowed; give a number in 0..1");
  if (given.out && o.out_dir.empty())
    throw UsageError("--out is empty; give the directory for the results");
  if (given.loads && o.loads.empty())
    throw UsageError("--loads is empty; allowed: default, ca, cg, cv, nc, all");
  for (int s : o.strides)
    if (s < 1 || s > kMaxStride)
      throw UsageError("--strides: stride " + std::to_string(s) + " is not allowed; use 1.." +
                       std::to_string(kMaxStride) + " elements");
  for (int off : o.offsets)
    if (off < 0 || off > kMaxOffset)
      throw UsageError("--offsets: offset " + std::to_string(off) + " is not allowed; use 0.." +
                       std::to_string(kMaxOffset) + " elements");
  for (int w : o.word_sizes)
    if (w != 4 && w != 8 && w != 16)
      throw UsageError("--word-sizes: " + std::to_string(w) + " B is not allowed; use 4, 8 or 16");
  for (int c : o.carveouts)
    if (c < -1 || c > 100)
      throw UsageError("--carveouts: " + std::to_string(c) +
                       " is not allowed; use -1 (driver default) or 0..100 percent shared memory");
}

}  // namespace gpuprobe::cli
