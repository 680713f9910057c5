#include "core/gzip.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"
#include "core/text_input.hpp"

#if GPUPROBE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace gpuprobe::gzip {

bool is_gzip(const std::string& data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

#if GPUPROBE_HAVE_ZLIB

bool available() { return true; }

namespace {
std::string size_text(std::uintmax_t bytes) {
  if (bytes >= (std::uintmax_t{1} << 30) && bytes % (std::uintmax_t{1} << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  return std::to_string(bytes) + " bytes";
}
}  // namespace

std::string inflate(const std::string& data, std::uintmax_t max_bytes, const std::string& path) {
  const std::string where = text_input::quoted(path);
  z_stream zs{};
  // 16 + MAX_WBITS: a gzip header and trailer (CRC-32 and length checked), not raw deflate.
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    throw UsageError("cannot read " + where + ": zlib could not start inflating");
  std::string out;
  std::size_t pos = 0;
  char buf[1 << 16];
  int rc = Z_OK;
  try {
    while (true) {
      const std::size_t chunk =
          std::min<std::size_t>(data.size() - pos, std::numeric_limits<uInt>::max());
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + pos));
      zs.avail_in = static_cast<uInt>(chunk);
      zs.next_out = reinterpret_cast<Bytef*>(buf);
      zs.avail_out = sizeof(buf);
      rc = ::inflate(&zs, Z_NO_FLUSH);
      pos += chunk - zs.avail_in;
      out.append(buf, sizeof(buf) - zs.avail_out);
      if (out.size() > max_bytes)
        throw UsageError(where + " inflates to more than " + size_text(max_bytes) +
                         " (the most gpuprobe reads)");
      if (rc == Z_STREAM_END) {
        // Another member follows (files joined with cat): inflate it too.
        if (pos < data.size() && is_gzip(data.substr(pos, 2))) {
          if (inflateReset(&zs) != Z_OK) break;
          continue;
        }
        if (pos < data.size())
          throw UsageError(where + " has " + std::to_string(data.size() - pos) +
                           " bytes after its gzip data; it is not a gzipped file");
        break;
      }
      if (rc == Z_OK) continue;
      if (rc == Z_BUF_ERROR && pos >= data.size())
        throw UsageError(where + " is cut short (its gzip data ends early)");
      throw UsageError(where + " is not valid gzip (" +
                       std::string(zs.msg ? zs.msg : "zlib error " + std::to_string(rc)) + ")");
    }
  } catch (...) {
    inflateEnd(&zs);
    throw;
  }
  inflateEnd(&zs);
  return out;
}

#else

bool available() { return false; }

std::string inflate(const std::string&, std::uintmax_t, const std::string& path) {
  throw UsageError(text_input::quoted(path) +
                   " is gzipped, and this gpuprobe was built without zlib; gunzip it first");
}

#endif

}  // namespace gpuprobe::gzip
