#pragma once
#include <cstdint>
#include <vector>

#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds hopper.wgmma.throughput: wgmma.mma_async m64n256k16 (bf16 and f16, f32 accumulate)
/// from shared-memory descriptors on every SM. Waived unless the device is a real compute
/// capability 9.0 GPU ("needs sm_90a (Hopper)", then "needs a CUDA GPU" on a modelled one).
void register_hopper_experiments(Registry& registry);

namespace hopper_layout {

/// A K-major tile of `rows` x 16 two-byte elements as 8-row x 16-byte core matrices (row r of a
/// core matrix at byte 16 r, 8 consecutive K elements in it); core matrix (row group, k group)
/// starts at row_group * row_stride + k_group * k_stride bytes.
struct TileLayout {
  std::uint32_t row_stride = 256;  ///< bytes between core matrices adjacent in M (or N)
  std::uint32_t k_stride = 128;    ///< bytes between core matrices adjacent in K
};
/// Byte offset of element (row, k) in the tile.
std::uint32_t element_offset(const TileLayout& l, int row, int k);

/// A descriptor without its start address: LBO in bits 16-29, SBO in bits 32-45 (both >> 4),
/// base offset 0, swizzle mode 0 (none) in bits 62-63.
std::uint64_t descriptor_bits(std::uint32_t lbo_bytes, std::uint32_t sbo_bytes);
/// A descriptor without its start address for a K-major 128-byte-swizzled tile (rows of 128 B,
/// 8-row groups `sbo_bytes` apart): SBO in bits 32-45, LBO 16 B (unused by this layout), base
/// offset 0 (1024-B aligned tiles), swizzle mode 1 (128 B) in bits 62-63.
std::uint64_t descriptor_bits_swizzle128(std::uint32_t sbo_bytes);

/// Row and column of the m64nNk16 f32 accumulator register `reg` of warpgroup thread `thread`
/// (warp w owns rows 16w..16w+15; register 4j+q of lane l: row 16w + l/4 + 8 (q/2),
/// column 8j + 2 (l%4) + q%2).
void accumulator_position(int thread, int reg, int& row, int& col);

/// Bits of `f` as bfloat16, truncated: exact for values with at most 8 significant bits (such
/// as small integers and their halves).
std::uint16_t bf16_bits(float f);
/// Bits of a small integer (|v| < 2048) as IEEE half; exact.
std::uint16_t f16_bits(int v);

}  // namespace hopper_layout
}  // namespace gpuprobe::probes
