#pragma once
// The sector model of global-memory traffic: how many 32-byte sectors one warp-wide access
// touches (what the L1 requests from the L2), how many distinct sectors a whole stream of such
// accesses touches (what the L2 exchanges with DRAM when neighbouring requests share sectors),
// the resulting efficiency (useful bytes / moved bytes), shared-memory bank conflicts and the
// prediction for the three transpose kernels. Also the byte accounting of the bandwidth
// experiments. Pure host code: no GPU, no state.
//
// Conventions
//  - A warp request is one load or store instruction executed by `threads` threads; thread t
//    accesses element (offset + t * stride) of an array of `element_bytes`-byte elements whose
//    first byte is at byte address `base_address` (only base_address mod 4096 matters).
//  - Useful bytes are the bytes the threads ask for (threads x element_bytes; an element asked
//    for by several threads counts once). Moved bytes are sectors x 32.
//  - Request efficiency = useful / (sectors_per_request x 32): the L1 <-> L2 view.
//  - Stream efficiency = useful / (distinct granules x granule bytes) over a long stream of
//    consecutive requests (thread t of request r accesses element offset + (r x threads + t) x
//    stride): the L2 <-> DRAM view, where a sector shared by two requests is fetched once.
#include <cstdint>
#include <string>

namespace gpuprobe::analysis {

constexpr int kSectorBytes = 32;
constexpr int kLineBytes = 128;
constexpr int kWarpThreads = 32;
constexpr int kSharedBanks = 32;

/// One warp-wide access: thread t touches element (offset_elements + t * stride_elements).
struct WarpAccess {
  int element_bytes = 4;             ///< 1, 2, 4, 8 or 16
  std::int64_t stride_elements = 1;  ///< >= 0 (0: every thread reads the same element)
  std::int64_t offset_elements = 0;  ///< >= 0, the first thread's element
  std::uint64_t base_address = 0;    ///< byte address of element 0 (cudaMalloc: 256-B aligned)
  int threads = kWarpThreads;        ///< active threads, 1..32
};

/// Throws std::invalid_argument for an element size other than 1, 2, 4, 8, 16, a negative
/// stride or offset, or a thread count outside 1..32.
void check_access(const WarpAccess& a);

/// Distinct 32-byte sectors the request touches.
std::uint64_t sectors_per_request(const WarpAccess& a);
/// Distinct 128-byte lines the request touches.
std::uint64_t lines_per_request(const WarpAccess& a);
/// Bytes the threads ask for (distinct elements x element_bytes).
std::uint64_t useful_bytes_per_request(const WarpAccess& a);
/// useful / (sectors x 32), in (0, 1].
double request_efficiency(const WarpAccess& a);

/// Useful / moved bytes of an endless stream of such requests (request r starts where request
/// r - 1 ended: element offset + r x threads x stride), moving data in `granule_bytes`-byte
/// pieces (32 = a sector; 64 = a DRAM access of two sectors). Neighbouring requests share
/// granules, so this is >= request_efficiency. granule_bytes: a power of two, 4..4096.
double stream_efficiency(const WarpAccess& a, int granule_bytes = kSectorBytes);

/// DRAM efficiency of a copy whose read stream and write stream both follow `a`: useful bytes
/// (read + written) / moved bytes. The read stream moves useful / stream_efficiency; so does the
/// write stream, except that with `partial_write_rmw` a piece that is only partly written must
/// first be read (read-modify-write, e.g. to recompute its ECC), doubling its traffic.
double copy_stream_efficiency(const WarpAccess& a, int granule_bytes, bool partial_write_rmw);

/// Shared-memory bank conflict degree: the most distinct 4-byte words that map to one of the
/// 32 banks when thread t accesses word (offset_words + t * stride_words); 1 = conflict-free.
/// (Threads reading the same word are served by a broadcast and do not conflict.)
int shared_bank_ways(std::int64_t stride_words, std::int64_t offset_words = 0,
                     int threads = kWarpThreads);

enum class TransposeKind { kNaive, kTiled, kTiledPadded };
std::string to_string(TransposeKind k);

/// What the sector and bank model predicts for one warp of a 32 x 32-tile transpose of a
/// float matrix of `n` x `n` elements (n a multiple of 32, >= 32); 32 threads along a row.
struct TransposePrediction {
  std::uint64_t read_sectors_per_warp = 0;   ///< global load request (a row piece: 4)
  std::uint64_t write_sectors_per_warp = 0;  ///< global store request (naive: a column, 32)
  std::uint64_t useful_bytes_per_warp = 0;   ///< 128 read + 128 written
  std::uint64_t moved_bytes_per_warp = 0;    ///< (read + write sectors) x 32
  double request_efficiency = 0;             ///< useful / moved (L1 <-> L2)
  double stream_efficiency = 0;  ///< useful / distinct sectors over the whole matrix (L2 <-> DRAM)
  int shared_store_ways = 0;     ///< bank conflict degree of the tile store (0: no shared memory)
  int shared_load_ways = 0;      ///< bank conflict degree of the transposed tile load
  int tile_pitch_words = 0;      ///< row pitch of the shared tile (32 or 33)
};
TransposePrediction predict_transpose(TransposeKind kind, std::uint64_t n);

/// What the bandwidth streams count: bytes read, bytes written, and their sum (the number the
/// GB/s figures are based on).
enum class StreamKind { kRead, kWrite, kCopy };
std::string to_string(StreamKind k);
struct ByteCount {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t counted_bytes() const { return read_bytes + write_bytes; }
};
/// Bytes of one pass of a read / write / copy kernel over arrays of `array_bytes` each.
ByteCount stream_bytes(StreamKind kind, std::uint64_t array_bytes);

/// Bytes of a strided (or offset) float kernel touching `elements` elements with element
/// stride `stride`: useful = elements x 4 per direction (read, plus write for a copy); moved =
/// what the sector model predicts at the L1 <-> L2 level (useful / request efficiency) and at the
/// DRAM level (useful / stream efficiency with 32-byte sectors).
struct StridedBytes {
  double useful_bytes = 0;
  double moved_bytes_request = 0;
  double moved_bytes_stream = 0;
};
StridedBytes strided_bytes(std::uint64_t elements, std::int64_t stride, std::int64_t offset,
                           bool copy);

}  // namespace gpuprobe::analysis
