// Bandwidth kernels. The streaming kernels are one template per operation (read, write, copy)
// over the vector type (float, float2, float4), the cache operators and the unroll factor; the
// access-pattern kernels (strided, offset, layout, transpose) work on floats.
#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "core/cuda_check.hpp"
#include "core/dispatch.hpp"
#include "probes/bandwidth/bandwidth_kernels.hpp"

namespace gpuprobe::probes::bw {

std::string to_string(LoadFlavor f) {
  switch (f) {
    case LoadFlavor::kPlain:
      return "ld.global";
    case LoadFlavor::kNc:
      return "ld.global.nc";
    case LoadFlavor::kCs:
      return "ld.global.cs";
    case LoadFlavor::kNcNa256:
      return "ld.global.nc.L1::no_allocate.L2::256B";
    case LoadFlavor::kNcNaEf256:
      return "ld.global.nc.L1::no_allocate.L2::cache_hint(evict_first).L2::256B";
  }
  return "?";
}
std::string to_string(StoreFlavor f) {
  switch (f) {
    case StoreFlavor::kPlain:
      return "st.global";
    case StoreFlavor::kCs:
      return "st.global.cs";
    case StoreFlavor::kNaEf:
      return "st.global.L1::no_allocate.L2::cache_hint(evict_first)";
  }
  return "?";
}
std::string to_string(IndexScheme s) { return s == IndexScheme::kGrid ? "grid" : "block"; }

namespace {

using u64 = std::uint64_t;
using u32 = std::uint32_t;

// ---------------------------------------------------------------------------------------------
// Vector helpers

template <typename V>
constexpr int kLanes = sizeof(V) / sizeof(float);

__device__ __forceinline__ u32 fold(float v) { return __float_as_uint(v); }
__device__ __forceinline__ u32 fold(float2 v) {
  return __float_as_uint(v.x) ^ __float_as_uint(v.y);
}
__device__ __forceinline__ u32 fold(float4 v) {
  return (__float_as_uint(v.x) ^ __float_as_uint(v.y)) ^
         (__float_as_uint(v.z) ^ __float_as_uint(v.w));
}

template <typename V>
__device__ __forceinline__ V splat(float f) {
  if constexpr (std::is_same_v<V, float>) {
    return f;
  } else if constexpr (std::is_same_v<V, float2>) {
    return make_float2(f, f);
  } else {
    return make_float4(f, f, f, f);
  }
}

// Loads with no L1 allocation and a 256-byte L2 prefetch, optionally with an evict-first L2
// cache policy (a createpolicy result; .L2::evict_first alone is only allowed on 256-bit loads).
// PTX for the compute_75 fallback target cannot express these (sm_80+): ld.global.nc there.
#define GP_LD_NA "ld.global.nc.L1::no_allocate.L2::256B"
#define GP_LD_NA_POLICY "ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B"

/// An L2 "evict first" cache policy for every access carrying it (0 on targets without one).
__device__ __forceinline__ u64 evict_first_policy() {
#if __CUDA_ARCH__ >= 800
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
#else
  return 0;
#endif
}

template <bool kPolicy>
__device__ __forceinline__ float load_hinted(const float* p, u64 policy) {
#if __CUDA_ARCH__ >= 800
  float v;
  if constexpr (kPolicy)
    asm(GP_LD_NA_POLICY ".f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(policy));
  else
    asm(GP_LD_NA ".f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
#else
  return __ldg(p);
#endif
}
template <bool kPolicy>
__device__ __forceinline__ float2 load_hinted(const float2* p, u64 policy) {
#if __CUDA_ARCH__ >= 800
  float2 v;
  if constexpr (kPolicy)
    asm(GP_LD_NA_POLICY ".v2.f32 {%0, %1}, [%2], %3;" : "=f"(v.x), "=f"(v.y) : "l"(p), "l"(policy));
  else
    asm(GP_LD_NA ".v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "l"(p));
  return v;
#else
  return __ldg(p);
#endif
}
template <bool kPolicy>
__device__ __forceinline__ float4 load_hinted(const float4* p, u64 policy) {
#if __CUDA_ARCH__ >= 800
  float4 v;
  if constexpr (kPolicy)
    asm(GP_LD_NA_POLICY ".v4.f32 {%0, %1, %2, %3}, [%4], %5;"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "l"(p), "l"(policy));
  else
    asm(GP_LD_NA ".v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "l"(p));
  return v;
#else
  return __ldg(p);
#endif
}
#undef GP_LD_NA
#undef GP_LD_NA_POLICY

/// `policy` is only used by kNcNaEf256 (from evict_first_policy()).
template <LoadFlavor L, typename V>
__device__ __forceinline__ V load(const V* p, u64 policy) {
  if constexpr (L == LoadFlavor::kPlain) {
    return *p;
  } else if constexpr (L == LoadFlavor::kNc) {
    return __ldg(p);
  } else if constexpr (L == LoadFlavor::kCs) {
    return __ldcs(p);
  } else {
    return load_hinted<L == LoadFlavor::kNcNaEf256>(p, policy);
  }
}

#define GP_ST_NAEF "st.global.L1::no_allocate.L2::cache_hint"
__device__ __forceinline__ void store_naef(float* p, float v, u64 policy) {
#if __CUDA_ARCH__ >= 800
  asm volatile(GP_ST_NAEF ".f32 [%0], %1, %2;" : : "l"(p), "f"(v), "l"(policy) : "memory");
#else
  __stcs(p, v);
#endif
}
__device__ __forceinline__ void store_naef(float2* p, float2 v, u64 policy) {
#if __CUDA_ARCH__ >= 800
  asm volatile(GP_ST_NAEF ".v2.f32 [%0], {%1, %2}, %3;"
               :
               : "l"(p), "f"(v.x), "f"(v.y), "l"(policy)
               : "memory");
#else
  __stcs(p, v);
#endif
}
__device__ __forceinline__ void store_naef(float4* p, float4 v, u64 policy) {
#if __CUDA_ARCH__ >= 800
  asm volatile(GP_ST_NAEF ".v4.f32 [%0], {%1, %2, %3, %4}, %5;"
               :
               : "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "l"(policy)
               : "memory");
#else
  __stcs(p, v);
#endif
}
#undef GP_ST_NAEF

/// `policy` is only used by kNaEf (from evict_first_policy()).
template <StoreFlavor S, typename V>
__device__ __forceinline__ void store(V* p, const V& v, u64 policy) {
  if constexpr (S == StoreFlavor::kPlain) {
    *p = v;
  } else if constexpr (S == StoreFlavor::kCs) {
    __stcs(p, v);
  } else {
    store_naef(p, v, policy);
  }
}

template <LoadFlavor L, StoreFlavor S = StoreFlavor::kPlain>
__device__ __forceinline__ u64 policy_for() {
  if constexpr (L == LoadFlavor::kNcNaEf256 || S == StoreFlavor::kNaEf) return evict_first_policy();
  return 0;
}

/// XOR-reduces `acc` over the warp; lane 0 folds it into *out. Every lane must call it.
__device__ __forceinline__ void warp_xor_out(u32 acc, u32* out) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31u) == 0) atomicXor(out, acc);
}

/// First vector index of this thread, distance between its U accesses of one iteration, and
/// distance between iterations.
template <int U>
__device__ __forceinline__ void first_index(IndexScheme s, u64& i, u64& inner, u64& outer) {
  const u64 threads = static_cast<u64>(gridDim.x) * blockDim.x;
  if (s == IndexScheme::kGrid) {
    i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
    inner = threads;
  } else {
    i = static_cast<u64>(blockIdx.x) * blockDim.x * U + threadIdx.x;
    inner = blockDim.x;
  }
  outer = threads * U;
}

// ---------------------------------------------------------------------------------------------
// Streaming kernels. n counts vectors. The main loop issues U independent accesses before
// using any of them; the tail covers the last partial iteration (at most U - 1 accesses).
// `passes` sweeps over the whole array that many times in one launch (arrays are much larger
// than the L2, so every pass streams from DRAM again); 1 is the plain kernel.

template <typename V, LoadFlavor L, int U>
__global__ void stream_read_kernel(const V* src, u64 n, IndexScheme scheme, u32 passes,
                                   u32* xor_out) {
  const u64 policy = policy_for<L>();
  u32 acc = 0;
  for (u32 pass = 0; pass < passes; ++pass) {
    // Rotating the fold between passes keeps every pass in the result (plain XOR would cancel
    // an even number of passes), so a launch is verified with the pass count it was timed with.
    acc = __funnelshift_l(acc, acc, 1);
    u64 i, inner, outer;
    first_index<U>(scheme, i, inner, outer);
    for (; i + (U - 1) * inner < n; i += outer) {
      V v[U];
#pragma unroll
      for (int k = 0; k < U; ++k) v[k] = load<L>(src + i + k * inner, policy);
#pragma unroll
      for (int k = 0; k < U; ++k) acc ^= fold(v[k]);
    }
#pragma unroll
    for (int k = 0; k < U - 1; ++k)
      if (i + k * inner < n) acc ^= fold(load<L>(src + i + k * inner, policy));
  }
  // Timed runs pass no output: the loads stay (the branch is decided at run time) and nothing
  // is written.
  if (xor_out != nullptr) warp_xor_out(acc, xor_out);
}

template <typename V, StoreFlavor S, int U>
__global__ void stream_write_kernel(V* dst, u64 n, IndexScheme scheme, u32 passes, u32 bits) {
  const u64 policy = policy_for<LoadFlavor::kPlain, S>();
  const V v = splat<V>(__uint_as_float(bits));
  for (u32 pass = 0; pass < passes; ++pass) {
    u64 i, inner, outer;
    first_index<U>(scheme, i, inner, outer);
    for (; i + (U - 1) * inner < n; i += outer) {
#pragma unroll
      for (int k = 0; k < U; ++k) store<S>(dst + i + k * inner, v, policy);
    }
#pragma unroll
    for (int k = 0; k < U - 1; ++k)
      if (i + k * inner < n) store<S>(dst + i + k * inner, v, policy);
  }
}

template <typename V, LoadFlavor L, StoreFlavor S, int U>
__global__ void stream_copy_kernel(const V* src, V* dst, u64 n, IndexScheme scheme, u32 passes) {
  const u64 policy = policy_for<L, S>();
  for (u32 pass = 0; pass < passes; ++pass) {
    u64 i, inner, outer;
    first_index<U>(scheme, i, inner, outer);
    for (; i + (U - 1) * inner < n; i += outer) {
      V v[U];
#pragma unroll
      for (int k = 0; k < U; ++k) v[k] = load<L>(src + i + k * inner, policy);
#pragma unroll
      for (int k = 0; k < U; ++k) store<S>(dst + i + k * inner, v[k], policy);
    }
#pragma unroll
    for (int k = 0; k < U - 1; ++k)
      if (i + k * inner < n)
        store<S>(dst + i + k * inner, load<L>(src + i + k * inner, policy), policy);
  }
}

// ---------------------------------------------------------------------------------------------
// Access-pattern kernels.

constexpr int kPatternUnroll = 4;

__global__ void strided_copy_kernel(const float* src, float* dst, u64 src_lo, u64 dst_lo,
                                    u64 stride, u64 m) {
  constexpr int U = kPatternUnroll;
  u64 j, inner, outer;
  first_index<U>(IndexScheme::kGrid, j, inner, outer);
  for (; j + (U - 1) * inner < m; j += outer) {
    float v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) v[k] = src[src_lo + (j + k * inner) * stride];
#pragma unroll
    for (int k = 0; k < U; ++k) dst[dst_lo + (j + k * inner) * stride] = v[k];
  }
#pragma unroll
  for (int k = 0; k < U - 1; ++k)
    if (j + k * inner < m)
      dst[dst_lo + (j + k * inner) * stride] = src[src_lo + (j + k * inner) * stride];
}

__global__ void strided_read_kernel(const float* src, u64 lo, u64 stride, u64 m, u32* xor_out) {
  constexpr int U = kPatternUnroll;
  u64 j, inner, outer;
  first_index<U>(IndexScheme::kGrid, j, inner, outer);
  u32 acc = 0;
  for (; j + (U - 1) * inner < m; j += outer) {
    float v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) v[k] = src[lo + (j + k * inner) * stride];
#pragma unroll
    for (int k = 0; k < U; ++k) acc ^= fold(v[k]);
  }
#pragma unroll
  for (int k = 0; k < U - 1; ++k)
    if (j + k * inner < m) acc ^= fold(src[lo + (j + k * inner) * stride]);
  if (xor_out != nullptr) warp_xor_out(acc, xor_out);
}

struct Vec3 {
  float x, y, z;
};
static_assert(sizeof(Vec3) == 12, "AoS element is three packed floats");

__global__ void layout_aos_kernel(const Vec3* p, float* out, u64 n) {
  constexpr int U = kPatternUnroll;
  u64 i, inner, outer;
  first_index<U>(IndexScheme::kGrid, i, inner, outer);
  for (; i + (U - 1) * inner < n; i += outer) {
    Vec3 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) v[k] = p[i + k * inner];
#pragma unroll
    for (int k = 0; k < U; ++k) out[i + k * inner] = (v[k].x + v[k].y) + v[k].z;
  }
#pragma unroll
  for (int k = 0; k < U - 1; ++k)
    if (i + k * inner < n) {
      const Vec3 v = p[i + k * inner];
      out[i + k * inner] = (v.x + v.y) + v.z;
    }
}

