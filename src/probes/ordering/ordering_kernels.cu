// Kernels of the memory-ordering probes: store + fence loops, scoped atomics (::cuda::atomic_ref)
// in dependent chains and at full occupancy, and the message-passing litmus test. Every access
// whose ordering matters is inline PTX (asm volatile, "memory" clobber) so that the compiler
// neither removes, merges nor moves it: what runs is exactly the instruction named.
#include <cuda/atomic>

#include <stdexcept>

#include "device/ptx.cuh"
#include "core/cuda_check.hpp"
#include "core/dispatch.hpp"
#include "probes/ordering/ordering_kernels.hpp"

namespace gpuprobe::probes::ordering {
namespace {

using device::ptx::clock_64;
using device::ptx::global_timer;
using device::ptx::sm_id;

// ---- fences ----------------------------------------------------------------------------------

template <FenceKind F>
__device__ __forceinline__ void fence() {
  if constexpr (F == FenceKind::kAcqRelCta) asm volatile("fence.acq_rel.cta;" ::: "memory");
  if constexpr (F == FenceKind::kAcqRelGpu) asm volatile("fence.acq_rel.gpu;" ::: "memory");
  if constexpr (F == FenceKind::kAcqRelSys) asm volatile("fence.acq_rel.sys;" ::: "memory");
  if constexpr (F == FenceKind::kScCta) asm volatile("fence.sc.cta;" ::: "memory");
  if constexpr (F == FenceKind::kScGpu) asm volatile("fence.sc.gpu;" ::: "memory");
  if constexpr (F == FenceKind::kScSys) asm volatile("fence.sc.sys;" ::: "memory");
}

__device__ __forceinline__ void store_weak(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

template <FenceKind F>
__global__ void __launch_bounds__(1024) fence_kernel(std::uint32_t iterations, std::uint32_t* scratch,
                                                     std::uint32_t* out, TimeRecord* records) {
  const std::uint32_t t = threadIdx.x;
  std::uint32_t x = t;
  std::uint32_t* mine = scratch + t;
  __syncthreads();
  const std::uint64_t g0 = global_timer();
  const std::uint64_t c0 = clock_64();
  for (std::uint32_t i = 0; i < iterations; ++i) {
#pragma unroll
    for (int u = 0; u < kFenceUnroll; ++u) {
      x = x * 3u + 1u;
      store_weak(mine, x);
      fence<F>();
    }
  }
  const std::uint64_t c1 = clock_64();
  const std::uint64_t g1 = global_timer();
  out[t] = x;
  if ((t & 31u) == 0) records[t / 32] = TimeRecord{c0, c1, g0, g1, sm_id(), 0};
}

// ---- atomics ---------------------------------------------------------------------------------

template <AtomicScope S>
struct ScopeOf;
template <>
struct ScopeOf<AtomicScope::kBlock> {
  static constexpr ::cuda::thread_scope value = ::cuda::thread_scope_block;
};
template <>
struct ScopeOf<AtomicScope::kDevice> {
  static constexpr ::cuda::thread_scope value = ::cuda::thread_scope_device;
};
template <>
struct ScopeOf<AtomicScope::kSystem> {
  static constexpr ::cuda::thread_scope value = ::cuda::thread_scope_system;
};

template <AtomicOrder O>
__host__ __device__ constexpr ::cuda::std::memory_order order_of() {
  if constexpr (O == AtomicOrder::kRelaxed) return ::cuda::std::memory_order_relaxed;
  if constexpr (O == AtomicOrder::kAcqRel) return ::cuda::std::memory_order_acq_rel;
  return ::cuda::std::memory_order_seq_cst;
}

template <AtomicScope S, AtomicOrder O>
__device__ __forceinline__ std::uint32_t fetch_add_one(std::uint32_t* p) {
  ::cuda::atomic_ref<std::uint32_t, ScopeOf<S>::value> ref(*p);
  return ref.fetch_add(1u, order_of<O>());
}

template <AtomicScope S, AtomicOrder O>
__device__ __forceinline__ std::uint32_t fetch_add(std::uint32_t* p, std::uint32_t v) {
  ::cuda::atomic_ref<std::uint32_t, ScopeOf<S>::value> ref(*p);
  return ref.fetch_add(v, order_of<O>());
}

template <AtomicScope S, AtomicOrder O>
__global__ void atomic_latency_kernel(std::uint32_t steps, std::uint32_t mask, std::uint32_t* counters,
                                      unsigned long long* sum_out, TimeRecord* records) {
  std::uint32_t idx = 0;
  unsigned long long sum = 0;
  const std::uint64_t g0 = global_timer();
  const std::uint64_t c0 = clock_64();
  for (std::uint32_t i = 0; i < steps; ++i) {
    const std::uint32_t old = fetch_add_one<S, O>(counters + idx);
    sum += old;
    idx = old & mask;  // mask is 0 at run time: the next address waits for this result
  }
  const std::uint64_t c1 = clock_64();
  const std::uint64_t g1 = global_timer();
  *sum_out = sum + idx;
  records[0] = TimeRecord{c0, c1, g0, g1, sm_id(), 0};
}

template <AtomicScope S, AtomicOrder O, AtomicMode M>
__global__ void __launch_bounds__(1024) atomic_throughput_kernel(std::uint32_t steps,
                                                                 std::uint32_t inc_mask,
                                                                 std::uint32_t* counters,
                                                                 unsigned long long* sums,
                                                                 TimeRecord* records) {
  const std::uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t* target;
  if constexpr (M == AtomicMode::kIndependent) target = counters + gtid;
  else if constexpr (M == AtomicMode::kContendedBlock) target = counters + blockIdx.x * 32u;
  else target = counters;
  unsigned long long sum = 0;
  __syncthreads();
  std::uint64_t g0 = 0, c0 = 0;
  if (threadIdx.x == 0) {
    g0 = global_timer();
    c0 = clock_64();
  }
  // inc_mask is 0 at run time: the increment is 1, but the compiler cannot prove it uniform
  // across the warp, so it cannot fold a warp's increments of one address into one atomic.
  const std::uint32_t inc = 1u + (gtid & inc_mask);
  for (std::uint32_t i = 0; i < steps; ++i) sum += fetch_add<S, O>(target, inc);
  sums[gtid] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    const std::uint64_t c1 = clock_64();
    const std::uint64_t g1 = global_timer();
    records[blockIdx.x] = TimeRecord{c0, c1, g0, g1, sm_id(), 0};
  }
}

// ---- litmus ----------------------------------------------------------------------------------

__device__ __forceinline__ std::uint32_t ld_weak(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ std::uint32_t ld_volatile(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ std::uint32_t ld_relaxed(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ std::uint32_t ld_acquire(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_volatile(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.volatile.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_release(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

template <LitmusVariant V>
__device__ __forceinline__ void produce(std::uint32_t* w, std::uint32_t k) {
  if constexpr (V == LitmusVariant::kReleaseAcquire) {
    store_weak(w + kLitmusData, k);
    st_release(w + kLitmusFlag, k);
  } else if constexpr (V == LitmusVariant::kFence) {
    store_weak(w + kLitmusData, k);
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    st_relaxed(w + kLitmusFlag, k);
  } else if constexpr (V == LitmusVariant::kRelaxed) {
    store_weak(w + kLitmusData, k);
    st_relaxed(w + kLitmusFlag, k);
  } else if constexpr (V == LitmusVariant::kVolatile) {
    st_volatile(w + kLitmusData, k);
    st_volatile(w + kLitmusFlag, k);
  } else {
    store_weak(w + kLitmusData, k);
    store_weak(w + kLitmusFlag, k);
  }
}

template <LitmusVariant V>
__device__ __forceinline__ std::uint32_t load_flag(const std::uint32_t* w) {
  if constexpr (V == LitmusVariant::kReleaseAcquire) return ld_acquire(w + kLitmusFlag);
  else if constexpr (V == LitmusVariant::kFence || V == LitmusVariant::kRelaxed)
    return ld_relaxed(w + kLitmusFlag);
  else if constexpr (V == LitmusVariant::kVolatile) return ld_volatile(w + kLitmusFlag);
  else return ld_weak(w + kLitmusFlag);
}

template <LitmusVariant V>
__device__ __forceinline__ std::uint32_t load_data(const std::uint32_t* w) {
  if constexpr (V == LitmusVariant::kFence) asm volatile("fence.acq_rel.gpu;" ::: "memory");
  if constexpr (V == LitmusVariant::kVolatile) return ld_volatile(w + kLitmusData);
  else return ld_weak(w + kLitmusData);
}

template <LitmusVariant V>
__global__ void litmus_kernel(std::uint32_t iterations, std::uint64_t timeout_ns, std::uint32_t* w,
                              LitmusResult* result) {
  extern __shared__ std::uint32_t occupy[];  // only to keep the two blocks on different SMs
  if (threadIdx.x != 0) return;
  occupy[0] = 0;
  const bool producer = blockIdx.x == 0;
  result->smid[producer ? 0 : 1] = sm_id();
  std::uint32_t stale = 0, completed = 0, first_it = 0, first_val = 0, timed_out = 0;
  const std::uint64_t start = global_timer();
  for (std::uint32_t k = 1; k <= iterations; ++k) {
    const std::uint64_t t0 = global_timer();
    if (producer) {
      // Wait until the consumer has read iteration k - 1 (always acquire: the ack channel is
      // correct in every variant; the experiment is about the data/flag channel).
      while (ld_acquire(w + kLitmusAck) != k - 1) {
        if (ld_relaxed(w + kLitmusAbort) || global_timer() - t0 > timeout_ns) {
          timed_out = 1;
          break;
        }
      }
      if (timed_out) break;
      produce<V>(w, k);
    } else {
      while (load_flag<V>(w) != k) {
        if (ld_relaxed(w + kLitmusAbort) || global_timer() - t0 > timeout_ns) {
          timed_out = 1;
          break;
        }
      }
      if (timed_out) break;
      const std::uint32_t d = load_data<V>(w);
      if (d != k) {
        if (!stale) {
          first_it = k;
          first_val = d;
        }
        ++stale;
      }
      ++completed;
      st_release(w + kLitmusAck, k);
    }
  }
  if (timed_out) st_relaxed(w + kLitmusAbort, 1u);
  const std::uint64_t end = global_timer();
  if (!producer) {
    result->stale = stale;
    result->completed = completed;
    result->first_stale_iteration = first_it;
    result->first_stale_value = first_val;
    result->g0 = start;
    result->g1 = end;
  }
  if (timed_out) atomicOr(&result->timed_out, 1u);
}

template <class Kernel>
void set_smem_limit(Kernel k, std::uint32_t bytes) {
  GP_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(bytes)));
}

}  // namespace

const char* fence_name(FenceKind f) {
  switch (f) {
    case FenceKind::kNone: return "none";
    case FenceKind::kAcqRelCta: return "acq_rel.cta";
    case FenceKind::kAcqRelGpu: return "acq_rel.gpu";
    case FenceKind::kAcqRelSys: return "acq_rel.sys";
    case FenceKind::kScCta: return "sc.cta";
    case FenceKind::kScGpu: return "sc.gpu";
    case FenceKind::kScSys: return "sc.sys";
  }
  return "?";
}

std::uint32_t fence_expected(std::uint32_t thread, std::uint64_t steps) {
  std::uint32_t x = thread;
  for (std::uint64_t i = 0; i < steps; ++i) x = x * 3u + 1u;
  return x;
}

void launch_fence(FenceKind f, int threads, std::uint32_t iterations, std::uint32_t* scratch,
                  std::uint32_t* out, TimeRecord* records) {
  using F = FenceKind;
  const bool launched =
      dispatch<F::kNone, F::kAcqRelCta, F::kAcqRelGpu, F::kAcqRelSys, F::kScCta, F::kScGpu,
               F::kScSys>(f, [&](auto kf) {
        fence_kernel<decltype(kf)::value><<<1, threads>>>(iterations, scratch, out, records);
      });
  if (!launched) throw std::invalid_argument("unknown fence kind");
  GP_CUDA_CHECK_LAUNCH();
}

const char* scope_name(AtomicScope s) {
  switch (s) {
    case AtomicScope::kBlock: return "block";
    case AtomicScope::kDevice: return "device";
    case AtomicScope::kSystem: return "system";
  }
  return "?";
}
const char* order_name(AtomicOrder o) {
  switch (o) {
    case AtomicOrder::kRelaxed: return "relaxed";
    case AtomicOrder::kAcqRel: return "acq_rel";
    case AtomicOrder::kSeqCst: return "seq_cst";
  }
  return "?";
}
const char* mode_name(AtomicMode m) {
  switch (m) {
    case AtomicMode::kIndependent: return "independent";
    case AtomicMode::kContendedBlock: return "contended_block";
    case AtomicMode::kContendedGrid: return "contended_grid";
  }
  return "?";
}

namespace {

/// Calls f with the scope and the order as compile-time constants; throws for unknown values.
template <class F>
void with_scope_and_order(AtomicScope s, AtomicOrder o, F&& f) {
  using S = AtomicScope;
  using O = AtomicOrder;
  bool known = false;
  dispatch<S::kBlock, S::kDevice, S::kSystem>(s, [&](auto ks) {
    known = dispatch<O::kRelaxed, O::kAcqRel, O::kSeqCst>(o, [&](auto ko) { f(ks, ko); });
  });
  if (!known) throw std::invalid_argument("unknown atomic scope or order");
}

}  // namespace

void launch_atomic_latency(AtomicScope s, AtomicOrder o, std::uint32_t steps, std::uint32_t mask,
                           std::uint32_t* counters, unsigned long long* sum_out, TimeRecord* records) {
  with_scope_and_order(s, o, [&](auto ks, auto ko) {
    atomic_latency_kernel<decltype(ks)::value, decltype(ko)::value><<<1, 1>>>(steps, mask, counters,
                                                                              sum_out, records);
  });
  GP_CUDA_CHECK_LAUNCH();
}

void launch_atomic_throughput(AtomicScope s, AtomicOrder o, AtomicMode m, int blocks, int threads,
                              std::uint32_t steps, std::uint32_t* counters,
                              unsigned long long* sums, TimeRecord* records) {
  using M = AtomicMode;
  with_scope_and_order(s, o, [&](auto ks, auto ko) {
    const bool launched =
        dispatch<M::kIndependent, M::kContendedBlock, M::kContendedGrid>(m, [&](auto km) {
          atomic_throughput_kernel<decltype(ks)::value, decltype(ko)::value, decltype(km)::value>
              <<<blocks, threads>>>(steps, 0u, counters, sums, records);
        });
    if (!launched) throw std::invalid_argument("unknown atomic mode");
  });
  GP_CUDA_CHECK_LAUNCH();
}

const char* litmus_name(LitmusVariant v) {
  switch (v) {
    case LitmusVariant::kReleaseAcquire: return "release_acquire";
    case LitmusVariant::kFence: return "relaxed_with_fences";
    case LitmusVariant::kRelaxed: return "relaxed_no_fence";
    case LitmusVariant::kVolatile: return "volatile_no_fence";
    case LitmusVariant::kWeak: return "plain_no_fence";
  }
  return "?";
}

bool litmus_is_synchronizing(LitmusVariant v) {
  return v == LitmusVariant::kReleaseAcquire || v == LitmusVariant::kFence;
}

std::uint32_t litmus_prepare(int ordinal) {
  int optin = 0;
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  const auto bytes = static_cast<std::uint32_t>(optin);
  set_smem_limit(litmus_kernel<LitmusVariant::kReleaseAcquire>, bytes);
  set_smem_limit(litmus_kernel<LitmusVariant::kFence>, bytes);
  set_smem_limit(litmus_kernel<LitmusVariant::kRelaxed>, bytes);
  set_smem_limit(litmus_kernel<LitmusVariant::kVolatile>, bytes);
  set_smem_limit(litmus_kernel<LitmusVariant::kWeak>, bytes);
  return bytes;
}

void launch_litmus(LitmusVariant v, std::uint32_t iterations, std::uint64_t timeout_ns,
                   std::uint32_t dynamic_smem, std::uint32_t* words, LitmusResult* result) {
  switch (v) {
    case LitmusVariant::kReleaseAcquire:
      litmus_kernel<LitmusVariant::kReleaseAcquire><<<2, 32, dynamic_smem>>>(iterations, timeout_ns, words, result);
      break;
    case LitmusVariant::kFence:
      litmus_kernel<LitmusVariant::kFence><<<2, 32, dynamic_smem>>>(iterations, timeout_ns, words, result);
      break;
    case LitmusVariant::kRelaxed:
      litmus_kernel<LitmusVariant::kRelaxed><<<2, 32, dynamic_smem>>>(iterations, timeout_ns, words, result);
      break;
    case LitmusVariant::kVolatile:
      litmus_kernel<LitmusVariant::kVolatile><<<2, 32, dynamic_smem>>>(iterations, timeout_ns, words, result);
      break;
    case LitmusVariant::kWeak:
      litmus_kernel<LitmusVariant::kWeak><<<2, 32, dynamic_smem>>>(iterations, timeout_ns, words, result);
      break;
  }
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::probes::ordering
