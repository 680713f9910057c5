#pragma once
// Byte sizes: parsing what users type and printing what they read.
#include <cstdint>
#include <string>

namespace gpuprobe::units {

inline constexpr std::uint64_t kKiB = 1024;
inline constexpr std::uint64_t kMiB = 1024 * kKiB;


/// "1.5 MiB", "60 MiB", "512 B": binary units, up to 4 significant digits.
std::string format_bytes(std::uint64_t bytes);

/// Parses "4096", "64K", "64KiB", "64KB", "1.5M", "2G" (binary multiples: K = 1024) into bytes.
/// Throws UsageError naming `what` for anything non-numeric, negative, zero or too large.
std::uint64_t parse_size(const std::string& text, const std::string& what);

}  // namespace gpuprobe::units
