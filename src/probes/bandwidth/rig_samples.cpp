// The JSON conversions of bandwidth.sweep's and bandwidth.hierarchy's samples, and their whole
// checks.
#include "probes/bandwidth/rig_samples.hpp"

#include "core/samples.hpp"

namespace gpuprobe::probes::bandwidth_rig {

using nlohmann::json;

void to_json(json& j, const RigStat& s) {
  j = json::object();
  write_optional(j, "median", s.median);
  write_optional(j, "mad", s.mad);
}
void from_json(const json& j, RigStat& s) {
  if (!j.is_object()) throw UsageError("a rate is not an object");
  read_optional(j, "median", s.median);
  read_optional(j, "mad", s.mad);
}

void to_json(json& j, const RigMeasurement& m) {
  j = {{"median", m.median}};
  write_optional(j, "mad", m.mad);
  write_optional(j, "n", m.n);
  write_optional(j, "values", m.values);
}
void from_json(const json& j, RigMeasurement& m) {
  j.at("median").get_to(m.median);
  read_optional(j, "mad", m.mad);
  read_optional(j, "n", m.n);
  read_optional(j, "values", m.values);
}

void to_json(json& j, const RigPoint& p) {
  j = {{"verified", p.verified}};
  write_optional(j, "working_set_bytes", p.working_set_bytes);
  write_optional(j, "working_set_total_bytes", p.working_set_total_bytes);
  write_optional(j, "measurement", p.measurement);
  write_optional(j, "bytes_per_clk_per_sm", p.bytes_per_clk_per_sm);
  write_optional(j, "bytes_per_clk_per_sm_slowest_sm", p.bytes_per_clk_per_sm_slowest_sm);
  write_optional(j, "gb_s", p.gb_s);
  write_optional(j, "sm_clock_mhz_measured", p.sm_clock_mhz_measured);
  write_optional(j, "timed_passes_per_launch", p.timed_passes_per_launch);
  write_optional(j, "primary", p.primary);
  write_optional(j, "load", p.load);
  write_optional(j, "variant", p.variant);
  write_optional(j, "fold", p.fold);
  write_optional(j, "addressing", p.addressing);
  write_optional(j, "unroll", p.unroll);
  write_optional(j, "rotations", p.rotations);
  write_optional(j, "threads_per_block", p.threads_per_block);
  write_optional(j, "blocks_per_sm_requested", p.blocks_per_sm_requested);
  write_optional(j, "blocks_per_sm", p.blocks_per_sm);
  write_optional(j, "max_blocks_on_one_sm", p.max_blocks_on_one_sm);
  write_optional(j, "error", p.error);
  write_optional(j, "winner_row", p.winner_row);
  write_optional(j, "search_value", p.search_value);
  write_optional(j, "status", p.status);
  write_optional(j, "reason", p.reason);
}
void from_json(const json& j, RigPoint& p) {
  if (!j.is_object()) throw UsageError("a point is not an object");
  read_optional(j, "working_set_bytes", p.working_set_bytes);
  read_optional(j, "working_set_total_bytes", p.working_set_total_bytes);
  read_optional(j, "measurement", p.measurement);
  read_optional(j, "bytes_per_clk_per_sm", p.bytes_per_clk_per_sm);
  read_optional(j, "bytes_per_clk_per_sm_slowest_sm", p.bytes_per_clk_per_sm_slowest_sm);
  read_optional(j, "gb_s", p.gb_s);
  read_optional(j, "sm_clock_mhz_measured", p.sm_clock_mhz_measured);
  read_optional(j, "timed_passes_per_launch", p.timed_passes_per_launch);
  read_optional(j, "primary", p.primary);
  read_optional(j, "load", p.load);
  read_optional(j, "variant", p.variant);
  read_optional(j, "fold", p.fold);
  read_optional(j, "addressing", p.addressing);
  read_optional(j, "unroll", p.unroll);
  read_optional(j, "rotations", p.rotations);
  read_optional(j, "threads_per_block", p.threads_per_block);
  read_optional(j, "blocks_per_sm_requested", p.blocks_per_sm_requested);
  read_optional(j, "blocks_per_sm", p.blocks_per_sm);
  read_optional(j, "max_blocks_on_one_sm", p.max_blocks_on_one_sm);
  p.verified = j.value("verified", false);
  read_optional(j, "error", p.error);
  read_optional(j, "winner_row", p.winner_row);
  read_optional(j, "search_value", p.search_value);
  read_optional(j, "status", p.status);
  read_optional(j, "reason", p.reason);
}

void to_json(json& j, const PriorFinding& f) {
  j = {{"value", f.value}};
  write_optional(j, "value_ns", f.value_ns);
  write_optional(j, "total_tb_per_s", f.total_tb_per_s);
}
void from_json(const json& j, PriorFinding& f) {
  j.at("value").get_to(f.value);
  // An extra field: written beside the value (to_json(Finding)); older records may keep it
  // under "extra". Anything but a number there reads as absent.
  const auto field = [&](const char* key) -> std::optional<double> {
    if (const auto it = j.find(key); it != j.end() && it->is_number()) return it->get<double>();
    if (const auto e = j.find("extra"); e != j.end() && e->is_object())
      if (const auto it = e->find(key); it != e->end() && it->is_number()) return it->get<double>();
    return std::nullopt;
  };
  f.value_ns = field("value_ns");
  f.total_tb_per_s = field("total_tb_per_s");
}

void to_json(json& j, const SweepSamples& s) {
  j = {{"l1_regime", {{"points", s.l1_points}}}, {"l2_regime", {{"points", s.l2_points}}}};
}
void from_json(const json& j, SweepSamples& s) {
  j.at("l1_regime").at("points").get_to(s.l1_points);
  j.at("l2_regime").at("points").get_to(s.l2_points);
}

void SweepSamples::check() const {
  for (const auto* regime : {&l1_points, &l2_points})
    for (std::size_t i = 0; i < regime->size(); ++i) {
      const RigPoint& p = (*regime)[i];
      require_samples(p.working_set_bytes && p.measurement && p.measurement->mad,
                      std::string("samples.") + (regime == &l1_points ? "l1" : "l2") +
                          "_regime.points[" + std::to_string(i) +
                          "] lacks its working set or its measurement's median and MAD");
    }
}

void to_json(json& j, const HierarchyMeasured& m) {
  j = {{"dram", m.dram}, {"register", m.reg}};
  write_optional(j, "l1_variants", m.l1_variants);
  write_optional(j, "l2_variants", m.l2_variants);
  write_optional(j, "l1_confirmation", m.l1_confirmation);
  write_optional(j, "l2_confirmation", m.l2_confirmation);
  write_optional(j, "l1", m.l1);
  write_optional(j, "l2", m.l2);
}
void from_json(const json& j, HierarchyMeasured& m) {
  j.at("dram").get_to(m.dram);
  j.at("register").get_to(m.reg);
  read_optional(j, "l1_variants", m.l1_variants);
  read_optional(j, "l2_variants", m.l2_variants);
  read_optional(j, "l1_confirmation", m.l1_confirmation);
  read_optional(j, "l2_confirmation", m.l2_confirmation);
  read_optional(j, "l1", m.l1);
  read_optional(j, "l2", m.l2);
}

void to_json(json& j, const HierarchySamples& s) {
  j = {{"measured", s.measured}, {"prior", s.prior}};
}
void from_json(const json& j, HierarchySamples& s) {
  j.at("measured").get_to(s.measured);
  j.at("prior").get_to(s.prior);
}

namespace {

/// A memory level's point a finding reads: measured, with its working set.
void require_level_point(const RigPoint& p, const std::string& at) {
  require_samples(p.measured() && p.working_set_bytes,
                  at + " lacks its measurement, rates or working set");
  require_samples(!p.winner_row || p.search_value, at + " names a winner without its search value");
}

void check_level(const HierarchyMeasured& m, const std::string& level) {
  const bool l1 = level == "l1";
  const auto& variants = l1 ? m.l1_variants : m.l2_variants;
  const auto& confirmation = l1 ? m.l1_confirmation : m.l2_confirmation;
  const auto& point = l1 ? m.l1 : m.l2;
  const std::string at = "samples.measured.";
  if (!variants) {
    require_samples(point.has_value(), at + level + " is missing (and no " + level + "_variants)");
    require_level_point(*point, at + level);
    return;
  }
  for (std::size_t i = 0; i < variants->size(); ++i) {
    const RigPoint& row = (*variants)[i];
    const std::string where = at + level + "_variants[" + std::to_string(i) + "]";
    require_samples(row.variant.has_value(), where + " does not name its variant");
    if (row.verified && row.measurement) require_level_point(row, where);
  }
  if (confirmation) {
    const std::string where = at + level + "_confirmation";
    require_samples(confirmation->status.has_value(), where + " has no status");
    if (*confirmation->status != "passed") return;
    require_level_point(*confirmation, where);
    require_samples(confirmation->variant && confirmation->search_value,
                    where + " passed without its variant or search value");
  }
}

}  // namespace

void HierarchySamples::check() const {
  check_level(measured, "l1");
  check_level(measured, "l2");
  require_level_point(measured.dram, "samples.measured.dram");
  require_samples(measured.reg.measured(),
                  "samples.measured.register lacks its measurement or rates");
}

}  // namespace gpuprobe::probes::bandwidth_rig
