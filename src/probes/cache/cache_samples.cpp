// The JSON conversions and whole-sample checks of the cache family's samples types.
#include "probes/cache/cache_samples.hpp"

#include "core/text_input.hpp"

namespace gpuprobe::probes::cache_samples {

using nlohmann::json;

namespace {

/// The optional key `key` of `j` into `out` (left empty when absent).
template <class T>
void optional_at(const json& j, const char* key, std::optional<T>& out) {
  if (j.contains(key)) out = j.at(key).get<T>();
}

std::string index_of(const char* what, std::size_t i) {
  return std::string("samples.") + what + "[" + std::to_string(i) + "]";
}

}  // namespace

// ---- cache.cold_capacity -------------------------------------------------------------------

void to_json(json& j, const ColdCapacityLevel& l) {
  j = {{"level", l.level},
       {"op", l.op},
       {"carveout_percent", l.carveout_percent},
       {"probes", l.probes},
       {"hit_cycles", l.hit_cycles},
       {"miss_cycles", l.miss_cycles}};
  if (l.confirm) j["confirm"] = *l.confirm;
}
void from_json(const json& j, ColdCapacityLevel& l) {
  j.at("level").get_to(l.level);
  j.at("op").get_to(l.op);
  l.carveout_percent = j.value("carveout_percent", -1);
  j.at("probes").get_to(l.probes);
  j.at("hit_cycles").get_to(l.hit_cycles);
  j.at("miss_cycles").get_to(l.miss_cycles);
  optional_at(j, "confirm", l.confirm);
}
void to_json(json& j, const ColdCapacitySamples& s) { j = {{"levels", s.levels}}; }
void from_json(const json& j, ColdCapacitySamples& s) { j.at("levels").get_to(s.levels); }
std::string ColdCapacitySamples::problem() const {
  for (std::size_t i = 0; i < levels.size(); ++i)
    if (levels[i].confirm && levels[i].confirm->empty())
      return index_of("levels", i) + ".confirm is empty (a bracket is confirmed by 4 chains)";
  return "";
}

// ---- cache.fetch_granularity ---------------------------------------------------------------

void to_json(json& j, const FetchRow& r) {
  j = {{"operator", r.op}, {"offset_bytes", r.offset_bytes}, {"cycles", r.cycles}};
}
void from_json(const json& j, FetchRow& r) {
  j.at("operator").get_to(r.op);
  j.at("offset_bytes").get_to(r.offset_bytes);
  j.at("cycles").get_to(r.cycles);
}
void to_json(json& j, const FetchGranularitySamples& s) { j = {{"rows", s.rows}}; }
void from_json(const json& j, FetchGranularitySamples& s) { j.at("rows").get_to(s.rows); }
std::string FetchGranularitySamples::problem() const {
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].cycles.empty()) return index_of("rows", i) + ".cycles is empty";
  return "";
}

// ---- cache.l2.partition --------------------------------------------------------------------

std::string L2PartitionSamples::problem() const {
  if (offsets.empty() || rows.empty()) return "samples hold no probed lines or no SM's round";
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].cycles.size() != offsets.size())
      return index_of("rows", i) + ".cycles has " + std::to_string(rows[i].cycles.size()) +
             " values for " + std::to_string(offsets.size()) + " lines";
  return "";
}

// ---- cache.l2.far_hit ----------------------------------------------------------------------

void to_json(json& j, const CopyChases& c) {
  j = {{"page_lines", c.page_lines}, {"split", c.split}};
  if (c.mask) j["mask"] = *c.mask;
  if (c.fit_accuracy) j["fit_accuracy"] = *c.fit_accuracy;
  if (c.cold_chases) j["cold_chases"] = *c.cold_chases;
  if (c.searches) j["searches"] = *c.searches;
}
void from_json(const json& j, CopyChases& c) {
  j.at("page_lines").get_to(c.page_lines);
  j.at("split").get_to(c.split);
  optional_at(j, "mask", c.mask);
  optional_at(j, "fit_accuracy", c.fit_accuracy);
  optional_at(j, "cold_chases", c.cold_chases);
  optional_at(j, "searches", c.searches);
}
void to_json(json& j, const FarHitSamples& s) {
  j = {{"offsets", s.offsets}, {"rounds", s.rounds}, {"chase", s.chase}};
  if (s.cold_rounds) j["cold_rounds"] = *s.cold_rounds;
  if (s.capacity_steps) j["capacity_steps"] = *s.capacity_steps;
  if (s.copy_chases) j["copy_chases"] = *s.copy_chases;
}
void from_json(const json& j, FarHitSamples& s) {
  j.at("offsets").get_to(s.offsets);
  j.at("rounds").get_to(s.rounds);
  j.at("chase").get_to(s.chase);
  optional_at(j, "cold_rounds", s.cold_rounds);
  optional_at(j, "capacity_steps", s.capacity_steps);
  optional_at(j, "copy_chases", s.copy_chases);
}
std::string FarHitSamples::problem() const {
  if (offsets.empty() || rounds.empty()) return "samples hold no probed lines or no round";
  for (std::size_t i = 0; i < rounds.size(); ++i)
    if (rounds[i].first.size() != offsets.size() || rounds[i].second.size() != offsets.size())
      return index_of("rounds", i) + " has " + std::to_string(rounds[i].first.size()) +
             " first and " + std::to_string(rounds[i].second.size()) + " second reads for " +
             std::to_string(offsets.size()) + " lines";
  return "";
}

