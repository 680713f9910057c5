// schemas/samples.schema.json against the samples types (issue 28 item 1): every experiment whose
// samples are a type has an entry of the type's version; the type's JSON (of a default value,
// of a filled value, and of every recorded run converted through the type) validates against
// its entry with no member the entry does not name; every recorded run's samples validate as
// they are. A field renamed in a type's conversion, or in the schema, fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/experiment.hpp"
#include "probes/bandwidth/rig_samples.hpp"
#include "probes/bandwidth/stream_samples.hpp"
#include "probes/cache/ways_samples.hpp"
#include "probes/compute/compute_samples.hpp"
#include "probes/hopper/hopper_samples.hpp"
#include "probes/hopper/pipeline_samples.hpp"
#include "probes/latency/latency_samples.hpp"
#include "probes/link/link_samples.hpp"
#include "probes/ordering/ordering_samples.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;

json load(const std::string& relative) {
  std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in.good()) << relative;
  return json::parse(in);
}

const json& schema() {
  static const json s = load("schemas/samples.schema.json");
  return s;
}

/// The subset of JSON Schema (draft 07) the samples schema uses: $ref into #/definitions/,
/// type, properties, required, items, minItems, minimum, maximum, enum. `closed`: an object may
/// hold only the members its schema names (the type's own JSON); open: more are allowed (a recorded
/// point holds measure::to_json's whole record). Returns the first violation, empty when none.
std::string violation(const json& v, const json& s, bool closed, const std::string& at = "$") {
  if (s.contains("$ref")) {
    const std::string ref = s.at("$ref");
    const std::string prefix = "#/definitions/";
    if (ref.rfind(prefix, 0) != 0) return at + ": unsupported $ref " + ref;
    return violation(v, schema().at("definitions").at(ref.substr(prefix.size())), closed, at);
  }
  if (s.contains("type")) {
    const auto is = [&](const std::string& t) {
      if (t == "object") return v.is_object();
      if (t == "array") return v.is_array();
      if (t == "string") return v.is_string();
      if (t == "boolean") return v.is_boolean();
      if (t == "null") return v.is_null();
      if (t == "number") return v.is_number();
      if (t == "integer")
        return v.is_number_integer() ||
               (v.is_number_float() &&
                v.get<double>() == static_cast<double>(static_cast<long long>(v.get<double>())));
      return false;
    };
    bool ok = false;
    if (s.at("type").is_array()) {
      for (const auto& t : s.at("type")) ok = ok || is(t.get<std::string>());
    } else {
      ok = is(s.at("type").get<std::string>());
    }
    if (!ok) return at + ": expected " + s.at("type").dump() + ", got " + v.dump().substr(0, 60);
  }
  if (s.contains("enum")) {
    bool listed = false;
    for (const auto& e : s.at("enum")) listed = listed || e == v;
    if (!listed)
      return at + ": " + v.dump().substr(0, 60) + " is not one of " + s.at("enum").dump();
  }
  if (v.is_number()) {
    if (s.contains("minimum") && v.get<double>() < s.at("minimum").get<double>())
      return at + ": below the minimum";
    if (s.contains("maximum") && v.get<double>() > s.at("maximum").get<double>())
      return at + ": above the maximum";
  }
  if (v.is_object()) {
    for (const auto& key : s.value("required", json::array()))
      if (!v.contains(key.get<std::string>())) return at + ": missing " + key.get<std::string>();
    if (s.contains("properties")) {
      const auto& props = s.at("properties");
      for (const auto& [key, value] : v.items()) {
        if (props.contains(key)) {
          auto why = violation(value, props.at(key), closed, at + "." + key);
          if (!why.empty()) return why;
        } else if (closed) {
          return at + ": " + key + " is not in the schema";
        }
      }
    }
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s.at("minItems").get<std::size_t>())
      return at + ": fewer items than " + s.at("minItems").dump();
    if (s.contains("items"))
      for (std::size_t i = 0; i < v.size(); ++i) {
        auto why = violation(v[i], s.at("items"), closed, at + "[" + std::to_string(i) + "]");
        if (!why.empty()) return why;
      }
  }
  return "";
}

std::string violation_of(const std::string& id, const json& samples, bool closed) {
  return violation(samples, schema().at("definitions").at(id), closed);
}

