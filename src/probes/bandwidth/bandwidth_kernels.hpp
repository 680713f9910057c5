#pragma once
// Bandwidth kernels and their host launchers (implemented in bandwidth_kernels.cu), the RAII
// owners of device memory, streams and events they use, and the data generator shared by the
// fill kernel, the compare kernel and the host spot checks.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "device/device_buffer.hpp"

#if defined(__CUDACC__)
#define GP_HD __host__ __device__
#else
#define GP_HD
#endif

namespace gpuprobe::probes::bw {

// ---------------------------------------------------------------------------------------------
// RAII owners

using DeviceArray = device::DeviceBuffer;

// ---------------------------------------------------------------------------------------------
// Data: random, non-zero floats in [1, 2) from a hash of the index, the same on host and device.

GP_HD inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/// Bit pattern of element `i` of the data set `seed`: exponent of 1.0f, random mantissa.
GP_HD inline std::uint32_t value_bits(std::uint64_t i, std::uint32_t seed) {
  const std::uint32_t lo = static_cast<std::uint32_t>(i);
  const std::uint32_t hi = static_cast<std::uint32_t>(i >> 32);
  const std::uint32_t h = mix32(lo ^ mix32(hi + seed * 0x9e3779b9u + 0x632be5abu));
  return 0x3f800000u | (h & 0x007fffffu);
}

GP_HD inline float bits_to_float(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
#endif
}

GP_HD inline std::uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
#endif
}

/// What an output array must hold after one kernel launch, element by element.
enum class ExpectMode : int {
  kWindow,     ///< i in [lo, hi) with (i - lo) % step == 0: value(i + src_shift, seed_in);
               ///< else value(i, seed_poison)
  kConstant,   ///< every element: constant_bits
  kLayoutSum,  ///< (value(3i) + value(3i+1)) + value(3i+2), data set seed_in
  kTranspose,  ///< out[r * n + c] = in[c * n + r] = value(c * n + r, seed_in)
};

struct ExpectSpec {
  ExpectMode mode = ExpectMode::kWindow;
  std::uint32_t seed_in = 0;
  std::uint32_t seed_poison = 0;
  std::uint32_t constant_bits = 0;
  std::uint64_t lo = 0, hi = 0, step = 1;
  std::int64_t src_shift = 0;  ///< window: source index - output index
  std::uint64_t n = 0;         ///< transpose: matrix dimension
};

/// Bit pattern output element `i` must have.
GP_HD inline std::uint32_t expected_bits(const ExpectSpec& e, std::uint64_t i) {
  switch (e.mode) {
    case ExpectMode::kConstant:
      return e.constant_bits;
    case ExpectMode::kLayoutSum: {
      const float x = bits_to_float(value_bits(3 * i, e.seed_in));
      const float y = bits_to_float(value_bits(3 * i + 1, e.seed_in));
      const float z = bits_to_float(value_bits(3 * i + 2, e.seed_in));
      return float_to_bits((x + y) + z);
    }
    case ExpectMode::kTranspose: {
      const std::uint64_t r = i / e.n, c = i % e.n;
      return value_bits(c * e.n + r, e.seed_in);
    }
    case ExpectMode::kWindow:
    default:
      if (i >= e.lo && i < e.hi && (e.step == 1 || (i - e.lo) % e.step == 0))
        return value_bits(static_cast<std::uint64_t>(static_cast<std::int64_t>(i) + e.src_shift),
                          e.seed_in);
      return value_bits(i, e.seed_poison);
  }
}

// ---------------------------------------------------------------------------------------------
// Streaming kernels: read, write, copy with 4, 8 or 16 bytes per access.

/// Cache operator of the loads.
enum class LoadFlavor : int {
  kPlain,      ///< ld.global (C++ dereference)
  kNc,         ///< ld.global.nc (__ldg)
  kCs,         ///< ld.global.cs (__ldcs, evict first)
  kNcNa256,    ///< ld.global.nc.L1::no_allocate.L2::256B (no L1 allocation, 256-B L2 prefetch)
  kNcNaEf256,  ///< as kNcNa256, plus an L2 evict-first cache policy (createpolicy +
               ///< .L2::cache_hint)
};
/// Cache operator of the stores.
enum class StoreFlavor : int {
  kPlain,  ///< st.global
  kCs,     ///< st.global.cs (__stcs, streaming)
  kNaEf,   ///< st.global.L1::no_allocate.L2::cache_hint with an L2 evict-first policy
};
/// Which element a thread's k-th access of an iteration is.
enum class IndexScheme : int {
  kGrid,   ///< thread g, access k: g + k x (all threads), then + U x (all threads)
  kBlock,  ///< block b owns U x blockDim consecutive vectors; thread t, access k: t + k x blockDim
};
std::string to_string(LoadFlavor f);
std::string to_string(StoreFlavor f);
std::string to_string(IndexScheme s);

