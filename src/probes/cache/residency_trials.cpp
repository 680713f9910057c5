#include "probes/cache/residency_trials.hpp"

#include <algorithm>
#include <exception>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "core/finding_names.hpp"
#include "core/line_select.hpp"

namespace gpuprobe::probes::residency {

TrialRunner::TrialRunner(L2Residency& l2, Sequencer& seq, ProbeBuffer& buffer,
                         std::uint64_t traffic_offset, std::uint64_t seed)
    : l2_(l2), seq_(seq), buffer_(buffer), traffic_offset_(traffic_offset), rng_(seed) {}

void TrialRunner::set_aside(std::uint64_t bytes) {
  if (bytes == current_set_aside_) return;
  l2_.set_persisting_set_aside(bytes);
  current_set_aside_ = bytes;
}

analysis::residency::SetAsideRequest TrialRunner::request(std::uint64_t bytes) {
  analysis::residency::SetAsideRequest r;
  r.requested_bytes = bytes;
  current_set_aside_ = ~std::uint64_t{0};
  try {
    l2_.set_persisting_set_aside(bytes);
    r.accepted = true;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.read_back_bytes = l2_.persisting_set_aside();
  return r;
}

namespace {

/// The region's sampled lines (random, distinct, in random order) and one line per 2 MiB page
/// (the page's last, never sampled) whose untimed load warms the page's translation first.
struct Probes {
  std::vector<std::uint64_t> warm, sampled;
};

/// The region's lines a placement put there: every one, or the selected ones when scattered.
std::vector<std::uint64_t> placed_lines(const Placement& p) {
  std::vector<std::uint64_t> lines;
  const std::uint64_t threshold = line_select::threshold_of(p.select_share);
  for (std::uint64_t o = p.region_offset; o + kLine <= p.region_offset + p.region_bytes; o += kLine)
    if (line_select::selected(o / kLine, p.select_seed, threshold)) lines.push_back(o);
  return lines;
}

Probes probes_of(const Placement& pl, std::mt19937_64& rng) {
  const std::uint64_t offset = pl.region_offset, bytes = pl.region_bytes;
  Probes p;
  const std::uint64_t first_page = offset / kPage, last_page = (offset + bytes - 1) / kPage;
  std::set<std::uint64_t> warm;
  for (std::uint64_t page = first_page; page <= last_page; ++page) {
    const std::uint64_t line = std::min(page * kPage + kPage, offset + bytes) - kLine;
    if (line >= offset) warm.insert(line);
  }
  p.warm.assign(warm.begin(), warm.end());
  std::set<std::uint64_t> chosen;
  if (line_select::threshold_of(pl.select_share) >= line_select::kAll) {
    const std::uint64_t lines = bytes / kLine;
    std::uniform_int_distribution<std::uint64_t> pick(0, lines - 1);
    const std::uint64_t want = std::min<std::uint64_t>(kSampledLines, lines - warm.size());
    while (chosen.size() < want) {
      const std::uint64_t line = offset + pick(rng) * kLine;
      if (!warm.count(line)) chosen.insert(line);
    }
  } else {
    // Scattered: among the lines placed (a warm line may be one; it is never sampled).
    std::vector<std::uint64_t> candidates;
    for (auto line : placed_lines(pl))
      if (!warm.count(line)) candidates.push_back(line);
    const std::uint64_t want = std::min<std::uint64_t>(kSampledLines, candidates.size());
    if (!candidates.empty()) {
      std::uniform_int_distribution<std::uint64_t> pick(0, candidates.size() - 1);
      while (chosen.size() < want) chosen.insert(candidates[pick(rng)]);
    }
  }
  p.sampled.assign(chosen.begin(), chosen.end());
  std::shuffle(p.sampled.begin(), p.sampled.end(), rng);
  return p;
}

}  // namespace

analysis::residency::Trial TrialRunner::run(const Placement& p) {
  set_aside(p.set_aside_bytes);
  l2_.reset_persisting_lines();
  l2_.flush_l2();
  if (p.place) {
    BulkLoads fill;
    fill.offset = p.region_offset;
    fill.bytes = p.region_bytes;
    fill.windowed = p.windowed;
    fill.window = p.window;
    fill.window.offset = p.region_offset;
    fill.window.bytes = p.region_bytes;
    fill.hint = p.hint;
    fill.hint_fraction = p.hint_fraction;
    fill.select_share = p.select_share;
    fill.select_seed = p.select_seed;
    l2_.load_bulk(buffer_, fill);
  }
  if (p.traffic_bytes > 0) {
    BulkLoads traffic;
    traffic.offset = traffic_offset_;
    traffic.bytes = p.traffic_bytes;
    l2_.load_bulk(buffer_, traffic);
  }
  const auto probes = probes_of(p, rng_);
  AccessSequence s;
  s.op = device::LoadOp::kCg;
  s.sm = 0;
  s.sequence = probes.warm;
  s.sequence.insert(s.sequence.end(), probes.sampled.begin(), probes.sampled.end());
  s.timed_from = static_cast<std::uint32_t>(probes.warm.size());
  const auto t = seq_.run_sequence(buffer_, s);
  if (!t.verified || t.cycles.size() != probes.sampled.size())
    throw VerificationError("L2 residency trial: the first pass returned " +
                            std::to_string(t.cycles.size()) + " timings for " +
                            std::to_string(probes.sampled.size()) + " lines, or a wrong value");
  analysis::residency::Trial trial;
  trial.group = p.group;
  trial.repeat = p.repeat;
  trial.set_aside_bytes = l2_.persisting_set_aside();
  trial.region_offset = p.region_offset;
  trial.region_bytes = p.region_bytes;
  trial.windowed = p.place && p.windowed;
  if (trial.windowed) {
    trial.hit_ratio = p.window.hit_ratio;
    trial.hit_prop = to_string(p.window.hit);
    trial.miss_prop = to_string(p.window.miss);
  }
  trial.hint = p.place ? to_string(p.hint) : "none";
  trial.hint_fraction = p.hint_fraction;
  trial.traffic_bytes = p.traffic_bytes;
  trial.select_share = p.select_share;
  trial.select_seed = p.select_seed;
  trial.cycles = t.cycles;
  return trial;
}

std::uint64_t scatter_seed(const Placement& p, int repeat) {
  return p.select_share < 1.0 ? static_cast<std::uint64_t>(repeat) + 1 : 0;
}

std::vector<Placement> cap_placements(Placement base, std::uint64_t l2_bytes, int ways,
                                      std::uint64_t max_span) {
  if (ways <= 0 || base.set_aside_bytes == 0) return {};
  const std::uint64_t way_bytes = l2_bytes / static_cast<std::uint64_t>(ways);
  const std::uint64_t k = way_bytes ? base.set_aside_bytes / way_bytes : 0;
  const std::uint64_t bytes = k * way_bytes / kLine * kLine;
  if (bytes == 0) return {};
  for (std::uint64_t spread : {4, 3, 2}) {
    const std::uint64_t span = bytes * spread;
    if (max_span != 0 && span > max_span) continue;
    Placement even = base;
    even.group = "cap_even";
    even.region_offset = 0;
    even.region_bytes = bytes;
    even.select_share = 1.0;
    Placement scattered = even;
    scattered.group = "cap_scattered";
    scattered.region_bytes = span;
    scattered.select_share = 1.0 / static_cast<double>(spread);
    return {even, scattered};
  }
  return {};
}

namespace {

int cap_rule_code(const std::string& outcome) {
  for (const auto& l : finding::labels::kL2EvictLastCapRule)
    if (outcome == l.label) return l.code;
  return -1;
}

}  // namespace

void add_cap_rule(ExperimentResult& r, const analysis::residency::Samples& s,
                  const analysis::residency::Classifier& c, const FindingKey& key,
                  const std::string& method) {
  namespace rs = analysis::residency;
  std::vector<std::uint64_t> set_asides;
  for (const auto& t : s.trials)
    if (t.group == "cap_scattered" &&
        std::find(set_asides.begin(), set_asides.end(), t.set_aside_bytes) == set_asides.end())
      set_asides.push_back(t.set_aside_bytes);
  if (set_asides.empty()) return;
  std::sort(set_asides.begin(), set_asides.end());
  Curve table{"cap_rule",
              {"set_aside_bytes", "cap_ways", "even_kept", "scattered_kept", "predicted_per_set",
               "predicted_byte_budget", "outcome"},
              {}};
  nlohmann::json by_set_aside = nlohmann::json::object();
  rs::CapRuleVerdict v;
  for (auto b : set_asides) {
    v = rs::judge_cap_rule(s.trials, c, s.l2_bytes, s.l2_ways, b);
    table.rows.push_back({b, v.cap_ways, v.even_kept, v.scattered_kept, v.predicted_per_set,
                          v.predicted_byte_budget, v.outcome});
    by_set_aside[std::to_string(b)] = v.outcome;
  }
  // v: the largest set-aside's verdict.
  Finding f{key.name, static_cast<double>(cap_rule_code(v.outcome)),
            key.unit, v.confidence,
            method,   nlohmann::json::object()};
  f.extra = {{"label", v.outcome},
             {"set_aside_bytes", v.set_aside_bytes},
             {"cap_ways", v.cap_ways},
             {"lines_per_set", v.lines_per_set},
             {"even_kept", v.even_kept},
             {"scattered_kept", v.scattered_kept},
             {"predicted_per_set", v.predicted_per_set},
             {"predicted_byte_budget", v.predicted_byte_budget},
             {"z_per_set", v.z_per_set},
             {"z_byte_budget", v.z_byte_budget},
             {"z_between", v.z_between},
             {"sampled_lines_even", v.even_lines},
             {"sampled_lines_scattered", v.scattered_lines},
             {"outcome_by_set_aside_bytes", by_set_aside}};
  r.findings.push_back(f);
  table.hints = table_hints(
      "kept after traffic of 2 x L2, contiguous against scattered "
      "placement, and what each cap rule predicts");
  r.curves.push_back(table);
}

std::uint64_t whole_mib(double bytes) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  return std::max<std::uint64_t>(kMiB, static_cast<std::uint64_t>(bytes / kMiB) * kMiB);
}

nlohmann::json classification_statistics(const analysis::residency::Classifier& c) {
  return {{"threshold_cycles", c.threshold},
          {"there_median_cycles", c.there_median},
          {"gone_median_cycles", c.gone_median},
          {"separation", c.separation}};
}

}  // namespace gpuprobe::probes::residency
