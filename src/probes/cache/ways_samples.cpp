// The JSON conversion and whole-sample check of cache.l1.ways / cache.l2.ways samples.
#include "probes/cache/ways_samples.hpp"

#include <algorithm>

#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/samples.hpp"

namespace gpuprobe::probes::cache_structure {

using nlohmann::json;

namespace {

constexpr std::pair<SetMethod, const char*> kMethods[] = {
    {SetMethod::kSequences, "sequences"}, {SetMethod::kEvictionSweeps, "eviction_sweeps"}};
constexpr std::pair<ServedFrom, const char*> kServed[] = {
    {ServedFrom::kUnknown, ""},
    {ServedFrom::kFarPartition, "far_partition"},
    {ServedFrom::kDram, "dram"}};

template <class Enum, std::size_t N>
std::string label_of(Enum v, const std::pair<Enum, const char*> (&labels)[N]) {
  for (const auto& [value, label] : labels)
    if (value == v) return label;
  return "";
}

template <class Enum, std::size_t N>
Enum parse(const char* what, const std::string& text,
           const std::pair<Enum, const char*> (&labels)[N]) {
  for (const auto& [value, label] : labels)
    if (text == label) return value;
  std::string allowed;
  for (const auto& [value, label] : labels)
    allowed += std::string(allowed.empty() ? "" : ", ") + "\"" + label + "\"";
  throw UsageError(std::string(what) + " \"" + text + "\" is not one of " + allowed);
}

ServedFrom served_at(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() ? ServedFrom::kUnknown : parse(key, it->get<std::string>(), kServed);
}

}  // namespace

std::string to_string(SetMethod m) { return label_of(m, kMethods); }
std::string to_string(ServedFrom s) { return label_of(s, kServed); }
ServedFrom served_from(const std::string& label) {
  return parse("served_after_eviction", label, kServed);
}

// ---- calibration, references, targets ------------------------------------------------------

CalibrationRecord CalibrationRecord::of(const analysis::cache::Calibration& c) {
  return {c.ok, c.hit_cycles, c.miss_cycles, c.threshold, c.hits, c.misses};
}
double CalibrationRecord::separation() const {
  return confidence::separation(confidence::separation_z(hits, misses));
}
void to_json(json& j, const CalibrationRecord& c) {
  j = {{"ok", c.ok},
       {"hit_cycles", c.hit_cycles},
       {"miss_cycles", c.miss_cycles},
       {"threshold", c.threshold},
       {"hits", c.hits},
       {"misses", c.misses}};
}
void from_json(const json& j, CalibrationRecord& c) {
  c = CalibrationRecord{};
  c.ok = j.value("ok", false);
  c.hit_cycles = j.value("hit_cycles", 0.0);
  c.miss_cycles = j.value("miss_cycles", 0.0);
  c.threshold = j.value("threshold", 0.0);
  j.at("hits").get_to(c.hits);
  j.at("misses").get_to(c.misses);
}

void to_json(json& j, const ServedReferencesRecord& r) {
  j = {{"far_hit_cycles", r.far_hit_cycles},
       {"dram_cycles", r.dram_cycles},
       {"dram_from", r.dram_from}};
}
void from_json(const json& j, ServedReferencesRecord& r) {
  j.at("far_hit_cycles").get_to(r.far_hit_cycles);
  j.at("dram_cycles").get_to(r.dram_cycles);
  r.dram_from = j.value("dram_from", std::string());
}

// ---- conflict sets -------------------------------------------------------------------------

void to_json(json& j, const VolumeRecord& v) {
  j = {{"trials", v.trials},
       {"restored", v.restored},
       {"group_lines", v.group_lines},
       {"verdict", analysis::cache::volume_verdict(v.trials, v.restored)}};
}
void from_json(const json& j, VolumeRecord& v) {
  j.at("trials").get_to(v.trials);
  j.at("restored").get_to(v.restored);
  v.group_lines = j.value("group_lines", std::uint64_t{0});
}

ConflictRecord ConflictRecord::of(const analysis::cache::ConflictSet& cs, std::uint64_t seed) {
  ConflictRecord c;
  c.found = cs.found;
  c.lines = cs.lines;
  c.ways = cs.ways;
  c.checks = cs.checks;
  c.checks_passed = cs.checks_passed;
  c.candidates_tried = cs.candidates_tried;
  c.note = cs.note;
  c.seed = seed;
  c.method = parse("conflict set: method", cs.method, kMethods);
  if (!c.swept()) return c;
  c.target = cs.target;
  c.eviction_tests = cs.eviction_tests;
  c.ways_at_least = cs.ways_at_least;
  c.shortest_prefix_lines = cs.shortest_prefix;
  if (cs.volume_trials > 0)
    c.volume = VolumeRecord{cs.volume_trials, cs.volume_restored, cs.volume_group_lines};
  c.steps = cs.steps;
  c.repeat = RepeatRecord{cs.repeat_trials, cs.evicted_with_set, cs.evicted_with_less,
                          cs.reread_cycles, cs.probabilistic()};
  return c;
}

void to_json(json& j, const ConflictRecord& c) {
  j = {{"found", c.found},
       {"lines", c.lines},
       {"ways", c.ways},
       {"checks", c.checks},
       {"checks_passed", c.checks_passed},
       {"candidates_tried", c.candidates_tried},
       {"note", c.note},
       {"seed", c.seed},
       {"method", to_string(c.method)}};
  if (c.swept()) {
    j["target"] = c.target;
    j["eviction_tests"] = c.eviction_tests;
    j["ways_at_least"] = c.ways_at_least;
    j["shortest_prefix_lines"] = c.shortest_prefix_lines;
    write_optional(j, "volume", c.volume);
    j["steps"] = c.steps;
    write_optional(j, "repeat", c.repeat);
  }
  write_optional(j, "search_s", c.search_s);
  if (c.served_after_eviction != ServedFrom::kUnknown)
    j["served_after_eviction"] = to_string(c.served_after_eviction);
  write_optional(j, "span_bytes", c.span_bytes);
}

void from_json(const json& j, ConflictRecord& c) {
  c = ConflictRecord{};
  j.at("found").get_to(c.found);
  j.at("lines").get_to(c.lines);
  j.at("ways").get_to(c.ways);
  j.at("checks").get_to(c.checks);
  j.at("checks_passed").get_to(c.checks_passed);
  c.candidates_tried = j.value("candidates_tried", std::uint64_t{0});
  c.note = j.value("note", std::string());
  c.seed = j.value("seed", std::uint64_t{0});
  c.method = parse("conflict set: method", j.value("method", std::string("sequences")), kMethods);
  c.target = j.value("target", std::uint64_t{0});
  c.eviction_tests = j.value("eviction_tests", std::uint64_t{0});
  c.ways_at_least = j.value("ways_at_least", std::uint64_t{0});
  c.shortest_prefix_lines = j.value("shortest_prefix_lines", std::uint64_t{0});
  read_optional(j, "volume", c.volume);
  c.steps = j.value("steps", json::array());
  read_optional(j, "repeat", c.repeat);
  read_optional(j, "search_s", c.search_s);
  c.served_after_eviction = served_at(j, "served_after_eviction");
  read_optional(j, "span_bytes", c.span_bytes);
}

void to_json(json& j, const EvictionSummary& e) {
  j = {{"swept", e.swept},
       {"probabilistic", e.probabilistic},
       {"bounded", e.bounded},
       {"ways_at_least", e.ways_at_least}};
  write_optional(j, "stopped_by", e.stopped_by);
}
void from_json(const json& j, EvictionSummary& e) {
  j.at("swept").get_to(e.swept);
  j.at("probabilistic").get_to(e.probabilistic);
  j.at("bounded").get_to(e.bounded);
  j.at("ways_at_least").get_to(e.ways_at_least);
  read_optional(j, "stopped_by", e.stopped_by);
}

// ---- policy, cycles, hash, line by stride --------------------------------------------------

PolicyRecord PolicyRecord::of(const analysis::cache::PolicyResult& p) {
  return {p.classes, p.agreeing, p.tests, p.deterministic, p.evidence};
}
std::string PolicyRecord::label() const {
  analysis::cache::PolicyResult p;
  p.classes = classes;
  return p.label();
}
void to_json(json& j, const PolicyRecord& p) {
  j = {{"class", p.label()},
       {"agreeing", p.agreeing},
       {"tests", p.tests},
       {"deterministic", p.deterministic},
       {"evidence", p.evidence}};
}
void from_json(const json& j, PolicyRecord& p) {
  using analysis::cache::PolicyClass;
  static constexpr std::pair<PolicyClass, const char*> kClasses[] = {
      {PolicyClass::kLru, "lru"},
      {PolicyClass::kFifo, "fifo"},
      {PolicyClass::kTreePlru, "tree_plru"},
      {PolicyClass::kRandom, "random"},
      {PolicyClass::kNone, "none"}};
  p = PolicyRecord{};
  p.classes.clear();
  const std::string label = j.at("class").get<std::string>();
  for (std::size_t from = 0; from < label.size();) {
    const std::size_t bar = std::min(label.find('|', from), label.size());
    p.classes.push_back(parse("policy: class", label.substr(from, bar - from), kClasses));
    from = bar + 1;
  }
  j.at("agreeing").get_to(p.agreeing);
  j.at("tests").get_to(p.tests);
  j.at("deterministic").get_to(p.deterministic);
  p.evidence = j.value("evidence", json::array());
}

CyclicRun CyclicRun::of(const analysis::cache::CyclicResult& c) {
  return {c.measured, c.retention,          c.round_retention, c.rounds,   c.orders,
          c.lines,    c.fillers_per_access, c.fillers,         c.predicted};
}
void to_json(json& j, const CyclicRun& c) {
  if (!c.measured) {
    j = {{"measured", false}};
    return;
  }
  j = {
      {"measured", true},        {"retention", c.retention}, {"round_retention", c.round_retention},
      {"rounds", c.rounds},      {"orders", c.orders},       {"lines", c.lines},
      {"predicted", c.predicted}};
  if (c.fillers_per_access) {
    j["fillers"] = c.fillers;
    j["fillers_per_access"] = c.fillers_per_access;
  }
}
void from_json(const json& j, CyclicRun& c) {
  c = CyclicRun{};
  c.measured = j.value("measured", false);
  if (!c.measured) return;
  j.at("retention").get_to(c.retention);
  j.at("round_retention").get_to(c.round_retention);
  c.rounds = j.value("rounds", std::size_t{0});
  c.orders = j.value("orders", std::size_t{0});
  j.at("lines").get_to(c.lines);
  c.predicted = j.at("predicted");
  c.fillers = j.value("fillers", std::size_t{0});
  c.fillers_per_access = j.value("fillers_per_access", std::size_t{0});
}
void to_json(json& j, const CyclicRecord& c) {
  to_json(j, static_cast<const CyclicRun&>(c));
  write_optional(j, "interleaved", c.interleaved);
}
void from_json(const json& j, CyclicRecord& c) {
  from_json(j, static_cast<CyclicRun&>(c));
  read_optional(j, "interleaved", c.interleaved);
}

HashColumnsRecord HashColumnsRecord::of(const analysis::cache::HashColumnsResult& h) {
  HashColumnsRecord r{h.found, h.rank,  h.independent_bits, {},    h.highest_bit_searched,
                      h.masks, h.tests, h.verified,         h.note};
  for (const auto& [bit, combo] : h.dependent) r.dependent.push_back({bit, combo});
  return r;
}

void to_json(json& j, const LineByStrideRecord& l) {
  j = {{"strides", l.strides}, {"hit_cycles", l.hit_cycles}, {"knee_from", l.knee_from}};
  write_optional(j, "why", l.why);
  write_optional(j, "working_set_bytes", l.working_set_bytes);
  write_optional(j, "cycles", l.cycles);
}
void from_json(const json& j, LineByStrideRecord& l) {
  j.at("strides").get_to(l.strides);
  j.at("hit_cycles").get_to(l.hit_cycles);
  l.knee_from = j.value("knee_from", std::string());
  read_optional(j, "why", l.why);
  read_optional(j, "working_set_bytes", l.working_set_bytes);
  read_optional(j, "cycles", l.cycles);
}

// ---- the whole ---------------------------------------------------------------------------

void to_json(json& j, const WaysSamples& s) {
  j = {{"calibration", s.calibration},
       {"carveout_percent", s.carveout_percent},
       {"max_sequence", s.max_sequence},
       {"sequences", s.sequences},
       {"accesses", s.accesses}};
  write_optional(j, "note", s.note);
  write_optional(j, "candidate_alignment_bytes", s.candidate_alignment_bytes);
  write_optional(j, "pool_bytes", s.pool_bytes);
  write_optional(j, "served_references", s.served_references);
  write_optional(j, "target_selection", s.target_selection);
  if (s.set_target_served_after_eviction != ServedFrom::kUnknown)
    j["set_target_served_after_eviction"] = to_string(s.set_target_served_after_eviction);
  write_optional(j, "eviction_targets", s.eviction_targets);
  if (s.conflict_set) {
    j["conflict_set"] = *s.conflict_set;
    j["pools"] = s.pools;
    j["pools_agree"] = s.pools_agree;
    j["all_pools_checks"] = s.all_pools_checks;
    j["all_pools_checks_passed"] = s.all_pools_checks_passed;
  }
  write_optional(j, "line", s.line);
  write_optional(j, "line_note", s.line_note);
  write_optional(j, "policy", s.policy);
  write_optional(j, "cyclic", s.cyclic);
  write_optional(j, "capacity_from", s.capacity_from);
  write_optional(j, "capacity_from_sequences_bytes", s.capacity_from_sequences_bytes);
  write_optional(j, "line_bytes", s.line_bytes);
  write_optional(j, "capacity_bytes_used", s.capacity_bytes_used);
  write_optional(j, "set_index", s.set_index);
  write_optional(j, "hash_columns", s.hash_columns);
  write_optional(j, "data_sets", s.data_sets);
  write_optional(j, "data_victim", s.data_victim);
  write_optional(j, "line_by_stride", s.line_by_stride);
}

void from_json(const json& j, WaysSamples& s) {
  s = WaysSamples{};
  j.at("calibration").get_to(s.calibration);
  s.carveout_percent = j.value("carveout_percent", -1);
  s.max_sequence = j.value("max_sequence", std::size_t{0});
  s.sequences = j.value("sequences", std::uint64_t{0});
  s.accesses = j.value("accesses", std::uint64_t{0});
  read_optional(j, "note", s.note);
  read_optional(j, "candidate_alignment_bytes", s.candidate_alignment_bytes);
  read_optional(j, "pool_bytes", s.pool_bytes);
  read_optional(j, "served_references", s.served_references);
  read_optional(j, "target_selection", s.target_selection);
  s.set_target_served_after_eviction = served_at(j, "set_target_served_after_eviction");
  read_optional(j, "eviction_targets", s.eviction_targets);
  read_optional(j, "conflict_set", s.conflict_set);
  if (s.conflict_set) {
    j.at("pools").get_to(s.pools);
    s.pools_agree = j.value("pools_agree", false);
    s.all_pools_checks = j.value("all_pools_checks", std::size_t{0});
    s.all_pools_checks_passed = j.value("all_pools_checks_passed", std::size_t{0});
  }
  read_optional(j, "line", s.line);
  read_optional(j, "line_note", s.line_note);
  read_optional(j, "policy", s.policy);
  read_optional(j, "cyclic", s.cyclic);
  read_optional(j, "capacity_from", s.capacity_from);
  read_optional(j, "capacity_from_sequences_bytes", s.capacity_from_sequences_bytes);
  read_optional(j, "line_bytes", s.line_bytes);
  read_optional(j, "capacity_bytes_used", s.capacity_bytes_used);
  read_optional(j, "set_index", s.set_index);
  read_optional(j, "hash_columns", s.hash_columns);
  read_optional(j, "data_sets", s.data_sets);
  // Read whole only when measured: an unmeasured search's record is passed over.
  if (const auto it = j.find("data_victim"); it != j.end()) {
    analysis::cache::DataVictimResult dv;
    if (it->value("measured", false))
      dv = it->get<analysis::cache::DataVictimResult>();
    else
      dv.note = it->value("note", std::string());
    s.data_victim = dv;
  }
  read_optional(j, "line_by_stride", s.line_by_stride);
}

namespace {

void check_set(const ConflictRecord& c, const std::string& name) {
  if (c.found)
    require_samples(c.lines.size() == std::size_t{c.ways} + 1,
                    name + " holds " + std::to_string(c.lines.size()) + " lines for " +
                        std::to_string(c.ways) + " ways (a found set holds ways + 1)");
}

void check_cycle(const CyclicRun& c, const std::string& name) {
  if (c.measured)
    require_samples(c.rounds >= 2 && c.round_retention.size() == c.rounds - 1,
                    name + ".round_retention has " + std::to_string(c.round_retention.size()) +
                        " rounds for " + std::to_string(c.rounds) +
                        " (one per round after the first)");
}

}  // namespace

void WaysSamples::check() const {
  require_samples(!calibration.ok || (!calibration.hits.empty() && !calibration.misses.empty()),
                  "calibration holds no hits or no misses but a threshold");
  if (target_selection)
    require_samples(target_selection->cold_cycles.size() == target_selection->lines.size(),
                    "target_selection.cold_cycles is not one read per line");
  if (conflict_set) check_set(*conflict_set, "conflict_set");
  for (std::size_t i = 0; i < pools.size(); ++i)
    check_set(pools[i], "pools[" + std::to_string(i) + "]");
  if (data_sets) check_set(*data_sets, "data_sets");
  if (cyclic) check_cycle(*cyclic, "cyclic");
  if (cyclic && cyclic->interleaved) check_cycle(*cyclic->interleaved, "cyclic.interleaved");
  if (hash_columns && hash_columns->found)
    require_samples(hash_columns->independent_bits.size() ==
                            static_cast<std::size_t>(std::max(hash_columns->rank, 0)) &&
                        hash_columns->masks.size() == hash_columns->independent_bits.size(),
                    "hash_columns holds " + std::to_string(hash_columns->masks.size()) +
                        " masks and " + std::to_string(hash_columns->independent_bits.size()) +
                        " independent bits for rank " + std::to_string(hash_columns->rank));
  if (data_victim && data_victim->measured)
    require_samples(data_victim->bin_probed.size() == data_victim->bin_evicted.size(),
                    "data_victim's age bins are not one evicted count per probed one");
  if (set_index)
    require_samples(set_index->page_bits.size() <= set_index->bits.size(),
                    "set_index holds " + std::to_string(set_index->page_bits.size()) +
                        " page bits but " + std::to_string(set_index->bits.size()) +
                        " bits (the page bits are among them)");
  if (line_by_stride && line_by_stride->cycles) {
    const auto& c = *line_by_stride->cycles;
    require_samples(!c.empty(), "line_by_stride.cycles is empty");
    require_samples(c.size() == line_by_stride->strides.size(),
                    "line_by_stride.cycles has " + std::to_string(c.size()) + " rows for " +
                        std::to_string(line_by_stride->strides.size()) + " strides");
    for (std::size_t i = 0; i < c.size(); ++i)
      require_samples(!c[i].empty(), "line_by_stride.cycles[" + std::to_string(i) + "] is empty");
  }
}

}  // namespace gpuprobe::probes::cache_structure
