#pragma once
// The file-system boundary: what gpuprobe reads must be a regular file of bounded size (a FIFO
// or /dev/zero would block or grow memory without end), and what it writes must not replace an
// input, a device node, a FIFO, a socket or a symbolic link. Every refusal is a UsageError of
// one line naming the path and the reason.
#include <cstdint>
#include <filesystem>
#include <string>

namespace gpuprobe::files {

/// The largest file gpuprobe reads.
inline constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t{1} << 30;

/// Reads the whole of `path`, a regular file of at most kMaxInputBytes, and records it as an
/// input of this process (see check_output_target). `what` names the file in messages ("a
/// result.json written by gpuprobe"). Throws UsageError otherwise; never blocks on a FIFO.
std::string read_input(const std::string& path, const std::string& what);

/// Records `path` as an input: no output of this process may replace it.
void note_input(const std::string& path);

/// Whether `path` (followed through links) is an input of this process.
bool is_input(const std::string& path);

/// Forgets `path` as an input (a result gpuprobe read only to replace it), or all of them (a
/// new command in the same process).
void forget_input(const std::string& path);
void forget_inputs();

/// Throws UsageError when writing a file at `path` would replace something gpuprobe must not:
/// a symbolic link, anything but a regular file (a directory, a device, a FIFO, a socket), a
/// read-only file, or an input of this process (the same file, also through links).
void check_output_target(const std::filesystem::path& path);

/// Why `path` cannot be looked at, when stat(2) fails for another reason than its absence ("is a
/// loop of symbolic links", "has a name too long", ...); empty when it exists or does not.
std::string stat_problem(const std::string& path);

/// The one line for a file-system error that reached the command line: the path and reason.
std::string describe(const std::filesystem::filesystem_error& e);

}  // namespace gpuprobe::files
