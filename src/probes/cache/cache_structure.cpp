// The cache-structure family on Sequencer: each experiment runs an adaptive search
// from src/analysis/cache_inference.* (the same code the property test runs on modelled
// hierarchies) and records its evidence; analyze() turns the recorded conclusion and evidence
// into findings with confidences from core/confidence.hpp.
#include "probes/cache/cache_structure.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "analysis/granularity.hpp"
#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/finding_names.hpp"
#include "core/samples.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "device/sequence.hpp"
#include "measure/cache_search.hpp"
#include "measure/chase_point.hpp"
#include "measure/replicates.hpp"
#include "probes/cache/sequence_session.hpp"
#include "probes/cache/ways_conflict_sets.hpp"
#include "probes/cache/ways_records.hpp"
#include "probes/cache/ways_samples.hpp"

namespace gpuprobe::probes {
namespace {

using namespace cache_structure;
using measure::cache::Level;
using nlohmann::json;
using units::kKiB;
using units::kMiB;

constexpr std::array<std::uint32_t, 4> kLineStrides = {64, 128, 256, 512};
constexpr double kLineWorkingSetFactor = 1.25;

class WaysExperiment : public Experiment {
 public:
  explicit WaysExperiment(Level level) : level_(level) {}
  std::string id() const override { return "cache." + measure::cache::to_string(level_) + ".ways"; }
  std::string description() const override {
    return level_ == Level::kL1
               ? "L1 structure from one minimal conflict set per candidate pool (ld.global.ca, "
                 "random candidate lines, collisions measured): associativity, set-index bits, "
                 "line size (the smallest move that leaves a member's line) and replacement "
                 "class (victims of policy-distinguishing sequences)"
               : "L2 structure (ld.global.cg, L2 flushed before each test): a minimal conflict "
                 "set per target, by sequences or, for a hashed L2 too large for them, by "
                 "eviction sweeps over a pool four times the L2; on it associativity, the "
                 "set-index function (which address bits move a line to another set, which "
                 "pairs cancel), line size and replacement class; targets whose eviction does "
                 "not repeat name the policy random";
  }
  int samples_version() const override { return WaysSamples::kVersion; }
  std::vector<Axis> typed_axes() const override {
    return {fixed(string_axis("level", {measure::cache::to_string(level_)}, "cache level probed"))};
  }
  std::vector<std::string> depends_on() const override {
    if (level_ == Level::kL1) return {"latency.sweep"};
    return {"latency.sweep", "cache.l2.partition", "cache.l2.far_hit"};
  }
  /// The L2's sets are those of one partition: without cache.l2.partition's groups a run of
  /// cache.l2.ways alone took the whole L2 for one partition (16 x 30720 on an H200 instead of
  /// 16 x 15360), so `run` adds it (it takes a tenth of a second).
  std::vector<std::string> required() const override {
    if (level_ == Level::kL1) return {};
    return {"cache.l2.partition"};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const std::uint64_t span = span_for(ctx.device, level_);
    auto s = open_session(ctx, span, span, carveout_for(level_));
    if (!s) return waive(r, kNoSequencer);
    WaysSamples rec;
    auto lr = conflict_run(s->probe, level_, rec, sweep_pool_lines(ctx), served_references(ctx));
    if (lr.agreed) {
      rec.line = line_record(s->probe, level_, lr, rec);
      rec.policy = policy_record(s->probe, level_, lr);
      rec.cyclic = cyclic_record(s->probe, level_, lr);
      const LineRecord line = *rec.line;
      std::uint64_t capacity = 0;
      std::string capacity_from;
      if (level_ == Level::kL1) {
        if (auto f = ctx.prior.get(finding::kL1Capacity)) {
          capacity = static_cast<std::uint64_t>(f->value);
          capacity_from = "l1.capacity";
        }
      } else {
        // The sets of one partition (the conflict set lives in one): the whole L2 over the
        // partitions cache.l2.partition (or cache.l2.far_hit) found. The whole L2 as the device
        // reports it; else the sweep's l2.capacity, the last point on the plateau, which a soft
        // knee places below the capacity (55.4 of 60 MiB on the H200). The sweep's near knee
        // moves from run to run and is not used.
        std::size_t parts = 1;
        if (auto g = ctx.prior.get(finding::kL2PartitionSmGroupSizes))
          parts = std::max<std::size_t>(1, g->extra.value("group_sizes", json::array()).size());
        else if (ctx.prior.get(finding::kL2FarHitLatency))
          parts = 2;  // cache.l2.far_hit saw a far partition
        double whole = static_cast<double>(ctx.device.info().l2_bytes);
        capacity_from = "the device's L2 size";
        if (!(whole > 0))
          if (auto f = ctx.prior.get(finding::kL2Capacity)) {
            whole = f->value;
            capacity_from = "l2.capacity";
          }
        capacity = static_cast<std::uint64_t>(whole / static_cast<double>(parts));
        if (parts > 1) capacity_from += " / " + std::to_string(parts) + " partitions";
      }
      rec.capacity_from = capacity_from;
      if (!capacity && level_ == Level::kL1 && line.found) {
        const auto cap =
            measure::cache::infer_capacity(s->probe, level_, lr.cal, line.line_bytes, span);
        capacity = cap.bytes;
        rec.capacity_from_sequences_bytes = cap.bytes;
      }
      const auto idx = measure::cache::infer_set_index(s->probe, level_, lr.cal, lr.set,
                                                       line.found ? line.line_bytes : 0, capacity);
      rec.line_bytes = line.line_bytes;
      rec.capacity_bytes_used = capacity;
      rec.set_index = idx;
      if (rec.cyclic->measured)
        rec.cyclic->interleaved = interleaved_cyclic_record(s->probe, level_, lr, idx, span);
      // The XOR hash's columns (L1 only: an L2 set needs eviction sweeps to be seen).
      if (level_ == Level::kL1 && line.found && !idx.bits.empty()) {
        const auto hc = measure::cache::infer_hash_columns(
            s->probe, level_, lr.cal, lr.set, idx.bits, idx.lowest_bit_tested, idx.first_page_bit);
        // A decoupled L1 (its tags name more lines than the chase holds): which line leaves.
        const std::uint64_t tag_lines = hc.found ? (std::uint64_t{1} << hc.rank) * lr.set.ways : 0;
        if (hc.found && hc.note.empty() && capacity && line.line_bytes &&
            tag_lines * line.line_bytes > capacity) {
          const auto dv = measure::cache::infer_data_victim(s->probe, level_, lr.cal,
                                                            line.line_bytes, hc.masks, tag_lines);
          // Sets of the lines themselves: random lines of the first tag_lines lines (at most
          // `ways` per tag set, so no tag conflicts) grown until they conflict, then reduced.
          auto dp = s->probe;
          std::uint64_t span = 1;
          while (span * 2 <= tag_lines * line.line_bytes) span *= 2;
          dp.buffer_bytes = span;
          const auto ds = measure::cache::find_conflict_set(
              dp, level_, lr.cal, kSequenceStagedAccesses, line.line_bytes);
          s->probe.accesses = dp.accesses;  // dp began as a copy: its counts include ours
          s->probe.calls = dp.calls;
          rec.data_sets = ConflictRecord::of(ds, s->probe.seed);
          rec.data_sets->span_bytes = span;
          rec.data_victim = dv;
        }
        rec.hash_columns = HashColumnsRecord::of(hc);
      }
    }
    if (level_ == Level::kL2) rec.line_by_stride = line_by_stride_record(ctx);
    rec.sequences = s->probe.calls;
    rec.accesses = s->probe.accesses;
    r.parameters = {{"pool_bytes", span},
                    {"op", level_ == Level::kL1 ? "ld.global.ca" : "ld.global.cg"},
                    {"sm", 0}};
    r.samples = rec;
  }
  /// Chases (ld.global.cg, one SM) over one working set past the near-partition knee at node
  /// strides 64 ... 512 B, 3 replicates each (fresh chains): see analysis::line_by_stride.
  static LineByStrideRecord line_by_stride_record(Context& ctx) {
    // The knee of one SM's partition: the copy chases' bisection (cache.l2.far_hit) where it
    // ran, else the sweep's near knee, else half the L2.
    double knee = 0, hit = 0;
    const char* knee_from = "";
    if (auto f = ctx.prior.get(finding::kL2ReplicaCapacity)) {
      knee = f->value;
      knee_from = finding::kL2ReplicaCapacity.name;
    } else if (auto f = ctx.prior.get(finding::kL2NearCapacity)) {
      knee = f->value;
      knee_from = finding::kL2NearCapacity.name;
    } else if (auto f = ctx.prior.get(finding::kL2Capacity)) {
      knee = f->value / 2;
      knee_from = "l2.capacity / 2";
    }
    if (auto f = ctx.prior.get(finding::kL2HitLatency)) hit = f->value;
    LineByStrideRecord out;
    out.strides.assign(kLineStrides.begin(), kLineStrides.end());
    out.hit_cycles = hit;
    out.knee_from = knee_from;
    if (!(knee > 0)) {
      out.why = "needs a partition knee (l2.replica_capacity, l2.near_capacity or l2.capacity)";
      return out;
    }
    const auto ws = static_cast<std::uint64_t>(kLineWorkingSetFactor * knee) / 512 * 512;
    out.working_set_bytes = ws;
    // The replicates give the spread: each chain's own stopping rule is cut to the minimum.
    RunOptions o = ctx.options;
    o.protocol.min_repetitions = o.protocol.max_repetitions = kMinRepetitions;
    Context c{ctx.device, o, ctx.prior};
    std::vector<std::vector<double>> cycles;
    for (std::uint32_t stride : kLineStrides) {
      std::vector<double> v;
      for (int k = 0; k < measure::kReplicates; ++k)
        v.push_back(measure::chase_point_cycles(c, device::LoadOp::kCg, ws, stride,
                                                ctx.options.seed + 17 * k + stride));
      cycles.push_back(v);
    }
    out.cycles = cycles;
    return out;
  }

