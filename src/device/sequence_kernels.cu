// Kernels of the cache-structure sequences (device/sequence.hpp): one thread on a chosen SM
// performs dependent loads at given offsets of a probe buffer and times each one. One template
// over the load operator: the instances differ only in the PTX cache operator of that load.
#include <stdexcept>

#include "core/cuda_check.hpp"
#include "core/dispatch.hpp"
#include "device/ptx.cuh"
#include "device/sequence_kernels.hpp"

namespace gpuprobe::device::kernels {
namespace {

// No probe-buffer word holds this (a word holds its own offset, a multiple of 8).
constexpr std::uint64_t kNeverStored = ~std::uint64_t{0};

// A branch on the value stalls issue until it has arrived (warps issue in order), so a clock
// read after it sees the completed load, and an address held this way is computed before the
// clock read that opens the timed load.
__device__ __forceinline__ void hold(std::uint64_t value) {
  if (value == kNeverStored) __trap();
}

__device__ __forceinline__ void note_bad(SequenceStatus* st, std::uint32_t index) {
  atomicOr(&st->flags, static_cast<std::uint32_t>(kSeqMismatch));
  atomicCAS(&st->first_bad, 0u, index + 1u);
}

// Offsets and timings go through the L2 only (.cg): a default load or store would put them in
// the L1 under test.
__device__ __forceinline__ std::uint64_t load_offset(const std::uint64_t* at) {
  return __ldcg(reinterpret_cast<const unsigned long long*>(at));
}

// The place loads, dependent on each other like the sequence's (so their order is kept), every
// value checked; returns once the last has arrived.
template <LoadOp kOp>
__device__ void place_lines(const SequenceParams& p) {
  std::uint64_t prev_off = 0, prev_v = 0;
  bool ok = true;
  for (std::uint32_t i = 0; i < p.n_place; ++i) {
    const std::uint64_t off = load_offset(p.offsets + i);
    const std::uint64_t v = ptx::load_u64<kOp>(p.base + off + (prev_v - prev_off));
    if (v != off && ok) {
      ok = false;
      note_bad(p.status, i);
    }
    prev_v = v;
    prev_off = off;
  }
  hold(prev_v);
}

template <LoadOp kOp>
__global__ void sequence_kernel(SequenceParams p) {
  // Offsets are staged in chunks of kSequenceChunk in a shared allocation of the same size at
  // every launch: an earlier version asked for 12 B per access, so the carve-out (and the L1
  // under test) changed with the sequence's length.
  extern __shared__ std::uint64_t seq_smem[];
  std::uint64_t* soff = seq_smem;
  std::uint32_t* scyc = reinterpret_cast<std::uint32_t*>(seq_smem + kSequenceChunk);
  __shared__ int role;  // bit 0: place, bit 1: sequence
  SequenceStatus* st = p.status;
  const bool separate_placer = p.n_place > 0 && p.place_sm >= 0 && p.place_sm != p.sm;
  if (threadIdx.x == 0) {
    const std::uint32_t smid = ptx::sm_id();
    int r = 0;
    if (separate_placer && smid == static_cast<std::uint32_t>(p.place_sm) &&
        atomicCAS(&st->claims[0], 0u, 1u) == 0u)
      r |= 1;
    if ((p.sm < 0 || smid == static_cast<std::uint32_t>(p.sm)) &&
        atomicCAS(&st->claims[1], 0u, 1u) == 0u)
      r |= 2;
    role = r;
  }
  __syncthreads();
  const int my_role = role;
  if (my_role == 0 || threadIdx.x != 0) return;
  const std::uint32_t smid = ptx::sm_id();
  if (my_role & 1) {
    place_lines<kOp>(p);
    st->place_smid = smid;
    __threadfence();
    atomicExch(&st->ready, 1u);
    atomicOr(&st->flags, static_cast<std::uint32_t>(kSeqPlaced));
  }
  if (!(my_role & 2)) return;
  st->smid = smid;
  if (separate_placer) {
    const std::uint64_t start = ptx::clock_64();
    while (atomicAdd(&st->ready, 0u) == 0u) {
      if (ptx::clock_64() - start > p.timeout_cycles) {
        atomicOr(&st->flags, static_cast<std::uint32_t>(kSeqTimedOut));
        return;
      }
    }
  } else if (p.n_place > 0) {
    place_lines<kOp>(p);
    st->place_smid = smid;
    atomicOr(&st->flags, static_cast<std::uint32_t>(kSeqPlaced));
  }
  std::uint64_t prev_off = 0, prev_v = 0;
  bool ok = true;
  const std::uint64_t* seq_offsets = p.offsets + p.n_place;
#pragma unroll 1
  for (std::uint32_t c0 = 0; c0 < p.n_seq; c0 += kSequenceChunk) {
    const std::uint32_t m = min(kSequenceChunk, p.n_seq - c0);
#pragma unroll 8
    for (std::uint32_t j = 0; j < m; ++j) soff[j] = load_offset(seq_offsets + c0 + j);
#pragma unroll 1
    for (std::uint32_t j = 0; j < m; ++j) {
      const std::uint64_t off = soff[j];
      const std::uint64_t a = p.base + off + (prev_v - prev_off);
      hold(a);
      const std::uint64_t t0 = ptx::clock_64();
      const std::uint64_t v = ptx::load_u64<kOp>(a);
      hold(v);
      const std::uint64_t t1 = ptx::clock_64();
      scyc[j] = static_cast<std::uint32_t>(t1 - t0);
      if (v != off && ok) {
        ok = false;
        note_bad(st, p.n_place + c0 + j);
      }
      prev_v = v;
      prev_off = off;
    }
#pragma unroll 8
    for (std::uint32_t j = 0; j < m; ++j) __stcg(p.cycles + c0 + j, scyc[j]);
  }
  __threadfence();
  atomicOr(&st->flags, static_cast<std::uint32_t>(kSeqRan));
}

// The sweep: independent loads (four per thread per claim, issued before any is used), every
// value compared with its offset. Round-major indices, so a line's next round is claimed only
// after every line's previous one was.
template <LoadOp kOp>
__global__ void __launch_bounds__(kSweepThreads) sweep_kernel(SweepParams p) {
  __shared__ std::uint32_t claim;
  __shared__ int mine;
  SweepStatus* st = p.status;
  if (threadIdx.x == 0) {
    mine = ptx::sm_id() == static_cast<std::uint32_t>(p.sm);
    if (mine) atomicAdd(&st->blocks, 1u);
  }
  __syncthreads();
  if (!mine) return;
  const std::uint64_t total = static_cast<std::uint64_t>(p.n) * p.rounds;
  std::uint32_t done = 0, bad = 0;
#pragma unroll 1
  for (;;) {
    if (threadIdx.x == 0) claim = atomicAdd(&st->next, kSweepChunk);
    __syncthreads();
    const std::uint64_t c0 = claim;
    __syncthreads();
    if (c0 >= total) break;
    std::uint64_t off[4], v[4];
    bool live[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const std::uint64_t i = c0 + threadIdx.x + static_cast<std::uint64_t>(k) * kSweepThreads;
      live[k] = i < total;
      off[k] = live[k] ? load_offset(p.offsets + i % p.n) : 0;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = live[k] ? ptx::load_u64<kOp>(p.base + off[k]) : 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      done += live[k] ? 1u : 0u;
      bad += live[k] && v[k] != off[k] ? 1u : 0u;
    }
  }
  if (done) atomicAdd(&st->done, done);
  if (bad) atomicAdd(&st->bad, bad);
}

__global__ void fill_offsets_kernel(std::uint64_t* base, std::uint64_t words) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < words; i += threads)
    base[i] = i * 8;
}

