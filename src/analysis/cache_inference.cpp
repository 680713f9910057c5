#include "analysis/cache_inference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <unordered_set>

#include "core/error.hpp"
#include "core/stats.hpp"

namespace gpuprobe::analysis::cache {

Calibration judge_calibration(std::vector<double> hits, std::vector<double> misses) {
  Calibration c;
  c.hits = std::move(hits);
  c.misses = std::move(misses);
  if (c.hits.size() < 3 || c.misses.size() < 3) return c;
  c.hit_cycles = stats::median(c.hits);
  c.miss_cycles = stats::median(c.misses);
  const double hi = stats::quantile(c.hits, 0.95), lo = stats::quantile(c.misses, 0.05);
  c.ok = hi < lo;
  // Above the hits' own spread (6 robust sigmas), and at least a tenth of the way to the misses
  // (a GPU's hits can be one exact value with rare stragglers), but never past the midpoint: a
  // level in between (a far-partition hit once a near copy was evicted) must count as a miss.
  const double sd = 1.4826 * stats::summarize(c.hits).mad;
  c.threshold =
      std::min(hi + std::max({6 * sd, 0.1 * (lo - hi), 0.02 * c.hit_cycles}), (hi + lo) / 2);
  return c;
}

std::string volume_verdict(int trials, int restored) {
  if (trials != kVolumeTrials || restored < 0 || restored > trials) return "";
  if (restored == trials) return "volume";
  if (restored <= 5) return "not_volume";
  return "undecided";
}

std::optional<double> near_home_threshold(const std::vector<double>& cold_cycles) {
  if (cold_cycles.size() < 8) return std::nullopt;
  // The optimal split (not an iterated one: from the extremes, one walk left in pulls it off).
  const auto sp = stats::two_means(stats::at_most_median_multiple(cold_cycles, 1.5).kept);
  if (!sp.found) return std::nullopt;
  const std::size_t quarter = cold_cycles.size() / 4;
  if (sp.low.size() < quarter || sp.high.size() < quarter ||
      stats::median(sp.high) < 1.1 * stats::median(sp.low))
    return std::nullopt;
  return sp.threshold;
}

std::uint64_t in_page_distance_gcd(const std::vector<std::uint64_t>& lines,
                                   std::uint32_t line_bytes, std::uint64_t contiguous_bytes) {
  std::uint64_t g = 0;
  if (line_bytes == 0) return 0;
  for (std::size_t i = 0; i < lines.size(); ++i)
    for (std::size_t k = i + 1; k < lines.size(); ++k) {
      const std::uint64_t a = lines[i] / line_bytes, b = lines[k] / line_bytes;
      if (contiguous_bytes != 0 && lines[i] / contiguous_bytes != lines[k] / contiguous_bytes)
        continue;
      if (a == b) continue;
      g = std::gcd(g, a > b ? a - b : b - a);
    }
  return g;
}

void judge_set_index_kind(SetIndexResult& r, const std::vector<std::uint64_t>& lines,
                          std::uint64_t ways, std::uint32_t line_bytes,
                          std::uint64_t capacity_bytes, std::uint64_t contiguous_bytes) {
  if (line_bytes == 0) {
    r.kind = SetIndexKind::kUnknown;
    return;
  }
  const std::uint64_t sets_from_capacity =
      capacity_bytes && ways ? capacity_bytes / (std::uint64_t{line_bytes} * ways) : 0;
  // The kind is judged on the physical bits; above them every flip changes the page.
  const int highest_physical = r.first_page_bit < 0 ? r.highest_bit_tested : r.first_page_bit - 1;
  std::vector<int> judged;
  for (int b : r.bits)
    if (r.first_page_bit < 0 || b < r.first_page_bit) judged.push_back(b);
  bool contiguous = !judged.empty() && judged.front() == r.lowest_bit_tested;
  for (std::size_t i = 1; i < judged.size(); ++i)
    contiguous = contiguous && judged[i] == judged[i - 1] + 1;
  const bool all_bits = contiguous && judged.back() == highest_physical;
  const bool pow2_sets = sets_from_capacity && !(sets_from_capacity & (sets_from_capacity - 1));
  // A modulo over m sets keeps a line's set only when the address moves by a multiple of
  // m lines: a pair of bits whose flip moves it by less than that (2^i + 2^j < m x line) and
  // keeps the set rules any modulo out.
  const auto in_range = [](int b) { return b >= 0 && b < 63; };
  const bool by_pair = sets_from_capacity &&
                       std::any_of(r.equal_pairs.begin(), r.equal_pairs.end(), [&](const auto& pr) {
                         return in_range(pr.first) && in_range(pr.second) &&
                                (std::uint64_t{1} << pr.first) + (std::uint64_t{1} << pr.second) <
                                    sets_from_capacity * line_bytes;
                       });
  r.member_distance_gcd_lines = in_page_distance_gcd(lines, line_bytes, contiguous_bytes);
  const bool by_distance = sets_from_capacity && r.member_distance_gcd_lines != 0 &&
                           r.member_distance_gcd_lines % sets_from_capacity != 0;
  const bool modulo_refuted = by_pair || by_distance;
  r.modulo_refuted = modulo_refuted;
  r.modulo_refuted_by = by_pair ? "equal_pair" : by_distance ? "member_distance" : "";
  if (r.bits.empty()) {
    r.kind = SetIndexKind::kSingleSet;
    r.sets = 1;
  } else if (contiguous && judged.size() < 63 && r.equal_pairs.empty() && r.page_bits.empty() &&
             !all_bits &&
             (!sets_from_capacity || sets_from_capacity == (std::uint64_t{1} << judged.size())) &&
             r.member_distance_gcd_lines % (std::uint64_t{1} << judged.size()) == 0) {
    r.kind = SetIndexKind::kModuloPowerOfTwo;
    r.sets = std::uint64_t{1} << judged.size();
  } else if (all_bits && sets_from_capacity && !pow2_sets && !modulo_refuted) {
    r.kind = SetIndexKind::kModuloNonPowerOfTwo;
    r.sets = sets_from_capacity;
  } else {
    r.kind = SetIndexKind::kXorHash;
    r.sets = sets_from_capacity;
  }
}

std::vector<int> simulate_set(PolicyClass policy, std::uint32_t ways,
                              const std::vector<int>& accesses) {
  // An independent reference for the hypotheses (not the model's implementation).
  std::vector<int> way_line(ways, -1);
  std::vector<std::uint64_t> stamp(ways, 0);
  std::vector<int> tree(ways, 0);  // node n (1..ways-1): 0 = victim on the left
  std::uint64_t now = 0;
  const auto plru_touch = [&](std::uint32_t w) {
    for (std::uint32_t node = w + ways; node > 1; node /= 2) tree[node / 2] = node % 2 == 0;
  };
  for (int a : accesses) {
    ++now;
    auto it = std::find(way_line.begin(), way_line.end(), a);
    if (it != way_line.end()) {
      const auto w = static_cast<std::uint32_t>(it - way_line.begin());
      if (policy == PolicyClass::kLru) stamp[w] = now;
      if (policy == PolicyClass::kTreePlru) plru_touch(w);
      continue;
    }
    std::uint32_t w = 0;
    auto empty = std::find(way_line.begin(), way_line.end(), -1);
    if (empty != way_line.end()) {
      w = static_cast<std::uint32_t>(empty - way_line.begin());
    } else if (policy == PolicyClass::kTreePlru) {
      std::uint32_t node = 1;
      while (node < ways) node = 2 * node + static_cast<std::uint32_t>(tree[node]);
      w = node - ways;
    } else {
      w = static_cast<std::uint32_t>(std::min_element(stamp.begin(), stamp.end()) - stamp.begin());
    }
    way_line[w] = a;
    stamp[w] = now;
    if (policy == PolicyClass::kTreePlru) plru_touch(w);
  }
  std::vector<int> resident;
  for (int l : way_line)
    if (l >= 0) resident.push_back(l);
  std::sort(resident.begin(), resident.end());
  return resident;
}

std::vector<std::uint64_t> out_of_set_lines(const ConflictSet& set, const std::vector<int>& bits,
                                            int first_page_bit, std::uint64_t buffer_bytes) {
  std::vector<std::uint64_t> out;
  const std::unordered_set<std::uint64_t> members(set.lines.begin(), set.lines.end());
  std::unordered_set<std::uint64_t> seen;
  for (std::uint64_t m : set.lines)
    for (int b : bits) {
      if (first_page_bit >= 0 && b >= first_page_bit) continue;
      const std::uint64_t f = m ^ (std::uint64_t{1} << b);
      if (f >= buffer_bytes || members.count(f) || !seen.insert(f).second) continue;
      out.push_back(f);
    }
  return out;
}

namespace {

template <class Enum, std::size_t N>
Enum parse_label(const char* what, const std::string& text,
                 const std::pair<Enum, const char*> (&labels)[N]) {
  for (const auto& [value, label] : labels)
    if (text == label) return value;
  std::string allowed;
  for (const auto& [value, label] : labels)
    allowed += std::string(allowed.empty() ? "" : ", ") + "\"" + label + "\"";
  throw UsageError(std::string(what) + " \"" + text + "\" is not one of " + allowed);
}

template <class Enum, std::size_t N>
std::string label_of(Enum v, const std::pair<Enum, const char*> (&labels)[N]) {
  for (const auto& [value, label] : labels)
    if (value == v) return label;
  return "";
}

constexpr std::pair<SetIndexKind, const char*> kSetIndexKinds[] = {
    {SetIndexKind::kUnknown, "unknown"},
    {SetIndexKind::kSingleSet, "single_set"},
    {SetIndexKind::kModuloPowerOfTwo, "modulo_power_of_two"},
    {SetIndexKind::kModuloNonPowerOfTwo, "modulo_non_power_of_two"},
    {SetIndexKind::kXorHash, "xor_hash"}};
constexpr std::pair<VictimClass, const char*> kVictimClasses[] = {
    {VictimClass::kNotJudged, ""},
    {VictimClass::kGlobalLru, "global_lru"},
    {VictimClass::kOwnSet, "own_set"},
    {VictimClass::kRandom, "random"},
    {VictimClass::kRandomSet, "random_set"},
    {VictimClass::kSetCycle, "set_cycle"},
    {VictimClass::kNone, "none"}};
constexpr std::pair<PolicyClass, const char*> kPolicyClasses[] = {
    {PolicyClass::kLru, "lru"},
    {PolicyClass::kFifo, "fifo"},
    {PolicyClass::kTreePlru, "tree_plru"},
    {PolicyClass::kRandom, "random"},
    {PolicyClass::kNone, "none"}};

}  // namespace

std::string to_string(SetIndexKind k) { return label_of(k, kSetIndexKinds); }
std::string to_string(VictimClass v) { return label_of(v, kVictimClasses); }
std::string to_string(PolicyClass c) { return label_of(c, kPolicyClasses); }

std::string PolicyResult::label() const {
  std::string out;
  for (std::size_t i = 0; i < classes.size(); ++i) out += (i ? "|" : "") + to_string(classes[i]);
  return out;
}

void to_json(nlohmann::json& j, const SetIndexResult& r) {
  nlohmann::json pairs = nlohmann::json::array();
  for (auto [a, b] : r.equal_pairs) pairs.push_back({a, b});
  j = {{"bits", r.bits},
       {"equal_pairs", pairs},
       {"kind", to_string(r.kind)},
       {"sets", r.sets},
       {"lowest_bit_tested", r.lowest_bit_tested},
       {"highest_bit_tested", r.highest_bit_tested},
       {"first_page_bit", r.first_page_bit},
       {"page_bits", r.page_bits},
       {"modulo_refuted", r.modulo_refuted},
       {"modulo_refuted_by", r.modulo_refuted_by},
       {"member_distance_gcd_lines", r.member_distance_gcd_lines},
       {"tests", r.tests},
       {"pair_tests", r.pair_tests}};
}

void from_json(const nlohmann::json& j, SetIndexResult& r) {
  r = SetIndexResult{};
  r.bits = j.at("bits").get<std::vector<int>>();
  for (const auto& pr : j.at("equal_pairs"))
    r.equal_pairs.emplace_back(pr.at(0).get<int>(), pr.at(1).get<int>());
  r.kind = parse_label("set_index: kind", j.at("kind").get<std::string>(), kSetIndexKinds);
  r.tests = j.at("tests");
  r.sets = j.value("sets", std::uint64_t{0});
  r.lowest_bit_tested = j.value("lowest_bit_tested", 0);
  r.highest_bit_tested = j.value("highest_bit_tested", 0);
  r.first_page_bit = j.value("first_page_bit", -1);
  r.page_bits = j.value("page_bits", std::vector<int>{});
  r.modulo_refuted = j.value("modulo_refuted", false);
  r.modulo_refuted_by = j.value("modulo_refuted_by", std::string());
  r.member_distance_gcd_lines = j.value("member_distance_gcd_lines", std::uint64_t{0});
  r.pair_tests = j.value("pair_tests", nlohmann::json::array());
}

void to_json(nlohmann::json& j, const DataVictimResult& r) {
  j = {{"measured", r.measured},
       {"note", r.note},
       {"lines_held", r.lines_held},
       {"filled", r.filled},
       {"filled_cycle", r.filled_cycle},
       {"victim", to_string(r.victim)},
       {"groups", r.groups},
       {"oldest_probed", r.oldest_probed},
       {"oldest_evicted", r.oldest_evicted},
       {"own_probed", r.own_probed},
       {"own_evicted", r.own_evicted},
       {"bin_probed", r.bin_probed},
       {"bin_evicted", r.bin_evicted},
       {"misfit_z", r.misfit_z},
       {"rejected_z", r.rejected_z},
       {"probes", r.probes},
       {"evidence", r.evidence}};
}

void from_json(const nlohmann::json& j, DataVictimResult& r) {
  r = DataVictimResult{};
  r.measured = j.value("measured", false);
  r.note = j.value("note", std::string());
  r.victim = parse_label("data_victim: victim", j.at("victim").get<std::string>(), kVictimClasses);
  r.lines_held = j.at("lines_held").get<std::uint64_t>();
  r.filled = j.at("filled").get<std::uint64_t>();
  r.filled_cycle = j.value("filled_cycle", std::uint64_t{0});
  r.groups = j.value("groups", nlohmann::json::array());
  r.oldest_probed = j.at("oldest_probed").get<std::size_t>();
  r.oldest_evicted = j.at("oldest_evicted").get<std::size_t>();
  r.own_probed = j.at("own_probed").get<std::size_t>();
  r.own_evicted = j.at("own_evicted").get<std::size_t>();
  r.bin_probed = j.at("bin_probed").get<std::vector<std::size_t>>();
  r.bin_evicted = j.at("bin_evicted").get<std::vector<std::size_t>>();
  r.misfit_z = j.at("misfit_z").get<std::map<std::string, double>>();
  r.rejected_z = j.at("rejected_z").get<double>();
  r.probes = j.value("probes", std::size_t{0});
  r.evidence = j.value("evidence", nlohmann::json::array());
}

double predicted_eviction(VictimClass cls, std::uint64_t line, std::uint64_t fill,
                          const VictimFills& f) {
  const std::uint64_t lo = f.lines_held;
  const double evictions = static_cast<double>(fill - lo);
  const double x = evictions / static_cast<double>(f.sets);  // evictions per set
  const double rank = f.rank[line];
  switch (cls) {
    case VictimClass::kGlobalLru:
      return line < fill - lo ? 1.0 : 0.0;
    case VictimClass::kOwnSet:
      return (fill == f.filled ? f.own_victims : f.own_victims_cycle).count(line) ? 1.0 : 0.0;
    case VictimClass::kRandom:
      return 1.0 - std::pow(1.0 - 1.0 / static_cast<double>(lo), evictions);
    case VictimClass::kSetCycle:
      return std::clamp(x - rank, 0.0, 1.0);
    default:
      break;
  }
  // random_set: gone when its set was drawn more than `rank` times (Poisson, mean x).
  double term = std::exp(-x), below = 0;
  for (int j = 0; j <= static_cast<int>(rank); ++j) {
    below += term;
    term *= x / (j + 1);
  }
  return std::clamp(1.0 - below, 0.0, 1.0);
}

void judge_data_victim(DataVictimResult& r, const std::vector<VictimGroup>& groups,
                       const VictimFills& f) {
  for (const auto& g : groups) {
    if (g.name == "oldest") {
      r.oldest_probed = g.probed;
      r.oldest_evicted = g.evicted;
    } else if (g.name == "own_set") {
      r.own_probed = g.probed;
      r.own_evicted = g.evicted;
    } else if (g.name.rfind("age_bin_", 0) == 0) {
      r.bin_probed.push_back(g.probed);
      r.bin_evicted.push_back(g.evicted);
    }
  }
  // A class's misfit z is the largest, over the groups, of |observed - predicted rate| / se, se
  // the binomial spread of the predicted rate kept within [5 %, 95 %]: one probe is one load's
  // timing, so a prediction of certainty allows a stray probe in twenty.
  const auto misfit = [&](VictimClass cls) {
    double worst = 0;
    for (const auto& g : groups) {
      if (g.probed == 0) continue;
      double pred = 0;
      for (std::uint64_t line : g.lines) pred += predicted_eviction(cls, line, g.fill, f);
      const double n = static_cast<double>(g.probed);
      pred /= n;
      const double q = std::clamp(pred, 0.05, 0.95);
      const double se = std::sqrt(q * (1 - q) / n);
      worst = std::max(worst, std::fabs(static_cast<double>(g.evicted) / n - pred) / se);
    }
    return worst;
  };
  std::map<std::string, VictimClass> by_name;
  for (VictimClass cls : {VictimClass::kGlobalLru, VictimClass::kOwnSet, VictimClass::kRandom,
                          VictimClass::kRandomSet, VictimClass::kSetCycle}) {
    r.misfit_z[to_string(cls)] = misfit(cls);
    by_name[to_string(cls)] = cls;
  }
  std::string best;
  for (const auto& [cls, z] : r.misfit_z)
    if (best.empty() || z < r.misfit_z[best]) best = cls;
  // Consistent within 3 standard errors in every group: that class; else none of them.
  r.victim = r.misfit_z[best] <= kMisfitZ ? by_name.at(best) : VictimClass::kNone;
  double rejected = std::numeric_limits<double>::infinity();
  for (const auto& [cls, z] : r.misfit_z)
    if (cls != to_string(r.victim)) rejected = std::min(rejected, z);
  r.rejected_z = rejected;
}

}  // namespace gpuprobe::analysis::cache
