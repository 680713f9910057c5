#include "core/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "core/error.hpp"
#include "core/text_input.hpp"

namespace gpuprobe::units {

std::string format_bytes(std::uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0 || std::fabs(v - std::round(v)) < 1e-9)
    std::snprintf(buf, sizeof(buf), "%.0f %s", v, kUnits[u]);
  else
    std::snprintf(buf, sizeof(buf), "%.4g %s", v, kUnits[u]);
  return buf;
}

std::uint64_t parse_size(const std::string& text, const std::string& what) {
  const std::string allowed =
      "; expected a positive size such as 4096, 64K, 1.5M or 2G (binary multiples)";
  if (text.empty()) throw UsageError(what + " is empty" + allowed);
  const char* begin = text.c_str();
  char* end = nullptr;
  if (!(std::isdigit(static_cast<unsigned char>(begin[0])) || begin[0] == '.'))
    throw UsageError(what + " " + text_input::quoted(text) + " is not a size" + allowed);
  const double number = std::strtod(begin, &end);
  std::string suffix(end);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double mult = 1;
  if (suffix.empty() || suffix == "B")
    mult = 1;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB")
    mult = 1024.0;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB")
    mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB")
    mult = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB")
    mult = 1024.0 * 1024 * 1024 * 1024;
  else
    throw UsageError(what + " " + text_input::quoted(text) + " has an unknown unit" + allowed);
  const double bytes = number * mult;
  if (!std::isfinite(bytes) || bytes < 1)
    throw UsageError(what + " " + text_input::quoted(text) + " is not positive" + allowed);
  if (bytes > 1.0e15)
    throw UsageError(what + " " + text_input::quoted(text) + " is too large" + allowed);
  return static_cast<std::uint64_t>(std::llround(bytes));
}

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), format, &tm);
  return buf;
}

}  // namespace gpuprobe::units
