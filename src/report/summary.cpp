#include "report/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/finding_names.hpp"
#include "core/finding_value.hpp"
#include "report/chart.hpp"
#include "report/finding_index.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;
namespace fk = finding;

double number_at(const json& j, const char* key, double fallback = 0) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string string_at(const json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

/// The typed text of a finding, or "-" when the run has none.
std::string shown(const FindingIndex& idx, const std::string& name) {
  const json* f = idx.get(name);
  return f ? display_text(*f) : "-";
}

/// A fraction finding as a percentage ("62.5 %"), "-" when absent.
std::string percent_of(const FindingIndex& idx, const std::string& name) {
  const json* f = idx.get(name);
  if (!f || !f->contains("value") || !f->at("value").is_number()) return "-";
  return format_number(100.0 * f->at("value").get<double>()) + " %";
}

std::string cycles(const FindingIndex& idx, const std::string& name) {
  const json* f = idx.get(name);
  if (!f) return "-";
  return format_number(f->at("value").get<double>(), number_at(*f, "standard_error")) + " cy";
}

std::string nanoseconds(const FindingIndex& idx, const std::string& name) {
  const json* f = idx.get(name);
  if (!f || !f->contains("value_ns") || !(*f)["value_ns"].is_number()) return "-";
  return format_number((*f)["value_ns"].get<double>()) + " ns";
}

std::string bytes(double v) {
  const auto [text, unit] = format_quantity(v, "bytes");
  return text + " " + unit;
}

std::string line_and_sector(const FindingIndex& idx, const std::string& line,
                            const std::string& sector) {
  const json* l = idx.get(line);
  const json* s = idx.get(sector);
  if (!l && !s) return "-";
  const auto part = [](const json* f) {
    return f ? format_number(f->at("value").get<double>()) + " B" : std::string("-");
  };
  return part(l) + " / " + part(s);
}

std::string geometry(const FindingIndex& idx, const std::string& ways, const std::string& sets) {
  const json* w = idx.get(ways);
  const json* s = idx.get(sets);
  if (!w) return "-";
  std::string g = format_number(w->at("value").get<double>());
  if (s) g += " x " + format_number(s->at("value").get<double>());
  return g;
}

std::string policy(const FindingIndex& idx, const std::string& name) {
  const json* f = idx.get(name);
  return f ? typed_value(*f).text : "-";
}

std::string percent_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %%", p);
  return buf;
}

void run_lines(const json& result, SummaryCard& card) {
  const json& d = result.value("device", json::object());
  const json& env = result.value("environment", json::object());
  const json& nvml = env.is_object() ? env.value("nvml", json::object()) : json::object();
  const json& tool = result.value("tool", json::object());
  std::string cc = string_at(d, "compute_capability");
  cc.erase(std::remove(cc.begin(), cc.end(), '.'), cc.end());
  card.title = string_at(d, "name").empty() ? "unknown GPU" : string_at(d, "name");
  std::string props = cc.empty() ? "" : "sm_" + cc;
  if (number_at(d, "sm_count") > 0)
    props += (props.empty() ? "" : ", ") + format_number(number_at(d, "sm_count")) + " SMs";
  if (number_at(d, "global_memory_bytes") > 0)
    props += (props.empty() ? "" : ", ") + bytes(number_at(d, "global_memory_bytes"));
  if (!props.empty()) card.title += " (" + props + ")";
  std::string line = "card " + (string_at(d, "uuid").empty() ? "-" : string_at(d, "uuid"));
  if (!string_at(nvml, "driver_version").empty())
    line += ", driver " + string_at(nvml, "driver_version");
  card.run_lines.push_back(line);
  line = "max clocks:";
  if (number_at(d, "sm_clock_max_mhz") > 0)
    line += " SM " + format_number(number_at(d, "sm_clock_max_mhz")) + " MHz";
  if (number_at(d, "mem_clock_max_mhz") > 0)
    line += std::string(line.back() == ':' ? "" : ",") + " memory " +
            format_number(number_at(d, "mem_clock_max_mhz")) + " MHz";
  if (line.back() == ':') line += " unknown";
  card.run_lines.push_back(line);
  std::string sha = string_at(tool, "git_sha").substr(0, 7);
  line =
      "run  " + (string_at(result, "started_utc").empty() ? "-" : string_at(result, "started_utc"));
  if (result.contains("wall_s") && result["wall_s"].is_number())
    line += ", " + format_number(std::round(number_at(result, "wall_s") * 10) / 10) + " s";
  line += ", gpuprobe " + (string_at(tool, "version").empty() ? "?" : string_at(tool, "version"));
  if (!sha.empty()) line += " (" + sha + ")";
  std::size_t passed = 0, waived = 0, failed = 0;
  for (const auto& e : result.value("experiments", json::array())) {
    const std::string s = e.is_object() ? string_at(e, "status") : "";
    (s == "passed" ? passed : s == "waived" ? waived : failed) += 1;
  }
  card.run_lines.push_back(line);
  line = "experiments: " + std::to_string(passed) + " passed, " + std::to_string(waived) +
         " waived, " + std::to_string(failed) + " failed";
  if (result.value("complete", true) == false) line += " (INCOMPLETE: the run was interrupted)";
  card.run_lines.push_back(line);
}