  static void line_by_stride_finding(const WaysSamples& rec, std::vector<Finding>& out) {
    if (!rec.line_by_stride || !rec.line_by_stride->cycles) return;
    const LineByStrideRecord& lb = *rec.line_by_stride;
    const auto& strides = lb.strides;
    const auto& cycles = *lb.cycles;
    // Without the sweep's hit latency, the fewest-lines stride's own (it lies below the knee).
    double hit = lb.hit_cycles;
    if (!(hit > 0)) hit = stats::median(cycles.back());
    const auto a = analysis::line_by_stride(strides, cycles, hit);
    if (!a.found) return;
    double precision = 1;
    for (std::size_t i = 0; i < cycles.size(); ++i)
      precision = std::min(precision, confidence::precision(cycles[i], a.medians[i]));
    out.push_back({"cache.l2.line_size",
                   static_cast<double>(a.line_bytes),
                   "bytes",
                   confidence::combine({precision, confidence::separation(a.separation_z_below),
                                        confidence::separation(a.separation_z_above)}),
                   "random-order chases (ld.global.cg, one SM, 3 fresh chains each) over one "
                   "working set past one partition's knee (1.25 x l2.replica_capacity, else "
                   "l2.near_capacity, else l2.capacity / 2) at node "
                   "strides 64 ... 512 B: below the line a line's later nodes reuse it, above it "
                   "fewer lines are touched; the latency peaks at the line",
                   {{"medians_cycles", a.medians}, {"strides", strides}}});
  }