__global__ void layout_soa_kernel(const float* x, const float* y, const float* z, float* out,
                                  u64 n) {
  constexpr int U = kPatternUnroll;
  u64 i, inner, outer;
  first_index<U>(IndexScheme::kGrid, i, inner, outer);
  for (; i + (U - 1) * inner < n; i += outer) {
    float a[U], b[U], c[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      a[k] = x[i + k * inner];
      b[k] = y[i + k * inner];
      c[k] = z[i + k * inner];
    }
#pragma unroll
    for (int k = 0; k < U; ++k) out[i + k * inner] = (a[k] + b[k]) + c[k];
  }
#pragma unroll
  for (int k = 0; k < U - 1; ++k)
    if (i + k * inner < n)
      out[i + k * inner] = (x[i + k * inner] + y[i + k * inner]) + z[i + k * inner];
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;

// Thread (tx, ty) of block (bx, by) copies in[(by*32 + ty + j) * n + bx*32 + tx] to its transposed
// place, j = 0, 8, 16, 24: a warp reads a row piece and writes a column piece.
__global__ void transpose_naive_kernel(const float* in, float* out, u64 n) {
  const u64 x = static_cast<u64>(blockIdx.x) * kTile + threadIdx.x;
  const u64 y = static_cast<u64>(blockIdx.y) * kTile + threadIdx.y;
#pragma unroll
  for (int j = 0; j < kTile; j += kTileRows) out[x * n + y + j] = in[(y + j) * n + x];
}

// The tile goes through shared memory so that both the global read and the global write are
// row pieces; the transposed read of the tile is a column of the shared array (row pitch
// kPitch floats: 32 puts a whole column in one bank, 33 spreads it over all 32).
template <int kPitch>
__global__ void transpose_tiled_kernel(const float* in, float* out, u64 n) {
  __shared__ float tile[kTile][kPitch];
  u64 x = static_cast<u64>(blockIdx.x) * kTile + threadIdx.x;
  u64 y = static_cast<u64>(blockIdx.y) * kTile + threadIdx.y;
#pragma unroll
  for (int j = 0; j < kTile; j += kTileRows)
    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = static_cast<u64>(blockIdx.y) * kTile + threadIdx.x;
  y = static_cast<u64>(blockIdx.x) * kTile + threadIdx.y;
#pragma unroll
  for (int j = 0; j < kTile; j += kTileRows)
    out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// ---------------------------------------------------------------------------------------------
// Setup and verification kernels (not timed).

__global__ void fill_kernel(float* p, u64 n, u64 mul, u64 add, u32 seed) {
  const u64 threads = static_cast<u64>(gridDim.x) * blockDim.x;
  for (u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += threads)
    p[i] = __uint_as_float(value_bits(i * mul + add, seed));
}

__global__ void compare_kernel(const float* p, u64 n, ExpectSpec spec,
                               unsigned long long* mismatches, unsigned long long* first_bad) {
  const u64 threads = static_cast<u64>(gridDim.x) * blockDim.x;
  unsigned long long count = 0, first = ~0ull;
  for (u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += threads) {
    if (__float_as_uint(p[i]) != expected_bits(spec, i)) {
      ++count;
      first = min(first, static_cast<unsigned long long>(i));
    }
  }
  if (count) {
    atomicAdd(mismatches, count);
    atomicMin(first_bad, first);
  }
}

// ---------------------------------------------------------------------------------------------
// Dispatch from run-time variants to template instances.

template <class F>
void with_vector(int width_bytes, F&& f) {
  switch (width_bytes) {
    case 4:
      return f(float{});
    case 8:
      return f(float2{});
    case 16:
      return f(float4{});
  }
  throw std::invalid_argument("access width " + std::to_string(width_bytes) +
                              " B has no kernel; use 4, 8 or 16");
}

template <class F>
void with_load(LoadFlavor l, F&& f) {
  using L = LoadFlavor;
  if (!dispatch<L::kPlain, L::kNc, L::kCs, L::kNcNa256, L::kNcNaEf256>(l, f))
    throw std::invalid_argument("unknown load flavor");
}

template <class F>
void with_store(StoreFlavor s, F&& f) {
  using S = StoreFlavor;
  if (!dispatch<S::kPlain, S::kCs, S::kNaEf>(s, f))
    throw std::invalid_argument("unknown store flavor");
}

template <class F>
void with_unroll(int u, F&& f) {
  if (!dispatch<1, 2, 4, 8>(u, f))
    throw std::invalid_argument("unroll " + std::to_string(u) + " has no kernel; use 1, 2, 4 or 8");
}

/// Calls f(kernel, V{}) with the read kernel of the variant.
template <class F>
void with_read_kernel(const StreamVariant& v, F&& f) {
  with_vector(v.width_bytes, [&](auto vt) {
    using V = decltype(vt);
    with_load(v.load, [&](auto lt) {
      with_unroll(v.unroll, [&](auto ut) {
        f(stream_read_kernel<V, decltype(lt)::value, decltype(ut)::value>, vt);
      });
    });
  });
}

template <class F>
void with_write_kernel(const StreamVariant& v, F&& f) {
  with_vector(v.width_bytes, [&](auto vt) {
    using V = decltype(vt);
    with_store(v.store, [&](auto st) {
      with_unroll(v.unroll, [&](auto ut) {
        f(stream_write_kernel<V, decltype(st)::value, decltype(ut)::value>, vt);
      });
    });
  });
}

template <class F>
void with_copy_kernel(const StreamVariant& v, F&& f) {
  with_vector(v.width_bytes, [&](auto vt) {
    using V = decltype(vt);
    with_load(v.load, [&](auto lt) {
      with_store(v.store, [&](auto st) {
        with_unroll(v.unroll, [&](auto ut) {
          f(stream_copy_kernel<V, decltype(lt)::value, decltype(st)::value, decltype(ut)::value>,
            vt);
        });
      });
    });
  });
}

void check_launch(const Launch& l) {
  if (l.blocks == 0 || l.threads == 0 || l.threads % 32 != 0 || l.threads > 1024)
    throw std::invalid_argument("launch needs blocks > 0 and a multiple of 32 threads up to 1024");
}

void check_count(std::uint64_t n, int width_bytes) {
  if (n % static_cast<std::uint64_t>(width_bytes / 4) != 0)
    throw std::invalid_argument("element count is not a multiple of the vector width");
}

std::uint32_t check_passes(const StreamVariant& v) {
  if (v.passes < 1) throw std::invalid_argument("a stream kernel needs at least one pass");
  return static_cast<std::uint32_t>(v.passes);
}

unsigned fill_blocks(int sm_count) { return static_cast<unsigned>(std::max(1, sm_count) * 4); }

}  // namespace

void launch_stream_read(const StreamVariant& v, const Launch& l, const float* src, std::uint64_t n,
                        std::uint32_t* xor_out) {
  check_launch(l);
  check_count(n, v.width_bytes);
  with_read_kernel(v, [&](auto kernel, auto vt) {
    using V = decltype(vt);
    kernel<<<l.blocks, l.threads, 0, l.stream>>>(reinterpret_cast<const V*>(src), n / kLanes<V>,
                                                 v.scheme, check_passes(v), xor_out);
  });
  GP_CUDA_CHECK_LAUNCH();
}

void launch_stream_write(const StreamVariant& v, const Launch& l, float* dst, std::uint64_t n,
                         std::uint32_t value_bits) {
  check_launch(l);
  check_count(n, v.width_bytes);
  with_write_kernel(v, [&](auto kernel, auto vt) {
    using V = decltype(vt);
    kernel<<<l.blocks, l.threads, 0, l.stream>>>(reinterpret_cast<V*>(dst), n / kLanes<V>, v.scheme,
                                                 check_passes(v), value_bits);
  });
  GP_CUDA_CHECK_LAUNCH();
}

void launch_stream_copy(const StreamVariant& v, const Launch& l, const float* src, float* dst,
                        std::uint64_t n) {
  check_launch(l);
  check_count(n, v.width_bytes);
  with_copy_kernel(v, [&](auto kernel, auto vt) {
    using V = decltype(vt);
    kernel<<<l.blocks, l.threads, 0, l.stream>>>(reinterpret_cast<const V*>(src),
                                                 reinterpret_cast<V*>(dst), n / kLanes<V>, v.scheme,
                                                 check_passes(v));
  });
  GP_CUDA_CHECK_LAUNCH();
}

int stream_blocks_per_sm(const std::string& kind, const StreamVariant& v, unsigned threads) {
  int blocks = 0;
  auto occupancy = [&](auto kernel, auto) {
    GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel,
                                                                static_cast<int>(threads), 0));
  };
  if (kind == "read") {
    with_read_kernel(v, occupancy);
  } else if (kind == "write") {
    with_write_kernel(v, occupancy);
  } else if (kind == "copy") {
    with_copy_kernel(v, occupancy);
  } else {
    throw std::invalid_argument("unknown stream kind " + kind);
  }
  return blocks;
}