/// An experiment with typed samples: its id, its type's version, and the type's JSON of a
/// default value, of a recorded sample converted through the type, and of a filled value.
struct Typed {
  std::string id;
  int version;
  std::function<json()> of_default;
  std::function<json(const json&)> through_type;
};

template <typename T>
Typed typed(const char* id) {
  return {id, T::kVersion, [] { return json(T{}); },
          [](const json& recorded) { return json(recorded.get<T>()); }};
}

const std::vector<Typed>& typed_experiments() {
  namespace p = probes;
  static const std::vector<Typed> all = {
      typed<p::ordering::FenceSamples>("ordering.fence"),
      typed<p::ordering::AtomicSamples>("ordering.atomic"),
      typed<p::ordering::LitmusSamples>("ordering.litmus"),
      typed<p::latency::SweepSamples>("latency.sweep"),
      typed<p::latency::SharedSamples>("latency.shared"),
      typed<p::latency::CarveoutSamples>("latency.carveout"),
      typed<p::latency::ChaseSamples>("latency.chase"),
      typed<p::compute::LatencySamples>("compute.latency"),
      typed<p::compute::ThroughputSamples>("compute.throughput"),
      typed<p::link::HostSamples>("link.host"),
      typed<p::link::PeerSamples>("link.peer"),
      typed<p::hopper::WgmmaSamples>("hopper.wgmma.throughput"),
      typed<p::hopper::DsmemSamples>("hopper.dsmem"),
      typed<p::hopper::TmaLatencySamples>("hopper.tma.latency"),
      typed<p::hopper::TmaBandwidthSamples>("hopper.tma.bandwidth"),
      typed<p::hopper::PipelineSamples>("hopper.pipeline"),
      typed<p::cache_structure::WaysSamples>("cache.l1.ways"),
      typed<p::cache_structure::WaysSamples>("cache.l2.ways"),
      typed<p::bwhost::StreamSamples>("bandwidth.read"),
      typed<p::bwhost::StreamSamples>("bandwidth.write"),
      typed<p::bwhost::StreamSamples>("bandwidth.copy"),
      typed<p::bandwidth_rig::SweepSamples>("bandwidth.sweep"),
      typed<p::bandwidth_rig::HierarchySamples>("bandwidth.hierarchy"),
  };
  return all;
}

/// Every passed experiment of the recorded results that has typed samples: (file, id, samples).
struct Recorded {
  std::string file, id;
  json samples;
};
std::vector<Recorded> recorded_samples() {
  std::vector<Recorded> out;
  for (const char* file : {"results/h200/result.json", "results/h200/repeat/run1/result.json",
                           "results/h200/other_cards/GPU-378d63f9/result.json"}) {
    const json r = load(file);
    for (const auto& e : r.at("experiments"))
      if (e.value("status", "") == "passed" &&
          schema().at("definitions").contains(e.at("id").get<std::string>()))
        out.push_back({file, e.at("id"), e.at("samples")});
  }
  return out;
}

TEST(SamplesSchema, EveryTypedExperimentHasAnEntryOfItsVersion) {
  std::set<std::string> ids;
  for (const auto& t : typed_experiments()) {
    ids.insert(t.id);
    ASSERT_TRUE(schema().at("definitions").contains(t.id)) << t.id << " has no schema entry";
    EXPECT_EQ(schema().at("definitions").at(t.id).at("x-samples-version").get<int>(), t.version)
        << t.id;
    const auto* e = Registry::builtin().find(t.id);
    ASSERT_NE(e, nullptr) << t.id;
    EXPECT_EQ(e->samples_version(), t.version) << t.id << ": the experiment's samples_version";
  }
  // ... and the schema lists no experiment that has no type.
  std::set<std::string> listed;
  for (const auto& id : schema().at("x-experiments")) listed.insert(id.get<std::string>());
  EXPECT_EQ(listed, ids);
}

TEST(SamplesSchema, TheTypesOwnJsonValidatesClosed) {
  for (const auto& t : typed_experiments()) {
    const auto why = violation_of(t.id, t.of_default(), true);
    EXPECT_TRUE(why.empty()) << t.id << " (default value): " << why;
  }
}

