#include "device/cuda_residency.hpp"

#include <cuda_runtime.h>

#include <string>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/line_select.hpp"
#include "device/device_buffer.hpp"
#include "device/residency_kernels.hpp"

namespace gpuprobe::device {
namespace {

cudaAccessProperty to_cuda(AccessProperty p) {
  switch (p) {
    case AccessProperty::kStreaming:
      return cudaAccessPropertyStreaming;
    case AccessProperty::kPersisting:
      return cudaAccessPropertyPersisting;
    case AccessProperty::kNormal:
      break;
  }
  return cudaAccessPropertyNormal;
}

void set_window(cudaStream_t stream, void* base, std::uint64_t bytes, const AccessWindow& w) {
  cudaStreamAttrValue value{};
  value.accessPolicyWindow.base_ptr = base;
  value.accessPolicyWindow.num_bytes = bytes;
  value.accessPolicyWindow.hitRatio = static_cast<float>(w.hit_ratio);
  value.accessPolicyWindow.hitProp = to_cuda(w.hit);
  value.accessPolicyWindow.missProp = to_cuda(w.miss);
  GP_CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
}

}  // namespace

PersistingLimits cuda_persisting_limits(int ordinal) {
  cudaDeviceProp prop{};
  GP_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  PersistingLimits l;
  l.max_set_aside_bytes = static_cast<std::uint64_t>(prop.persistingL2CacheMaxSize);
  l.max_window_bytes = static_cast<std::uint64_t>(prop.accessPolicyMaxWindowSize);
  return l;
}

void cuda_load_bulk(const std::uint64_t* base, std::uint64_t buffer_bytes, const BulkLoads& l,
                    const PersistingLimits& limits, int sm_count, cudaStream_t stream,
                    cudaStream_t window_stream) {
  check_bulk_loads(buffer_bytes, l, limits);
  DeviceArray<unsigned long long> bad(1);
  cudaStream_t s = l.windowed ? window_stream : stream;
  GP_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), s));
  if (l.windowed) {
    auto* window_base = reinterpret_cast<char*>(const_cast<std::uint64_t*>(base)) + l.window.offset;
    set_window(s, window_base, l.window.bytes, l.window);
  }
  kernels::launch_bulk_loads(base, l.offset, l.bytes, l.hint, static_cast<float>(l.hint_fraction),
                             l.select_seed, line_select::threshold_of(l.select_share), sm_count,
                             bad.get(), s);
  unsigned long long host_bad = 0;
  GP_CUDA_CHECK(cudaMemcpyAsync(&host_bad, bad.get(), sizeof host_bad, cudaMemcpyDeviceToHost, s));
  GP_CUDA_CHECK(cudaStreamSynchronize(s));
  if (l.windowed) {
    AccessWindow none;
    none.hit_ratio = 0;
    none.hit = AccessProperty::kNormal;
    none.miss = AccessProperty::kNormal;
    set_window(s, nullptr, 0, none);
  }
  if (host_bad != 0)
    throw VerificationError("bulk loads: " + std::to_string(host_bad) +
                            " words did not hold their own offset");
}

void cuda_store_bulk(std::uint64_t* base, std::uint64_t buffer_bytes, std::uint64_t offset,
                     std::uint64_t bytes, std::uint64_t mark, int sm_count, cudaStream_t stream) {
  check_line_range(buffer_bytes, offset, bytes, "marked stores");
  kernels::launch_store_marks(base, offset, bytes, mark, sm_count, stream);
  GP_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void cuda_discard_bulk(std::uint64_t* base, std::uint64_t buffer_bytes, std::uint64_t offset,
                       std::uint64_t bytes, int sm_count, cudaStream_t stream) {
  check_line_range(buffer_bytes, offset, bytes, "discard.global.L2");
  kernels::launch_discard_lines(base, offset, bytes, sm_count, stream);
  GP_CUDA_CHECK(cudaStreamSynchronize(stream));
}

WordCensus cuda_census(const std::uint64_t* base, std::uint64_t buffer_bytes, std::uint64_t offset,
                       std::uint64_t bytes, std::uint64_t mark, int sm_count, cudaStream_t stream) {
  check_line_range(buffer_bytes, offset, bytes, "census");
  DeviceArray<unsigned long long> counts(3);
  GP_CUDA_CHECK(cudaMemsetAsync(counts.get(), 0, 3 * sizeof(unsigned long long), stream));
  kernels::launch_census(base, offset, bytes, mark, sm_count, counts.get(), stream);
  unsigned long long host[3] = {0, 0, 0};
  GP_CUDA_CHECK(cudaMemcpyAsync(host, counts.get(), sizeof host, cudaMemcpyDeviceToHost, stream));
  GP_CUDA_CHECK(cudaStreamSynchronize(stream));
  WordCensus c;
  c.own = host[0];
  c.marked = host[1];
  c.other = host[2];
  if (c.words() != bytes / 8)
    throw VerificationError("census: counted " + std::to_string(c.words()) + " words of " +
                            std::to_string(bytes / 8));
  return c;
}

}  // namespace gpuprobe::device