/// One level of the hierarchy: which findings fill its row ("" = none), and a device field for
/// its capacity where no finding measures it (shared memory, DRAM).
struct LevelSpec {
  const char* name;
  const char* scope;
  int depth;
  std::string latency, capacity, bandwidth, line, sector, ways, sets, policy;
  const char* device_capacity;  ///< a device field in bytes, or nullptr
  const char* fixed_line;       ///< shown as line/sector when no finding measures it, or nullptr
  /// latency.chase's finding for the level's default load, shown where latency.sweep did not
  /// run (the quick profile), or "".
  std::string chase_latency = "";
};

void hierarchy(const json& result, const FindingIndex& idx, SummaryCard& card) {
  const json& d = result.value("device", json::object());
  const LevelSpec levels[] = {
      {"L1", "per SM", 0, fk::kL1HitLatency, fk::kL1Capacity, fk::kHierarchyL1ReadBandwidth,
       fk::kCacheL1LineSize, fk::kCacheL1FetchGranularity, fk::kCacheL1Ways, fk::kCacheL1Sets,
       fk::kCacheL1Replacement, nullptr, nullptr, "l1.hit_latency.default"},
      {"shared memory", "per SM", 0, fk::kSharedLatency, "", fk::kSmemBandwidth, "", "", "", "", "",
       "shared_per_sm_bytes", "32 banks"},
      {"L2 near partition", "per SM group", 1, fk::kL2HitLatency, fk::kL2NearCapacity, "",
       fk::kCacheL2LineSize, fk::kCacheL2FillGranularity, "cache.l2.ways", "cache.l2.sets",
       "cache.l2.replacement", nullptr, nullptr, "l2.hit_latency.default"},
      {"L2 far partition", "whole GPU", 2, fk::kL2FarHitLatency, fk::kL2Capacity,
       fk::kHierarchyL2ReadBandwidth, "", "", "", "", "", nullptr, nullptr},
      {"DRAM", "whole GPU", 3, fk::kDramLatency, "", fk::kDramReadBandwidth, "", "", "", "", "",
       "global_memory_bytes", nullptr, "dram.latency.default"},
  };
  for (const LevelSpec& l : levels) {
    // A level is shown when any finding of its row was measured; else it is named as missing.
    const std::string& latency =
        !idx.get(l.latency) && !l.chase_latency.empty() && idx.get(l.chase_latency)
            ? l.chase_latency
            : l.latency;
    bool any = false;
    for (const std::string* n : {&latency, &l.capacity, &l.bandwidth, &l.ways})
      any = any || (!n->empty() && idx.get(*n));
    if (!any) {
      card.not_measured.push_back(l.name);
      continue;
    }
    LevelRow r;
    r.name = l.name;
    r.scope = l.scope;
    r.depth = l.depth;
    r.latency = cycles(idx, latency);
    r.latency_ns = nanoseconds(idx, latency);
    r.capacity = !l.capacity.empty() ? shown(idx, l.capacity)
                 : l.device_capacity && number_at(d, l.device_capacity) > 0
                     ? bytes(number_at(d, l.device_capacity))
                     : "-";
    r.bandwidth = l.bandwidth.empty() ? "-" : shown(idx, l.bandwidth);
    r.line = l.fixed_line     ? l.fixed_line
             : l.line.empty() ? "-"
                              : line_and_sector(idx, l.line, l.sector);
    r.geometry = l.ways.empty() ? "-" : geometry(idx, l.ways, l.sets);
    r.policy = l.policy.empty() ? "-" : policy(idx, l.policy);
    card.levels.push_back(r);
  }
}

/// "Prefetch: none seen (DRAM -> L2, L2 -> L1)" or the reach of what was seen.
void prefetch_line(const FindingIndex& idx, SummaryCard& card) {
  const std::pair<const char*, const char*> levels[] = {{"prefetch.dram_to_l2", "DRAM -> L2"},
                                                        {"prefetch.l2_to_l1", "L2 -> L1"}};
  std::string none, seen;
  for (const auto& [name, words] : levels) {
    const json* f = idx.get(name);
    if (!f) continue;
    if (f->value("value", 0.0) == 0.0) {
      none += std::string(none.empty() ? "" : ", ") + words;
      continue;
    }
    seen += std::string(seen.empty() ? "" : "; ") + words + " for strides up to " +
            bytes(number_at(*f, "max_stride_bytes")) + ", " +
            format_number(number_at(*f, "max_distance_strides")) + " strides ahead";
  }
  if (none.empty() && seen.empty()) return;
  std::string s = "Prefetch: " + seen;
  if (!none.empty()) s += std::string(seen.empty() ? "" : "; ") + "none seen (" + none + ")";
  card.structure_lines.push_back(s);
}

