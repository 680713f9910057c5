#pragma once
// Hopper (sm_90) building blocks shared by the TMA, WGMMA and pipeline probes: transaction-count
// mbarriers and warpgroup MMA. Defined only when compiling for sm_90 (the compute_75 PTX pass and
// host code see nothing).
#include <cstdint>
#include <type_traits>

#include "device/ptx.cuh"

namespace gpuprobe::device::sm90 {
/// Operand types of the wgmma wrappers (tags, usable in host code too).
struct Bf16 {};
struct F16 {};
}  // namespace gpuprobe::device::sm90

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
namespace gpuprobe::device::sm90 {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_mbar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
/// Arrives and announces `bytes` of transactions still to come on this phase.
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile(
      "{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}" ::"r"(bar),
      "r"(bytes)
      : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}" ::"r"(bar)
               : "memory");
}
/// One test of the phase of parity `parity`; with kClusterAcquire the acquire has cluster
/// scope (for barriers that other CTAs of the cluster arrive on).
template <bool kClusterAcquire = false>
__device__ __forceinline__ bool mbar_try_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done;
#define GP_MBAR_TRY_WAIT(SEM)                                            \
  asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity" SEM          \
               ".shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}" \
               : "=r"(done)                                              \
               : "r"(bar), "r"(parity)                                   \
               : "memory")
  if constexpr (kClusterAcquire)
    GP_MBAR_TRY_WAIT(".acquire.cluster");
  else
    GP_MBAR_TRY_WAIT("");
#undef GP_MBAR_TRY_WAIT
  return done != 0;
}
/// Waits for the phase of parity `parity`; false when it has not completed after
/// `timeout_cycles` (so a copy that never lands ends the kernel instead of hanging it).
template <bool kClusterAcquire = false>
__device__ __forceinline__ bool mbar_wait_for(std::uint32_t bar, std::uint32_t parity,
                                              std::uint64_t timeout_cycles) {
  if (mbar_try_wait<kClusterAcquire>(bar, parity)) return true;
  const std::uint64_t start = ptx::clock_64();
  while (!mbar_try_wait<kClusterAcquire>(bar, parity))
    if (ptx::clock_64() - start > timeout_cycles) return false;
  return true;
}

/// One non-blocking test of the phase of parity `parity` (mbarrier.test_wait: returns at once,
/// unlike try_wait, which may suspend the thread for a system-dependent time first).
__device__ __forceinline__ bool mbar_test_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, "
      "0, p;\n}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
/// Like mbar_wait_for, spinning on mbar_test_wait: for a wait that is timed. try_wait may
/// suspend the thread for a system-dependent time before it tests again, and a clock read after
/// it then counts part of that time: timed through try_wait, every H200 TMA latency read
/// base + k x 185 cycles, and with this spin the L2-hot ones fell by 47 cycles (docs/METHOD.md,
/// "What moved from run to run"). A spin sees the completion within one test.
__device__ __forceinline__ bool mbar_poll_for(std::uint32_t bar, std::uint32_t parity,
                                              std::uint64_t timeout_cycles) {
  const std::uint64_t start = ptx::clock_64();
  while (!mbar_test_wait(bar, parity))
    if (ptx::clock_64() - start > timeout_cycles) return false;
  return true;
}

// ---- Clusters.
__device__ __forceinline__ std::uint32_t cluster_rank() {
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
/// Every thread of every CTA of the cluster (aligned: whole warps).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}
/// The shared::cluster address of shared::cta address `a` in the CTA of rank `rank`.
__device__ __forceinline__ std::uint32_t map_rank(std::uint32_t a, std::uint32_t rank) {
  std::uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}
/// Arrives (release, cluster scope) on an mbarrier given by its shared::cluster address.
__device__ __forceinline__ void mbar_arrive_cluster(std::uint32_t cluster_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_bar)
               : "memory");
}
/// Relaxed arrivals (no release fence): for barriers that only order work already known to be
/// complete, such as the wgmma reads of a stage after wgmma.wait_group.
__device__ __forceinline__ void mbar_arrive_relaxed(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.relaxed.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_cluster_relaxed(std::uint32_t cluster_bar) {
  asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_bar)
               : "memory");
}