__global__ void check_offsets_kernel(const std::uint64_t* base, std::uint64_t words,
                                     unsigned long long* bad) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < words; i += threads)
    mine += base[i] != i * 8;
  if (mine) atomicAdd(bad, mine);
}

template <LoadOp kOp>
void launch_sequence_op(const SequenceParams& p, unsigned blocks, int carveout_percent,
                        cudaStream_t stream) {
  GP_CUDA_CHECK(cudaFuncSetAttribute(sequence_kernel<kOp>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(kSequenceSharedBytes)));
  GP_CUDA_CHECK(cudaFuncSetAttribute(
      sequence_kernel<kOp>, cudaFuncAttributePreferredSharedMemoryCarveout, carveout_percent));
  sequence_kernel<kOp><<<blocks, 32, kSequenceSharedBytes, stream>>>(p);
  GP_CUDA_CHECK_LAUNCH();
}

template <LoadOp kOp>
void launch_sweep_op(const SweepParams& p, unsigned blocks, cudaStream_t stream) {
  sweep_kernel<kOp><<<blocks, kSweepThreads, 0, stream>>>(p);
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_sweep(LoadOp op, const SweepParams& p, unsigned blocks, cudaStream_t stream) {
  const bool launched =
      dispatch<LoadOp::kDefault, LoadOp::kCa, LoadOp::kCg, LoadOp::kCv, LoadOp::kNc>(
          op, [&](auto kop) { launch_sweep_op<decltype(kop)::value>(p, blocks, stream); });
  if (!launched) throw std::invalid_argument("sweep: unknown load operator");
}

void launch_fill_offsets(std::uint64_t* base, std::uint64_t bytes, cudaStream_t stream) {
  fill_offsets_kernel<<<1024, 256, 0, stream>>>(base, bytes / 8);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_check_offsets(const std::uint64_t* base, std::uint64_t bytes,
                          unsigned long long* bad, cudaStream_t stream) {
  check_offsets_kernel<<<1024, 256, 0, stream>>>(base, bytes / 8, bad);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_sequence(LoadOp op, const SequenceParams& p, unsigned blocks, int carveout_percent,
                     cudaStream_t stream) {
  const bool launched =
      dispatch<LoadOp::kDefault, LoadOp::kCa, LoadOp::kCg, LoadOp::kCv, LoadOp::kNc>(
          op, [&](auto kop) {
            launch_sequence_op<decltype(kop)::value>(p, blocks, carveout_percent, stream);
          });
  if (!launched) throw std::invalid_argument("sequence: unknown load operator");
}

}  // namespace gpuprobe::device::kernels
