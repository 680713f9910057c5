#pragma once
// Pure host model of shared-memory bank conflicts (NVIDIA, compute capability 5.0 and later):
// 32 banks, each 4 bytes wide; successive 4-byte words go to successive banks. One warp-wide
// access is served in "phases" of 128 bytes of requested data: 4-byte words in one phase of 32
// threads, 8-byte words in two half-warp phases of 16 threads, 16-byte words in four
// quarter-warp phases of 8 threads. Within one phase, threads that read the same 4-byte word
// share it (broadcast, no conflict); distinct 4-byte words in the same bank (different "rows")
// are served one after another. The N-way of an access is the largest number of distinct rows
// any bank must deliver in any one phase; the access costs that many wavefronts per phase.
#include <cstdint>
#include <vector>

namespace gpuprobe::analysis {

constexpr int kSharedBanks = 32;
constexpr int kBankBytes = 4;
constexpr int kWarpSize = 32;
/// Bytes one conflict-free wavefront delivers: every bank once.
constexpr int kWavefrontBytes = kSharedBanks * kBankBytes;

/// Whether `word_bytes` is a word size the model (and the hardware) serves: 4, 8 or 16.
bool valid_word_bytes(int word_bytes);

/// Threads served in one phase: 128 / word_bytes (32, 16 or 8). Throws std::invalid_argument
/// for another word size.
int threads_per_phase(int word_bytes);

struct BankAccess {
  int ways = 0;        ///< max over phases of the largest number of distinct rows in one bank
  int phases = 0;      ///< phases that have at least one active thread
  int wavefronts = 0;  ///< sum over phases of that phase's largest count (the access's cost)
  /// wavefronts / phases: the cost relative to the same access without conflicts. Equals
  /// `ways` when every phase has the same conflict degree (true for thread-strided patterns).
  double relative_cost() const { return phases ? static_cast<double>(wavefronts) / phases : 0; }
};

/// Models one warp-wide access: thread t (t < addresses.size() <= 32) reads `word_bytes` bytes
/// at byte address addresses[t] (shared-window offsets). Throws std::invalid_argument for more
/// than 32 threads, an invalid word size or an address not aligned to the word size.
BankAccess model_access(const std::vector<std::uint64_t>& addresses, int word_bytes);

/// The strided pattern of smem.bank_conflicts: thread t of a full warp reads the word at index
/// t * stride_words (byte address t * stride_words * word_bytes). stride_words >= 0 (0 is a
/// broadcast); throws std::invalid_argument for a negative stride or an invalid word size.
BankAccess strided_access(int stride_words, int word_bytes);

}  // namespace gpuprobe::analysis
