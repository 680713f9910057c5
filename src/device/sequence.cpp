#include "device/sequence.hpp"

namespace gpuprobe {

Sequencer* as_sequencer(device::Device& device) { return dynamic_cast<Sequencer*>(&device); }

}  // namespace gpuprobe
