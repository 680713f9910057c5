#include "measure/cuda_event.hpp"

#include "core/cuda_check.hpp"

namespace gpuprobe::measure {

CudaStream::CudaStream() {
  GP_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
}

CudaStream::~CudaStream() {
  if (s_) cudaStreamDestroy(s_);
}

CudaEvent::CudaEvent() { GP_CUDA_CHECK(cudaEventCreate(&e_)); }

CudaEvent::~CudaEvent() {
  if (e_) cudaEventDestroy(e_);
}

void CudaEvent::record(cudaStream_t stream) { GP_CUDA_CHECK(cudaEventRecord(e_, stream)); }

void CudaEvent::synchronize() { GP_CUDA_CHECK(cudaEventSynchronize(e_)); }

double elapsed_ns(const CudaEvent& a, const CudaEvent& b) {
  float ms = 0;
  GP_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return static_cast<double>(ms) * 1e6;
}

void EventTimer::start(cudaStream_t stream) {
  stream_ = stream;
  a_.record(stream);
}

double EventTimer::stop_ms() {
  b_.record(stream_);
  b_.synchronize();
  float ms = 0;
  GP_CUDA_CHECK(cudaEventElapsedTime(&ms, a_.get(), b_.get()));
  return ms;
}

}  // namespace gpuprobe::measure