// ---- latency.tlb ---------------------------------------------------------------------------

void to_json(json& j, const TlbLevel& l) {
  j = {{"entries", l.entries},
       {"miss_penalty_cycles", l.miss_penalty_cycles},
       {"miss_penalty_replicates", l.miss_penalty_replicates},
       {"miss_penalty_standard_errors", l.miss_penalty_standard_errors},
       {"below", l.below},
       {"above", l.above}};
}
void from_json(const json& j, TlbLevel& l) {
  j.at("entries").get_to(l.entries);
  j.at("miss_penalty_cycles").get_to(l.miss_penalty_cycles);
  l.miss_penalty_replicates = j.value("miss_penalty_replicates", std::vector<double>{});
  l.miss_penalty_standard_errors = j.value("miss_penalty_standard_errors", std::vector<double>{});
  j.at("below").get_to(l.below);
  j.at("above").get_to(l.above);
}
void to_json(json& j, const TlbSamples& s) {
  j = {{"levels", s.levels},
       {"page_bytes", s.page_bytes},
       {"coverage_at_least_bytes", s.coverage_at_least_bytes},
       {"curve", s.curve},
       {"page_curve", s.page_curve},
       {"note", s.note},
       {"accesses", s.accesses}};
}
void from_json(const json& j, TlbSamples& s) {
  j.at("levels").get_to(s.levels);
  s.page_bytes = j.value("page_bytes", std::uint64_t{0});
  s.coverage_at_least_bytes = j.value("coverage_at_least_bytes", std::uint64_t{0});
  s.curve = j.value("curve", json::array());
  s.page_curve = j.value("page_curve", json());
  s.note = j.value("note", std::string());
  s.accesses = j.value("accesses", std::uint64_t{0});
}
std::string TlbSamples::problem() const {
  for (std::size_t i = 0; i < levels.size(); ++i)
    if (levels[i].above.empty())
      return index_of("levels", i) + ".above is empty (no latency past the step)";
  return "";
}

// ---- cache.l2.mixture ----------------------------------------------------------------------

