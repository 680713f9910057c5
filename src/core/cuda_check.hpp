#pragma once
// Checked CUDA runtime calls: a failing call throws gpuprobe::CudaError carrying the call text,
// file and line, and whether the error is sticky (the context is unusable afterwards).
#include <cuda_runtime_api.h>

#include <string>

#include "core/error.hpp"

namespace gpuprobe::cuda {

/// Whether `err` leaves the CUDA context unusable: every later call in the process fails too.
inline bool is_sticky(cudaError_t err) {
  switch (err) {
    // Documented as leaving the process in an inconsistent state (driver_types.h).
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorContained:
    case cudaErrorExternalDevice:
    case cudaErrorTensorMemoryLeak:
    // A device-side assert also poisons the context; an uncorrectable ECC error means the
    // device memory can no longer be trusted.
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

/// The message a failing call carries: "<expr> failed at <file>:<line>: <name>: <description>".
inline std::string describe_failure(cudaError_t err, const char* expr, const char* file, int line) {
  const char* name = cudaGetErrorName(err);
  const char* text = cudaGetErrorString(err);
  return std::string(expr) + " failed at " + file + ":" + std::to_string(line) + ": " +
         (name ? name : "cudaError " + std::to_string(static_cast<int>(err))) + ": " +
         (text ? text : "unknown error");
}

/// Throws CudaError when `err` is not cudaSuccess.
inline void check(cudaError_t err, const char* expr, const char* file, int line) {
  if (err != cudaSuccess) throw CudaError(describe_failure(err, expr, file, line), is_sticky(err));
}

}  // namespace gpuprobe::cuda

/// Evaluates a CUDA runtime call once; throws gpuprobe::CudaError if it does not return success.
#define GP_CUDA_CHECK(expr) ::gpuprobe::cuda::check((expr), #expr, __FILE__, __LINE__)

namespace gpuprobe::cuda {
/// An integer attribute of CUDA device `ordinal` (cudaDeviceGetAttribute, checked).
inline int device_attribute(cudaDeviceAttr a, int ordinal) {
  int v = 0;
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, ordinal));
  return v;
}
}  // namespace gpuprobe::cuda

/// Checks the launch just made (bad configuration, too many resources...). Execution errors
/// surface later, at the next synchronizing call, which should itself be checked.
#define GP_CUDA_CHECK_LAUNCH() \
  ::gpuprobe::cuda::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