/// "L2 persisting: ..." from cache.l2.persisting and cache.l2.eviction_priority.
void residency_line(const FindingIndex& idx, SummaryCard& card) {
  const json* max = idx.get(fk::kL2PersistingMaxSetAside.name);
  const json* last = idx.get(fk::kL2EvictLastProtects.name);
  if (!max && !last) return;
  std::string s = "L2 persisting:";
  if (max)
    s += " set-aside up to " + display_text(*max) + ", keeps " +
         shown(idx, fk::kL2PersistingCapacity.name) + " (rule " +
         shown(idx, fk::kL2PersistingRule.name) + ");";
  if (last)
    s += " evict_last outlasts plain loads: " + display_text(*last) + ", holds at most " +
         percent_of(idx, fk::kL2EvictLastMaxShare.name) +
         " of the L2; evict_first goes first: " + shown(idx, fk::kL2EvictFirstGoesFirst.name);
  const std::string last_cap = idx.get(fk::kL2EvictLastCapRule.name)
                                   ? shown(idx, fk::kL2EvictLastCapRule.name)
                                   : std::string();
  const std::string window_cap = idx.get(fk::kL2PersistingCapRule.name)
                                     ? shown(idx, fk::kL2PersistingCapRule.name)
                                     : std::string();
  if (!last_cap.empty() && last_cap == window_cap)
    s += "; the cap on evict_last and persisting-window lines applies " + last_cap;
  else {
    if (!last_cap.empty()) s += "; evict_last's cap applies " + last_cap;
    if (!window_cap.empty()) s += "; persisting windows' cap applies " + window_cap;
  }
  if (idx.get(fk::kL2DiscardDropsDirty.name))
    s += "; discard.global.L2 drops dirty data (no write-back): " +
         shown(idx, fk::kL2DiscardDropsDirty.name);
  card.structure_lines.push_back(s);
}

void structure(const FindingIndex& idx, SummaryCard& card) {
  if (const json* groups = idx.get(fk::kL2PartitionSmGroupSizes)) {
    std::string s = "L2 partitions: groups of " + display_text(*groups) + ", each near one";
    if (const json* mask = idx.get(fk::kL2PartitionHashMask))
      s += "; a line's home = parity(address & " + typed_value(*mask).text + ")";
    card.structure_lines.push_back(s);
  }
  if (idx.get(fk::kL2FarHitLatency) || idx.get(finding_key::kReplication)) {
    std::string s = "L2 replicas of far lines: " + policy(idx, finding_key::kReplication);
    if (idx.get(fk::kL2ReplicaCapacity))
      s += " (kept near up to " + shown(idx, fk::kL2ReplicaCapacity) + ")";
    if (idx.get(fk::kL2MixedLatency)) s += "; mixed region " + cycles(idx, fk::kL2MixedLatency);
    card.structure_lines.push_back(s);
  }
  if (idx.get(fk::kTlbLevels)) {
    const double levels = idx.value(fk::kTlbLevels);
    std::string s = "TLB: " + format_number(levels) + (levels == 1 ? " level" : " levels");
    if (idx.get(fk::kTlbL1Entries))
      s += ", first level " + shown(idx, fk::kTlbL1Entries) + " x " + shown(idx, fk::kTlbPageSize) +
           " pages = " + shown(idx, fk::kTlbL1Reach) + " reach";
    if (idx.get(fk::kTlbL1MissPenalty)) s += ", miss +" + cycles(idx, fk::kTlbL1MissPenalty);
    card.structure_lines.push_back(s);
  } else {
    card.not_measured.push_back("TLB");
  }
  prefetch_line(idx, card);
  residency_line(idx, card);
}

void add_ceiling(SummaryCard& card, const FindingIndex& idx, const std::string& group,
                 const std::string& label, const std::string& name, std::optional<double> peak,
                 const std::string& peak_words) {
  const json* f = idx.get(name);
  if (!f) {
    card.not_measured.push_back(group + " " + label);
    return;
  }
  Ceiling c{group, label, display_text(*f), std::nullopt, peak_words};
  const double v = f->at("value").get<double>();
  if (f->contains("percent_of_peak") && (*f)["percent_of_peak"].is_number())
    c.percent = (*f)["percent_of_peak"].get<double>();
  else if (peak && *peak > 0)
    c.percent = v / *peak * 100;
  card.ceilings.push_back(c);
}

