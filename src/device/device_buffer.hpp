#pragma once
// Device memory owned by one object and freed on every path.
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/cuda_check.hpp"

namespace gpuprobe::device {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_) GP_CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// `n` elements of T in device memory; move-only.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) : buffer_(n * sizeof(T)), n_(n) {}
  T* get() const { return buffer_.as<T>(); }
  std::size_t size() const { return n_; }
  void zero() {
    if (n_) GP_CUDA_CHECK(cudaMemset(get(), 0, n_ * sizeof(T)));
  }
  void upload(const std::vector<T>& v) {
    if (v.size() > n_) throw std::length_error("DeviceArray::upload: too many elements");
    if (!v.empty())
      GP_CUDA_CHECK(cudaMemcpy(get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  /// Copies the first `count` elements back (all when 0); synchronous.
  std::vector<T> download(std::size_t count = 0) const {
    std::vector<T> v(count ? count : n_);
    if (!v.empty())
      GP_CUDA_CHECK(cudaMemcpy(v.data(), get(), v.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }
  std::vector<T> to_host(std::size_t count = 0) const { return download(count); }
  /// Copies the first `count` elements to `dst` (e.g. a PinnedArray reused across launches);
  /// synchronous.
  void download_to(T* dst, std::size_t count) const {
    if (count > n_) throw std::length_error("DeviceArray::download_to: too many elements");
    if (count)
      GP_CUDA_CHECK(cudaMemcpy(dst, get(), count * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  DeviceBuffer buffer_;
  std::size_t n_ = 0;
};

/// `n` elements of T in page-locked host memory; move-only. A large kernel output copied back
/// after every launch lands here: a fresh pageable vector per launch costs its page faults, its
/// zeroing and a staged copy, several times what the copy itself does.
/// Frees what cudaMallocHost allocated (cudaFreeHost's error, at teardown, is not checked).
struct PinnedFree {
  void operator()(void* p) const { cudaFreeHost(p); }
};

template <class T>
class PinnedArray {
 public:
  PinnedArray() = default;
  explicit PinnedArray(std::size_t n) : n_(n) {
    if (n_ == 0) return;
    void* p = nullptr;
    GP_CUDA_CHECK(cudaMallocHost(&p, n_ * sizeof(T)));
    ptr_.reset(static_cast<T*>(p));
  }
  T* data() const { return ptr_.get(); }
  std::size_t size() const { return ptr_ ? n_ : 0; }

 private:
  std::unique_ptr<T, PinnedFree> ptr_;
  std::size_t n_ = 0;
};

}  // namespace gpuprobe::device
