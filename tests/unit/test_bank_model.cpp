// The shared-memory bank-conflict model. Expected numbers are derived by hand in each test:
// bank(w) = w mod 32 for the 4-byte word index w = address / 4; an access of W-byte words is
// served in phases of P = 128 / W threads (32, 16, 8); within a phase the N-way is the largest
// number of distinct 4-byte words that land in one bank.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/bank_model.hpp"
#include "cli/option_axes.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "device/model_device.hpp"

namespace gpuprobe::analysis {
namespace {

TEST(BankModel, FourByteStrideOneIsConflictFree) {
  // Thread t reads word t: banks 0..31 once each, one phase.
  const auto a = strided_access(1, 4);
  EXPECT_EQ(a.ways, 1);
  EXPECT_EQ(a.phases, 1);
  EXPECT_EQ(a.wavefronts, 1);
}

TEST(BankModel, FourByteStrideTwoIsTwoWay) {
  // Thread t reads word 2t: bank 2t mod 32, so threads t and t + 16 share a bank with rows 0
  // and 1 (words 2t and 2t + 32); the odd banks are idle.
  const auto a = strided_access(2, 4);
  EXPECT_EQ(a.ways, 2);
  EXPECT_EQ(a.wavefronts, 2);
}

TEST(BankModel, FourByteStrideThirtyTwoIsThirtyTwoWay) {
  // Word 32t: every thread in bank 0, 32 distinct rows.
  EXPECT_EQ(strided_access(32, 4).ways, 32);
  EXPECT_EQ(strided_access(32, 4).wavefronts, 32);
}

TEST(BankModel, FourByteOddStridesAreConflictFree) {
  // For odd s, t -> s*t mod 32 is a permutation of the 32 banks.
  for (int s = 1; s <= 31; s += 2) EXPECT_EQ(strided_access(s, 4).ways, 1) << "stride " << s;
}

TEST(BankModel, FourByteEvenStrides) {
  // gcd(s, 32) threads share each used bank: 6 -> 2, 12 -> 4, 24 -> 8, 16 -> 16.
  EXPECT_EQ(strided_access(4, 4).ways, 4);
  EXPECT_EQ(strided_access(6, 4).ways, 2);
  EXPECT_EQ(strided_access(8, 4).ways, 8);
  EXPECT_EQ(strided_access(12, 4).ways, 4);
  EXPECT_EQ(strided_access(16, 4).ways, 16);
  EXPECT_EQ(strided_access(24, 4).ways, 8);
}

TEST(BankModel, EightByteStrideOneIsConflictFreeInTwoPhases) {
  // Each half-warp reads 16 x 8 = 128 contiguous bytes: every bank once per phase.
  const auto a = strided_access(1, 8);
  EXPECT_EQ(a.ways, 1);
  EXPECT_EQ(a.phases, 2);
  EXPECT_EQ(a.wavefronts, 2);
}

TEST(BankModel, EightByteStrides) {
  // Stride 2: thread t covers words 4t, 4t+1; in a half-warp t and t + 8 share banks -> 2-way.
  EXPECT_EQ(strided_access(2, 8).ways, 2);
  EXPECT_EQ(strided_access(2, 8).wavefronts, 4);
  // Odd strides: 2st mod 32 takes 16 distinct even values over a half-warp -> 1-way.
  for (int s = 1; s <= 31; s += 2) EXPECT_EQ(strided_access(s, 8).ways, 1) << "stride " << s;
  // Stride 16: every thread at a multiple of 128 B -> banks 0 and 1 for all 16 threads of the
  // phase. Stride 32 cannot do worse: a phase has only 16 threads (a 4-byte warp would be 32).
  EXPECT_EQ(strided_access(16, 8).ways, 16);
  EXPECT_EQ(strided_access(32, 8).ways, 16);
  EXPECT_EQ(strided_access(32, 8).wavefronts, 32);
}

TEST(BankModel, SixteenByteStrideOneIsConflictFreeInFourPhases) {
  const auto a = strided_access(1, 16);
  EXPECT_EQ(a.ways, 1);
  EXPECT_EQ(a.phases, 4);
  EXPECT_EQ(a.wavefronts, 4);
}

TEST(BankModel, SixteenByteStrideTwoIsTwoWay) {
  // A quarter-warp (8 threads) at 32-B spacing: thread t covers words 8t..8t+3, banks
  // 8t mod 32 .. +3, so threads t and t + 4 use the same four banks (rows t/4 = 0 and 1).
  const auto a = strided_access(2, 16);
  EXPECT_EQ(a.ways, 2);
  EXPECT_EQ(a.wavefronts, 8);
}

TEST(BankModel, SixteenByteLargeStridesSaturateAtEight) {
  // Stride 8: 128-B spacing, all 8 threads of a phase on banks 0..3; more is impossible.
  EXPECT_EQ(strided_access(4, 16).ways, 4);
  EXPECT_EQ(strided_access(8, 16).ways, 8);
  EXPECT_EQ(strided_access(32, 16).ways, 8);
  EXPECT_EQ(strided_access(3, 16).ways, 1);
}

TEST(BankModel, MatchesClosedFormForEveryStrideAndWordSize) {
  // Threads t, t' of one phase share a bank iff s (t - t') W/4 = 0 mod 32, i.e. iff
  // s (t - t') = 0 mod P with P = 128 / W; each used bank then holds gcd(s, P) rows.
  for (int w : {4, 8, 16}) {
    const int p = 128 / w;
    for (int s = 1; s <= 32; ++s) {
      const auto a = strided_access(s, w);
      EXPECT_EQ(a.ways, std::gcd(s, p)) << w << " B stride " << s;
      EXPECT_EQ(a.phases, 32 / p);
      EXPECT_DOUBLE_EQ(a.relative_cost(), a.ways);
    }
  }
}

TEST(BankModel, SameAddressIsABroadcast) {
  // Stride 0: all 32 threads read one word -> no conflict.
  EXPECT_EQ(strided_access(0, 4).ways, 1);
  EXPECT_EQ(strided_access(0, 16).ways, 1);
  // Two threads on word 0 and one on word 32 (bank 0, row 1): 2-way, not 3-way.
  std::vector<std::uint64_t> addr(32);
  for (int t = 0; t < 32; ++t) addr[t] = 4u * static_cast<unsigned>(t);
  addr[1] = 0;
  addr[2] = 128;
  EXPECT_EQ(model_access(addr, 4).ways, 2);
}

TEST(BankModel, PhasesSeparateHalfWarps) {
  // Threads 0..15 read bytes 0..127 and threads 16..31 bytes 128..255, 8 B each: thread 0 and
  // thread 16 both use banks 0-1 in different rows, but in different phases -> 1-way.
  std::vector<std::uint64_t> addr8(32);
  for (int t = 0; t < 32; ++t) addr8[t] = 8u * static_cast<unsigned>(t);
  EXPECT_EQ(model_access(addr8, 8).ways, 1);
  // The same rows read as 4-byte words in one phase: threads t and t + 16 collide -> 2-way.
  std::vector<std::uint64_t> addr4(32);
  for (int t = 0; t < 32; ++t)
    addr4[t] = 4u * static_cast<unsigned>(t % 16) + (t >= 16 ? 128u : 0u);
  EXPECT_EQ(model_access(addr4, 4).ways, 2);
}

TEST(BankModel, UnevenPhasesCostTheSumOfTheirWavefronts) {
  // 16-B words: quarter 0 has thread 1 at byte 128 (banks 0-3, row 1) colliding with thread 0;
  // quarters 1..3 are contiguous. ways = 2, wavefronts = 2 + 1 + 1 + 1 = 5.
  std::vector<std::uint64_t> addr(32);
  for (int t = 0; t < 32; ++t) addr[t] = 16u * static_cast<unsigned>(t);
  addr[1] = 128;
  const auto a = model_access(addr, 16);
  EXPECT_EQ(a.ways, 2);
  EXPECT_EQ(a.phases, 4);
  EXPECT_EQ(a.wavefronts, 5);
  EXPECT_DOUBLE_EQ(a.relative_cost(), 1.25);
}

TEST(BankModel, PartialWarp) {
  // 8 active threads of 4-byte words, stride 4: words 0, 4, .., 28 -> distinct banks.
  std::vector<std::uint64_t> addr;
  for (int t = 0; t < 8; ++t) addr.push_back(16u * static_cast<unsigned>(t));
  const auto a = model_access(addr, 4);
  EXPECT_EQ(a.ways, 1);
  EXPECT_EQ(a.phases, 1);
  // An empty access has no phase.
  EXPECT_EQ(model_access({}, 8).phases, 0);
}

TEST(BankModel, RejectsBadInput) {
  EXPECT_THROW(strided_access(1, 2), std::invalid_argument);
  EXPECT_THROW(strided_access(1, 32), std::invalid_argument);
  EXPECT_THROW(strided_access(-1, 4), std::invalid_argument);
  EXPECT_THROW(model_access({4}, 8), std::invalid_argument);  // misaligned 8-byte word
  EXPECT_THROW(model_access(std::vector<std::uint64_t>(33, 0), 4), std::invalid_argument);
  EXPECT_TRUE(valid_word_bytes(16));
  EXPECT_FALSE(valid_word_bytes(12));
  EXPECT_EQ(threads_per_phase(8), 16);
}

// smem.bank_conflicts: option checks and the analysis of recorded samples (no GPU needed).

const Experiment& bank_experiment() {
  const auto* e = Registry::builtin().find("smem.bank_conflicts");
  if (!e) throw std::runtime_error("smem.bank_conflicts is not registered");
  return *e;
}

TEST(BankConflictsExperiment, WaivedOnTheModelledGpu) {
  auto dev = device::make_model_device("tiny");
  const auto why = bank_experiment().waiver(dev->info());
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("needs a CUDA GPU"), std::string::npos);
}

TEST(BankConflictsExperiment, RejectsStridesAndWordSizesOutsideTheModel) {
  auto dev = device::make_model_device("tiny");
  const auto with_flags = [](std::vector<int> strides, std::vector<int> words) {
    cli::FamilyOptions f;
    f.strides = std::move(strides);
    f.word_sizes = std::move(words);
    RunOptions o;
    o.axis_overrides = cli::family_overrides(Registry::builtin(), f);
    return o;
  };
  EXPECT_NO_THROW(bank_experiment().validate(*dev, RunOptions{}));
  EXPECT_NO_THROW(bank_experiment().validate(*dev, with_flags({1, 32}, {4, 8, 16})));
  EXPECT_THROW(bank_experiment().validate(*dev, with_flags({0}, {})), UsageError);
  // --strides allows 64 (bandwidth.stride), the bank model only 32.
  try {
    bank_experiment().validate(*dev, with_flags({33}, {}));
    ADD_FAILURE() << "stride 33 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--strides (smem.bank_conflicts.stride_words)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(bank_experiment().validate(*dev, with_flags({2}, {12})), UsageError);
}

/// Samples as smem.bank_conflicts records them, with block cycles = wavefronts x `per_wavefront`
/// (the shared pipe's cost), except where `override_cycles` says otherwise.
nlohmann::json recorded_cases(double per_wavefront, int odd_word, int odd_stride,
                              double odd_cycles) {
  nlohmann::json cases = nlohmann::json::array();
  for (int w : {4, 8, 16}) {
    for (int s = 1; s <= 32; ++s) {
      double cycles = strided_access(s, w).wavefronts * per_wavefront;
      if (w == odd_word && s == odd_stride) cycles = odd_cycles;
      cases.push_back(
          {{"word_bytes", w},
           {"stride", s},
           {"mode", "block"},
           {"cycles_per_access", {{"median", cycles}, {"p5", cycles}, {"p95", cycles}}}});
    }
  }
  return cases;
}

std::map<std::string, Finding> analyze_cases(const nlohmann::json& cases) {
  ExperimentResult r;
  r.samples = {{"cases", cases}};
  bank_experiment().analyze(r);
  std::map<std::string, Finding> out;
  for (const auto& f : r.findings) out[f.name] = f;
  return out;
}

TEST(BankConflictsExperiment, AnalysisAgreesWhenCyclesFollowTheModel) {
  const auto f = analyze_cases(recorded_cases(1.02, 0, 0, 0));
  ASSERT_TRUE(f.count("smem.bank_model_agreement"));
  EXPECT_DOUBLE_EQ(f.at("smem.bank_model_agreement").value, 1.0);
  EXPECT_EQ(f.at("smem.bank_model_agreement").extra["cases"], 96);
  ASSERT_TRUE(f.count("smem.wavefront_cycles"));
  EXPECT_NEAR(f.at("smem.wavefront_cycles").value, 1.02, 1e-9);
}

TEST(BankConflictsExperiment, AnalysisReportsADisagreement) {
  // 16-B words, stride 2: the model says 2-way (8 wavefronts); cycles of a 3-way access
  // (12 wavefronts at 1 cycle) make the measured N-way 12 / 4 = 3.
  const auto f = analyze_cases(recorded_cases(1.0, 16, 2, 12.0));
  const auto& a = f.at("smem.bank_model_agreement");
  EXPECT_NEAR(a.value, 95.0 / 96.0, 1e-12);
  ASSERT_EQ(a.extra["disagreements"].size(), 1u);
  EXPECT_EQ(a.extra["disagreements"][0]["stride"], 2);
  EXPECT_EQ(a.extra["disagreements"][0]["model_ways"], 2);
  EXPECT_DOUBLE_EQ(a.extra["disagreements"][0]["measured_ways"].get<double>(), 3.0);
}

}  // namespace
}  // namespace gpuprobe::analysis