void ceilings(const json& result, const FindingIndex& idx, SummaryCard& card) {
  const json& d = result.value("device", json::object());
  const double dram_peak = number_at(d, "dram_bandwidth_theoretical_gb_s");
  const std::string dram_words =
      "of " + format_number(dram_peak) + " GB/s (memory clock x 2 x bus width)";
  add_ceiling(card, idx, "DRAM", "read", fk::kDramReadBandwidth, dram_peak, dram_words);
  add_ceiling(card, idx, "DRAM", "write", fk::kDramWriteBandwidth, dram_peak, dram_words);
  add_ceiling(card, idx, "DRAM", "copy", fk::kDramCopyBandwidth, dram_peak, dram_words);
  add_ceiling(card, idx, "on chip", "L2 read", fk::kHierarchyL2ReadBandwidth, std::nullopt,
              "no published peak");
  add_ceiling(card, idx, "on chip", "L1 read", fk::kHierarchyL1ReadBandwidth, 128.0,
              "of 128 B/clk/SM");
  add_ceiling(card, idx, "on chip", "shared", fk::kSmemBandwidth, 128.0,
              "of 128 B/clk/SM (32 banks x 4 B)");
  add_ceiling(card, idx, "compute", "FFMA", fk::kComputeFfmaThroughput, std::nullopt,
              "of the FMA units per SM");
  // WGMMA: dense 16-bit tensor peak, 4096 FLOP per clock per SM on sm_90, at the max SM clock.
  const std::string cc = string_at(d, "compute_capability");
  if (cc == "9.0") {
    const std::string name = idx.get(fk::kHopperWgmmaBf16Tflops)
                                 ? std::string(fk::kHopperWgmmaBf16Tflops)
                                 : std::string("hopper.wgmma.f16.tflops");
    const double peak =
        4096.0 * number_at(d, "sm_count") * number_at(d, "sm_clock_max_mhz") * 1e6 / 1e12;
    add_ceiling(card, idx, "compute", "WGMMA bf16", name, peak,
                "of " + format_number(std::round(peak)) +
                    " TFLOP/s (4096 FLOP/clk/SM x SMs x max SM clock)");
  }
  add_ceiling(card, idx, "links", "host to GPU", "link.host.h2d.pinned.copy_engine.bandwidth",
              std::nullopt, "pinned, copy engine; the PCIe peak is not recorded");
  add_ceiling(card, idx, "links", "GPU to host", "link.host.d2h.pinned.copy_engine.bandwidth",
              std::nullopt, "pinned, copy engine; the PCIe peak is not recorded");
  // Peer links only where measured (two or more GPUs).
  const json* best_peer = nullptr;
  for (const json* f : idx.all()) {
    const std::string n = string_at(*f, "name");
    if (n.rfind("link.peer.", 0) == 0 && string_at(*f, "unit") == "GB/s" &&
        (!best_peer || number_at(*f, "value") > number_at(*best_peer, "value")))
      best_peer = f;
  }
  if (best_peer)
    add_ceiling(card, idx, "links", "GPU to GPU (best pair)", string_at(*best_peer, "name"),
                std::nullopt, "peer copy");
  // Ceilings not measured are named by group where the whole group is missing.
  std::vector<std::string> kept;
  for (const std::string group : {"DRAM", "on chip", "compute", "links"}) {
    std::vector<std::string> missing;
    for (const auto& n : card.not_measured)
      if (n.rfind(group + " ", 0) == 0) missing.push_back(n);
    bool any = false;
    for (const auto& c : card.ceilings) any = any || c.group == group;
    if (!any && !missing.empty())
      kept.push_back(group + " ceilings");
    else
      for (const auto& m : missing) kept.push_back(m);
  }
  std::vector<std::string> others;
  for (const auto& n : card.not_measured)
    if (n.find(' ') == std::string::npos ||
        (n.rfind("DRAM ", 0) != 0 && n.rfind("on chip ", 0) != 0 && n.rfind("compute ", 0) != 0 &&
         n.rfind("links ", 0) != 0))
      others.push_back(n);
  others.insert(others.end(), kept.begin(), kept.end());
  card.not_measured = others;
}

