#pragma once
// `gpuprobe compare A.json B.json`: what changed between two recorded results (report/compare).
#include <ostream>
#include <string>

namespace gpuprobe::cli {

struct CompareOptions {
  std::string format = "text";  ///< text, md, csv or json
  bool changed_only = false;    ///< --changed: only rows beyond noise or different
  std::string out_dir;          ///< --out: also write <out_dir>/compare.html
};

/// Loads both results (one line, exit 2, nothing written when either is not a gpuprobe
/// result), prints the comparison in the chosen format and, with an out_dir, writes
/// compare.html there.
int compare_command(const std::string& path_a, const std::string& path_b,
                    const CompareOptions& options, std::ostream& out);

}  // namespace gpuprobe::cli
