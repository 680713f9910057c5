#pragma once
// The cache operator of a global load: a value every layer names (experiments, the replay's
// judging, the device seam), kept apart from the seam so that pure code can name it.
#include <string>
#include <vector>

namespace gpuprobe::device {

/// Cache operator of a global load (PTX ld.global.<op>); kDefault is a plain ld.global.
enum class LoadOp { kDefault, kCa, kCg, kCv, kNc };

std::string to_string(LoadOp op);
/// Parses "default", "ca", "cg", "cv", "nc"; throws UsageError naming the allowed values.
LoadOp parse_load_op(const std::string& text);
/// Whether a load with this operator may hit in L1 (ca, nc and default do; cg and cv bypass it).
bool caches_in_l1(LoadOp op);
std::vector<LoadOp> all_load_ops();

}  // namespace gpuprobe::device
