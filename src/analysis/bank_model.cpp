#include "analysis/bank_model.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace gpuprobe::analysis {

bool valid_word_bytes(int word_bytes) {
  return word_bytes == 4 || word_bytes == 8 || word_bytes == 16;
}

int threads_per_phase(int word_bytes) {
  if (!valid_word_bytes(word_bytes))
    throw std::invalid_argument("shared-memory word size " + std::to_string(word_bytes) +
                                " B is not modelled; use 4, 8 or 16");
  return kWavefrontBytes / word_bytes;
}

BankAccess model_access(const std::vector<std::uint64_t>& addresses, int word_bytes) {
  const int per_phase = threads_per_phase(word_bytes);
  if (addresses.size() > static_cast<std::size_t>(kWarpSize))
    throw std::invalid_argument("a warp has at most 32 threads, got " +
                                std::to_string(addresses.size()) + " addresses");
  BankAccess result;
  const int threads = static_cast<int>(addresses.size());
  for (int first = 0; first < threads; first += per_phase) {
    // Distinct 4-byte words (by global word index) each bank must deliver in this phase.
    std::vector<std::set<std::uint64_t>> rows(kSharedBanks);
    const int last = std::min(threads, first + per_phase);
    for (int t = first; t < last; ++t) {
      const std::uint64_t a = addresses[static_cast<std::size_t>(t)];
      if (a % static_cast<std::uint64_t>(word_bytes) != 0)
        throw std::invalid_argument("address " + std::to_string(a) + " is not aligned to " +
                                    std::to_string(word_bytes) + " B");
      for (int j = 0; j < word_bytes / kBankBytes; ++j) {
        const std::uint64_t word = a / kBankBytes + static_cast<std::uint64_t>(j);
        rows[word % kSharedBanks].insert(word);
      }
    }
    std::size_t worst = 0;
    for (const auto& r : rows) worst = std::max(worst, r.size());
    if (worst == 0) continue;
    ++result.phases;
    result.wavefronts += static_cast<int>(worst);
    result.ways = std::max(result.ways, static_cast<int>(worst));
  }
  return result;
}

BankAccess strided_access(int stride_words, int word_bytes) {
  if (stride_words < 0)
    throw std::invalid_argument("stride " + std::to_string(stride_words) + " is negative");
  threads_per_phase(word_bytes);  // validates the word size
  std::vector<std::uint64_t> addresses(kWarpSize);
  for (int t = 0; t < kWarpSize; ++t)
    addresses[static_cast<std::size_t>(t)] = static_cast<std::uint64_t>(t) *
                                             static_cast<std::uint64_t>(stride_words) *
                                             static_cast<std::uint64_t>(word_bytes);
  return model_access(addresses, word_bytes);
}

}  // namespace gpuprobe::analysis
