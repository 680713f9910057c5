// Fuzz-style tests of every loader: seeded mutations of a real result.json (written by
// `gpuprobe run` on the modelled GPU) and of a model file (a built-in preset), fed in-process
// to analyze, compare, report, export-model and --device model:<file>. Each must succeed (0) or
// refuse with one line (2) and write nothing; never abort, never crash, never exit 1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "cli/app.hpp"
#include "cli_runner.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using test_cli::gp;
using test_cli::Outcome;

/// Every location in a document, as a JSON pointer.
void pointers(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& all) {
  all.push_back(at);
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) pointers(*it, at / it.key(), all);
  else if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i) pointers(j[i], at / i, all);
}

/// A value of another kind than `v`: type swaps, huge and NaN-ish values, deep nesting.
json replacement(const json& v, std::mt19937_64& rng) {
  json deep = 1;
  for (int i = 0; i < 40; ++i) deep = json::array({deep});
  const std::vector<json> pool = {nullptr,
                                  true,
                                  0,
                                  -1,
                                  1e308,
                                  -1e308,
                                  std::numeric_limits<std::uint64_t>::max(),
                                  std::numeric_limits<std::int64_t>::min(),
                                  0.5,
                                  "",
                                  "NaN",
                                  "inf",
                                  "-inf",
                                  "x.y",
                                  "1e999",
                                  std::string(10000, 'x'),
                                  json::array(),
                                  json::object(),
                                  deep,
                                  json::array({1, "a", nullptr})};
  json r = pool[rng() % pool.size()];
  if (v.is_number() && rng() % 4 == 0) r = v.dump();  // the number as a string
  if (v.is_string() && rng() % 4 == 0) r = v.get<std::string>().size();
  if (v.is_array() && rng() % 4 == 0) r = json::object({{"0", v.empty() ? json() : v[0]}});
  return r;
}

/// One mutation of `doc` as text: a value replaced, a key deleted, an array emptied, the text
/// truncated or a byte changed.
std::string mutate(const json& doc, std::mt19937_64& rng) {
  std::vector<json::json_pointer> all;
  pointers(doc, json::json_pointer(), all);
  json m = doc;
  const int kind = static_cast<int>(rng() % 10);
  const auto at = all[1 + rng() % (all.size() - 1)];
  if (kind <= 4) {
    m[at] = replacement(m[at], rng);
  } else if (kind <= 6) {
    const auto parent = at.parent_pointer();
    if (m[parent].is_object())
      m[parent].erase(at.back());
    else
      m[parent].erase(static_cast<std::size_t>(std::stoul(at.back())));
  } else if (kind == 7) {
    if (m[at].is_array() || m[at].is_object())
      m[at].clear();
    else
      m[at] = replacement(m[at], rng);
  } else {
    std::string text = doc.dump();
    if (kind == 8) return text.substr(0, rng() % text.size());
    text[rng() % text.size()] = "{}[]\",:0e-x\\"[rng() % 12];
    return text;
  }
  return m.dump();
}

class TrustFuzz : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("gpuprobe_fuzz_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    // A real result with every finding export-model needs, and samples analyze re-reads.
    const auto made = gp({"--device", "model:tiny", "--out", (dir_ / "base").string(), "run",
                          "latency.sweep", "latency.shared"});
    ASSERT_EQ(made.code, 0) << made.err;
    std::ifstream in(dir_ / "base" / "result.json");
    result_ = json::parse(in);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  /// Runs `command` on `n` mutations; checks exit 0 or 2, one line for 2, `left` absent for 2.
  static void fuzz(int n, std::uint64_t seed, const json& base,
                   const std::function<Outcome(const std::string&)>& command,
                   const fs::path& left) {
    std::mt19937_64 rng(seed);
    const auto file = dir_ / "mutant.json";
    int refused = 0;
    for (int i = 0; i < n; ++i) {
      const std::string text = mutate(base, rng);
      std::ofstream(file, std::ios::trunc) << text;
      fs::remove_all(left);
      const auto o = command(file.string());
      ASSERT_TRUE(o.code == 0 || o.code == 2)
          << "mutant " << i << " (seed " << seed << ") exit " << o.code << ": " << o.err;
      if (o.code == 2) {
        ++refused;
        ASSERT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << i << ": " << o.err;
        ASSERT_FALSE(fs::exists(left)) << i << ": " << o.err;
      }
    }
    // Many mutations break something a loader reads; a loader that refuses none checks nothing.
    EXPECT_GT(refused, n / 10);
  }

  static inline fs::path dir_;
  static inline json result_;
};

constexpr int kMutants = 1000;

TEST_F(TrustFuzz, Analyze) {
  fuzz(
      kMutants, 1, result_,
      [](const std::string& f) {
        return gp({"analyze", f});
      },
      dir_ / "none");
}

TEST_F(TrustFuzz, Compare) {
  const auto base = (dir_ / "base" / "result.json").string();
  fuzz(
      kMutants, 2, result_,
      [&](const std::string& f) {
        return gp({"compare", base, f});
      },
      dir_ / "none");
}

// report: a mutant with a huge number in a curve's samples once made the old chart writer loop;
// the hint-driven charts and the samples check before drawing end every mutant in exit 0 or 2.
TEST_F(TrustFuzz, Report) {
  const auto out = (dir_ / "report").string();
  fuzz(
      kMutants, 3, result_,
      [&](const std::string& f) {
        return gp({"report", f, "--out", out});
      },
      dir_ / "report");
}

TEST_F(TrustFuzz, ExportModel) {
  const auto model = (dir_ / "model.json").string();
  fuzz(
      kMutants, 4, result_,
      [&](const std::string& f) {
        return gp({"export-model", f, model});
      },
      dir_ / "model.json");
}

TEST_F(TrustFuzz, ModelFile) {
  // The tiny preset as a model file (the keys --device model:<file> reads).
  std::ostringstream out, err;
  const char* argv[] = {"gpuprobe", "--device", "model:tiny", "info"};
  ASSERT_EQ(cli::run(4, argv, out, err), 0);
  const json model = json::parse(out.str())["environment"]["model"];
  fuzz(
      kMutants, 5, model,
      [](const std::string& f) {
        return gp({"--device", "model:" + f, "list"});
      },
      dir_ / "none");
}

}  // namespace
}  // namespace gpuprobe