// ---- TMA tensor copies (global -> shared, completion on a transaction-count mbarrier).
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, const void* tensor_map, int c0,
                                            int c1, std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%2, %3}], "
      "[%4];" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(tensor_map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
/// The same box written to offset `dst` of every CTA in `cta_mask` of the cluster, each copy
/// completing on the mbarrier at offset `bar` of its CTA.
__device__ __forceinline__ void tma_load_2d_multicast(std::uint32_t dst, const void* tensor_map,
                                                      int c0, int c1, std::uint32_t bar,
                                                      std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::"
      "cluster "
      "[%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(tensor_map)), "r"(c0), "r"(c1), "r"(bar), "h"(cta_mask)
      : "memory");
}

}  // namespace gpuprobe::device::sm90
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace gpuprobe::device::sm90 {

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// The 128 accumulators are read-write operands of the asm ("+f"), so ptxas sees each wgmma
// consume and produce them and keeps them in place across the asynchronous pipeline.
#define GP_WGMMA_ACCUMULATORS                                                                     \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),  \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),  \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),  \
      "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),  \
      "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),  \
      "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),  \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),  \
      "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]),  \
      "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),  \
      "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),  \
      "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),  \
      "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]),  \
      "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),          \
      "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]),         \
      "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),         \
      "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]),         \
      "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define GP_WGMMA_D_LIST                                                                          \
  "{"                                                                                            \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                       \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "             \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "             \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "             \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "             \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "   \
  "%127}"
#define GP_WGMMA_M64N256K16(AB)                                                    \
  asm volatile(                                                                    \
      "{\n"                                                                        \
      ".reg .pred p;\n"                                                            \
      "setp.ne.b32 p, %130, 0;\n"                                                  \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." AB "." AB " " GP_WGMMA_D_LIST \
      ", %128, %129, p, 1, 1, 0, 0;\n"                                             \
      "}\n"                                                                        \
      : GP_WGMMA_ACCUMULATORS                                                      \
      : "l"(da), "l"(db), "r"(scale_d))
// A from registers (four .b32 of two elements each, the m16n8k16 A-fragment layout per warp).
#define GP_WGMMA_M64N256K16_RS(AB)                                                 \
  asm volatile(                                                                    \
      "{\n"                                                                        \
      ".reg .pred p;\n"                                                            \
      "setp.ne.b32 p, %133, 0;\n"                                                  \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." AB "." AB " " GP_WGMMA_D_LIST \
      ", {%128, %129, %130, %131}, %132, p, 1, 1, 0;\n"                            \
      "}\n"                                                                        \
      : GP_WGMMA_ACCUMULATORS                                                      \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d))

/// D (+)= A B^T for one m64n256k16 wgmma with f32 accumulators, A and B from shared-memory
/// descriptors; scale_d == 0 discards the old accumulators.
template <class T>
__device__ __forceinline__ void mma_m64n256k16(float (&d)[128], std::uint64_t da, std::uint64_t db,
                                               std::uint32_t scale_d) {
  if constexpr (std::is_same_v<T, Bf16>) {
    GP_WGMMA_M64N256K16("bf16");
  } else {
    GP_WGMMA_M64N256K16("f16");
  }
}
/// The same with A from registers: this warp's 16 rows x 16 k of the warpgroup's 64 x 16 A, as
/// ldmatrix.x4 returns them (a[0] rows 0-7 k 0-7, a[1] rows 8-15 k 0-7, a[2] rows 0-7 k 8-15,
/// a[3] rows 8-15 k 8-15). The registers must not change until the wgmma completed.
template <class T>
__device__ __forceinline__ void mma_m64n256k16_rs(float (&d)[128], const std::uint32_t (&a)[4],
                                                  std::uint64_t db, std::uint32_t scale_d) {
  if constexpr (std::is_same_v<T, Bf16>) {
    GP_WGMMA_M64N256K16_RS("bf16");
  } else {
    GP_WGMMA_M64N256K16_RS("f16");
  }
}
/// Four 8 x 8 matrices of 16-bit elements from shared memory; thread t gives the address of
/// row t % 8 of matrix t / 8.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}
#undef GP_WGMMA_M64N256K16_RS
#undef GP_WGMMA_D_LIST
#undef GP_WGMMA_M64N256K16
#undef GP_WGMMA_ACCUMULATORS

}  // namespace gpuprobe::device::sm90
#endif
