#pragma once
// The tests' lookup of one finding of an experiment's result by name, and a run of one
// experiment whose findings are posted for the next (as `run` does).
#include <string>

#include "core/experiment.hpp"

namespace gpuprobe::test {

/// The finding named `name`, or nullptr.
inline const Finding* find(const ExperimentResult& r, const std::string& name) {
  for (const auto& f : r.findings)
    if (f.name == name) return &f;
  return nullptr;
}

/// Runs and analyses the registered experiment `id` in `ctx` and posts its findings on
/// `board` (the board ctx.prior reads), as a run does before the experiments that use them.
inline ExperimentResult run_and_post(Context& ctx, FindingBoard& board, const std::string& id) {
  const auto* e = Registry::builtin().find(id);
  ExperimentResult r;
  if (e == nullptr) return r;
  e->run(ctx, r);
  e->analyze(r);
  for (const auto& f : r.findings) board.add(f);
  return r;
}

}  // namespace gpuprobe::test