namespace {

/// A positive size (a number: older results and tests wrote sizes as 1e6).
std::uint64_t positive_size(const json& j, const char* what) {
  const double v = j.get<double>();
  if (!(v > 0) || v > 1e18)
    throw UsageError(std::string("cache.l2.mixture: ") + what + " is not a positive size");
  return static_cast<std::uint64_t>(v);
}

bool non_negative_integer(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

std::vector<std::uint64_t> nodes_of(const json& j) {
  std::vector<std::uint64_t> out;
  if (!j.is_array())
    throw UsageError(
        "cache.l2.mixture: a point's cycles and nodes (pages) are not two arrays of one length");
  out.reserve(j.size());
  for (const auto& v : j) {
    if (!v.is_number_unsigned())
      throw UsageError("cache.l2.mixture: a sample's node (page) is not a non-negative integer");
    out.push_back(v.get<std::uint64_t>());
  }
  return out;
}

}  // namespace

void to_json(json& j, const MixtureChase& c) {
  j = {{"cycles", c.cycles}};
  if (c.working_set_bytes) j["working_set_bytes"] = c.working_set_bytes;
  if (c.node) j["node"] = *c.node;
  if (c.page) j["page"] = *c.page;
  if (c.smid) j["smid"] = *c.smid;
  if (c.verified) j["verified"] = *c.verified;
}
void from_json(const json& j, MixtureChase& c) {
  j.at("cycles").get_to(c.cycles);
  if (j.contains("working_set_bytes"))
    c.working_set_bytes = positive_size(j.at("working_set_bytes"), "a point's working_set_bytes");
  if (j.contains("node")) c.node = nodes_of(j.at("node"));
  if (j.contains("page")) c.page = nodes_of(j.at("page"));
  optional_at(j, "smid", c.smid);
  optional_at(j, "verified", c.verified);
}
void to_json(json& j, const MixtureDraw& d) {
  j = {{"working_set_bytes", d.working_set_bytes},
       {"offset_bytes", d.offset_bytes},
       {"cycles_histogram", d.cycles_histogram}};
  if (d.smid) j["smid"] = *d.smid;
  if (d.verified) j["verified"] = *d.verified;
}
void from_json(const json& j, MixtureDraw& d) {
  const auto& h = j.at("cycles_histogram");
  if (!h.is_array())
    throw UsageError("cache.l2.mixture: a draw's cycles_histogram is not an array");
  for (const auto& bin : h) {
    if (!bin.is_array() || bin.size() != 2 || !non_negative_integer(bin[0]) ||
        !non_negative_integer(bin[1]))
      throw UsageError(
          "cache.l2.mixture: a histogram bin is not a pair [cycles, non-negative count]");
    d.cycles_histogram.emplace_back(bin[0].get<std::uint32_t>(), bin[1].get<std::uint64_t>());
  }
  d.working_set_bytes = positive_size(j.at("working_set_bytes"), "a draw's working_set_bytes");
  d.offset_bytes = j.at("offset_bytes").get<std::uint64_t>();
  optional_at(j, "smid", d.smid);
  optional_at(j, "verified", d.verified);
}
void to_json(json& j, const MixtureSamples& s) {
  j = {{"reference", s.reference}, {"points", s.points}};
  if (s.draws) j["draws"] = *s.draws;
}
void from_json(const json& j, MixtureSamples& s) {
  j.at("reference").get_to(s.reference);
  j.at("points").get_to(s.points);
  if (j.contains("draws")) {
    if (!j.at("draws").is_array()) throw UsageError("cache.l2.mixture: draws is not an array");
    s.draws = j.at("draws").get<std::vector<MixtureDraw>>();
  }
}
std::string MixtureSamples::problem() const {
  for (const auto& p : points) {
    if (p.working_set_bytes == 0) return "a point has no working_set_bytes";
    if (!p.node && !p.page) return "a point records neither the nodes nor the pages of its samples";
    if ((p.node ? p.node : p.page)->size() != p.cycles.size())
      return "a point's cycles and nodes (pages) are not two arrays of one length";
  }
  return "";
}

// ---- cache.l2.sharing ----------------------------------------------------------------------

void to_json(json& j, const L2CacheRow& r) {
  j = {{"chunks", r.chunks},
       {"footprint_bytes", r.footprint_bytes},
       {"blocks", r.blocks},
       {"gb_s", r.gb_s},
       {"gb_s_median", r.gb_s_median}};
  if (r.load_bytes) j["load_bytes"] = *r.load_bytes;
}
void from_json(const json& j, L2CacheRow& r) {
  j.at("chunks").get_to(r.chunks);
  j.at("footprint_bytes").get_to(r.footprint_bytes);
  optional_at(j, "load_bytes", r.load_bytes);
  j.at("blocks").get_to(r.blocks);
  j.at("gb_s").get_to(r.gb_s);
  j.at("gb_s_median").get_to(r.gb_s_median);
}
void to_json(json& j, const SharingConfirm& c) {
  j = c.row ? json(*c.row) : json(*c.l2c);
  j["of"] = c.of;
  j["index"] = c.index;
  if (c.replicate) j["replicate"] = *c.replicate;
  if (c.fresh_buffer) j["fresh_buffer"] = *c.fresh_buffer;
}
void from_json(const json& j, SharingConfirm& c) {
  j.at("of").get_to(c.of);
  j.at("index").get_to(c.index);
  optional_at(j, "replicate", c.replicate);
  optional_at(j, "fresh_buffer", c.fresh_buffer);
  if (c.of == "rows")
    c.row = j.get<SharingRow>();
  else if (c.of == "gpu_l2_cache")
    c.l2c = j.get<L2CacheRow>();
  else
    throw UsageError("cache.l2.sharing: a confirmation is of " + text_input::quoted(c.of) +
                     ", not of rows or gpu_l2_cache");
}
void to_json(json& j, const SharingSamples& s) {
  j = {{"rows", s.rows}, {"gpu_l2_cache", s.gpu_l2_cache}, {"confirm", s.confirm}};
  if (s.first_touch) j["first_touch"] = *s.first_touch;
}
void from_json(const json& j, SharingSamples& s) {
  j.at("rows").get_to(s.rows);
  j.at("gpu_l2_cache").get_to(s.gpu_l2_cache);
  j.at("confirm").get_to(s.confirm);
  optional_at(j, "first_touch", s.first_touch);
}
std::string SharingSamples::problem() const {
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].gb_s.empty()) return index_of("rows", i) + ".gb_s is empty";
  for (std::size_t i = 0; i < gpu_l2_cache.size(); ++i)
    if (gpu_l2_cache[i].gb_s.empty()) return index_of("gpu_l2_cache", i) + ".gb_s is empty";
  for (std::size_t i = 0; i < confirm.size(); ++i) {
    const auto& c = confirm[i];
    if (c.index >= (c.row ? rows.size() : gpu_l2_cache.size()))
      return index_of("confirm", i) + " confirms a point that is not there";
    if (c.gb_s().empty()) return index_of("confirm", i) + ".gb_s is empty";
  }
  if (first_touch)
    for (std::size_t i = 0; i < first_touch->size(); ++i)
      if ((*first_touch)[i].gb_s_first.empty() || (*first_touch)[i].gb_s_second.empty())
        return index_of("first_touch", i) + " has no trials";
  return "";
}

}  // namespace gpuprobe::probes::cache_samples
