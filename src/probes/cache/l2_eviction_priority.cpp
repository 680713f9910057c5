// cache.l2.eviction_priority: what a load's L2 eviction priority (createpolicy.fractional +
// ld.global.L2::cache_hint) keeps. A region of a quarter of the L2 is placed by loads with one
// priority (none, evict_first, evict_normal, evict_last, evict_unchanged), then plain traffic
// streams: light (L2 / 2, where plain lines stay and lines marked to go first should not) and
// heavy (2 x L2, where plain lines go and protected lines should not); a first pass over
// sampled lines says what stayed (residency_trials.hpp). Each at the set-aside found and, where
// the GPU has one, at the largest persisting set-aside (evict_last may be served from it). Then
// how much evict_last can hold (regions of 1/2, 3/4 and all of the L2), and a fraction of 0.5;
// whether that cap is per set or a byte budget: the set-aside's whole ways' bytes placed
// contiguously and scattered at random (rs::judge_cap_rule).
// Last, what discard.global.L2 does to dirty lines: marked stores over an eighth of the L2, the
// discard (or not), an L2 flush, and what the region reads back; with --counters, the DRAM bytes
// the flush writes back with and without the discard.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/l2_residency.hpp"
#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/finding_names.hpp"
#include "core/l2_residency.hpp"
#include "core/samples.hpp"
#include "core/units.hpp"
#include "counters/counters.hpp"
#include "probes/cache/l2_residency.hpp"
#include "probes/cache/residency_trials.hpp"
#include "probes/cache/sequence_session.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
using residency::kControlBytes;
using residency::Placement;
using residency::whole_mib;
using units::kMiB;
namespace rs = analysis::residency;

const EvictionHint kHints[] = {EvictionHint::kNone, EvictionHint::kEvictFirst,
                               EvictionHint::kEvictNormal, EvictionHint::kEvictLast,
                               EvictionHint::kEvictUnchanged};

std::vector<Placement> plan_for(std::uint64_t l2, std::vector<std::uint64_t> set_asides,
                                std::uint64_t found, int repeats, int ways) {
  std::vector<Placement> plan;
  const auto add = [&](Placement p) {
    for (int r = 0; r < repeats; ++r) {
      p.repeat = r;
      p.select_seed = residency::scatter_seed(p, r);
      plan.push_back(p);
    }
  };
  const auto hinted = [&](std::string group, std::uint64_t set_aside, double bytes,
                          EvictionHint hint, double fraction, std::uint64_t traffic) {
    Placement p;
    p.group = std::move(group);
    p.set_aside_bytes = set_aside;
    p.region_bytes = whole_mib(bytes);
    p.hint = hint;
    p.hint_fraction = fraction;
    p.traffic_bytes = traffic;
    return p;
  };
  const double quarter = static_cast<double>(l2) / 4;
  add(hinted("control_there", found, kControlBytes, EvictionHint::kNone, 1.0, 0));
  Placement gone = hinted("control_gone", found, kControlBytes, EvictionHint::kNone, 1.0, 0);
  gone.place = false;
  add(gone);
  for (auto set_aside : set_asides)
    for (auto hint : kHints) {
      add(hinted("light", set_aside, quarter, hint, 1.0, l2 / 2));
      add(hinted("heavy", set_aside, quarter, hint, 1.0, 2 * l2));
    }
  for (auto set_aside : set_asides)
    for (double share : {0.5, 0.75, 1.0})
      add(hinted("capacity", set_aside, static_cast<double>(l2) * share, EvictionHint::kEvictLast,
                 1.0, 2 * l2));
  add(hinted("fraction", set_asides.back(), quarter, EvictionHint::kEvictLast, 0.5, 2 * l2));
  // Per set or a byte budget (residency::cap_placements).
  for (auto set_aside : set_asides)
    for (auto& p : residency::cap_placements(
             hinted("cap", set_aside, 0, EvictionHint::kEvictLast, 1.0, 2 * l2), l2, ways, 0))
      add(p);
  return plan;
}

