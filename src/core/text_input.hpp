#pragma once
// Text the user gave, read one way everywhere: integer lists and seeds from the command line, and
// input echoed in a message (quoted, control characters escaped, so every message is one line).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace gpuprobe::text_input {

/// `s` with every control character escaped (\n, \r, \t, \\xNN): one line whatever it holds.
std::string escape_controls(const std::string& s);

/// `s` in single quotes, control characters escaped, cut to 200 characters: how a message
/// quotes what came from outside (a path, a status, an option's value).
std::string quoted(const std::string& s);

/// The elements of a comma-separated list. Throws UsageError naming `option` for an empty list
/// or an empty element ("a,,b", "a,", ",a"): every list option refuses them the same way.
std::vector<std::string> split_list(const std::string& text, const std::string& option);

/// A comma-separated list of integers ("1,2,8"), each in [lo, hi]. Throws UsageError naming
/// `option` for an empty list or element ("1,,2", "1,"), a non-integer or one out of range.
std::vector<int> parse_int_list(const std::string& text, const std::string& option,
                                int lo = std::numeric_limits<int>::min(),
                                int hi = std::numeric_limits<int>::max());

/// A seed: a decimal integer in 0..2^64-1. "-1", "1e3", "18446744073709551616" and "" are
/// refused (UsageError naming `option`), never wrapped.
std::uint64_t parse_seed(const std::string& text, const std::string& option);

}  // namespace gpuprobe::text_input
