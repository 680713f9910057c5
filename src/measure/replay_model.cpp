#include "measure/replay_model.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/error.hpp"
#include "core/finding_names.hpp"
#include "core/progress.hpp"
#include "device/model_export.hpp"
#include "measure/chase_point.hpp"

namespace gpuprobe::measure {

using analysis::replay::SweepPoint;
using nlohmann::json;

ModelReplay::ModelReplay(const json& model)
    : device_(device::model_config_from_json(model)), ctx_{device_, options_, board_} {}

double ModelReplay::cycles_at(const SweepPoint& point) {
  progress::point();
  return chase_point_cycles(ctx_, point.op, static_cast<std::uint64_t>(point.working_set_bytes));
}

std::vector<double> ModelReplay::cycles_at(const std::vector<SweepPoint>& points) {
  std::vector<double> cycles;
  cycles.reserve(points.size());
  for (const auto& p : points) cycles.push_back(cycles_at(p));
  return cycles;
}

std::vector<ModelVariant> policy_variants(const json& model, const std::string& level) {
  std::vector<ModelVariant> out;
  const auto ways = model.value(level + "_ways", 0u);
  for (const char* policy : {"lru", "fifo", "tree_plru", "random"}) {
    // Tree-PLRU needs a power of two of at most 32 ways (a binary tree over the ways).
    if (std::string(policy) == "tree_plru" &&
        (ways == 0 || ways > 32 || (ways & (ways - 1)) != 0)) {
      out.push_back({policy, {}, std::to_string(ways) + " ways"});
      continue;
    }
    out.push_back({policy, [level, policy](json& m) { m[level + "_policy"] = policy; }, ""});
  }
  return out;
}

namespace {

/// The model's blocks of the measured placement unit placed at random: applicable when the
/// result measured a whole number of bytes that the model's own check accepts (a power of two
/// from the line to 1 GiB, over a modulo index) for an L2 with ways.
ModelVariant random_placement(const json& model,
                              const analysis::replay::MeasuredFindings& findings) {
  ModelVariant placed{
      "random_placement", {}, "no l2.mixture.placement_unit in the result, or an L2 without ways"};
  const auto unit = findings.find(finding::kL2MixturePlacementUnit);
  if (unit == findings.end() || model.value("l2_ways", 0u) == 0) return placed;
  const double v = unit->second;
  if (!(v >= 1 && v < 1e18 && std::floor(v) == v)) {
    placed.not_applicable = "l2.mixture.placement_unit is no whole number of bytes";
    return placed;
  }
  const auto bytes = static_cast<std::uint64_t>(v);
  const auto change = [bytes](json& m) {
    m["l2_set_index"] = "modulo";
    m["l2_placement_unit_bytes"] = bytes;
  };
  json changed = model;
  change(changed);
  try {
    device::validate(device::model_config_from_json(changed));
    placed.change = change;
    placed.not_applicable.clear();
  } catch (const UsageError& e) {
    placed.not_applicable = e.what();
  }
  return placed;
}

}  // namespace

std::vector<ModelVariant> l2_variants(const json& model,
                                      const analysis::replay::MeasuredFindings& findings) {
  auto variants = policy_variants(model, "l2");
  // The insertion classes over LRU (device::Insertion): where a fill enters its set's recency
  // order, which the policy sequences (which line leaves) do not see.
  for (const char* insertion : {"lru", "bimodal", "dueling"})
    variants.push_back({std::string("insertion_") + insertion,
                        [insertion](json& m) {
                          m["l2_policy"] = "lru";
                          m["l2_insertion"] = insertion;
                        },
                        ""});
  variants.push_back(random_placement(model, findings));
  return variants;
}

std::vector<ModelVariant> l1_variants(const json& model) {
  auto variants = policy_variants(model, "l1");
  // A contiguous range placed as at random: the unevenness a hashed index could give.
  variants.push_back({"lru_scrambled_index",
                      [](json& m) {
                        m["l1_policy"] = "lru";
                        m["l1_set_hash_masks"] = json::array();
                        m["l1_tag_bytes"] = 0;
                        m["l1_set_index"] = "scrambled";
                      },
                      ""});
  // A decoupled L1 (measured tags over more lines than it holds): each data victim, and the
  // coupled L1 the capacity alone gives (sets = capacity / (line x ways), modulo).
  if (model.value("l1_tag_bytes", 0u) > 0) {
    for (const auto dv : device::data_victims()) {
      const std::string victim = device::to_string(dv);
      variants.push_back(
          {"data_victim_" + victim, [victim](json& m) { m["l1_data_victim"] = victim; }, ""});
    }
    variants.push_back({"coupled_modulo",
                        [](json& m) {
                          m["l1_set_hash_masks"] = json::array();
                          m["l1_tag_bytes"] = 0;
                        },
                        ""});
  }
  return variants;
}

Sensitivity sensitivity(const SensitivityRange& range, const std::vector<ModelVariant>& variants,
                        const json& model, const std::vector<SweepPoint>& points) {
  std::vector<std::string> columns{"working_set_bytes", "measured_cycles"};
  for (const auto& v : variants) columns.push_back(v.label);
  Sensitivity s;
  s.curve = {
      range.name,
      columns,
      {},
      chart_hints(range.title, "working_set_bytes", "bytes", "measured_cycles", "cycles", true)
          .with_model(std::vector<std::string>(columns.begin() + 2, columns.end()))};
  std::vector<const SweepPoint*> in_range;
  for (const auto& p : points)
    if (p.working_set_bytes >= range.from && p.working_set_bytes < range.to) {
      in_range.push_back(&p);
      s.curve.rows.push_back({p.working_set_bytes, p.measured_cycles});
    }
  if (in_range.empty()) return s;
  for (const auto& v : variants) {
    if (!v.change) {
      s.worst_by_region[v.label] = "not applicable: " + v.not_applicable;
      for (auto& row : s.curve.rows) row.push_back(nullptr);
      continue;
    }
    json changed = model;
    v.change(changed);
    ModelReplay replay(changed);
    json worst_by_region = json::object();
    for (std::size_t k = 0; k < in_range.size(); ++k) {
      const double replayed = replay.cycles_at(*in_range[k]);
      s.curve.rows[k].push_back(replayed);
      analysis::replay::note_worst_by_region(worst_by_region, *in_range[k], replayed);
    }
    s.worst_by_region[v.label] = worst_by_region;
  }
  return s;
}

Sensitivities replay_sensitivities(const json& model,
                                   const analysis::replay::MeasuredFindings& findings,
                                   const std::vector<SweepPoint>& points) {
  Sensitivities s;
  const auto l1 = findings.find(finding::kL1Capacity);
  if (!model.value("chase_structural", false) || l1 == findings.end()) return s;
  const double l1_capacity = l1->second;
  s.l2_policy = sensitivity({"l2_policy_sensitivity",
                             "the exported model with each L2 replacement class, and with its "
                             "blocks of the measured placement unit placed at random (dashed), "
                             "against the measurement (solid)",
                             2 * l1_capacity, std::numeric_limits<double>::infinity()},
                            l2_variants(model, findings), model, points);
  s.l2_policy.note =
      "the exported model with each L2 replacement class, with each insertion class "
      "over LRU (insertion_lru: fills at the LRU place; insertion_bimodal: 1 in "
      "l2_bimodal_throttle at MRU; insertion_dueling: set dueling of the two), and "
      "(random_placement) with every block of l2.mixture.placement_unit indexed as if placed at "
      "random "
      "(as physical frames of that size handed out at random would be), everything "
      "else equal, at the sweep's working sets past 2 x l1.capacity; a comparison, "
      "not a fit: the replay's findings use what the result's evidence gives, and "
      "the exported model places a contiguous range evenly";
  s.l1 = sensitivity({"l1_sensitivity",
                      "the exported model with each L1 replacement class and with a scrambled L1 "
                      "index (dashed) against the measurement (solid)",
                      0.9 * l1_capacity, 2 * l1_capacity},
                     l1_variants(model), model, points);
  s.l1.note =
      "the exported model with each L1 replacement class, with LRU over a scrambled "
      "index (a contiguous range spread over the sets as a random placement would), "
      "and, for a decoupled L1, with each data victim and as the coupled modulo L1 "
      "its capacity alone gives; everything else equal, at the sweep's working sets "
      "from 0.9 to 2 x l1.capacity; a comparison, not a fit: the replay keeps what "
      "it exports";
  return s;
}

}  // namespace gpuprobe::measure