/// A mark no word of a probe buffer holds (every word holds its own offset, below 2^48).
constexpr std::uint64_t kMark = 0x5A5A000000000000ull;
/// Trials of each kind (with and without the discard): agreement(16, 16) is 0.85.
constexpr int kDiscardRepeats = 16;

/// Puts the region's own values back and checks that every word holds them again.
void restore_region(L2Residency& l2, ProbeBuffer& buffer, std::uint64_t bytes) {
  l2.store_bulk(buffer, 0, bytes, 0);
  l2.flush_l2();
  const auto c = l2.census(buffer, 0, bytes, kMark);
  if (c.own != bytes / 8)
    throw VerificationError("cache.l2.eviction_priority: after restoring, " +
                            std::to_string(bytes / 8 - c.own) + " words of the discard region " +
                            "do not hold their own offset");
}

/// Marked stores over the region's lines, after an L2 flush (the lines dirty in the L2), and the
/// discard or not: what a trial and a counter read flush next.
void make_dirty(L2Residency& l2, ProbeBuffer& buffer, std::uint64_t bytes, bool discard) {
  l2.reset_persisting_lines();
  l2.flush_l2();
  l2.store_bulk(buffer, 0, bytes, kMark);
  if (discard) l2.discard_bulk(buffer, 0, bytes);
}

std::vector<rs::DiscardTrial> run_discard(L2Residency& l2, ProbeBuffer& buffer,
                                          std::uint64_t bytes) {
  std::vector<rs::DiscardTrial> trials;
  for (int rep = 0; rep < kDiscardRepeats; ++rep)
    for (bool discard : {false, true}) {
      make_dirty(l2, buffer, bytes, discard);
      l2.flush_l2();
      const auto c = l2.census(buffer, 0, bytes, kMark);
      trials.push_back({discard, rep, bytes, c.own, c.marked, c.other});
      restore_region(l2, buffer, bytes);
    }
  return trials;
}

/// --counters: the DRAM bytes an L2 flush writes after marked stores over the region, without
/// the discard (about the region) and with it (about none, when the discard drops dirty data).
nlohmann::json discard_counters(Context& ctx, L2Residency& l2, ProbeBuffer& buffer,
                                std::uint64_t bytes) {
  counters::Declaration d;
  const double region = static_cast<double>(bytes);
  for (bool discard : {false, true}) {
    counters::Expectation e{"DRAM bytes written by the flush",
                            "dram__bytes_write.sum",
                            "",
                            "bytes",
                            discard ? 0.0 : region,
                            0.05 * region,
                            false,
                            discard ? "discard.global.L2 drops dirty data (PTX ISA): no write-back"
                                    : "every stored byte is written back once"};
    counters::Probe p{discard ? "stores, discard, flush" : "stores, flush",
                      {{"discarded", discard}},
                      [&l2] { l2.flush_l2(); },
                      {e}};
    p.prepare = [&l2, &buffer, bytes, discard] { make_dirty(l2, buffer, bytes, discard); };
    d.probes.push_back(std::move(p));
  }
  auto record = counters::collect(ctx, d);
  restore_region(l2, buffer, bytes);
  return record;
}

class L2EvictionPriority : public Experiment {
 public:
  std::string id() const override { return "cache.l2.eviction_priority"; }
  std::string description() const override {
    return "what a load's L2 eviction priority keeps (createpolicy.fractional evict_first / "
           "evict_normal / evict_last / evict_unchanged, against plain loads): a quarter of the "
           "L2 placed, then plain traffic of L2 / 2 or 2 x L2 and a timed first pass over 512 "
           "sampled lines; at the set-aside found and the largest; how much evict_last holds, "
           "and whether its cap is per set (contiguous against scattered placement)";
  }
  std::vector<std::string> depends_on() const override { return {"cache.l2.ways"}; }
  std::vector<std::string> produces() const override {
    return {"l2.evict.*", "l2.evict_last.*", "l2.evict_first.*", "l2.discard.*"};
  }
  std::vector<Axis> typed_axes() const override {
    return {int_axis("repeats", {2}, "trials", "trials of every question", 1, 8)};
  }
  std::optional<std::string> waiver(const device::DeviceInfo& d) const override {
    if (d.cc_major < 8)
      return std::string("needs compute capability 8.0 (createpolicy eviction priorities)");
    return std::nullopt;
  }
  void run(Context& ctx, ExperimentResult& r) const override;
  void analyze(ExperimentResult& r) const override;
};

