// Names that the compiler and this test check: experiments' depends_on, the shared finding
// names (core/finding_names.hpp) and their readers, the findings experiments declare, and the
// samples version that guards a replay.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/experiment.hpp"
#include "core/finding_names.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;

const json& h200() {
  static const json recorded = [] {
    std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json");
    return json::parse(in);
  }();
  return recorded;
}

/// Finding name -> experiment, from replaying every passed experiment of the H200 result.
const std::map<std::string, std::string>& replayed() {
  static const std::map<std::string, std::string> names = [] {
    std::map<std::string, std::string> m;
    for (const auto& e : h200().at("experiments"))
      if (const auto r = replay_analysis(e))
        for (const auto& f : r->findings) m[f.name] = r->id;
    return m;
  }();
  return names;
}

bool declared_by(const Experiment& e, const std::string& name) {
  for (const auto& pattern : e.produces())
    if (glob_match(pattern, name)) return true;
  return false;
}

/// Produced: emitted by `experiment` on the H200 replay, or declared by it.
bool produced_by(const std::string& experiment, const std::string& name) {
  const auto* e = Registry::builtin().find(experiment);
  if (!e) return false;
  const auto it = replayed().find(name);
  return (it != replayed().end() && it->second == experiment) || declared_by(*e, name);
}

TEST(FindingNames, EveryKeyStatesItsProducersUnitAndKind) {
  // The replayed H200 findings (a key whose producer did not run there is skipped: the count
  // below keeps that from passing vacuously).
  std::map<std::string, Finding> found;
  for (const auto& e : h200().at("experiments"))
    if (const auto r = replay_analysis(e))
      for (const auto& f : r->findings) found.emplace(f.name, f);
  std::size_t checked = 0;
  for (const FindingKey* key : finding::kKeys) {
    const auto it = found.find(key->name);
    if (it == found.end()) continue;
    ++checked;
    EXPECT_EQ(it->second.unit, key->unit) << key->name;
    // The kind the producer's unit implies, independent of the key (typed_value would read the
    // key itself).
    const std::string& u = it->second.unit;
    const ValueKind by_unit = u == "class"  ? ValueKind::kCategory
                              : u == "mask" ? ValueKind::kMask
                              : u == "bool" ? ValueKind::kBool
                                            : ValueKind::kNumber;
    EXPECT_EQ(by_unit, key->kind) << key->name;
    if (key->kind == ValueKind::kCategory)
      EXPECT_NE(typed_value(to_json(it->second)).text, typed_value(to_json(it->second)).label)
          << key->name << ": a category shown by its code, not its words";
  }
  EXPECT_GE(checked, 60u);
}

TEST(FindingNames, DependenciesNameEarlierExperiments) {
  std::set<std::string> earlier;
  for (const auto& e : Registry::builtin().all()) {
    for (const auto& d : e->depends_on())
      EXPECT_TRUE(earlier.count(d))
          << e->id() << " depends on '" << d << "', which is unknown or registered after it";
    earlier.insert(e->id());
  }
}

TEST(FindingNames, EverySharedNameHasItsProducer) {
  std::set<std::string> seen;
  for (const auto& p : finding::kShared) {
    EXPECT_TRUE(seen.insert(p.name).second) << p.name << " listed twice";
    EXPECT_NE(Registry::builtin().find(p.experiment), nullptr) << p.experiment;
    EXPECT_TRUE(produced_by(p.experiment, p.name))
        << p.experiment << " neither emits nor declares " << p.name;
  }
}

TEST(FindingNames, DeclaringExperimentsEmitOnlyWhatTheyDeclare) {
  std::size_t checked = 0;
  for (const auto& [name, id] : replayed()) {
    const auto* e = Registry::builtin().find(id);
    if (e->produces().empty()) continue;
    // The counters cross-check (src/counters) adds <id>.counters.* to any experiment that
    // declares counters; those names belong to it, not to the experiment.
    if (name.rfind(id + ".counters.", 0) == 0) continue;
    EXPECT_TRUE(declared_by(*e, name)) << id << " emits undeclared " << name;
    ++checked;
  }
  EXPECT_GT(checked, 20u);
}

// tools/readme_results.py reads findings by name; each must be a shared name and produced.
TEST(FindingNames, PythonReadersNameProducedFindings) {
  std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/tools/readme_results.py");
  ASSERT_TRUE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::regex patterns[] = {std::regex(R"(f\[\s*['"]([a-z0-9_.]+)['"]\s*\])"),
                                 std::regex(R"(f\.get\(\s*['"]([a-z0-9_.]+)['"])"),
                                 std::regex(R"(\b(?:v|target)\(\s*['"]([a-z0-9_.]+)['"])"),
                                 std::regex(R"(['"]([a-z0-9_.]+)['"]\s+in\s+f\b)")};
  std::set<std::string> shared;
  for (const auto& p : finding::kShared) shared.insert(p.name);
  std::size_t names = 0;
  for (const auto& re : patterns) {
    for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
      const std::string name = (*it)[1];
      ++names;
      EXPECT_TRUE(shared.count(name)) << name << " is read by readme_results.py but not in "
                                      << "core/finding_names.hpp";
      EXPECT_TRUE(replayed().count(name)) << name << ": no experiment produces it";
    }
  }
  EXPECT_GT(names, 30u);
}

TEST(FindingNames, ReplayRefusesSamplesOfAnotherVersion) {
  for (const auto& e : h200().at("experiments")) {
    if (e.value("status", "") != "passed" || e.at("id") != "smem.bandwidth") continue;
    EXPECT_TRUE(replay_analysis(e).has_value());
    json other = e;
    other["samples_version"] = 99;
    EXPECT_FALSE(replay_analysis(other).has_value());
    other["samples_version"] = 1;
    ASSERT_TRUE(replay_analysis(other).has_value());
    EXPECT_EQ(replay_analysis(other)->samples_version, 1);
    return;
  }
  FAIL() << "smem.bandwidth not in the H200 result";
}

}  // namespace
}  // namespace gpuprobe