void launch_strided_copy(const Launch& l, const float* src, float* dst, std::uint64_t src_lo,
                         std::uint64_t dst_lo, std::uint64_t stride, std::uint64_t m) {
  check_launch(l);
  strided_copy_kernel<<<l.blocks, l.threads, 0, l.stream>>>(src, dst, src_lo, dst_lo, stride, m);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_strided_read(const Launch& l, const float* src, std::uint64_t lo, std::uint64_t stride,
                         std::uint64_t m, std::uint32_t* xor_out) {
  check_launch(l);
  strided_read_kernel<<<l.blocks, l.threads, 0, l.stream>>>(src, lo, stride, m, xor_out);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_layout_aos(const Launch& l, const float* aos, float* out, std::uint64_t n) {
  check_launch(l);
  layout_aos_kernel<<<l.blocks, l.threads, 0, l.stream>>>(reinterpret_cast<const Vec3*>(aos), out,
                                                          n);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_layout_soa(const Launch& l, const float* x, const float* y, const float* z, float* out,
                       std::uint64_t n) {
  check_launch(l);
  layout_soa_kernel<<<l.blocks, l.threads, 0, l.stream>>>(x, y, z, out, n);
  GP_CUDA_CHECK_LAUNCH();
}

int pattern_blocks_per_sm(unsigned threads) {
  int best = 1 << 30;
  auto take = [&](auto kernel) {
    int blocks = 0;
    GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel,
                                                                static_cast<int>(threads), 0));
    best = std::min(best, blocks);
  };
  take(strided_copy_kernel);
  take(strided_read_kernel);
  take(layout_aos_kernel);
  take(layout_soa_kernel);
  return best;
}

void launch_transpose(int kind, const float* in, float* out, std::uint64_t n, cudaStream_t s) {
  if (n == 0 || n % kTile != 0 || n / kTile > 65535)
    throw std::invalid_argument("transpose size must be a multiple of 32 up to 2097120");
  const dim3 grid(static_cast<unsigned>(n / kTile), static_cast<unsigned>(n / kTile));
  const dim3 block(kTile, kTileRows);
  switch (kind) {
    case 0:
      transpose_naive_kernel<<<grid, block, 0, s>>>(in, out, n);
      break;
    case 1:
      transpose_tiled_kernel<kTile><<<grid, block, 0, s>>>(in, out, n);
      break;
    case 2:
      transpose_tiled_kernel<kTile + 1><<<grid, block, 0, s>>>(in, out, n);
      break;
    default:
      throw std::invalid_argument("transpose kind must be 0, 1 or 2");
  }
  GP_CUDA_CHECK_LAUNCH();
}

void launch_fill(float* p, std::uint64_t n, std::uint64_t index_mul, std::uint64_t index_add,
                 std::uint32_t seed, int sm_count, cudaStream_t s) {
  fill_kernel<<<fill_blocks(sm_count), 512, 0, s>>>(p, n, index_mul, index_add, seed);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_compare(const float* p, std::uint64_t n, const ExpectSpec& spec,
                    unsigned long long* mismatches, unsigned long long* first_bad, int sm_count,
                    cudaStream_t s) {
  compare_kernel<<<fill_blocks(sm_count), 512, 0, s>>>(p, n, spec, mismatches, first_bad);
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::probes::bw