/// One streaming kernel: width_bytes 4 (float), 8 (float2) or 16 (float4); unroll 1, 2, 4, 8
/// independent accesses per thread per iteration.
struct StreamVariant {
  int width_bytes = 16;
  LoadFlavor load = LoadFlavor::kPlain;
  StoreFlavor store = StoreFlavor::kPlain;
  int unroll = 4;
  IndexScheme scheme = IndexScheme::kGrid;
  int passes = 1;  ///< sweeps over the array per launch (amortises launch and tail)
};

struct Launch {
  unsigned blocks = 1;
  unsigned threads = 256;
  cudaStream_t stream = nullptr;
};

/// Reads n floats (n a multiple of width_bytes / 4), v.passes times. When xor_out is not null, XORs
/// into *xor_out (atomicXor, one per warp) the fold of everything read: the accumulator is
/// rotated left by one bit before each pass, so the result is stream_read_fold(one pass's XOR,
/// passes); when it is null, writes nothing at all.
void launch_stream_read(const StreamVariant& v, const Launch& l, const float* src, std::uint64_t n,
                        std::uint32_t* xor_out);
/// What the stream read kernel reports for `passes` passes over data whose XOR is `one_pass`
/// (rotation is linear over XOR, so the per-thread rotations fold into the total's).
inline std::uint32_t stream_read_fold(std::uint32_t one_pass, std::uint32_t passes) {
  std::uint32_t acc = 0;
  for (std::uint32_t p = 0; p < passes; ++p) acc = ((acc << 1) | (acc >> 31)) ^ one_pass;
  return acc;
}
/// Writes the float with bit pattern value_bits to n floats (v.passes times).
void launch_stream_write(const StreamVariant& v, const Launch& l, float* dst, std::uint64_t n,
                         std::uint32_t value_bits);
/// dst[i] = src[i] for n floats (v.passes times).
void launch_stream_copy(const StreamVariant& v, const Launch& l, const float* src, float* dst,
                        std::uint64_t n);
/// Resident blocks per SM of the kernel (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
int stream_blocks_per_sm(const std::string& kind, const StreamVariant& v, unsigned threads);

// ---------------------------------------------------------------------------------------------
// Access-pattern kernels (float, 4 independent accesses per thread per iteration).

/// dst[dst_lo + j * stride] = src[src_lo + j * stride] for j < m.
void launch_strided_copy(const Launch& l, const float* src, float* dst, std::uint64_t src_lo,
                         std::uint64_t dst_lo, std::uint64_t stride, std::uint64_t m);
/// XORs src[lo + j * stride] for j < m into *xor_out (when not null).
void launch_strided_read(const Launch& l, const float* src, std::uint64_t lo, std::uint64_t stride,
                         std::uint64_t m, std::uint32_t* xor_out);
/// out[i] = (aos[3i] + aos[3i+1]) + aos[3i+2] (struct {float x, y, z}) for i < n.
void launch_layout_aos(const Launch& l, const float* aos, float* out, std::uint64_t n);
/// out[i] = (x[i] + y[i]) + z[i] for i < n.
void launch_layout_soa(const Launch& l, const float* x, const float* y, const float* z, float* out,
                       std::uint64_t n);
/// Resident blocks per SM of `threads` threads that every access-pattern kernel above reaches
/// (the smallest of their occupancies).
int pattern_blocks_per_sm(unsigned threads);
/// out = transpose(in), n x n floats, n a multiple of 32; kind 0 naive, 1 tiled 32 x 32,
/// 2 tiled with a 33-float row pitch. Blocks of 32 x 8 threads, one per 32 x 32 tile.
void launch_transpose(int kind, const float* in, float* out, std::uint64_t n, cudaStream_t s);

// ---------------------------------------------------------------------------------------------
// Setup and verification.

/// p[i] = value(i x index_mul + index_add, seed) for i < n.
void launch_fill(float* p, std::uint64_t n, std::uint64_t index_mul, std::uint64_t index_add,
                 std::uint32_t seed, int sm_count, cudaStream_t s);
/// Counts the elements of p[0..n) whose bit pattern differs from expected_bits(spec, i) into
/// *mismatches and the smallest such index into *first_bad (which must start at ~0).
void launch_compare(const float* p, std::uint64_t n, const ExpectSpec& spec,
                    unsigned long long* mismatches, unsigned long long* first_bad, int sm_count,
                    cudaStream_t s);

}  // namespace gpuprobe::probes::bw