  void analyze(ExperimentResult& r) const override {
    if (r.status != Status::kPassed) return;
    const auto rec = samples_as<WaysSamples>(r);
    if (!rec.conflict_set) return;  // the calibration failed: no conflict set was searched
    const std::string lv = measure::cache::to_string(level_);
    line_finding(lv, rec, r.findings);
    if (level_ == Level::kL2 &&
        std::none_of(r.findings.begin(), r.findings.end(),
                     [](const Finding& f) { return f.name == "cache.l2.line_size"; }))
      line_by_stride_finding(rec, r.findings);
    policy_finding(lv, rec, r.findings);
    cyclic_finding(lv, rec, r.findings);
    if (!rec.pools_agree) competing_lines_finding(lv, rec, r.findings);
    if (!rec.conflict_set->found || !rec.pools_agree) return;
    r.findings.push_back(ways_finding("cache." + lv + ".ways", rec));
    if (rec.set_index) set_index_findings(lv, rec, r);
  }

  /// No set, but targets whose repeatable eviction needs every one of g disjoint groups of the
  /// shortest evicting prefix: each group holds a line the target competes with.
  static void competing_lines_finding(const std::string& lv, const WaysSamples& rec,
                                      std::vector<Finding>& out) {
    // No set, but targets whose repeatable eviction needs every one of g disjoint groups of
    // the shortest evicting prefix: each group holds a line the target competes with.
    const EvictionSummary et = eviction_summary(rec.pools);
    const auto n = static_cast<std::size_t>(et.swept);
    const auto k = static_cast<std::size_t>(et.bounded);
    if (k >= 2)
      out.push_back(
          {"cache." + lv + ".competing_lines_lower_bound",
           static_cast<double>(et.ways_at_least),
           "lines",
           targets_confidence(k, n, rec),
           "the fewest, over the targets whose eviction repeats (8 of 8 with the shortest "
           "evicting prefix, 0 of 8 with one group less), of disjoint groups of that prefix "
           "that are each needed to evict the target: the target competes with at least that "
           "many of the swept lines. Under LRU with one copy per line that bounds the ways; "
           "not where copies of far-homed lines share the sets and the sweep's parallel loads "
           "have no order (on one H200, targets of this kind needed 32 to 256 lines while two "
           "others were evicted by 16-line sets)",
           {{"targets", n}, {"bounded_targets", k}}});
  }

