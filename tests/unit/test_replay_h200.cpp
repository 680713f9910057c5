// Replays the analysis of every experiment in the committed H200 result: the findings must come
// out of the recorded samples exactly as the run wrote them. This keeps results/h200 honest (a
// finding is always derivable from its samples) and catches analysis changes that would silently
// change what a recorded run means.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "core/experiment.hpp"

namespace gpuprobe {
namespace {

TEST(ReplayH200, EveryFindingFollowsFromItsSamples) {
  std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json");
  ASSERT_TRUE(in.good());
  const auto recorded = nlohmann::json::parse(in);
  std::size_t compared = 0;
  for (const auto& e : recorded.at("experiments")) {
    if (e.value("status", "") != "passed") continue;
    ASSERT_NE(Registry::builtin().find(e.at("id").get<std::string>()), nullptr) << e.at("id");
    const auto r = replay_analysis(e);
    ASSERT_TRUE(r.has_value()) << e.at("id");
    std::map<std::string, double> replayed;
    for (const auto& f : r->findings) replayed[f.name] = f.value;
    for (const auto& f : e.at("findings")) {
      const std::string name = f.at("name");
      ASSERT_TRUE(replayed.count(name)) << r->id << ": " << name << " no longer found";
      EXPECT_DOUBLE_EQ(replayed[name], f.at("value").get<double>()) << r->id << ": " << name;
      ++compared;
    }
  }
  EXPECT_GT(compared, 100u);
}

}  // namespace
}  // namespace gpuprobe
