#pragma once
// Included before everything else in gpuprobe's C++ (CMakeLists.txt, -include). nlohmann::json
// checks its preconditions with JSON_ASSERT, which is assert() and so compiled out of release
// builds: reading a missing key of a const object is then undefined behaviour. In gpuprobe such
// a read can be caused by a file of the wrong shape, so the check throws instead, and the
// command reports it in one line.
#include <stdexcept>

// The library also asserts its own invariants inside noexcept destructors, where a throw would
// terminate; those hold for any input (only memory corruption breaks them), so GCC's warning
// about them is silenced here rather than in every file.
#pragma GCC diagnostic ignored "-Wterminate"

#define JSON_ASSERT(x) \
  ((x) ? static_cast<void>(0) : throw std::logic_error("JSON precondition failed: " #x))
