#include "analysis/sector_model.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <vector>

namespace gpuprobe::analysis {
namespace {

bool is_power_of_two(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/// First byte address thread t touches.
std::uint64_t address_of(const WarpAccess& a, std::int64_t element) {
  return a.base_address +
         static_cast<std::uint64_t>(element) * static_cast<std::uint64_t>(a.element_bytes);
}

/// Distinct `granule`-byte pieces touched by elements first, first + stride, ... (count of
/// them), in increasing address order (stride >= 1) so a running maximum finds new ones.
std::uint64_t granules_touched(const WarpAccess& a, std::int64_t first, std::int64_t count,
                               std::int64_t stride, std::uint64_t granule) {
  std::uint64_t distinct = 0;
  bool any = false;
  std::uint64_t last = 0;
  for (std::int64_t k = 0; k < count; ++k) {
    const std::uint64_t lo = address_of(a, first + k * stride) / granule;
    const std::uint64_t hi = (address_of(a, first + k * stride) + a.element_bytes - 1) / granule;
    for (std::uint64_t g = lo; g <= hi; ++g) {
      if (!any || g > last) {
        ++distinct;
        last = g;
        any = true;
      }
    }
  }
  return distinct;
}

std::uint64_t pieces_per_request(const WarpAccess& a, std::uint64_t piece) {
  check_access(a);
  std::set<std::uint64_t> pieces;
  for (int t = 0; t < a.threads; ++t) {
    const std::uint64_t addr = address_of(a, a.offset_elements + t * a.stride_elements);
    for (std::uint64_t p = addr / piece; p <= (addr + a.element_bytes - 1) / piece; ++p)
      pieces.insert(p);
  }
  return pieces.size();
}

}  // namespace

void check_access(const WarpAccess& a) {
  if (!is_power_of_two(a.element_bytes) || a.element_bytes > 16)
    throw std::invalid_argument("element size " + std::to_string(a.element_bytes) +
                                " B is not modelled; use 1, 2, 4, 8 or 16");
  if (a.stride_elements < 0) throw std::invalid_argument("negative stride");
  if (a.offset_elements < 0) throw std::invalid_argument("negative offset");
  if (a.threads < 1 || a.threads > kWarpThreads)
    throw std::invalid_argument("threads per request must be 1..32");
}

std::uint64_t sectors_per_request(const WarpAccess& a) {
  return pieces_per_request(a, kSectorBytes);
}

std::uint64_t lines_per_request(const WarpAccess& a) { return pieces_per_request(a, kLineBytes); }

std::uint64_t useful_bytes_per_request(const WarpAccess& a) {
  check_access(a);
  const std::uint64_t distinct = a.stride_elements == 0 ? 1 : static_cast<std::uint64_t>(a.threads);
  return distinct * static_cast<std::uint64_t>(a.element_bytes);
}

double request_efficiency(const WarpAccess& a) {
  return static_cast<double>(useful_bytes_per_request(a)) /
         static_cast<double>(sectors_per_request(a) * kSectorBytes);
}

double stream_efficiency(const WarpAccess& a, int granule_bytes) {
  check_access(a);
  if (!is_power_of_two(granule_bytes) || granule_bytes < 4 || granule_bytes > 4096)
    throw std::invalid_argument("granule must be a power of two between 4 and 4096 bytes");
  const auto g = static_cast<std::uint64_t>(granule_bytes);
  if (a.stride_elements == 0) {
    const auto touched = granules_touched(a, a.offset_elements, 1, 1, g);
    return static_cast<double>(a.element_bytes) / static_cast<double>(touched * g);
  }
  // The touched pattern repeats every `period` elements (period x stride x size is a multiple
  // of the granule); the distinct granules one more period adds, once the boundary effects of
  // the start are behind, is the exact steady-state count.
  const std::uint64_t step = static_cast<std::uint64_t>(a.stride_elements) * a.element_bytes;
  const std::int64_t period = static_cast<std::int64_t>(g / std::gcd(step, g));
  const std::int64_t m = 4;
  const auto d_m = granules_touched(a, a.offset_elements, m * period, a.stride_elements, g);
  const auto d_m1 = granules_touched(a, a.offset_elements, (m + 1) * period, a.stride_elements, g);
  const double per_period = static_cast<double>(d_m1 - d_m);
  return static_cast<double>(period * a.element_bytes) / (per_period * static_cast<double>(g));
}

double copy_stream_efficiency(const WarpAccess& a, int granule_bytes, bool partial_write_rmw) {
  const double e = stream_efficiency(a, granule_bytes);
  const double read_moved = 1.0 / e;  // per useful byte of one direction
  const bool partial = e < 1.0;
  const double write_moved = (partial && partial_write_rmw ? 2.0 : 1.0) / e;
  return 2.0 / (read_moved + write_moved);
}

int shared_bank_ways(std::int64_t stride_words, std::int64_t offset_words, int threads) {
  if (threads < 1 || threads > kWarpThreads) throw std::invalid_argument("threads must be 1..32");
  if (stride_words < 0 || offset_words < 0)
    throw std::invalid_argument("negative stride or offset");
  std::map<std::int64_t, std::set<std::int64_t>> words_per_bank;
  for (int t = 0; t < threads; ++t) {
    const std::int64_t w = offset_words + t * stride_words;
    words_per_bank[w % kSharedBanks].insert(w);
  }
  std::size_t ways = 0;
  for (const auto& [bank, words] : words_per_bank) ways = std::max(ways, words.size());
  return static_cast<int>(ways);
}

std::string to_string(TransposeKind k) {
  switch (k) {
    case TransposeKind::kNaive:
      return "naive";
    case TransposeKind::kTiled:
      return "tiled";
    case TransposeKind::kTiledPadded:
      return "tiled_padded";
  }
  return "?";
}

TransposePrediction predict_transpose(TransposeKind kind, std::uint64_t n) {
  if (n < 32 || n % 32 != 0)
    throw std::invalid_argument("transpose size must be a positive multiple of 32");
  TransposePrediction p;
  // Every kernel reads a 32-float piece of an input row per warp request.
  const WarpAccess row{4, 1, 0, 0, kWarpThreads};
  p.read_sectors_per_warp = sectors_per_request(row);
  if (kind == TransposeKind::kNaive) {
    // The naive kernel writes a 32-float piece of an output column: one element per row.
    const WarpAccess column{4, static_cast<std::int64_t>(n), 0, 0, kWarpThreads};
    p.write_sectors_per_warp = sectors_per_request(column);
  } else {
    p.write_sectors_per_warp = sectors_per_request(row);
    p.tile_pitch_words = kind == TransposeKind::kTiled ? 32 : 33;
    // The tile is stored row by row (thread t -> word t) and read column by column (thread t
    // -> word t x pitch).
    p.shared_store_ways = shared_bank_ways(1);
    p.shared_load_ways = shared_bank_ways(p.tile_pitch_words);
  }
  p.useful_bytes_per_warp = 2 * useful_bytes_per_request(row);
  p.moved_bytes_per_warp = (p.read_sectors_per_warp + p.write_sectors_per_warp) * kSectorBytes;
  p.request_efficiency =
      static_cast<double>(p.useful_bytes_per_warp) / static_cast<double>(p.moved_bytes_per_warp);
  // Over the whole matrix every input and every output sector is used in full (the other 7
  // floats of a column-written sector come from the 7 neighbouring rows of the same tile), so
  // the L2 <-> DRAM view is that of two contiguous streams.
  p.stream_efficiency = stream_efficiency(row);
  return p;
}

std::string to_string(StreamKind k) {
  switch (k) {
    case StreamKind::kRead:
      return "read";
    case StreamKind::kWrite:
      return "write";
    case StreamKind::kCopy:
      return "copy";
  }
  return "?";
}

ByteCount stream_bytes(StreamKind kind, std::uint64_t array_bytes) {
  ByteCount b;
  if (kind != StreamKind::kWrite) b.read_bytes = array_bytes;
  if (kind != StreamKind::kRead) b.write_bytes = array_bytes;
  return b;
}

StridedBytes strided_bytes(std::uint64_t elements, std::int64_t stride, std::int64_t offset,
                           bool copy) {
  const WarpAccess a{4, stride, offset, 0, kWarpThreads};
  StridedBytes b;
  b.useful_bytes = static_cast<double>(elements) * 4.0 * (copy ? 2.0 : 1.0);
  b.moved_bytes_request = b.useful_bytes / request_efficiency(a);
  b.moved_bytes_stream = b.useful_bytes / stream_efficiency(a, kSectorBytes);
  return b;
}

}  // namespace gpuprobe::analysis
