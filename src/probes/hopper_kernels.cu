// Kernels of the Hopper probes: wgmma.mma_async m64n256k16 (bf16 / f16 inputs, f32
// accumulators) with A and B in shared memory addressed by matrix descriptors. The device code
// exists only for sm_90a (the "a" features: __CUDA_ARCH_FEAT_SM90_ALL); every other target
// (the compute_75 PTX) compiles empty stubs, and wgmma_compiled() tells the host which it got.
#include <cuda_runtime.h>

#include "device/ptx.cuh"
#include "core/cuda_check.hpp"
#include "probes/hopper_kernels.hpp"

namespace gpuprobe::probes::hopper {
namespace {

struct Bf16 {};
struct F16 {};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

using device::ptx::clock_64;
using device::ptx::global_timer;
using device::ptx::sm_id;

template <class T>
struct Wgmma;

// The 128 accumulators are read-write operands of the asm ("+f"), so ptxas sees each wgmma
// consume and produce them and keeps them in place across the asynchronous pipeline.
template <>
struct Wgmma<Bf16> {
  static __device__ __forceinline__ void mma(float (&d)[128], std::uint64_t da, std::uint64_t db) {
    asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(1));
  }
};

template <>
struct Wgmma<F16> {
  static __device__ __forceinline__ void mma(float (&d)[128], std::uint64_t da, std::uint64_t db) {
    asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(1));
  }
};

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <class T, int kWait, int kPerGroup>
__global__ void __launch_bounds__(256, 1)
    wgmma_kernel(const std::uint16_t* image, std::uint32_t groups, std::uint64_t desc_a,
                 std::uint64_t desc_b, float* out, ordering::TimeRecord* records) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const std::uint32_t raw = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_raw));
  const std::uint32_t pad = (1024u - (raw & 1023u)) & 1023u;
  std::uint8_t* smem = smem_raw + pad;
  const std::uint32_t base = raw + pad;
  // Copy the A and B images (16 B at a time) and make them visible to the async proxy.
  const uint4* src = reinterpret_cast<const uint4*>(image);
  uint4* dst = reinterpret_cast<uint4*>(smem);
  for (std::uint32_t i = threadIdx.x; i < (kTileABytes + kTileBBytes) / 16; i += blockDim.x) dst[i] = src[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const std::uint64_t da = desc_a | ((base >> 4) & 0x3FFFu);
  const std::uint64_t db = desc_b | (((base + kTileABytes) >> 4) & 0x3FFFu);
  float d[kAccumulators];
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) d[i] = 0.0f;
  std::uint64_t c0 = 0, g0 = 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    g0 = global_timer();
    c0 = clock_64();
  }
#pragma unroll 1
  for (std::uint32_t g = 0; g < groups; ++g) {
    wgmma_fence();
#pragma unroll
    for (int u = 0; u < kPerGroup; ++u) Wgmma<T>::mma(d, da, db);
    wgmma_commit();
    wgmma_wait<kWait>();
  }
  wgmma_wait<0>();
  __syncthreads();
  if (threadIdx.x == 0) {
    const std::uint64_t c1 = clock_64();
    const std::uint64_t g1 = global_timer();
    records[blockIdx.x] = ordering::TimeRecord{c0, c1, g0, g1, sm_id(), 0};
  }
  const std::uint32_t wg = threadIdx.x / kThreadsPerWarpgroup;
  const std::uint32_t t = threadIdx.x % kThreadsPerWarpgroup;
  float* o = out + (static_cast<std::size_t>(blockIdx.x) * (blockDim.x / kThreadsPerWarpgroup) + wg) *
                       kAccumulators * kThreadsPerWarpgroup;
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) o[i * kThreadsPerWarpgroup + t] = d[i];
#endif
}

__global__ void feature_kernel(int* flag) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  *flag = 1;
#else
  *flag = 0;
#endif
}

using KernelPtr = void (*)(const std::uint16_t*, std::uint32_t, std::uint64_t, std::uint64_t, float*,
                           ordering::TimeRecord*);

template <class T>
KernelPtr pick(int wait, int per_group) {
  if (wait == 0) return per_group == 4 ? wgmma_kernel<T, 0, 4> : wgmma_kernel<T, 0, 1>;
  return per_group == 4 ? wgmma_kernel<T, 1, 4> : wgmma_kernel<T, 1, 1>;
}

KernelPtr pick(MmaType type, int wait, int per_group) {
  return type == MmaType::kBf16 ? pick<Bf16>(wait, per_group) : pick<F16>(wait, per_group);
}

}  // namespace

bool wgmma_compiled() {
  ordering::DeviceBuffer<int> flag(1);
  flag.zero();
  feature_kernel<<<1, 1>>>(flag.get());
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  return flag.download()[0] == 1;
}

void wgmma_prepare(std::uint32_t bytes) {
  for (auto type : {MmaType::kBf16, MmaType::kF16})
    for (int wait : {0, 1})
      for (int per_group : {1, 4})
        GP_CUDA_CHECK(cudaFuncSetAttribute(pick(type, wait, per_group),
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(bytes)));
}

void launch_wgmma(const WgmmaLaunch& l, const std::uint16_t* image, float* out,
                  ordering::TimeRecord* records) {
  if ((l.wait != 0 && l.wait != 1) || (l.per_group != 1 && l.per_group != 4) || l.warpgroups < 1 ||
      l.warpgroups > 2 || l.dynamic_smem < kTileABytes + kTileBBytes + 1024)
    throw std::invalid_argument("launch_wgmma: unsupported launch shape");
  pick(l.type, l.wait, l.per_group)<<<l.blocks, l.warpgroups * kThreadsPerWarpgroup, l.dynamic_smem>>>(
      image, l.groups, l.desc_a, l.desc_b, out, records);
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::probes::hopper
