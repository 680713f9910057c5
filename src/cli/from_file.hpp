#pragma once
// What the result commands share when they read a file: anything but a UsageError that a
// reader of the file's content throws was caused by that content, so it becomes one line.
#include <exception>
#include <string>

#include "core/error.hpp"

namespace gpuprobe::cli {

/// The text up to its first newline.
inline std::string first_line(std::string s) {
  const auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

/// Runs `f` on content loaded from `file`; anything but a UsageError it throws was caused by
/// the file's content (the shape check cannot foresee every reader), so it becomes one.
template <typename F>
auto from_file(const std::string& file, F&& f) {
  try {
    return f();
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(file + ": cannot use this result (" + first_line(e.what()) + ")");
  }
}

}  // namespace gpuprobe::cli
