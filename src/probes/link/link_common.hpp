#pragma once
// What the link probes share: RAII owners of streams, events and pinned host memory, timing of
// one copy, and the random cycle a remote chase follows. Host-only (the kernels are in
// link_kernels.cu).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "core/cuda_check.hpp"
#include "measure/cuda_event.hpp"

namespace gpuprobe::probes::link {

using Stream = measure::CudaStream;
using Event = measure::CudaEvent;

/// Seconds between two recorded (and completed) events.
inline double elapsed_s(const Event& a, const Event& b) { return measure::elapsed_ns(a, b) * 1e-9; }

/// Page-locked host memory, mapped into every device's address space (portable, mapped).
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
    GP_CUDA_CHECK(cudaHostAlloc(&p_, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  }
  ~PinnedBuffer() {
    if (p_) cudaFreeHost(p_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* host() const { return p_; }
  /// The address kernels of the current device use for it.
  void* device() const {
    void* d = nullptr;
    GP_CUDA_CHECK(cudaHostGetDevicePointer(&d, p_, 0));
    return d;
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Device memory of one device, freed on that device.
class PeerBuffer {
 public:
  PeerBuffer(int device, std::size_t bytes) : device_(device) {
    int current = 0;
    GP_CUDA_CHECK(cudaGetDevice(&current));
    GP_CUDA_CHECK(cudaSetDevice(device));
    const cudaError_t rc = cudaMalloc(&p_, bytes);
    cudaSetDevice(current);
    GP_CUDA_CHECK(rc);
  }
  ~PeerBuffer() {
    if (!p_) return;
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) return;
    cudaSetDevice(device_);
    cudaFree(p_);
    cudaSetDevice(current);
  }
  PeerBuffer(const PeerBuffer&) = delete;
  PeerBuffer& operator=(const PeerBuffer&) = delete;
  void* get() const { return p_; }
  int device() const { return device_; }

 private:
  int device_ = 0;
  void* p_ = nullptr;
};

/// A random cyclic order of `nodes` nodes (a single cycle: node order[k] points to
/// order[k + 1]), the same for the same seed.
inline std::vector<std::uint32_t> cycle_order(std::uint32_t nodes, std::uint64_t seed) {
  std::vector<std::uint32_t> order(nodes);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin() + (nodes > 1 ? 1 : 0), order.end(), rng);
  return order;
}

/// The node images of a chase through memory at device address `base`: word (node * stride / 8)
/// holds the address of the next node. Returned as the buffer's 8-byte words.
inline std::vector<std::uint64_t> chase_image(const std::vector<std::uint32_t>& order,
                                              std::uint64_t base, std::uint32_t stride_bytes) {
  std::vector<std::uint64_t> words(order.size() * stride_bytes / 8, 0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::uint32_t from = order[k], to = order[(k + 1) % order.size()];
    words[static_cast<std::size_t>(from) * stride_bytes / 8] =
        base + static_cast<std::uint64_t>(to) * stride_bytes;
  }
  return words;
}

inline double host_seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace gpuprobe::probes::link
