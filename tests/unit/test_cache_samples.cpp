// The cache family's typed samples (probes/cache/cache_samples.hpp, issue 28 item 1): on the
// recorded H200 result each experiment's samples convert once and write back exactly what was
// recorded (cache.cold_capacity, cache.fetch_granularity, cache.l2.partition, cache.l2.far_hit,
// cache.l2.mixture, cache.l2.sharing, latency.tlb); and samples made ragged at every array and
// object on the way to their numbers (emptied, cut short, a number where an array belongs, a key
// left out) are refused in one line or still judged, never read past an end.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/experiment.hpp"
#include "probes/cache/cache_samples.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;
namespace cs = probes::cache_samples;

/// The recorded H200 result's experiments, parsed once.
const json& recorded_h200() {
  static const json doc = [] {
    std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json");
    return json::parse(in);
  }();
  return doc;
}

const json& recorded(const std::string& id) {
  for (const auto& e : recorded_h200().at("experiments"))
    if (e.at("id") == id) return e;
  throw std::runtime_error("no " + id + " in results/h200/result.json");
}

/// The samples as recorded, less what the runner adds beside the experiment's own.
json own_samples(const std::string& id) {
  json s = recorded(id).at("samples");
  s.erase("counters");
  return s;
}

template <class T>
void expect_round_trip(const std::string& id) {
  const json s = own_samples(id);
  const T typed = s.get<T>();
  EXPECT_EQ(json(typed), s) << id;
  EXPECT_EQ(Registry::builtin().find(id)->samples_version(), T::kVersion) << id;
}

TEST(CacheSamples, RecordedSamplesConvertAndWriteBackUnchanged) {
  expect_round_trip<cs::ColdCapacitySamples>("cache.cold_capacity");
  expect_round_trip<cs::FetchGranularitySamples>("cache.fetch_granularity");
  expect_round_trip<cs::L2PartitionSamples>("cache.l2.partition");
  expect_round_trip<cs::FarHitSamples>("cache.l2.far_hit");
  expect_round_trip<cs::TlbSamples>("latency.tlb");
  expect_round_trip<cs::MixtureSamples>("cache.l2.mixture");
  expect_round_trip<cs::SharingSamples>("cache.l2.sharing");
}

/// Every variant of `samples` with one array or object made ragged, walking into the first and
/// the last element of each array (every key of each object).
void ragged_variants(const json& samples,
                     const std::function<void(const json&, const std::string&)>& f) {
  std::function<void(json&, const std::string&, json&)> walk =
      [&](json& node, const std::string& path, json& root) {
        if (node.is_array()) {
          const json keep = node;
          node = json::array();
          f(root, path + " emptied");
          node = keep;
          if (keep.size() > 1) {
            node.erase(node.begin() + static_cast<std::ptrdiff_t>(keep.size() / 2), node.end());
            f(root, path + " cut short");
            node = keep;
          }
          node = 7;
          f(root, path + " a number");
          node = keep;
          if (!node.empty()) {
            walk(node.front(), path + "[0]", root);
            if (node.size() > 1) walk(node.back(), path + "[last]", root);
          }
        } else if (node.is_object()) {
          std::vector<std::string> keys;
          for (auto it = node.begin(); it != node.end(); ++it) keys.push_back(it.key());
          for (const auto& key : keys) walk(node[key], path + "." + key, root);
          for (const auto& key : keys) {
            const json value = node.at(key);
            node.erase(key);
            f(root, path + " without " + key);
            node[key] = value;
          }
        }
      };
  json root = samples;
  walk(root, "samples", root);
}

/// Analyses `id`'s recorded samples made ragged every way: each is judged or refused with a
/// one-line error (the CLI makes it exit 2); at least `min_refused` are refused (as many as the
/// checks refuse today: a check loosened fails here).
void expect_ragged_refused_in_one_line(const std::string& id, std::size_t min_refused) {
  const json base = recorded(id);
  std::size_t variants = 0, refused = 0;
  ragged_variants(base.at("samples"), [&](const json& samples, const std::string& what) {
    json e = base;
    e["samples"] = samples;
    ++variants;
    try {
      replay_analysis(e);
    } catch (const std::exception& ex) {
      ++refused;
      EXPECT_EQ(std::string(ex.what()).find('\n'), std::string::npos) << id << ": " << what;
    }
  });
  EXPECT_GE(refused, min_refused) << id << " of " << variants;
}

TEST(CacheSamples, RaggedSamplesAreRefusedInOneLineNeverReadPastAnEnd) {
  expect_ragged_refused_in_one_line("cache.cold_capacity", 42);
  expect_ragged_refused_in_one_line("cache.fetch_granularity", 12);
  expect_ragged_refused_in_one_line("cache.l2.partition", 17);
  expect_ragged_refused_in_one_line("cache.l2.far_hit", 72);
  expect_ragged_refused_in_one_line("latency.tlb", 11);
  expect_ragged_refused_in_one_line("cache.l2.mixture", 45);
  expect_ragged_refused_in_one_line("cache.l2.sharing", 86);
}

json with_samples(const std::string& id, const std::function<void(json&)>& change) {
  json e = recorded(id);
  change(e.at("samples"));
  return e;
}

std::string refusal(const json& e) {
  try {
    replay_analysis(e);
  } catch (const UsageError& ex) {
    return ex.what();
  }
  return "";
}

TEST(CacheSamples, APartitionRowWithoutCyclesIsAUsageErrorNamingIt) {
  // An emptied row once read past its end (signal 11 in analyze and report).
  const auto e =
      with_samples("cache.l2.partition", [](json& s) { s["rows"][3]["cycles"] = json::array(); });
  EXPECT_EQ(refusal(e), "cache.l2.partition: samples.rows[3].cycles has 0 values for 512 lines");
  const auto cut =
      with_samples("cache.l2.partition", [](json& s) { s["rows"][0]["cycles"].erase(5); });
  EXPECT_NE(refusal(cut).find("samples.rows[0].cycles has 511 values"), std::string::npos);
  const auto text =
      with_samples("cache.l2.partition", [](json& s) { s["rows"][1]["cycles"][2] = "fast"; });
  EXPECT_NE(refusal(text).find("cache.l2.partition: samples are not what this gpuprobe writes"),
            std::string::npos);
}

TEST(CacheSamples, OtherRaggedSamplesAreUsageErrors) {
  EXPECT_NE(
      refusal(with_samples("cache.l2.far_hit", [](json& s) { s["rounds"][0]["second"].erase(0); })),
      "");
  EXPECT_NE(refusal(with_samples("cache.fetch_granularity",
                                 [](json& s) { s["rows"][4]["cycles"] = json::array(); })),
            "");
  EXPECT_NE(refusal(with_samples("latency.tlb",
                                 [](json& s) { s["levels"][0]["above"] = json::array(); })),
            "");
  EXPECT_NE(
      refusal(with_samples("cache.cold_capacity", [](json& s) { s["levels"][0].erase("probes"); })),
      "");
}

}  // namespace
}  // namespace gpuprobe