  /// The set index's findings (set_index_bits, the tags' sets and capacity, the stored lines'
  /// ways and victim, the sets), from the set index judged again.
  static void set_index_findings(const std::string& lv, const WaysSamples& rec,
                                 ExperimentResult& r) {
    const analysis::cache::SetIndexResult si = rejudged_set_index(rec);
    const std::size_t tests = si.tests.size();
    const double conf =
        confidence::combine({confidence::agreement(tests, tests), rec.calibration.separation()});
    json pairs = json::array();
    for (auto [a, b] : si.equal_pairs) pairs.push_back({a, b});
    r.findings.push_back({"cache." + lv + ".set_index_bits",
                          static_cast<double>(si.bits.size() - si.page_bits.size()),
                          "bits",
                          conf,
                          "value: the physical address bits (below first_page_bit) whose "
                          "flip moves a conflict-set member to another set (the conflict "
                          "ends); pairs of such bits that keep the set are equal columns of a "
                          "GF(2) hash. A flip at or above first_page_bit moves the line to "
                          "another page, whose physical frame user code cannot see: those "
                          "(page_bits) say that the frame matters, not which bit does",
                          {{"bits", si.bits},
                           {"equal_pairs", pairs},
                           {"first_page_bit", si.first_page_bit},
                           {"page_bits", si.page_bits},
                           {"modulo_refuted", si.modulo_refuted},
                           {"modulo_refuted_by", si.modulo_refuted_by},
                           {"member_distance_gcd_lines", si.member_distance_gcd_lines},
                           {"kind", analysis::cache::to_string(si.kind)}}});
    const bool hashed = rec.hash_columns && rec.hash_columns->hashed();
    if (hashed) tag_findings(lv, rec, conf, r.findings);
    if (rec.data_sets) data_sets_finding(lv, rec, r);
    if (rec.data_victim && rec.data_victim->measured)
      r.findings.push_back(data_victim_finding(lv, *rec.data_victim, rec));
    const std::uint64_t capacity = rec.capacity_bytes_used.value_or(0);
    if (hashed) {
      r.findings.push_back({"cache." + lv + ".sets",
                            std::ldexp(1.0, rec.hash_columns->rank),
                            "sets",
                            conf,
                            "the tags' sets: 2^rank of the measured XOR hash (tag_sets)",
                            {{"capacity_bytes", capacity}}});
    } else if (si.sets > 0)
      r.findings.push_back({"cache." + lv + ".sets",
                            static_cast<double>(si.sets),
                            "sets",
                            conf,
                            si.kind == analysis::cache::SetIndexKind::kModuloPowerOfTwo
                                ? "2^(set-index bits)"
                                : "capacity / (line x ways)",
                            {{"capacity_bytes", capacity}}});
  }

  /// The tags' sets and capacity from the XOR hash's columns (tag_sets, tag_capacity).
  static void tag_findings(const std::string& lv, const WaysSamples& rec, double conf,
                           std::vector<Finding>& out) {
    // The XOR hash measured column by column: its rank gives the sets of the tags; tags
    // x ways x line beyond the capacity the chase holds means the lines are stored apart
    // from the tags (fewer than the tags can name).
    const HashColumnsRecord& hc = *rec.hash_columns;
    const auto dependent = hc.dependent.size();
    const double sets = std::ldexp(1.0, hc.rank);
    const double hconf = confidence::combine(
        {conf, dependent ? confidence::agreement(hc.verified, dependent) : 1.0});
    out.push_back(
        {"cache." + lv + ".tag_sets",
         sets,
         "sets",
         hconf,
         "2^rank of the set index's XOR hash, measured column by column: a bit is dependent "
         "when flipping it together with some combination of the independent bits below it "
         "keeps a conflict-set member in its set (each dependent column tested again on "
         "another member); masks[k]: bit k of the set = parity(address & masks[k]) over "
         "the searched (physical) bits",
         {{"independent_bits", hc.independent_bits},
          {"dependent", hc.dependent},
          {"masks", hc.masks},
          {"highest_bit_searched", hc.highest_bit_searched},
          {"tests", hc.tests}}});
    const double ways = static_cast<double>(rec.conflict_set->ways);
    const double line = static_cast<double>(rec.line_bytes.value_or(0));
    const double cap = static_cast<double>(rec.capacity_bytes_used.value_or(0));
    if (ways > 0 && line > 0 && cap > 0) {
      const double tags = sets * ways * line;
      out.push_back({"cache." + lv + ".tag_capacity",
                     tags,
                     "bytes",
                     hconf,
                     "tag_sets x ways x line: the bytes the tags can name. Above the capacity the "
                     "chase holds (capacity_bytes) the lines are stored apart from the tags "
                     "(decoupled): a line can leave while its set has a free tag",
                     {{"capacity_bytes", cap},
                      {"tags_over_capacity", tags / cap},
                      {"decoupled", tags > cap * 1.03}}});
    }
  }

