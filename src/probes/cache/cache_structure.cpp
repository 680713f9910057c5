// The cache-structure family on device::Sequencer: each experiment runs an adaptive inference
// from src/analysis/cache_inference.* (the same code the property test runs on modelled
// hierarchies) and records its evidence; analyze() turns the recorded conclusion and evidence
// into findings with confidences from core/confidence.hpp.
#include "probes/cache/cache_structure.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "analysis/cache_inference.hpp"
#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "device/sequence.hpp"

namespace gpuprobe::probes {
namespace {

using analysis::cache::Level;
using nlohmann::json;
using units::kKiB;
using units::kMiB;

constexpr const char* kNoSequencer =
    "this device has no access-sequence primitive (device::Sequencer)";

std::vector<double> to_doubles(const json& j) {
  std::vector<double> v;
  for (const auto& x : j) v.push_back(x.get<double>());
  return v;
}

/// The probe buffer, the oracle over it and the budget it spent.
struct Session {
  device::Sequencer* seq = nullptr;
  std::unique_ptr<device::ProbeBuffer> buffer;
  analysis::cache::Probe probe;
};

/// nullopt when the device has no sequencer (the caller waives). `span` = candidate pool.
std::optional<Session> open_session(Context& ctx, std::uint64_t bytes, std::uint64_t span) {
  auto* seq = device::as_sequencer(ctx.device);
  if (seq == nullptr) return std::nullopt;
  Session s;
  s.seq = seq;
  if (bytes + 64 * kMiB > ctx.device.free_memory())
    throw UsageError("needs " + std::to_string(bytes) + " B of free device memory");
  s.buffer = seq->alloc_probe_buffer(bytes);
  auto* buf = s.buffer.get();
  s.probe.run = [seq, buf](const device::AccessSequence& a) { return seq->run_sequence(*buf, a); };
  s.probe.buffer_bytes = span;
  s.probe.seed = ctx.options.seed;
  s.probe.sm = 0;
  // A margin below the sequencer's stated maximum: the CUDA sequencer refused launches of
  // exactly max_sequence_length() accesses on the H200 (cudaFuncSetAttribute: invalid argument).
  s.probe.max_sequence = seq->max_sequence_length() - seq->max_sequence_length() / 16;
  return s;
}

std::uint64_t pow2_at_least(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

/// Pool span for a level: 8 x the L1's unified storage, or 8 x the L2 (at least 4 MiB): the L2
/// candidates share their low address bits (see alignment_for), so the pool must be wide.
std::uint64_t span_for(const device::DeviceInfo& info, Level level) {
  if (level == Level::kL1)
    return pow2_at_least(std::max<std::uint64_t>(8 * std::max<std::uint64_t>(
                                                         info.l1_shared_unified_bytes, 64 * kKiB),
                                                 4 * kMiB));
  return pow2_at_least(std::max<std::uint64_t>(8 * info.l2_bytes, 4 * kMiB));
}

/// Candidate alignment: 1 KiB for the L1; for the L2 the smallest power of two >= 1 KiB that
/// leaves at most 16384 candidate slots in the pool (a test of that many lines takes a few
/// consecutive calls; more would not fit the family's time budget).
std::uint64_t alignment_for(const analysis::cache::Probe& p, Level level) {
  if (level == Level::kL1) return 1024;
  std::uint64_t a = 1024;
  while (p.buffer_bytes / a > 16384) a *= 2;
  return a;
}

json calibration_json(const analysis::cache::Calibration& c) {
  return {{"ok", c.ok},          {"hit_cycles", c.hit_cycles}, {"miss_cycles", c.miss_cycles},
          {"threshold", c.threshold}, {"hits", c.hits},        {"misses", c.misses}};
}

double calibration_separation(const json& cal) {
  return confidence::separation(
      confidence::separation_z(to_doubles(cal.at("hits")), to_doubles(cal.at("misses"))));
}

/// Calibration + minimal conflict set of one level, recorded under samples[level].
struct LevelRun {
  analysis::cache::Calibration cal;
  analysis::cache::ConflictSet set;
};
LevelRun conflict_run(analysis::cache::Probe& p, Level level, json& rec) {
  LevelRun r;
  r.cal = analysis::cache::calibrate(p, level);
  rec["calibration"] = calibration_json(r.cal);
  if (!r.cal.ok) {
    rec["note"] = "hits and misses overlap: no threshold";
    return r;
  }
  const std::uint64_t align = alignment_for(p, level);
  r.set = analysis::cache::find_conflict_set(p, level, r.cal, 1u << 20, align);
  rec["candidate_alignment_bytes"] = align;
  rec["conflict_set"] = {{"found", r.set.found},
                         {"lines", r.set.lines},
                         {"ways", r.set.ways},
                         {"checks", r.set.checks},
                         {"checks_passed", r.set.checks_passed},
                         {"candidates_tried", r.set.candidates_tried},
                         {"note", r.set.note}};
  return r;
}

void waive(ExperimentResult& r, const std::string& why) {
  r.status = Status::kWaived;
  r.reason = why;
}

Finding ways_finding(const std::string& name, const json& rec) {
  const auto& cs = rec.at("conflict_set");
  const double conf = confidence::combine(
      {confidence::agreement(cs.at("checks_passed").get<std::size_t>(),
                             cs.at("checks").get<std::size_t>()),
       calibration_separation(rec.at("calibration"))});
  return {name, cs.at("ways").get<double>(), "ways", conf,
          "a minimal conflict set (grown from random lines until their timed re-reads miss, cut to "
          "the shortest conflicting prefix, pruned by group elimination) holds ways + 1 lines; "
          "every one-line removal ends the conflict",
          {{"lines", cs.at("lines")}}};
}

// ------------------------------------------------------------------------------------------

class WaysExperiment : public Experiment {
 public:
  explicit WaysExperiment(Level level) : level_(level) {}
  std::string id() const override { return "cache." + analysis::cache::to_string(level_) + ".ways"; }
  std::string description() const override {
    return level_ == Level::kL1
               ? "L1 associativity by conflict-set construction from measured collisions "
                 "(ld.global.ca, random candidate lines), and the set-index bits"
               : "L2 associativity by conflict-set construction (ld.global.cg, L2 flushed before "
                 "each test) and the set-index function: which address bits move a line to "
                 "another set and which pairs cancel (an XOR hash)";
  }
  json axes() const override { return {{"level", analysis::cache::to_string(level_)}}; }
  std::vector<std::string> depends_on() const override { return {"latency.sweep"}; }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& info = ctx.device.info();
    const std::uint64_t span = span_for(info, level_);
    auto s = open_session(ctx, span, span);
    if (!s) return waive(r, kNoSequencer);
    json rec;
    auto lr = conflict_run(s->probe, level_, rec);
    if (lr.set.found) {
      auto line = analysis::cache::infer_line_size(s->probe, level_, lr.cal, lr.set);
      std::uint64_t capacity = 0;
      const char* cap_name = level_ == Level::kL1 ? "l1.capacity" : "l2.near_capacity";
      if (auto f = ctx.prior.get(cap_name)) capacity = static_cast<std::uint64_t>(f->value);
      if (!capacity && level_ == Level::kL2)
        if (auto f = ctx.prior.get("l2.capacity")) capacity = static_cast<std::uint64_t>(f->value);
      if (!capacity && level_ == Level::kL1 && line.found) {
        const auto cap = analysis::cache::infer_capacity(s->probe, level_, lr.cal,
                                                         line.line_bytes, span);
        capacity = cap.bytes;
        rec["capacity_from_sequences_bytes"] = cap.bytes;
      }
      const auto idx = analysis::cache::infer_set_index(s->probe, level_, lr.cal, lr.set,
                                                        line.found ? line.line_bytes : 0, capacity);
      rec["line_bytes"] = line.line_bytes;
      rec["capacity_bytes_used"] = capacity;
      json pairs = json::array();
      for (auto [a, b] : idx.equal_pairs) pairs.push_back({a, b});
      rec["set_index"] = {{"bits", idx.bits},
                          {"equal_pairs", pairs},
                          {"kind", idx.kind},
                          {"sets", idx.sets},
                          {"lowest_bit_tested", idx.lowest_bit_tested},
                          {"highest_bit_tested", idx.highest_bit_tested},
                          {"tests", idx.tests}};
    }
    rec["sequences"] = s->probe.calls;
    rec["accesses"] = s->probe.accesses;
    r.parameters = {{"pool_bytes", span},
                    {"op", level_ == Level::kL1 ? "ld.global.ca" : "ld.global.cg"},
                    {"sm", 0}};
    r.samples = rec;
  }
  void analyze(ExperimentResult& r) const override {
    if (r.status != Status::kPassed || !r.samples.contains("conflict_set")) return;
    const auto& rec = r.samples;
    if (!rec["conflict_set"].value("found", false)) return;
    const std::string lv = analysis::cache::to_string(level_);
    r.findings.push_back(ways_finding("cache." + lv + ".ways", rec));
    if (rec.contains("set_index")) {
      const auto& si = rec.at("set_index");
      const std::size_t tests = si.at("tests").size();
      const double conf = confidence::combine(
          {confidence::agreement(tests, tests), calibration_separation(rec.at("calibration"))});
      r.findings.push_back({"cache." + lv + ".set_index_bits",
                            static_cast<double>(si.at("bits").size()), "bits", conf,
                            "flip one address bit of one conflict-set member: the conflict ends "
                            "when the bit moves the line to another set; pairs of such bits "
                            "that keep the set are equal columns of a GF(2) hash",
                            {{"bits", si.at("bits")},
                             {"equal_pairs", si.at("equal_pairs")},
                             {"kind", si.at("kind")}}});
      if (si.at("sets").get<std::uint64_t>() > 0)
        r.findings.push_back({"cache." + lv + ".sets", si.at("sets").get<double>(), "sets", conf,
                              si.at("kind") == "modulo_power_of_two"
                                  ? "2^(set-index bits)"
                                  : "capacity / (line x ways)",
                              {{"capacity_bytes", rec.value("capacity_bytes_used", 0)}}});
    }
  }

 private:
  Level level_;
};

class LineSizeExperiment : public Experiment {
 public:
  std::string id() const override { return "cache.line_size"; }
  std::string description() const override {
    return "L1 and L2 line size (the allocation unit, not the fetch granularity): replace a "
           "member of a minimal conflict set by the address delta = 16..512 B further; the "
           "smallest delta that ends the conflict left the member's line";
  }
  json axes() const override { return {{"level", {"l1", "l2"}}, {"delta_bytes", {16, 512}}}; }
  void run(Context& ctx, ExperimentResult& r) const override {
    json all = json::object();
    for (Level level : {Level::kL1, Level::kL2}) {
      const std::uint64_t span = span_for(ctx.device.info(), level);
      auto s = open_session(ctx, span, span);
      if (!s) return waive(r, kNoSequencer);
      json rec;
      auto lr = conflict_run(s->probe, level, rec);
      if (lr.set.found) {
        const auto line = analysis::cache::infer_line_size(s->probe, level, lr.cal, lr.set);
        rec["line"] = {{"found", line.found},
                       {"line_bytes", line.line_bytes},
                       {"agreeing", line.agreeing},
                       {"trials_at_answer", line.trials_at_answer},
                       {"trials", line.trials}};
      }
      rec["accesses"] = s->probe.accesses;
      all[analysis::cache::to_string(level)] = rec;
    }
    r.samples = all;
  }
  void analyze(ExperimentResult& r) const override {
    if (r.status != Status::kPassed) return;
    for (const char* lv : {"l1", "l2"}) {
      if (!r.samples.contains(lv) || !r.samples[lv].contains("line")) continue;
      const auto& rec = r.samples[lv];
      const auto& line = rec["line"];
      if (!line.value("found", false)) continue;
      r.findings.push_back(
          {std::string("cache.") + lv + ".line_size", line.at("line_bytes").get<double>(), "bytes",
           confidence::combine({confidence::agreement(line.at("agreeing").get<std::size_t>(),
                                                      line.at("trials_at_answer").get<std::size_t>()),
                                calibration_separation(rec.at("calibration"))}),
           "smallest address delta that moves a conflict-set member out of its line (the "
           "conflict ends); smaller deltas keep it (same line, whatever the sector)",
           {{"trials", line.at("trials")}}});
    }
  }
};

class ReplacementExperiment : public Experiment {
 public:
  std::string id() const override { return "cache.replacement"; }
  std::string description() const override {
    return "replacement policy class of the L1 and the L2 (LRU, FIFO, tree-PLRU, random or none "
           "of these): over a minimal conflict set, fill in a random order, re-access at random, "
           "insert one new line, time each member in its own sequence; compared with each "
           "policy's prediction, identical sequences repeated to expose randomness";
  }
  json axes() const override { return {{"level", {"l1", "l2"}}, {"tests", 6}}; }
  void run(Context& ctx, ExperimentResult& r) const override {
    json all = json::object();
    for (Level level : {Level::kL1, Level::kL2}) {
      const std::uint64_t span = span_for(ctx.device.info(), level);
      auto s = open_session(ctx, span, span);
      if (!s) return waive(r, kNoSequencer);
      json rec;
      auto lr = conflict_run(s->probe, level, rec);
      if (lr.set.found) {
        const auto pol = analysis::cache::infer_policy(s->probe, level, lr.cal, lr.set);
        rec["policy"] = {{"class", pol.policy},
                         {"agreeing", pol.agreeing},
                         {"tests", pol.tests},
                         {"deterministic", pol.deterministic},
                         {"evidence", pol.evidence}};
      }
      rec["accesses"] = s->probe.accesses;
      all[analysis::cache::to_string(level)] = rec;
    }
    r.samples = all;
  }
  void analyze(ExperimentResult& r) const override {
    if (r.status != Status::kPassed) return;
    static const char* const kClasses[] = {"lru", "fifo", "tree_plru", "random", "none"};
    for (const char* lv : {"l1", "l2"}) {
      if (!r.samples.contains(lv) || !r.samples[lv].contains("policy")) continue;
      const auto& pol = r.samples[lv]["policy"];
      const std::string cls = pol.at("class");
      double code = -1;  // a tie between classes
      for (int i = 0; i < 5; ++i)
        if (cls == kClasses[i]) code = i;
      const bool tie = code < 0;
      double conf = confidence::agreement(pol.at("agreeing").get<std::size_t>(),
                                          pol.at("tests").get<std::size_t>());
      if (tie) conf = confidence::combine({conf, 0.5});  // two classes explain the evidence
      r.findings.push_back(
          {std::string("cache.") + lv + ".replacement", code, "class",
           confidence::combine({conf, calibration_separation(r.samples[lv].at("calibration"))}),
           "value: 0 lru, 1 fifo, 2 tree_plru, 3 random, 4 none of these, -1 tied (see "
           "policy); victims observed per sequence against each class's prediction",
           {{"policy", cls}, {"deterministic", pol.at("deterministic")}}});
    }
  }
};

class TlbExperiment : public Experiment {
 public:
  std::string id() const override { return "latency.tlb"; }
  std::string description() const override {
    return "TLB levels, reach, page size and miss penalty: one line per 2 MiB cell at a random "
           "offset, n = 1, 2, 4 ... cells walked cyclically (ld.global.cg, each line's own "
           "cache latency subtracted); every step up is a level (entries by bisection); the page "
           "size from strides 4 KiB..2 MiB at twice the first level's entries";
  }
  json axes() const override {
    return {{"largest_page_bytes", 2 * kMiB}, {"max_pages", 4096}, {"smallest_page_bytes", 4096}};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& info = ctx.device.info();
    const std::uint64_t largest = 2 * kMiB;
    // The walk's lines (one per page) stay within a quarter of the L2's lines.
    const std::uint64_t l2_lines = std::max<std::uint64_t>(info.l2_bytes / 128, 64);
    std::uint64_t max_pages = std::min<std::uint64_t>(4096, l2_lines / 4);
    const std::uint64_t room = ctx.device.free_memory() > 256 * kMiB
                                   ? (ctx.device.free_memory() - 256 * kMiB) / largest
                                   : 0;
    max_pages = std::min(max_pages, room);
    if (max_pages < 4) return waive(r, "not enough free memory for a TLB walk of 4 x 2 MiB pages");
    auto s = open_session(ctx, max_pages * largest, max_pages * largest);
    if (!s) return waive(r, kNoSequencer);
    const auto t = analysis::cache::infer_tlb(s->probe, largest, max_pages);
    json levels = json::array();
    for (const auto& l : t.levels)
      levels.push_back({{"entries", l.entries},
                        {"miss_penalty_cycles", l.miss_penalty_cycles},
                        {"below", l.below},
                        {"above", l.above}});
    r.parameters = {{"largest_page_bytes", largest}, {"max_pages", t.max_pages_tried}};
    r.samples = {{"levels", levels},
                 {"page_bytes", t.page_bytes},
                 {"curve", t.curve},
                 {"page_curve", t.page_curve},
                 {"accesses", s->probe.accesses}};
    Curve cv{"walk", {"pages", "stride_bytes", "excess_cycles"}, {}};
    for (const auto& c : t.curve) cv.rows.push_back({c["pages"], c["stride_bytes"], c["excess_cycles"]});
    for (const auto& c : t.page_curve)
      cv.rows.push_back({c["pages"], c["stride_bytes"], c["excess_cycles"]});
    r.curves.push_back(cv);
  }
  void analyze(ExperimentResult& r) const override {
    if (r.status != Status::kPassed || !r.samples.contains("levels")) return;
    const auto& levels = r.samples["levels"];
    const std::uint64_t page = r.samples.value("page_bytes", std::uint64_t{0});
    double all_conf = 1;
    for (std::size_t i = 0; i < levels.size(); ++i) {
      const auto below = to_doubles(levels[i]["below"]), above = to_doubles(levels[i]["above"]);
      const double sep = confidence::separation(confidence::separation_z(below, above));
      all_conf = std::min(all_conf, sep);
      const std::string n = "tlb.l" + std::to_string(i + 1);
      const double entries = levels[i]["entries"].get<double>();
      r.findings.push_back({n + ".entries", entries, "entries", sep,
                            "largest number of pages walked cyclically without a latency step "
                            "(bisection between powers of two)",
                            {}});
      const double pen = levels[i]["miss_penalty_cycles"].get<double>();
      r.findings.push_back({n + ".miss_penalty", pen, "cycles",
                            confidence::combine({sep, confidence::precision(above, stats::median(above))}),
                            "median excess latency just past the level minus the plateau before "
                            "it (each line's own cache latency subtracted)",
                            {}});
      if (page)
        r.findings.push_back({n + ".reach", entries * static_cast<double>(page), "bytes", sep,
                              "entries x page size", {}});
    }
    if (!levels.empty())
      r.findings.push_back({"tlb.levels", static_cast<double>(levels.size()), "levels", all_conf,
                            "latency steps of a page walk up to " +
                                std::to_string(r.parameters.value("max_pages", 0)) + " pages",
                            {}});
    if (page)
      r.findings.push_back({"tlb.page_size", static_cast<double>(page), "bytes", all_conf,
                            "smallest stride at which twice the first level's entries stop "
                            "sharing pages (the step appears)",
                            {{"page_curve", r.samples["page_curve"]}}});
  }
};

}  // namespace

void register_cache_structure_experiments(Registry& registry) {
  registry.add(std::make_unique<WaysExperiment>(Level::kL1));
  registry.add(std::make_unique<WaysExperiment>(Level::kL2));
  registry.add(std::make_unique<LineSizeExperiment>());
  registry.add(std::make_unique<ReplacementExperiment>());
  registry.add(std::make_unique<TlbExperiment>());
}

}  // namespace gpuprobe::probes
