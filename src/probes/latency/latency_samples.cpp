// The JSON conversions of the latency family's samples (latency_samples.hpp).
#include "probes/latency/latency_samples.hpp"

namespace gpuprobe::probes::latency {

using nlohmann::json;

void to_json(json& j, const ChaseSample& s) {
  j = {{"working_set_bytes", s.working_set_bytes},
       {"cycles_per_load", {{"median", s.cycles_median}, {"mad", s.cycles_mad}}}};
}
void from_json(const json& j, ChaseSample& s) {
  j.at("working_set_bytes").get_to(s.working_set_bytes);
  j.at("cycles_per_load").at("median").get_to(s.cycles_median);
  j.at("cycles_per_load").at("mad").get_to(s.cycles_mad);
}
void to_json(json& j, const KneeReplicate& k) { j = {{"points", k.points}}; }
void from_json(const json& j, KneeReplicate& k) { j.at("points").get_to(k.points); }

void to_json(json& j, const SweepSamples& s) {
  j = {{"points", s.points}, {"near_knee_replicates", s.near_knee_replicates}};
  if (s.l1_knee_refinement)
    j["l1_knee_refinement"] = {{"found", true},
                               {"node_stride_bytes", s.l1_knee_refinement->node_stride_bytes},
                               {"nodes_held", s.l1_knee_refinement->nodes_held},
                               {"nodes_not_held", s.l1_knee_refinement->nodes_not_held}};
}

namespace {
std::optional<L1KneeRefinement> l1_refinement_from_json(const json& samples) {
  const auto it = samples.find("l1_knee_refinement");
  if (it == samples.end() || !it->is_object() || !it->contains("found") ||
      !(*it)["found"].is_boolean() || !(*it)["found"].get<bool>())
    return std::nullopt;
  const auto number = [&](const char* key) {
    return it->contains(key) && (*it)[key].is_number() ? (*it)[key].get<double>() : 0.0;
  };
  return L1KneeRefinement{number("node_stride_bytes"), number("nodes_held"),
                          number("nodes_not_held")};
}
}  // namespace

void from_json(const json& j, SweepSamples& s) {
  j.at("points").get_to(s.points);
  s.near_knee_replicates.clear();
  if (const auto it = j.find("near_knee_replicates"); it != j.end() && !it->is_null())
    it->get_to(s.near_knee_replicates);
  s.l1_knee_refinement = l1_refinement_from_json(j);
}

void to_json(json& j, const SharedChaseSample& s) {
  j = {{"cycles_per_load", {{"median", s.cycles_median}}}};
}
void from_json(const json& j, SharedChaseSample& s) {
  j.at("cycles_per_load").at("median").get_to(s.cycles_median);
}
void to_json(json& j, const SharedSamples& s) { j = {{"points", s.points}}; }
void from_json(const json& j, SharedSamples& s) { j.at("points").get_to(s.points); }

void to_json(json& j, const CarveoutSweep& s) {
  j = {{"carveout_percent", s.carveout_percent}, {"points", s.points}};
}
void from_json(const json& j, CarveoutSweep& s) {
  j.at("carveout_percent").get_to(s.carveout_percent);
  j.at("points").get_to(s.points);
}
void to_json(json& j, const ChaseRow& s) {
  j = {{"working_set_bytes", s.working_set_bytes},
       {"cycles_per_load", s.cycles_per_load},
       {"sm_clock_mhz_measured", s.sm_clock_mhz_measured}};
}
void from_json(const json& j, ChaseRow& s) {
  j.at("working_set_bytes").get_to(s.working_set_bytes);
  j.at("cycles_per_load").get_to(s.cycles_per_load);
  j.at("sm_clock_mhz_measured").get_to(s.sm_clock_mhz_measured);
}

void to_json(json& j, const LevelChase& s) {
  j = {{"load", s.load},
       {"level", s.level},
       {"working_set_bytes", s.working_set_bytes},
       {"cycles_per_load", s.cycles_per_load}};
  write_optional(j, "working_set_chosen_by", s.working_set_chosen_by);
}
void from_json(const json& j, LevelChase& s) {
  j.at("level").get_to(s.level);
  j.at("load").get_to(s.load);
  j.at("cycles_per_load").get_to(s.cycles_per_load);
  j.at("working_set_bytes").get_to(s.working_set_bytes);
  read_optional(j, "working_set_chosen_by", s.working_set_chosen_by);
}
void to_json(json& j, const ChaseSamples& s) { j = {{"points", s.points}}; }
void from_json(const json& j, ChaseSamples& s) { j.at("points").get_to(s.points); }

void to_json(json& j, const CarveoutSamples& s) { j = {{"carveouts", s.carveouts}}; }
void from_json(const json& j, CarveoutSamples& s) { j.at("carveouts").get_to(s.carveouts); }

}  // namespace gpuprobe::probes::latency
