#pragma once
// Progress of a long run on stderr: experiment n of m, the measurement point it is at, the
// elapsed time and an estimate of the rest. Shown only when enabled (stderr is a terminal and
// --quiet was not given); otherwise every call is a no-op.
#include <ostream>
#include <string>

namespace gpuprobe::progress {

/// Turns progress on (to `out`) or off for the rest of the process.
void enable(std::ostream* out);
/// Whether stderr is a terminal (the default for enable).
bool stderr_is_terminal();
/// Experiment `n` (1-based) of `m` starts.
void begin(int n, int m, const std::string& id);
/// One more measurement point of the current experiment (repeat_until_stable calls it).
void point();
/// The current experiment ended; clears the line.
void end();
/// The line shown now (for tests): empty when disabled.
std::string line();

}  // namespace gpuprobe::progress