void run_warnings(const json& result, SummaryCard& card) {
  const auto ex = result.find("experiments");
  if (ex == result.end() || !ex->is_array()) return;
  std::map<std::string, std::vector<std::string>> counters_by_reason;
  std::vector<std::string> drifted;
  for (const auto& e : *ex) {
    if (!e.is_object()) continue;
    const std::string id = string_at(e, "id");
    const auto s = e.find("samples");
    if (s != e.end() && s->is_object() && s->contains("counters") && (*s)["counters"].is_object() &&
        string_at((*s)["counters"], "status") != "read")
      counters_by_reason[string_at((*s)["counters"], "reason")].push_back(id);
    const auto c = e.find("clocks");
    if (c != e.end() && c->is_object() &&
        (c->value("sm_clock_drift_flagged", false) == true || c->value("throttled", false) == true))
      drifted.push_back(id);
  }
  // At most a few experiments named per line, so that the card stays on one screen.
  const auto some = [](const std::vector<std::string>& ids) {
    std::string s;
    for (std::size_t i = 0; i < ids.size() && i < 4; ++i) s += (i ? ", " : "") + ids[i];
    if (ids.size() > 4) s += " and " + std::to_string(ids.size() - 4) + " more";
    return s;
  };
  for (const auto& [reason, ids] : counters_by_reason)
    card.warnings.push_back("counters not read for " + some(ids) + ": " + reason);
  if (!drifted.empty())
    card.warnings.push_back("warning: SM clock drift over 2 % or throttling during " +
                            some(drifted) + " (see each experiment's clocks)");
}

void doubts(const FindingIndex& idx, SummaryCard& card) {
  card.doubts = idx.errors();
  for (const json* f : idx.all()) {
    const std::string n = string_at(*f, "name");
    if (n.find(".counters.disagreement.") != std::string::npos) {
      card.doubts.push_back({idx.experiment_of(f), n, "counters disagree with the timing"});
      continue;
    }
    const double c = number_at(*f, "confidence", 1);
    if (c < 0.5) {
      char buf[40];  // floored, so that 0.499 never reads as 0.50
      std::snprintf(buf, sizeof(buf), "%.2f", std::floor(c * 100 + 1e-9) / 100);
      card.doubts.push_back({idx.experiment_of(f), n, buf});
    }
  }
}

/// `s` padded to `w` columns, and always followed by at least one space (cells never touch).
std::string pad(const std::string& s, std::size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

/// Tokens joined by spaces into lines of at most `width` columns: the first line starts with
/// `first`, the others with `rest`.
std::vector<std::string> wrap_tokens(const std::vector<std::string>& tokens,
                                     const std::string& first, const std::string& rest,
                                     std::size_t width) {
  std::vector<std::string> lines;
  std::string cur = first;
  bool empty = true;
  for (const auto& w : tokens) {
    if (!empty && cur.size() + 1 + w.size() > width) {
      lines.push_back(cur);
      cur = rest;
      empty = true;
    }
    cur += (empty ? "" : " ") + w;
    empty = false;
  }
  if (!empty) lines.push_back(cur);
  return lines;
}

/// Items joined with ", " into wrapped lines (an item is never broken).
std::vector<std::string> wrap(std::vector<std::string> items, const std::string& first,
                              const std::string& rest, std::size_t width) {
  for (std::size_t i = 0; i + 1 < items.size(); ++i) items[i] += ",";
  return wrap_tokens(items, first, rest, width);
}

/// A sentence broken at spaces into wrapped lines.
std::vector<std::string> wrap_words(const std::string& text, const std::string& first,
                                    const std::string& rest, std::size_t width) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return wrap_tokens(words, first, rest, width);
}

std::string ceiling_words(const Ceiling& c) {
  std::string s = c.label + " " + c.measured;
  if (c.percent) s += " (" + percent_text(*c.percent) + ")";
  return s;
}

}  // namespace

SummaryCard summary_card(const json& result) {
  SummaryCard card;
  if (!result.is_object()) return card;
  const FindingIndex idx(result);
  const json& d = result.value("device", json::object());
  card.simulated = string_at(d, "kind") == "model" || string_at(result, "command") == "replay";
  if (string_at(result, "command") == "replay")
    card.simulated_what = "a replay on the model exported from a measured result";
  else if (card.simulated)
    card.simulated_what = "a modelled GPU";
  run_lines(result, card);
  hierarchy(result, idx, card);
  structure(idx, card);
  ceilings(result, idx, card);
  doubts(idx, card);
  run_warnings(result, card);
  return card;
}