TEST(SamplesSchema, RecordedRunsValidateAsRecordedAndThroughTheirType) {
  const auto recorded = recorded_samples();
  std::set<std::string> seen;
  for (const auto& r : recorded) {
    seen.insert(r.id);
    auto why = violation_of(r.id, r.samples, false);
    EXPECT_TRUE(why.empty()) << r.file << " " << r.id << " (as recorded): " << why;
    for (const auto& t : typed_experiments()) {
      if (t.id != r.id) continue;
      json typed;
      ASSERT_NO_THROW(typed = t.through_type(r.samples)) << r.file << " " << r.id;
      why = violation_of(r.id, typed, true);
      EXPECT_TRUE(why.empty()) << r.file << " " << r.id << " (through its type): " << why;
    }
  }
  // The recorded H200 run covers every typed experiment but link.peer (one GPU there).
  for (const auto& t : typed_experiments())
    if (t.id != "link.peer") EXPECT_TRUE(seen.count(t.id)) << t.id << " has no recorded run";
}

TEST(SamplesSchema, LinkPeerFilledValueValidatesClosed) {
  probes::link::PeerSamples s;
  s.gpus = 2;
  s.names = std::vector<std::string>{"GPU A", "GPU B"};
  s.pci_bus_ids = std::vector<std::string>{"0000:01:00.0", "0000:02:00.0"};
  s.access = std::vector<std::vector<bool>>{{false, true}, {true, false}};
  s.topology = {{"", "NV18"}, {"NV18", ""}};
  s.pairs.push_back({0, 1, "copy_engine", 1u << 28, {1e-3, 1.1e-3}, "passed", std::nullopt});
  s.pairs.push_back({1, 0, "sm_read", 1u << 28, {}, "error", std::string("3 wrong words")});
  s.latency.push_back({0, 1, {900, 905}, {1800}});
  const json j = s;
  const auto why = violation_of("link.peer", j, true);
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_EQ(json(j.get<probes::link::PeerSamples>()), j);
}

// The ways family's samples are written through their type: the newest recorded run's convert
// and write back byte for byte (the categories, enums in the type, as the
// strings recorded), and a category the type does not name is refused.
TEST(SamplesSchema, WaysSamplesRoundTripByteForByte) {
  using probes::cache_structure::WaysSamples;
  std::size_t seen = 0;
  for (const auto& r : recorded_samples()) {
    // The older recordings lack members written since (served_references.dram_from, ...):
    // through the type they gain them with their defaults.
    if ((r.id != "cache.l1.ways" && r.id != "cache.l2.ways") ||
        r.file != "results/h200/result.json")
      continue;
    ++seen;
    json back;
    ASSERT_NO_THROW(back = json(r.samples.get<WaysSamples>())) << r.file << " " << r.id;
    EXPECT_EQ(back.dump(), r.samples.dump()) << r.file << " " << r.id;
  }
  EXPECT_EQ(seen, 2u);
  const json l2 = [] {
    for (const auto& r : recorded_samples())
      if (r.id == "cache.l2.ways" && r.samples.contains("set_index")) return r.samples;
    return json::object();
  }();
  ASSERT_TRUE(l2.contains("policy"));
  for (const char* path : {"/policy/class", "/set_index/kind", "/conflict_set/method",
                           "/pools/0/served_after_eviction"}) {
    json j = l2;
    j[json::json_pointer(path)] = "lru|mru";
    EXPECT_THROW(j.get<WaysSamples>(), UsageError) << path;
    // The schema lists each category's strings (a policy may join several by |).
    if (std::string(path) != "/policy/class")
      EXPECT_FALSE(violation_of("cache.l2.ways", j, false).empty()) << path;
  }
  // A tie between classes is two enums, written back as recorded.
  json tie = l2;
  tie["policy"]["class"] = "lru|tree_plru";
  const auto s = tie.get<WaysSamples>();
  ASSERT_TRUE(s.policy.has_value());
  EXPECT_EQ(s.policy->classes.size(), 2u);
  EXPECT_EQ(json(s).at("policy").at("class"), "lru|tree_plru");
}

