#pragma once
// Errors: usage errors (exit code 2, one line) and CUDA errors carrying call, file and line.
#include <stdexcept>
#include <string>

namespace gpuprobe {

/// A problem with what the user asked for: reported as one line on stderr, exit code 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

/// A failing CUDA runtime call or kernel launch. `sticky` means the context is unusable.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& what, bool sticky) : std::runtime_error(what), sticky_(sticky) {}
  bool sticky() const { return sticky_; }

 private:
  bool sticky_;
};

/// A kernel ran but its output did not match what the host predicted.
class VerificationError : public std::runtime_error {
 public:
  explicit VerificationError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace gpuprobe
