#pragma once
// The command-line program as a function, so tests can drive it without a process.
#include <ostream>

namespace gpuprobe::cli {

/// Runs gpuprobe with these arguments. Returns the exit code: 0 success, 1 some experiment
/// failed (results still written), 2 bad input (one line on `err`, nothing written).
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace gpuprobe::cli
