#pragma once
// Gzipped input (result.json.gz): recognised by its magic bytes, inflated with zlib (linked
// statically where the build found it), bounded like every input (files::kMaxInputBytes).
#include <cstdint>
#include <string>

namespace gpuprobe::gzip {

/// Whether `data` starts with the gzip magic bytes (1f 8b).
bool is_gzip(const std::string& data);

/// Whether this gpuprobe was built with zlib (can read gzipped input).
bool available();

/// The inflated content of `data` (one or more gzip members). Throws UsageError (one line naming
/// `path`) when it is corrupt or cut short, when it would inflate to more than `max_bytes`, or
/// when this gpuprobe was built without zlib.
std::string inflate(const std::string& data, std::uintmax_t max_bytes, const std::string& path);

}  // namespace gpuprobe::gzip