TEST(SamplesSchema, BandwidthFilledValuesValidateClosedAndRoundTrip) {
  namespace bw = probes::bwhost;
  bw::StreamSamples s;
  bw::StreamRow row;
  row.stage = "cache_operator";
  row.width_bytes = 16;
  row.unroll = 4;
  row.passes = 1;
  row.load = "ld.global.nc";
  row.store = "-";
  row.scheme = "grid";
  row.grid = "persistent";
  row.threads_per_block = 256;
  row.blocks_per_sm = 8;
  row.blocks = 1056;
  row.dst_shift_bytes = 0;
  row.bytes_in_flight_per_sm = 131072;
  row.counted_bytes_per_launch = 1u << 30;
  row.gb_s = bw::StreamGbps{{4300, 4290, 4291, 4310, 7, std::vector<double>{4300, 4301}}, 10, 89.3};
  bw::StreamRow failed = row;
  failed.status = "error";
  failed.reason = "3 of 100 elements differ";
  failed.gb_s.reset();
  bw::StreamRow reference;
  reference.stage = "driver_reference";
  reference.reference = true;
  reference.label = "cudaMemsetAsync 0x3f";
  reference.counted_bytes_per_launch = 1u << 30;
  reference.gb_s = row.gb_s;
  s.variants = {row, failed};
  s.references = {reference};
  bw::StreamConfirmation c;
  c.finding = "dram.read_bandwidth";
  c.status = "passed";
  c.search_value = 4300;
  c.value = 4290;
  c.samples = {4290, 4291, 4289};
  c.gb_s = row.gb_s->stats;
  c.verified_with_passes = 1;
  s.confirmations = std::vector<bw::StreamConfirmation>{c};
  json j = s;
  for (const char* id : {"bandwidth.read", "bandwidth.write", "bandwidth.copy"}) {
    const auto why = violation_of(id, j, true);
    EXPECT_TRUE(why.empty()) << id << ": " << why;
  }
  EXPECT_EQ(json(j.get<bw::StreamSamples>()), j);

  namespace rig = probes::bandwidth_rig;
  rig::RigPoint p;
  p.working_set_bytes = 128 * 1024;
  p.measurement = rig::RigMeasurement{126.0, 0.1, 9, std::vector<double>{126.0, 126.1}};
  p.bytes_per_clk_per_sm = rig::RigStat{126.0, 0.1};
  p.gb_s = rig::RigStat{33000.0, 10.0};
  p.variant = "sum4.rot.u4.1024x2";
  p.verified = true;
  rig::RigPoint confirmation = p;
  confirmation.winner_row = 0;
  confirmation.search_value = 126.0;
  confirmation.status = "passed";
  rig::HierarchySamples h;
  h.measured.l1_variants = std::vector<rig::RigPoint>{p};
  h.measured.l1_confirmation = confirmation;
  h.measured.l2 = p;
  h.measured.dram = p;
  h.measured.reg = p;
  h.prior["l1.hit_latency"] = rig::PriorFinding{32.0, 16.2, std::nullopt};
  j = h;
  auto why = violation_of("bandwidth.hierarchy", j, true);
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_EQ(json(j.get<rig::HierarchySamples>()), j);
  j = rig::SweepSamples{{p}, {p, p}};
  why = violation_of("bandwidth.sweep", j, true);
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_EQ(json(j.get<rig::SweepSamples>()), j);
}

TEST(SamplesSchema, ARenamedFieldFails) {
  // A field renamed in a type's conversion: the entry misses the old name and does not know
  // the new one.
  probes::ordering::FenceCase c;
  c.config = "warp";
  c.threads = 32;
  c.fence = "none";
  c.cycles_per_step.median = 4.8;
  json j = probes::ordering::FenceSamples{{c}};
  ASSERT_TRUE(violation_of("ordering.fence", j, true).empty());
  json renamed = j;
  renamed["cases"][0]["fence_kind"] = renamed["cases"][0]["fence"];
  renamed["cases"][0].erase("fence");
  EXPECT_NE(violation_of("ordering.fence", renamed, true).find("missing fence"), std::string::npos);
  // An optional member renamed: only the closed check sees it.
  probes::hopper::TmaBandwidthPoint p;
  p.direction = "load";
  p.source = "dram";
  json point = p;
  point["src"] = point["source"];
  point.erase("source");
  const json bw = {{"points", {point}}};
  EXPECT_NE(violation_of("hopper.tma.bandwidth", bw, true).find("src is not in the schema"),
            std::string::npos);
  // A member of the wrong type.
  j["cases"][0]["threads"] = "32";
  EXPECT_NE(violation_of("ordering.fence", j, true).find("expected"), std::string::npos);
}

}  // namespace
}  // namespace gpuprobe
