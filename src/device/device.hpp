#pragma once
// The device seam's interface lives in core/device.hpp (core's Experiment names it, and core
// includes nothing above itself); this path keeps working for the code that includes it.
#include "core/device.hpp"
