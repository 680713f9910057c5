#pragma once
// Which 128-byte lines of a range a scattered placement loads: a line is selected when a hash of
// its line number (its byte offset in the buffer / 128) and a seed falls below the share. The
// host (which samples among the selected lines, and the modelled GPU) and the CUDA kernels that
// load them use this one predicate, so both sides agree line for line.
#include <cstdint>

#if defined(__CUDACC__)
#define GP_HOST_DEVICE __host__ __device__
#else
#define GP_HOST_DEVICE
#endif

namespace gpuprobe::line_select {

inline constexpr std::uint64_t kLineBytes = 128;
/// A threshold at or above this selects every line (the plain, contiguous placement).
inline constexpr std::uint64_t kAll = std::uint64_t{1} << 32;

/// The threshold of a share in (0, 1]: a line is selected when its 32-bit hash is below it.
inline std::uint64_t threshold_of(double share) {
  if (!(share < 1.0)) return kAll;
  if (!(share > 0.0)) return 0;  // none (and no undefined conversion of a negative or NaN)
  return static_cast<std::uint64_t>(share * static_cast<double>(kAll));
}

/// splitmix64's finaliser of x + the golden-ratio increment: every bit of x moves every bit.
/// (Also the modelled GPU's hash of line numbers.)
GP_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  std::uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// mix64(line ^ seed): every bit of the line number moves the hash, so the selection is
/// independent of where the line falls in a hashed cache's sets.
GP_HOST_DEVICE inline bool selected(std::uint64_t line, std::uint64_t seed,
                                    std::uint64_t threshold) {
  if (threshold >= kAll) return true;
  return (mix64(line ^ seed) >> 32) < threshold;
}

}  // namespace gpuprobe::line_select
