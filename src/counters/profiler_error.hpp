#pragma once
#include <stdexcept>

namespace gpuprobe::counters {

/// The profiler could not read the counters (no permission, unsupported chip, a failing CUPTI
/// call): the cross-check is waived with this text, the experiment goes on.
class ProfilerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpuprobe::counters
