#pragma once
// The one CUDA-event timer: an owned event, and a start/stop pair that times the work a stream
// runs between them (cudaEventElapsedTime: about 0.5 us resolution).
#include <cuda_runtime_api.h>

namespace gpuprobe::measure {

/// A CUDA event with timing, destroyed with its owner.
/// A non-blocking CUDA stream of the current device.
class CudaStream {
 public:
  CudaStream();
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class CudaEvent {
 public:
  CudaEvent();
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t stream = nullptr);
  void synchronize();

 private:
  cudaEvent_t e_ = nullptr;
};

/// Nanoseconds from `a` to `b` (both recorded and complete).
double elapsed_ns(const CudaEvent& a, const CudaEvent& b);

/// Times what `stream` runs between start() and stop_*(); stop waits for the stream.
class EventTimer {
 public:
  void start(cudaStream_t stream = nullptr);
  double stop_ms();
  double stop_ns() { return stop_ms() * 1e6; }

 private:
  CudaEvent a_, b_;
  cudaStream_t stream_ = nullptr;
};

/// Protocol text of a measurement timed with EventTimer.
inline constexpr const char* kEventTimerProtocol =
    "CUDA events recorded on the stream around the timed launches (cudaEventElapsedTime)";

}  // namespace gpuprobe::measure