std::string summary_text(const SummaryCard& card) {
  std::vector<std::string> out;
  if (card.simulated)
    out.push_back("SIMULATED: " + card.simulated_what + ", not measured on hardware");
  out.push_back(card.title);
  for (const auto& l : card.run_lines) out.push_back("  " + l);
  if (!card.levels.empty()) {
    out.push_back("");
    out.push_back(pad("memory hierarchy", 20) + pad("latency", 19) + pad("capacity", 11) +
                  pad("bandwidth", 16) + pad("line/sector", 14) + pad("ways x sets", 12) +
                  "policy");
    for (std::size_t i = 0; i < card.levels.size(); ++i) {
      const LevelRow& r = card.levels[i];
      const std::string lat = r.latency + (r.latency_ns == "-" ? "" : " " + r.latency_ns);
      out.push_back(pad("  " + r.name, 20) + pad(lat, 19) + pad(r.capacity, 11) +
                    pad(r.bandwidth, 16) + pad(r.line, 14) + pad(r.geometry, 12) + r.policy);
    }
  }
  for (const auto& s : card.structure_lines)
    for (const auto& l : wrap_words(s, "  ", "    ", 100)) out.push_back(l);
  if (!card.ceilings.empty()) {
    out.push_back("");
    out.push_back("ceilings (measured, and % of the theoretical peak where one is known)");
    std::map<std::string, std::vector<std::string>> by_group;
    std::vector<std::string> groups;
    for (const auto& c : card.ceilings) {
      if (!by_group.count(c.group)) groups.push_back(c.group);
      by_group[c.group].push_back(ceiling_words(c));
    }
    for (const auto& g : groups)
      for (const auto& l : wrap(by_group[g], "  " + pad(g + ":", 9), std::string(11, ' '), 100))
        out.push_back(l);
  }
  out.push_back("");
  for (const auto& w : card.warnings)
    for (const auto& l : wrap_words(w, "", "  ", 100)) out.push_back(l);
  if (card.doubts.empty()) {
    out.push_back("uncertain: none (every finding has confidence >= 0.5 and every check passed)");
  } else {
    // Named one by one, or per experiment where it has more than two.
    std::map<std::string, std::vector<const Doubt*>> by_experiment;
    std::vector<std::string> order;
    for (const auto& d : card.doubts) {
      if (!by_experiment.count(d.experiment)) order.push_back(d.experiment);
      by_experiment[d.experiment].push_back(&d);
    }
    std::vector<std::string> words;
    for (const auto& ex : order) {
      const auto& ds = by_experiment[ex];
      if (ds.size() <= 2) {
        for (const Doubt* d : ds) words.push_back(d->name + " (" + d->why + ")");
      } else {
        words.push_back(ex + ": " + std::to_string(ds.size()) + " findings");
      }
    }
    auto lines = wrap(words, "  ", "  ", 100);
    out.push_back("uncertain (" + std::to_string(card.doubts.size()) +
                  "): confidence below 0.5 (in parentheses), failed checks, counter disagreements");
    const std::size_t room = out.size() + 3 <= 30 ? 30 - out.size() - 2 : 1;
    if (lines.size() > room) {
      const std::size_t left = lines.size() - room + 1;
      lines.resize(room - 1);
      lines.push_back("  ... and " + std::to_string(left) + " more lines (see FINDINGS.md)");
    }
    for (const auto& l : lines) out.push_back(l);
  }
  if (!card.not_measured.empty()) {
    std::string words;
    for (std::size_t i = 0; i < card.not_measured.size(); ++i)
      words += (i ? ", " : "") + card.not_measured[i];
    for (const auto& l : wrap_words(words, "not measured in this run: ", "  ", 100))
      if (out.size() < 29) out.push_back(l);
  }
  // The card is one screen: whatever still runs past 29 lines is cut, and said.
  if (out.size() > 29) {
    const std::size_t cut = out.size() - 28;
    out.resize(28);
    out.push_back("... " + std::to_string(cut) + " more lines: see FINDINGS.md");
  }
  out.push_back("every finding: --verbose, FINDINGS.md or report.html beside result.json");
  std::string text;
  for (const auto& l : out) text += l + "\n";
  return text;
}

std::string summary_markdown(const SummaryCard& card) {
  std::ostringstream o;
  o << "## Summary\n\n";
  if (card.simulated)
    o << "**Simulated**: " << card.simulated_what << ", not a measurement of hardware.\n\n";
  o << "**" << card.title << "**  \n";
  for (const auto& l : card.run_lines) o << l << "  \n";
  if (!card.levels.empty()) {
    o << "\n| level | scope | latency | ns | capacity | bandwidth | line / sector | ways x sets | "
         "policy |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& r : card.levels)
      o << "| " << r.name << " | " << r.scope << " | " << r.latency << " | " << r.latency_ns
        << " | " << r.capacity << " | " << r.bandwidth << " | " << r.line << " | " << r.geometry
        << " | " << r.policy << " |\n";
  }
  if (!card.structure_lines.empty()) o << "\n";
  for (const auto& s : card.structure_lines) o << "- " << s << "\n";
  if (!card.ceilings.empty()) {
    o << "\n| ceiling | measured | % of peak | peak |\n|---|---|---|---|\n";
    for (const auto& c : card.ceilings)
      o << "| " << c.group << " " << c.label << " | " << c.measured << " | "
        << (c.percent ? percent_text(*c.percent) : "-") << " | " << c.peak << " |\n";
  }
  for (const auto& w : card.warnings) o << "\n**" << w << "**\n";
  o << "\n**Uncertain** (confidence < 0.5, failed checks, counter disagreements): ";
  if (card.doubts.empty())
    o << "none.\n";
  else
    o << card.doubts.size() << "\n\n";
  std::string experiment;
  for (const auto& d : card.doubts) {
    o << (d.experiment == experiment ? ", "
                                     : (experiment.empty() ? "- " : "\n- ") + d.experiment + ": ")
      << "`" << d.name << "` (" << d.why << ")";
    experiment = d.experiment;
  }
  if (!card.doubts.empty()) o << "\n";
  if (!card.not_measured.empty()) {
    o << "\nNot measured in this run:";
    for (std::size_t i = 0; i < card.not_measured.size(); ++i)
      o << (i ? ", " : " ") << card.not_measured[i];
    o << ".\n";
  }
  return o.str();
}

