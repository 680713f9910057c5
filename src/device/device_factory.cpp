#include <cctype>
#include <string>

#include "core/error.hpp"
#include "device/cuda_device.hpp"
#include "device/device.hpp"
#include "device/model_device.hpp"

namespace gpuprobe::device {

std::unique_ptr<Device> open_device(const std::string& spec) {
  const std::string model_prefix = "model:";
  if (spec.rfind(model_prefix, 0) == 0) return make_model_device(spec.substr(model_prefix.size()));
  std::string digits = spec.rfind("cuda:", 0) == 0 ? spec.substr(5) : spec;
  if (digits.empty() || digits.size() > 4 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(
        "unknown device '" + spec +
        "'; use a CUDA ordinal (0), cuda:N, or model:NAME (h200, a100, rtx5080, tiny)");
  return make_cuda_device(std::stoi(digits));
}

}  // namespace gpuprobe::device