void L2EvictionPriority::run(Context& ctx, ExperimentResult& r) const {
  auto* seq = as_sequencer(ctx.device);
  auto* l2 = as_l2_residency(ctx.device);
  if (!seq || !l2)
    return cache_structure::waive(r, "this device has no L2 residency controls (L2Residency)");
  if (!l2->has_eviction_hints())
    return cache_structure::waive(r, "this device's loads carry no eviction priority");
  const auto axes = axis_values(ctx.options);
  const std::uint64_t l2_bytes = ctx.device.info().l2_bytes;
  const auto limits = l2->persisting_limits();
  SetAsideGuard guard(*l2);
  // None, the set-aside found (when another), and the largest: evict_last may be served from it.
  std::vector<std::uint64_t> set_asides{0};
  for (auto b : {guard.found(), limits.max_set_aside_bytes})
    if (b != 0 && std::find(set_asides.begin(), set_asides.end(), b) == set_asides.end())
      set_asides.push_back(b);
  const auto ways = ctx.prior.get(finding::kCacheL2Ways);
  const int l2_ways = ways ? static_cast<int>(ways->value) : 0;
  const auto plan = plan_for(l2_bytes, set_asides, guard.found(),
                             static_cast<int>(axes.ints("repeats").front()), l2_ways);
  std::uint64_t area = 0;
  for (const auto& p : plan) area = std::max(area, p.region_offset + p.region_bytes);
  area = (area + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
  auto buffer = seq->alloc_probe_buffer(area + 2 * l2_bytes);
  residency::TrialRunner runner(*l2, *seq, *buffer, area, ctx.options.seed);
  rs::Samples samples;
  samples.l2_bytes = l2_bytes;
  samples.l2_ways = l2_ways;
  samples.max_set_aside_bytes = limits.max_set_aside_bytes;
  samples.max_window_bytes = limits.max_window_bytes;
  samples.set_aside_found_bytes = guard.found();
  for (const auto& p : plan) samples.trials.push_back(runner.run(p));
  const std::uint64_t discard_bytes = whole_mib(static_cast<double>(l2_bytes) / 8);
  samples.discard = run_discard(*l2, *buffer, discard_bytes);
  r.parameters = {{"axes", axes.to_json()},
                  {"sampled_lines", residency::kSampledLines},
                  {"sm", 0},
                  {"region_bytes", whole_mib(static_cast<double>(l2_bytes) / 4)},
                  {"traffic_bytes_heavy", 2 * l2_bytes},
                  {"traffic_bytes_light", l2_bytes / 2},
                  {"discard_region_bytes", discard_bytes},
                  {"discard_trials_each", kDiscardRepeats}};
  r.protocol["l2_flush"] = "persisting lines reset, then the L2 flushed, before every trial";
  r.protocol["restore"] = "the set-aside found is put back and persisting lines reset at the end";
  r.samples = samples;
  if (counters::requested(ctx))
    r.samples["counters"] = discard_counters(ctx, *l2, *buffer, discard_bytes);
}

/// l2.discard.* from the discard trials (results recorded before them have none).
void add_discard_findings(ExperimentResult& r, const std::vector<rs::DiscardTrial>& trials) {
  if (trials.empty()) return;
  const auto v = rs::judge_discard(trials);
  Finding f{finding::kL2DiscardDropsDirty.name,
            v.outcome == "dropped" ? 1.0 : 0.0,
            "bool",
            v.confidence,
            "whether discard.global.L2 drops a dirty line's data (no write-back): marked stores "
            "over an eighth of the L2, the discard, an L2 flush, then every word read back; "
            "dropped when >= 95 % of it reads the value from before the stores, in most trials, "
            "while trials without the discard read the stored value",
            json::object()};
  f.extra["outcome"] = v.outcome;
  f.extra["discarded_reads_stored_share"] = v.discarded_kept;
  f.extra["discarded_reads_old_share"] = v.discarded_old;
  f.extra["control_reads_stored_share"] = v.stored_kept;
  f.extra["trials_agreeing"] = v.agreeing;
  f.extra["trials_discarded"] = v.discarded;
  f.extra["controls_ok"] = v.controls_ok;
  f.extra["controls"] = v.controls;
  r.findings.push_back(f);
}

void L2EvictionPriority::analyze(ExperimentResult& r) const {
  if (r.status == Status::kWaived) return;
  counters::cross_check(r);
  const auto s = samples_as<analysis::residency::Samples>(r);
  const auto c = rs::classify(s.trials);
  // The set-asides the hints ran at (read back), and the largest, which the findings judge.
  std::vector<std::uint64_t> set_asides;
  for (const auto& t : s.trials)
    if ((t.group == "light" || t.group == "heavy") &&
        std::find(set_asides.begin(), set_asides.end(), t.set_aside_bytes) == set_asides.end())
      set_asides.push_back(t.set_aside_bytes);
  std::sort(set_asides.begin(), set_asides.end());
  if (set_asides.empty())
    throw UsageError("cache.l2.eviction_priority: samples hold no light or heavy trial");
  const std::uint64_t judged = set_asides.back();
  const auto kept = [&](const std::string& group, const std::string& hint, std::uint64_t set_aside,
                        double fraction = 1.0) {
    return rs::retention_of(s.trials, c, [&](const rs::Trial& t) {
      return t.group == group && t.hint == hint && t.set_aside_bytes == set_aside &&
             t.hint_fraction == fraction;
    });
  };
  std::size_t agree = 0, specs = 0;
  Curve table{"kept", {"set_aside_bytes", "hint", "light_traffic_kept", "heavy_traffic_kept"}, {}};
  for (auto set_aside : set_asides)
    for (auto hint : kHints) {
      const auto light = kept("light", to_string(hint), set_aside);
      const auto heavy = kept("heavy", to_string(hint), set_aside);
      specs += 2;
      agree += light.repeats_agree + heavy.repeats_agree;
      table.rows.push_back({set_aside, to_string(hint), light.fraction, heavy.fraction});
    }
  const double conf = confidence::combine(
      {c.separation, confidence::agreement(agree, std::max<std::size_t>(1, specs))});
  for (auto hint : kHints) {
    for (const char* traffic : {"light", "heavy"}) {
      const auto k = kept(traffic, to_string(hint), judged);
      Finding f{"l2.evict." + to_string(hint) + "." + traffic,
                k.fraction,
                "fraction",
                conf,
                std::string("share of a quarter of the L2, placed by loads with eviction "
                            "priority ") +
                    to_string(hint) + ", still in the L2 after plain traffic of " +
                    (std::string(traffic) == "light" ? "L2 / 2" : "2 x L2") +
                    ", at the largest set-aside measured",
                json::object()};
      f.extra["set_aside_bytes"] = judged;
      json by_set_aside = json::object();
      for (auto b : set_asides)
        by_set_aside[std::to_string(b)] = kept(traffic, to_string(hint), b).fraction;
      f.extra["kept_by_set_aside_bytes"] = by_set_aside;
      r.findings.push_back(f);
    }
  }
  const double last_heavy = kept("heavy", "evict_last", judged).fraction;
  const double none_heavy = kept("heavy", "none", judged).fraction;
  Finding protects{finding::kL2EvictLastProtects.name,
                   last_heavy - none_heavy > 0.2 ? 1.0 : 0.0,
                   "bool",
                   conf,
                   "whether evict_last lines outlast plain ones (by 0.2 of the region) under "
                   "traffic of 2 x L2, at the largest set-aside measured",
                   json::object()};
  protects.extra["evict_last_kept"] = last_heavy;
  protects.extra["plain_kept"] = none_heavy;
  r.findings.push_back(protects);
  if (set_asides.front() == 0 && judged != 0) {
    const double last_none = kept("heavy", "evict_last", 0).fraction;
    const double plain_none = kept("heavy", "none", 0).fraction;
    Finding needs{"l2.evict_last.needs_set_aside",
                  protects.value == 1.0 && last_none - plain_none <= 0.2 ? 1.0 : 0.0,
                  "bool",
                  conf,
                  "whether evict_last protects only when a persisting set-aside is made: it "
                  "outlasts plain lines under traffic of 2 x L2 at the largest set-aside but "
                  "not at none",
                  json::object()};
    needs.extra["evict_last_kept_without_set_aside"] = last_none;
    needs.extra["plain_kept_without_set_aside"] = plain_none;
    r.findings.push_back(needs);
  }
  const double first_light = kept("light", "evict_first", judged).fraction;
  const double none_light = kept("light", "none", judged).fraction;
  Finding first{finding::kL2EvictFirstGoesFirst.name,
                none_light - first_light > 0.2 ? 1.0 : 0.0,
                "bool",
                conf,
                "whether evict_first lines go before plain ones (by 0.2 of the region) under "
                "traffic of L2 / 2, which plain lines survive",
                json::object()};
  first.extra["evict_first_kept"] = first_light;
  first.extra["plain_kept"] = none_light;
  r.findings.push_back(first);
  // The most of the L2 that evict_last lines held: region share x what stayed.
  double share = 0;
  Curve capacity{
      "evict_last_capacity", {"set_aside_bytes", "region_bytes", "kept", "share_of_l2"}, {}};
  for (const auto& t : s.trials) {
    if (t.group != "capacity" || t.repeat != 0) continue;
    const auto k = rs::retention_of(s.trials, c, [&](const rs::Trial& u) {
      return u.group == "capacity" && u.region_bytes == t.region_bytes &&
             u.set_aside_bytes == t.set_aside_bytes;
    });
    const double held =
        k.fraction * static_cast<double>(t.region_bytes) / static_cast<double>(s.l2_bytes);
    capacity.rows.push_back({t.set_aside_bytes, t.region_bytes, k.fraction, held});
    if (t.set_aside_bytes == judged) share = std::max(share, held);
  }
  Finding max_share{finding::kL2EvictLastMaxShare.name,
                    share,
                    "fraction",
                    conf,
                    "the most of the L2 that evict_last lines held after plain traffic of 2 x "
                    "L2 (regions of 1/2, 3/4 and all of the L2; share kept x region / L2), at "
                    "the largest set-aside measured",
                    json::object()};
  if (s.l2_ways > 0) max_share.extra["ways_of_a_set"] = share * s.l2_ways;
  if (judged > 0)
    max_share.extra["share_of_set_aside"] =
        share * static_cast<double>(s.l2_bytes) / static_cast<double>(judged);
  r.findings.push_back(max_share);
  const auto half = kept("fraction", "evict_last", judged, 0.5);
  r.findings.push_back(Finding{"l2.evict_last.half_fraction_kept", half.fraction, "fraction", conf,
                               "share of the region kept under traffic of 2 x L2 when the "
                               "evict_last policy's fraction is 0.5 (the rest evict_unchanged)",
                               json::object()});
  table.hints = table_hints("share of a quarter of the L2 kept, by eviction priority and traffic");
  r.curves.push_back(table);
  capacity.hints = table_hints("how much of the L2 evict_last lines held");
  r.curves.push_back(capacity);
  residency::add_cap_rule(
      r, s, c, finding::kL2EvictLastCapRule,
      "where the cap on evict_last lines applies: per set (the set-aside's k ways of every set) "
      "or as a byte budget over the whole L2. The set-aside's k ways' bytes placed evict_last "
      "contiguously (every set gets k lines) and scattered at random over a span 1 / share "
      "times larger (a set gets Binomial(k / share, share) lines), then traffic of 2 x L2: a "
      "per-set cap loses the lines a set gets beyond k, a byte budget keeps both alike");
  add_discard_findings(r, s.discard);
  const auto counter_statistics =
      r.statistics.contains("counters") ? r.statistics["counters"] : json();
  r.statistics = residency::classification_statistics(c);
  if (!counter_statistics.is_null()) r.statistics["counters"] = counter_statistics;
}

}  // namespace

void register_l2_eviction_priority(Registry& registry) {
  registry.add(std::make_unique<L2EvictionPriority>());
}

}  // namespace gpuprobe::probes
