#pragma once
// The tests' lookup of one finding of an experiment's result by name.
#include <string>

#include "core/experiment.hpp"

namespace gpuprobe::test {

/// The finding named `name`, or nullptr.
inline const Finding* find(const ExperimentResult& r, const std::string& name) {
  for (const auto& f : r.findings)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace gpuprobe::test