  /// The ways of the stored lines (data_ways), or why there are none (statistics).
  static void data_sets_finding(const std::string& lv, const WaysSamples& rec,
                                ExperimentResult& r) {
    const ConflictRecord& ds = *rec.data_sets;
    if (ds.found && ds.checks > 0 && ds.checks == ds.checks_passed) {
      r.findings.push_back(
          {"cache." + lv + ".data_ways",
           static_cast<double>(ds.ways),
           "lines",
           confidence::combine(
               {confidence::agreement(ds.checks_passed, ds.checks), rec.calibration.separation()}),
           "a minimal conflict set among lines that share no tag set beyond its ways (random "
           "lines of the first span_bytes, which the tags' hash spreads evenly): its size "
           "less one is how many lines one set of the stored lines holds; as many as the lines "
           "held means they are stored without sets",
           {{"lines", ds.lines}, {"span_bytes", ds.span_bytes.value_or(0)}}});
    } else {
      r.statistics["data_sets"] =
          "no minimal conflict among lines that share no tag set beyond its ways (" + ds.note + ")";
    }
  }

  /// The class of the line that leaves a decoupled cache (data_victim); its code in the value.
  static Finding data_victim_finding(const std::string& lv,
                                     const analysis::cache::DataVictimResult& dv,
                                     const WaysSamples& rec) {
    using analysis::cache::VictimClass;
    const double code = dv.victim == VictimClass::kGlobalLru   ? 0
                        : dv.victim == VictimClass::kOwnSet    ? 1
                        : dv.victim == VictimClass::kRandom    ? 2
                        : dv.victim == VictimClass::kRandomSet ? 3
                        : dv.victim == VictimClass::kSetCycle  ? 5
                                                               : 4;
    return {
        "cache." + lv + ".data_victim",
        code,
        "class",
        confidence::combine({confidence::separation(dv.rejected_z), rec.calibration.separation()}),
        "value: 0 global_lru, 1 own_set, 2 random, 3 random_set, 5 set_cycle, 4 none of "
        "these. Consecutive lines (at most ways per set) past the lines held (lines_held, "
        "in the sequences' carve-out) are read in order, then one line per sequence is "
        "probed: samples of the oldest lines, of the lines own-set eviction names, and of "
        "four age bins of the rest; then, after about one new line per set "
        "(filled_cycle), samples of each set's oldest and second-oldest line. Each class "
        "predicts which probes are gone (random: any held line alike, 1 - (1 - 1/held)^"
        "evictions; "
        "random_set: a set drawn more times than the line's age rank; set_cycle: each "
        "set once per sets evictions); its misfit is the largest |observed - predicted| / "
        "se over the groups; the class within 3 se, else none. Confidence: the separation "
        "of the closest class not chosen (its misfit as z)",
        {{"victim", analysis::cache::to_string(dv.victim)},
         {"lines_held", dv.lines_held},
         {"filled", dv.filled},
         {"oldest", {dv.oldest_evicted, dv.oldest_probed}},
         {"own_set", {dv.own_evicted, dv.own_probed}},
         {"age_bins_evicted", dv.bin_evicted},
         {"age_bins_probed", dv.bin_probed},
         {"groups", dv.groups},
         {"misfit_z", dv.misfit_z}}};
  }

 private:
  Level level_;
};

}  // namespace

void register_cache_structure_experiments(Registry& registry) {
  registry.add(std::make_unique<WaysExperiment>(Level::kL1));
  registry.add(std::make_unique<WaysExperiment>(Level::kL2));
  registry.add(make_tlb_experiment());
}

}  // namespace gpuprobe::probes
