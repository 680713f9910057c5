#pragma once
// The cache-structure primitive lives with the device seam in core/ (pure interface).
#include "core/sequence.hpp"
