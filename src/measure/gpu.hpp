#pragma once
// The CUDA device a probe runs on, made current, with the properties probes size their
// launches from (one query path for every probe).
#include <nlohmann/json.hpp>

#include "core/experiment.hpp"
#include "device/device.hpp"

namespace gpuprobe::probes {

struct Gpu {
  int ordinal = 0;
  int sm_count = 0;
  int max_threads_per_sm = 0;
  int shared_per_sm = 0;
  int shared_per_block_optin = 0;
  int reserved_shared_per_block = 0;
  int cc_major = 0, cc_minor = 0;
  double clock_max_mhz = 0;  ///< the device's reported maximum, 1500 when it reports none
};

/// Makes `dev`'s CUDA device current (cudaSetDevice) and reads its properties (checked).
Gpu open_gpu(const device::Device& dev);

nlohmann::json to_json(const Gpu& g);

/// cudaDeviceSynchronize, checked.
void synchronize();

/// Base of the experiments that use the CUDA runtime directly (the Device seam does not cover
/// them): waived on a modelled GPU with model_waiver().
class CudaRuntimeExperiment : public Experiment {
 public:
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return waive_on_model(info, model_waiver());
  }
  virtual std::string model_waiver() const {
    return "needs a CUDA GPU: the modelled GPU has no pipe model";
  }
};

}  // namespace gpuprobe::probes
