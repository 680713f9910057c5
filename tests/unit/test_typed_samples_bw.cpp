// The typed samples of smem.bank_conflicts, smem.bandwidth, timer.overhead and the bandwidth
// experiments (the patterns stride, offset, layout, transpose; the streaming read, write, copy;
// sweep and hierarchy): the recorded H200 run (results/h200) analyses through them, and samples
// of the wrong shape (a missing array, one of the wrong type, values the model cannot take,
// arrays that disagree, an index past an array) are one-line UsageErrors, never a crash.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/experiment.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;

json recorded(const std::string& id) {
  std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json");
  const auto r = json::parse(in);
  for (const auto& e : r.at("experiments"))
    if (e.at("id") == id) return e;
  ADD_FAILURE() << "no " << id << " in results/h200";
  return json::object();
}

/// analyze of `id` on `samples`; the UsageError's text, or "" when it passed.
std::string analyze_error(const std::string& id, const json& samples,
                          std::size_t* findings = nullptr) {
  const Experiment* e = Registry::builtin().find(id);
  if (!e) return "no experiment " + id;
  ExperimentResult r;
  r.id = id;
  r.parameters = recorded(id).at("parameters");
  r.samples = samples;
  try {
    e->analyze(r);
  } catch (const UsageError& err) {
    const std::string what = err.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  if (findings) *findings = r.findings.size();
  return "";
}

const char* const kTyped[] = {"smem.bank_conflicts", "smem.bandwidth",   "timer.overhead",
                              "bandwidth.stride",    "bandwidth.offset", "bandwidth.layout",
                              "bandwidth.transpose", "bandwidth.read",   "bandwidth.write",
                              "bandwidth.copy",      "bandwidth.sweep",  "bandwidth.hierarchy"};

TEST(TypedSamplesBw, TheRecordedRunAnalysesThroughTheTypes) {
  for (const char* id : kTyped) {
    std::size_t findings = 0;
    EXPECT_EQ(analyze_error(id, recorded(id).at("samples"), &findings), "") << id;
    EXPECT_GT(findings, 0u) << id;
  }
}

TEST(TypedSamplesBw, AnArrayMissingOrOfTheWrongTypeIsOneLine) {
  for (const char* id : kTyped) {
    const json samples = recorded(id).at("samples");
    for (const auto& [key, value] : samples.items()) {
      if (key == "counters" || !value.is_array()) continue;
      json missing = samples, retyped = samples;
      missing.erase(key);
      retyped[key] = "x";
      const auto m = analyze_error(id, missing), t = analyze_error(id, retyped);
      // timer.overhead's event arrays added later may be absent (older results), and so may the
      // streaming experiments' references and confirmations.
      const bool later = key.rfind("event_queued", 0) == 0 || key == "event_replicate_sizes" ||
                         key == "references" || key == "confirmations";
      if (!later) EXPECT_NE(m.find(id), std::string::npos) << id << " without " << key << ": " << m;
      EXPECT_NE(t.find(id), std::string::npos) << id << " with " << key << " a string: " << t;
    }
  }
}

TEST(TypedSamplesBw, ValuesTheModelCannotTakeAreRefused) {
  json bank = recorded("smem.bank_conflicts").at("samples");
  bank["cases"][0]["word_bytes"] = 12;
  EXPECT_NE(analyze_error("smem.bank_conflicts", bank).find("cases[0]"), std::string::npos);
  bank = recorded("smem.bank_conflicts").at("samples");
  bank["cases"][1]["mode"] = "warp";
  EXPECT_NE(analyze_error("smem.bank_conflicts", bank).find("cases[1]"), std::string::npos);
  bank["cases"] = json::array();  // nothing measured: no finding, no error
  EXPECT_EQ(analyze_error("smem.bank_conflicts", bank), "");
}

TEST(TypedSamplesBw, TimerArraysThatDisagreeAreRefused) {
  const json timer = recorded("timer.overhead").at("samples");
  for (const char* needed : {"event_back_to_back_ns", "event_two_empty_kernels_ns",
                             "host_launch_and_sync_ns", "clock64_stream", "change_cycles"}) {
    json t = timer;
    t[needed] = json::array();
    EXPECT_NE(analyze_error("timer.overhead", t).find(needed), std::string::npos) << needed;
  }
  // Results written before the queued event samples still analyse (the idle-GPU interval).
  json old = timer;
  for (const char* later :
       {"event_queued_one_empty_kernel_ns", "event_queued_two_empty_kernels_ns",
        "event_queued_back_to_back_ns", "event_queued_replicate_sizes",
        "event_queued_back_to_back_replicate_sizes", "event_queued_late", "event_replicate_sizes"})
    old.erase(later);
  std::size_t findings = 0;
  EXPECT_EQ(analyze_error("timer.overhead", old, &findings), "");
  EXPECT_GT(findings, 0u);
}

TEST(TypedSamplesBw, StreamRowsAndConfirmationsThatDoNotFitAreRefused) {
  const json read = recorded("bandwidth.read").at("samples");
  json s = read;
  s["confirmations"][0]["winner_row"] = s["variants"].size();
  EXPECT_NE(analyze_error("bandwidth.read", s).find("confirmations[0] names row"),
            std::string::npos);
  // A passed confirmation of a failed row.
  s = read;
  const std::size_t row = s["confirmations"][0]["winner_row"];
  s["variants"][row]["status"] = "error";
  EXPECT_NE(analyze_error("bandwidth.read", s).find("not a passed search row"), std::string::npos);
  // A passed row without its launch.
  s = read;
  s["variants"][row].erase("threads_per_block");
  EXPECT_NE(analyze_error("bandwidth.read", s).find("passed without threads_per_block"),
            std::string::npos);
  // A counters record of the wrong shape.
  s = read;
  s["counters"] = {{"status", "read"}, {"probes", "x"}};
  EXPECT_NE(analyze_error("bandwidth.read", s).find("samples.counters is not what"),
            std::string::npos);
}

TEST(TypedSamplesBw, SweepAndHierarchyPointsThatDoNotFitAreRefused) {
  json sweep = recorded("bandwidth.sweep").at("samples");
  sweep["l2_regime"]["points"][3]["measurement"].erase("mad");
  EXPECT_NE(analyze_error("bandwidth.sweep", sweep).find("l2_regime.points[3]"), std::string::npos);
  sweep = recorded("bandwidth.sweep").at("samples");
  sweep["l1_regime"]["points"][0]["gb_s"] = "x";
  EXPECT_NE(analyze_error("bandwidth.sweep", sweep).find("bandwidth.sweep"), std::string::npos);
  const json hierarchy = recorded("bandwidth.hierarchy").at("samples");
  json h = hierarchy;
  h["measured"]["l1_variants"][1].erase("variant");
  EXPECT_NE(analyze_error("bandwidth.hierarchy", h).find("l1_variants[1] does not name"),
            std::string::npos);
  h = hierarchy;
  h["measured"]["l2_confirmation"].erase("working_set_bytes");
  EXPECT_NE(analyze_error("bandwidth.hierarchy", h).find("l2_confirmation lacks"),
            std::string::npos);
  h = hierarchy;
  h["measured"]["l1_confirmation"].erase("status");
  EXPECT_NE(analyze_error("bandwidth.hierarchy", h).find("l1_confirmation has no status"),
            std::string::npos);
  h = hierarchy;
  h["measured"].erase("register");
  EXPECT_NE(analyze_error("bandwidth.hierarchy", h).find("bandwidth.hierarchy"), std::string::npos);
  // Older records: one point per level, no variants.
  h = hierarchy;
  h["measured"]["l1"] = h["measured"]["l1_confirmation"];
  for (const char* key : {"l1_variants", "l1_confirmation"}) h["measured"].erase(key);
  std::size_t findings = 0;
  EXPECT_EQ(analyze_error("bandwidth.hierarchy", h, &findings), "");
  EXPECT_GT(findings, 0u);
  h["measured"].erase("l1");
  EXPECT_NE(analyze_error("bandwidth.hierarchy", h).find("measured.l1 is missing"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuprobe
