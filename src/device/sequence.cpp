#include "device/sequence.hpp"

namespace gpuprobe::device {

Sequencer* as_sequencer(Device& device) { return dynamic_cast<Sequencer*>(&device); }

}  // namespace gpuprobe::device
