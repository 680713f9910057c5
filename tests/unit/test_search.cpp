// The shared search (src/measure/search.hpp): per-row statuses, stages over the rows so far, and
// the confirmation pass that removes the upward bias of reporting the best of N noisy medians.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "measure/search.hpp"

namespace gpuprobe::measure {
namespace {

Measured exact(double v) { return {{v, v, v}, v, {{"note", "exact"}}}; }

Search<int> exact_search(std::vector<int>* measured = nullptr) {
  return Search<int>(
      [measured](const int& c) {
        if (measured) measured->push_back(c);
        if (c == 3) throw VerificationError("row 3: 7 of 100 elements differ");
        if (c == 4) throw SkipRow("row 4 cannot be resident");
        if (c == 5) throw CudaError("cudaLaunchKernel: too many resources requested", false);
        return exact(10.0 * c);
      },
      [](const int& c) { return "c" + std::to_string(c); });
}

TEST(Search, AFailedCheckIsARowErrorAndTheOthersSurvive) {
  auto s = exact_search();
  s.run_stage("all", {1, 2, 3, 4, 5, 6});
  ASSERT_EQ(s.rows().size(), 6u);
  EXPECT_EQ(s.rows()[2].outcome.status, RowStatus::kError);
  EXPECT_NE(s.rows()[2].outcome.reason.find("7 of 100 elements differ"), std::string::npos);
  EXPECT_EQ(s.rows()[3].outcome.status, RowStatus::kSkipped);
  EXPECT_EQ(s.rows()[4].outcome.status, RowStatus::kError);
  for (std::size_t i : {0u, 1u, 5u}) EXPECT_TRUE(s.rows()[i].passed()) << i;
  // The failed row never wins, even though its configuration would rank high.
  ASSERT_TRUE(s.best().has_value());
  EXPECT_EQ(*s.best(), 5u);
  const auto sum = s.status_summary();
  EXPECT_EQ(sum.at("passed"), 3);
  EXPECT_EQ(sum.at("error"), 2);
  EXPECT_EQ(sum.at("skipped"), 1);
  EXPECT_EQ(sum.at("errors").size(), 2u);
  EXPECT_NE(sum.at("errors")[0].get<std::string>().find("c3: "), std::string::npos);
  const auto rows = s.rows_json([](const int& c) { return nlohmann::json{{"config", c}}; });
  EXPECT_EQ(rows[2].at("status"), "error");
  EXPECT_EQ(rows[2].count("note"), 0u);
  EXPECT_EQ(rows[0].at("note"), "exact");
  EXPECT_EQ(rows[0].at("config"), 1);
}

TEST(Search, StickyCudaErrorsAndOtherFailuresPropagate) {
  Search<int> s(
      [](const int& c) -> Measured {
        if (c == 1) throw CudaError("illegal address", true);
        throw std::logic_error("a bug");
      },
      [](const int& c) { return std::to_string(c); });
  EXPECT_THROW(s.try_config("x", 1), CudaError);
  EXPECT_THROW(s.try_config("x", 2), std::logic_error);
}

TEST(Search, AConfigurationIsMeasuredOnceAndStagesSeeTheBestSoFar) {
  std::vector<int> measured;
  auto s = exact_search(&measured);
  s.run_stage("first", {1, 2});
  const int base = s.rows()[*s.best()].config;
  EXPECT_EQ(base, 2);
  s.run_stage("second", {base, base + 4, base + 5});  // 2 again, 6, 7
  EXPECT_EQ(measured, (std::vector<int>{1, 2, 6, 7}));
  EXPECT_EQ(s.rows().size(), 4u);
  // best() with a filter.
  const auto b = s.best([](const SearchRow<int>& r) { return r.stage == "first"; });
  EXPECT_EQ(s.rows()[*b].config, 2);
  EXPECT_FALSE(s.best([](const SearchRow<int>&) { return false; }).has_value());
}

TEST(Search, ConfirmationReMeasuresOnlyTheWinner) {
  std::vector<int> measured;
  auto s = exact_search(&measured);
  s.run_stage("all", {1, 2, 6, 7});
  measured.clear();
  std::vector<int> confirmed;
  const auto c = s.confirm(*s.best(), [&](const int& cfg) {
    confirmed.push_back(cfg);
    return exact(69.0);
  });
  EXPECT_TRUE(measured.empty());
  EXPECT_EQ(confirmed, std::vector<int>{7});
  EXPECT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c.search_value, 70.0);
  EXPECT_DOUBLE_EQ(c.outcome.measured.value, 69.0);
  const auto j = to_json(c);
  EXPECT_EQ(j.at("winner_row"), 3);
  EXPECT_EQ(j.at("status"), "passed");
  EXPECT_EQ(j.at("samples").size(), 3u);
  // A confirmation whose check fails is an error with its reason and no confidence.
  const auto bad = s.confirm(*s.best(), [](const int&) -> Measured {
    throw VerificationError("confirmation: XOR differs");
  });
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(to_json(bad).at("reason"), "confirmation: XOR differs");
  EXPECT_EQ(confirmed_confidence(bad), 0.0);
  EXPECT_GT(confirmed_confidence(c), 0.99);  // exact samples
}

// Twenty configurations of the same true value (100) measured with noise: the search's best is
// the maximum of twenty noisy medians and lies above the truth on average; the confirmation of
// the winner is an independent measurement and does not.
TEST(Search, ConfirmingRemovesTheUpwardBiasOfTheMaximum) {
  std::mt19937 rng(12345);
  std::normal_distribution<double> noise(0.0, 2.0);
  auto noisy = [&](const int&) {
    Measured m;
    for (int k = 0; k < 5; ++k) m.samples.push_back(100.0 + noise(rng));
    m.value = stats::median(m.samples);
    return m;
  };
  double search_sum = 0, confirm_sum = 0;
  const int trials = 200;
  for (int t = 0; t < trials; ++t) {
    Search<int> s(noisy, [](const int& c) { return std::to_string(c); });
    std::vector<int> configs(20);
    for (int i = 0; i < 20; ++i) configs[i] = i;
    s.run_stage("all", configs);
    const auto c = s.confirm(*s.best(), noisy);
    ASSERT_TRUE(c.ok());
    search_sum += c.search_value;
    confirm_sum += c.outcome.measured.value;
  }
  const double search_bias = search_sum / trials - 100.0;
  const double confirm_bias = confirm_sum / trials - 100.0;
  // Median of 5 samples of sd 2 has an sd of about 1.07; the expected maximum of 20 is ~1.87 sd.
  EXPECT_GT(search_bias, 1.5);
  EXPECT_LT(std::abs(confirm_bias), 0.3);
}

}  // namespace
}  // namespace gpuprobe::measure
