#pragma once
// Kernels of bandwidth.sweep and bandwidth.hierarchy (implemented in bandwidth_sweep_kernels.cu):
// reads of an L1-resident slice per SM, reads of one region shared by the whole grid through the
// L2 (ld.global.cg), and a register-only FFMA loop. Every block records its SM, %clock64 and
// %globaltimer around its timed part (after a __syncthreads) and the wrapping 32-bit sum of
// every word it read (or the FFMA results), so that the host can time each SM and verify what
// was read.
#include <cuda_runtime_api.h>

#include <cstdint>

#if defined(__CUDACC__)
#define GP_BWS_HD __host__ __device__
#else
#define GP_BWS_HD
#endif

namespace gpuprobe::probes::bws {

/// What one block of any kernel here writes (one per block, indexed by blockIdx.x).
struct BlockRecord {
  std::uint64_t clock_start = 0, clock_end = 0;  ///< %clock64 around the timed passes
  std::uint64_t ns_start = 0, ns_end = 0;        ///< %globaltimer around the timed passes
  std::uint32_t smid = 0;
  std::uint32_t slot = 0;  ///< slices kernel: the block's index among the blocks of its SM
  std::uint32_t sum = 0;   ///< wrapping sum of every 32-bit word read, all passes
  std::uint32_t pad = 0;
};

constexpr unsigned kThreads = 1024;  ///< threads per block of every kernel here
constexpr int kFmaChains = 8;        ///< independent FFMA chains per thread

/// Regime "L1": the blocks on SM s read slice s % slices (slice_vectors 16-B vectors at
/// data + (s % slices) x slice_vectors); the k-th block to arrive on an SM (k taken modulo
/// `slots`) reads only sub-slice k of slice_vectors / slots vectors, so the SM's working set is
/// exactly one slice. ld.global.ca (L1-allocating) 16-B loads; warm_passes untimed passes, then
/// timed_passes timed ones. slot_counters (slices words) must be zero before the launch: the
/// launcher clears them on the stream.
struct SliceParams {
  const uint4* data = nullptr;
  std::uint32_t slice_vectors = 0;  ///< must be a multiple of slots
  std::uint32_t slices = 1;
  std::uint32_t slots = 1;
  std::uint32_t warm_passes = 1, timed_passes = 1;
  std::uint32_t* slot_counters = nullptr;
  BlockRecord* records = nullptr;
  std::uint32_t one = 1;  ///< multiplier of the kMixed fold (1: a run-time value, so IMAD stays)
};
/// Launches L1 variant `variant` (index into kL1Variants; 0 is the sweep's kernel) with
/// kL1Variants[variant].threads threads per block.
void launch_l1_slices(const SliceParams& p, unsigned blocks, cudaStream_t s, int variant = 0);

/// Regime "L2": the grid reads vectors [0, vectors) once per pass, grid-stride (thread g reads
/// g, g + G, ... for G threads in the grid), with ld.global.cg (cached in L2 only) in variant 0;
/// the other variants choose the load operator (kL2Variants).
struct SharedParams {
  const uint4* data = nullptr;
  std::uint32_t vectors = 0;
  std::uint32_t warm_passes = 0, timed_passes = 1;
  BlockRecord* records = nullptr;
  /// Variants other than 0: pass q reads vector (j + r n / rotations) mod n, r = q mod
  /// rotations, for the same j as a plain pass (variant 0 rotates by n / 4 in groups of four).
  std::uint32_t rotations = 8;
};
void launch_l2_shared(const SharedParams& p, unsigned blocks, cudaStream_t s, int variant = 0);

// ---- Kernel variants of bandwidth.hierarchy's L1 and L2 regimes ------------------------------

/// How a thread folds the words it reads into the value its block reports.
enum class Fold : int {
  kSum4 = 0,   ///< acc + x + y + z + w, one dependent chain (the sweep's kernel)
  kAdd3 = 1,   ///< a + x + y and b + z + w: two 3-input adds (IADD3) per 16-B load
  kXor3 = 2,   ///< a ^ x ^ y and b ^ z ^ w: two 3-input XORs (LOP3) per 16-B load
  kMixed = 3,  ///< a + x + y (IADD3, integer pipe) and z x one + b, w x one + c (IMAD, FMA pipe)
};
/// The host's fold of the same words: the wrapping sum, or the XOR for kXor3.
GP_BWS_HD constexpr bool fold_is_xor(Fold f) { return f == Fold::kXor3; }

/// Per-thread accumulator of a fold (host and device: the unit tests run the same code).
template <Fold F>
struct FoldAcc {
  std::uint32_t a = 0, b = 0, c = 0;
  GP_BWS_HD void add(const uint4& v, std::uint32_t one) {
    if constexpr (F == Fold::kSum4) {
      a = a + v.x + v.y + v.z + v.w;
    } else if constexpr (F == Fold::kAdd3) {
      a = a + v.x + v.y;
      b = b + v.z + v.w;
    } else if constexpr (F == Fold::kXor3) {
      a = a ^ v.x ^ v.y;
      b = b ^ v.z ^ v.w;
    } else {
      a = a + v.x + v.y;
      b = v.z * one + b;
      c = v.w * one + c;
    }
  }
  GP_BWS_HD std::uint32_t total() const { return fold_is_xor(F) ? (a ^ b ^ c) : a + b + c; }
};

/// Cache operator of the 16-B loads.
enum class Load : int {
  kCa = 0,          ///< ld.global.ca (L1-allocating)
  kCg = 1,          ///< ld.global.cg (L2 only)
  kPlain = 2,       ///< ld.global (default operator)
  kNc = 3,          ///< ld.global.nc (read-only / texture path)
  kNoAllocate = 4,  ///< ld.global.L1::no_allocate
};
GP_BWS_HD constexpr const char* load_name(Load l) {
  return l == Load::kCa      ? "ld.global.ca.v4.u32"
         : l == Load::kCg    ? "ld.global.cg.v4.u32"
         : l == Load::kPlain ? "ld.global.v4.u32"
         : l == Load::kNc    ? "ld.global.nc.v4.u32"
                             : "ld.global.L1::no_allocate.v4.u32";
}

/// One L1-regime kernel: the fold, how the loads are addressed, the loads per thread in flight
/// and the block shape. Every variant keeps the slice / slot semantics of SliceParams.
struct L1Variant {
  const char* name;
  Fold fold;
  /// false: passes interleaved `unroll` at a time, pass k rotated by k n / unroll (the sweep's
  /// addressing: index wrap-around per load); true: one pass at a time, `unroll` loads at
  /// constant offsets k x threads from one pointer (no per-load index arithmetic; needs
  /// sub-slice vectors >= unroll x threads for `unroll` loads in flight).
  bool linear;
  int unroll;
  unsigned threads;   ///< per block
  int blocks_per_sm;  ///< __launch_bounds__ minimum and the slots per SM
};
inline constexpr L1Variant kL1Variants[] = {
    {"sum4.rot.u4.1024x2", Fold::kSum4, false, 4, 1024, 2},  // the sweep's kernel
    {"add3.rot.u4.1024x2", Fold::kAdd3, false, 4, 1024, 2},
    {"sum4.lin.u4.1024x2", Fold::kSum4, true, 4, 1024, 2},
    {"add3.lin.u4.1024x2", Fold::kAdd3, true, 4, 1024, 2},
    {"xor3.lin.u4.1024x2", Fold::kXor3, true, 4, 1024, 2},
    {"mixed.lin.u4.1024x2", Fold::kMixed, true, 4, 1024, 2},
    {"add3.lin.u4.256x8", Fold::kAdd3, true, 4, 256, 8},
    {"sum4.lin.u16.512x1", Fold::kSum4, true, 16, 512, 1},
    {"add3.lin.u8.1024x1", Fold::kAdd3, true, 8, 1024, 1},
    {"sum4.lin.u8.1024x1", Fold::kSum4, true, 8, 1024, 1},
    {"xor3.lin.u8.1024x1", Fold::kXor3, true, 8, 1024, 1},
    {"sum4.lin.u8.512x2", Fold::kSum4, true, 8, 512, 2},
    {"add3.lin.u8.256x4", Fold::kAdd3, true, 8, 256, 4},
};
inline constexpr int kL1VariantCount = static_cast<int>(sizeof kL1Variants / sizeof kL1Variants[0]);

/// One L2-regime kernel: load operator, loads in flight per thread, rotations (pass q reads its
/// vectors rotated by (q mod rotations) n / rotations: with n / SMs x rotations well above the
/// L1 size an L1-allocating operator finds nothing of the previous rotations in the L1) and
/// block shape. Variants other than 0 fold with kAdd3 (the host check is the wrapping sum).
struct L2Variant {
  const char* name;
  Load load;
  int unroll;
  int rotations;
  unsigned threads;
  int blocks_per_sm;
};
inline constexpr L2Variant kL2Variants[] = {
    {"cg.u4.r4.1024x2", Load::kCg, 4, 4, 1024, 2},  // the sweep's kernel
    {"cg.u4.r8.1024x2", Load::kCg, 4, 8, 1024, 2},
    {"plain.u4.r8.1024x2", Load::kPlain, 4, 8, 1024, 2},
    {"nc.u4.r8.1024x2", Load::kNc, 4, 8, 1024, 2},
    {"na.u4.r8.1024x2", Load::kNoAllocate, 4, 8, 1024, 2},
    {"cg.u4.r8.256x8", Load::kCg, 4, 8, 256, 8},
    {"cg.u8.r8.256x6", Load::kCg, 8, 8, 256, 6},
    {"cg.u8.r8.256x4", Load::kCg, 8, 8, 256, 4},
    {"nc.u8.r8.256x6", Load::kNc, 8, 8, 256, 6},
    {"na.u8.r8.256x6", Load::kNoAllocate, 8, 8, 256, 6},
};
inline constexpr int kL2VariantCount = static_cast<int>(sizeof kL2Variants / sizeof kL2Variants[0]);

/// Resident blocks per SM of L1 variant `variant` (its threads per block), after preferring the
/// largest L1 for it (shared-memory carveout 0 %, a per-kernel attribute).
int l1_variant_occupancy(int variant);
/// Resident blocks per SM of L2 variant `variant`. Variants other than 0 that allocate in the
/// L1 prefer the smallest L1 (carveout 100 %), so that little of a rotation could survive there.
int l2_variant_occupancy(int variant);

/// Register-only FFMA: every thread runs kFmaChains independent chains x <- fma(x, a, b) for
/// `steps` steps (steps a multiple of 16), starting at fma_start(thread, chain), and writes the
/// sum of its chains (in chain order) to out[thread]. No memory access in the timed loop.
struct FmaParams {
  std::uint32_t steps = 0;
  float a = 0, b = 0;
  float* out = nullptr;
  BlockRecord* records = nullptr;
};
void launch_register_fma(const FmaParams& p, unsigned blocks, cudaStream_t s);

/// Start value of FFMA chain `chain` of global thread `thread` (same on host and device).
GP_BWS_HD inline float fma_start(std::uint32_t thread, int chain) {
  return 1.0f +
         static_cast<float>((thread * kFmaChains + static_cast<std::uint32_t>(chain)) & 0xffffu) *
             (1.0f / 65536.0f);
}

/// Resident blocks of kThreads threads per SM: kind 0 slices, 1 shared, 2 fma.
int blocks_per_sm(int kind);

/// %nsmid: one more than the largest %smid an SM of this GPU can report (SM ids may have gaps,
/// so this can exceed the SM count). Launches one thread on `s` and waits for it.
std::uint32_t query_nsmid(cudaStream_t s);

/// Makes the slices kernel prefer the largest L1 (shared-memory carveout 0 %): a per-kernel
/// attribute, no device setting.
void prefer_max_l1();

}  // namespace gpuprobe::probes::bws
