#pragma once
// What the command-line tests share: running gpuprobe in-process with its exit code, stdout and
// stderr captured, the one-line usage-error check, and a fresh temporary folder per process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.hpp"

namespace gpuprobe::test_cli {

struct Outcome {
  int code;
  std::string out, err;
};

/// `gpuprobe args...` through cli::run, as main would call it.
inline Outcome gp(std::vector<std::string> args) {
  args.insert(args.begin(), "gpuprobe");
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = cli::run(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

/// Exit code 2 and exactly one line on stderr that contains `needle`.
inline void expect_one_line_error(const Outcome& o, const std::string& needle) {
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find(needle), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "not one line: " << o.err;
}

/// An empty path under the system's temporary folder, unique to `name` and this process.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() /
           ("gpuprobe_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p;
}

}  // namespace gpuprobe::test_cli
