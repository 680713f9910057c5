#pragma once
// Byte sizes (parsing what users type, printing what they read) and the UTC time stamp.
#include <cstdint>
#include <string>

namespace gpuprobe::units {

inline constexpr std::uint64_t kKiB = 1024;
inline constexpr std::uint64_t kMiB = 1024 * kKiB;
inline constexpr std::uint64_t kGiB = 1024 * kMiB;

/// `v` rounded up to a multiple of `unit` (> 0).
inline constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t unit) {
  return (v + unit - 1) / unit * unit;
}

/// "1.5 MiB", "60 MiB", "512 B": binary units, up to 4 significant digits.
std::string format_bytes(std::uint64_t bytes);

/// Parses "4096", "64K", "64KiB", "64KB", "1.5M", "2G" (binary multiples: K = 1024) into bytes.
/// Throws UsageError naming `what` for anything non-numeric, negative, zero or too large.
std::uint64_t parse_size(const std::string& text, const std::string& what);

/// The current UTC time formatted with strftime's `format` (ISO 8601 to the second by default).
std::string utc_now(const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace gpuprobe::units