std::string summary_html(const SummaryCard& card) {
  std::ostringstream o;
  o << "<section id=\"summary\" class=\"summary\">";
  if (card.simulated)
    o << "<p class=\"simulated\"><b>Simulated</b>: " << escape(card.simulated_what)
      << ", not a measurement of "
         "hardware.</p>";
  o << "<h2>" << escape(card.title) << "</h2><p class=\"run\">";
  for (const auto& l : card.run_lines) o << escape(l) << "<br>";
  o << "</p>";
  // The hierarchy as boxes from the SM outwards, each with its numbers.
  const int row_h = 46, width = 980;
  const int height = static_cast<int>(card.levels.size()) * row_h + 8;
  o << "<svg class=\"hierarchy\" role=\"img\" aria-label=\"memory hierarchy\" viewBox=\"0 0 "
    << width << " " << height << "\" width=\"100%\" style=\"max-width:" << width << "px\">";
  for (std::size_t i = 0; i < card.levels.size(); ++i) {
    const LevelRow& r = card.levels[i];
    const int y = static_cast<int>(i) * row_h + 4;
    const int indent = r.depth * 14;
    o << "<g class=\"level\"><rect x=\"" << indent << "\" y=\"" << y << "\" width=\""
      << width - indent - 2 << "\" height=\"" << row_h - 6
      << "\" rx=\"6\" fill=\"#eef5ff\" stroke=\"#7a9cc6\"/>";
    o << "<text x=\"" << indent + 10 << "\" y=\"" << y + 17
      << "\" font-weight=\"bold\" font-size=\"14\">" << escape(r.name) << "</text><text x=\""
      << indent + 10 << "\" y=\"" << y + 33 << "\" font-size=\"11\" fill=\"#555\">"
      << escape(r.scope) << "</text>";
    const std::string cells[] = {r.latency + (r.latency_ns == "-" ? "" : " / " + r.latency_ns),
                                 r.capacity, r.bandwidth, r.line,
                                 r.geometry + (r.policy == "-" ? "" : ", " + r.policy)};
    const char* heads[] = {"latency", "capacity", "bandwidth", "line / sector", "ways x sets"};
    const int xs[] = {180, 360, 470, 640, 760};
    for (int c = 0; c < 5; ++c)
      o << "<text x=\"" << xs[c] << "\" y=\"" << y + 14 << "\" font-size=\"10\" fill=\"#666\">"
        << heads[c] << "</text><text x=\"" << xs[c] << "\" y=\"" << y + 31 << "\" font-size=\"13\">"
        << escape(cells[c]) << "</text>";
    o << "</g>";
  }
  o << "</svg><ul class=\"structure\">";
  for (const auto& s : card.structure_lines) o << "<li>" << escape(s) << "</li>";
  o << "</ul>";
  if (!card.ceilings.empty()) {
    o << "<h3>Ceilings</h3><table class=\"ceilings\"><tr><th class=\"l\">ceiling</th>"
         "<th>measured</th><th class=\"l\">% of theoretical peak</th><th "
         "class=\"l\">peak</th></tr>";
    for (const auto& c : card.ceilings) {
      o << "<tr><td class=\"l\">" << escape(c.group + " " + c.label) << "</td><td>"
        << escape(c.measured) << "</td><td class=\"l\">";
      if (c.percent)
        o << "<span class=\"bar\"><span style=\"width:" << std::clamp(*c.percent, 0.0, 100.0)
          << "%\"></span></span>" << percent_text(*c.percent);
      else
        o << "-";
      o << "</td><td class=\"l\">" << escape(c.peak) << "</td></tr>";
    }
    o << "</table>";
  }
  for (const auto& w : card.warnings) o << "<p class=\"warn\">" << escape(w) << "</p>";
  o << "<h3>Uncertain</h3>";
  if (card.doubts.empty())
    o << "<p class=\"doubts\">None: every finding has confidence &ge; 0.5 and every check "
         "passed.</p>";
  else
    o << "<p class=\"doubts\">" << card.doubts.size()
      << " findings with confidence below 0.5, failed checks or counter disagreements:</p>"
         "<ul class=\"doubts\">";
  std::string experiment;
  for (const auto& d : card.doubts) {
    if (d.experiment != experiment)
      o << (experiment.empty() ? "" : "</li>") << "<li><b>" << escape(d.experiment) << "</b>: ";
    else
      o << ", ";
    o << "<code>" << escape(d.name) << "</code> (" << escape(d.why) << ")";
    experiment = d.experiment;
  }
  if (!card.doubts.empty()) o << "</li></ul>";
  if (!card.not_measured.empty()) {
    o << "<p class=\"waived\">Not measured in this run: ";
    for (std::size_t i = 0; i < card.not_measured.size(); ++i)
      o << (i ? ", " : "") << escape(card.not_measured[i]);
    o << ".</p>";
  }
  o << "</section>";
  return o.str();
}

/// Latency per level and load operator (findings that carry `load`), cycles (ns).
std::string load_matrix_markdown(const json& result) {
  std::vector<std::string> loads, levels;
  std::map<std::pair<std::string, std::string>, std::string> cell;
  const auto ex = result.find("experiments");
  if (ex == result.end() || !ex->is_array()) return "";
  for (const auto& e : *ex) {
    const auto fs = e.is_object() ? e.find("findings") : e.end();
    if (!e.is_object() || fs == e.end() || !fs->is_array()) continue;
    for (const auto& f : *fs) {
      const std::string load = string_at(f, "load"), name = string_at(f, "name");
      if (load.empty() || name.size() <= load.size() + 1) continue;
      const std::string level = name.substr(0, name.size() - load.size() - 1);
      if (std::find(loads.begin(), loads.end(), load) == loads.end()) loads.push_back(load);
      if (std::find(levels.begin(), levels.end(), level) == levels.end()) levels.push_back(level);
      std::string c = format_number(number_at(f, "value"), number_at(f, "standard_error"));
      if (f.contains("value_ns") && f["value_ns"].is_number())
        c += " (" + format_number(f["value_ns"].get<double>()) + " ns)";
      cell[{level, load}] = c;
    }
  }
  if (loads.empty()) return "";
  std::ostringstream o;
  o << "\n## Latency by load operator\n\nCycles (ns) at the middle of each level's plateau, "
       "for each PTX load cache operator (`ld.global.<op>`).\n\n| level |";
  for (const auto& l : loads) o << " ." << l << " |";
  o << "\n|---|";
  for (std::size_t i = 0; i < loads.size(); ++i) o << "---|";
  o << "\n";
  for (const auto& lv : levels) {
    o << "| " << lv << " |";
    for (const auto& l : loads) {
      const auto it = cell.find({lv, l});
      o << " " << (it == cell.end() ? "" : it->second) << " |";
    }
    o << "\n";
  }
  return o.str();
}

std::string findings_markdown(const json& result) {
  std::ostringstream o;
  const SummaryCard card = summary_card(result);
  o << "# gpuprobe findings: " << card.title << "\n\n"
    << summary_markdown(card) << load_matrix_markdown(result);
  o << "\n## Every finding, by family\n\n"
       "Values as gpuprobe shows them (rounded to what their standard error supports; "
       "categories, yes/no and masks in words); result.json holds the full numbers.\n";
  std::string family;
  for (const auto& e : result.value("experiments", json::array())) {
    if (!e.is_object()) continue;
    const std::string id = string_at(e, "id");
    const std::string fam = id.substr(0, id.find('.'));
    if (fam != family) {
      family = fam;
      o << "\n### " << family << "\n\n| experiment | finding | value | ns | confidence |\n"
        << "|---|---|---|---|---|\n";
    }
    const std::string status = string_at(e, "status");
    if (status != "passed") {
      std::string reason = string_at(e, "reason");
      for (std::size_t at = reason.find('|'); at != std::string::npos;
           at = reason.find('|', at + 2))
        reason.replace(at, 1, "\\|");
      o << "| " << id << " | " << status << ": " << reason << " | | | |\n";
      continue;
    }
    for (const auto& f : e.value("findings", json::array())) {
      if (!f.is_object() || f.contains("load")) continue;
      char conf[16];
      std::snprintf(conf, sizeof(conf), "%.2f", number_at(f, "confidence"));
      const std::string ns = f.contains("value_ns") && f["value_ns"].is_number()
                                 ? format_number(f["value_ns"].get<double>())
                                 : "";
      o << "| " << id << " | " << string_at(f, "name") << " | " << display_text(f) << " | " << ns
        << " | " << conf << " |\n";
    }
  }
  return o.str();
}

}  // namespace gpuprobe::report
