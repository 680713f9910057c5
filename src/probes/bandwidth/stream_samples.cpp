// The JSON conversions of the streaming experiments' samples, and their whole check.
#include "probes/bandwidth/stream_samples.hpp"

#include "core/samples.hpp"

namespace gpuprobe::probes::bwhost {

using nlohmann::json;

void to_json(json& j, const StreamGbps& s) {
  j = s.stats;
  write_optional(j, "launches_per_sample", s.launches_per_sample);
  write_optional(j, "percent_of_peak_median", s.percent_of_peak_median);
}
void from_json(const json& j, StreamGbps& s) {
  j.get_to(s.stats);
  read_optional(j, "launches_per_sample", s.launches_per_sample);
  read_optional(j, "percent_of_peak_median", s.percent_of_peak_median);
}

void to_json(json& j, const StreamRow& r) {
  j = {{"stage", r.stage}, {"status", r.status}};
  if (r.reference) j["reference"] = true;
  write_optional(j, "reason", r.reason);
  write_optional(j, "label", r.label);
  write_optional(j, "width_bytes", r.width_bytes);
  write_optional(j, "unroll", r.unroll);
  write_optional(j, "passes", r.passes);
  write_optional(j, "load", r.load);
  write_optional(j, "store", r.store);
  write_optional(j, "scheme", r.scheme);
  write_optional(j, "grid", r.grid);
  write_optional(j, "threads_per_block", r.threads_per_block);
  write_optional(j, "blocks_per_sm", r.blocks_per_sm);
  write_optional(j, "blocks", r.blocks);
  write_optional(j, "dst_shift_bytes", r.dst_shift_bytes);
  write_optional(j, "bytes_in_flight_per_sm", r.bytes_in_flight_per_sm);
  write_optional(j, "counted_bytes_per_launch", r.counted_bytes_per_launch);
  write_optional(j, "gb_s", r.gb_s);
}
void from_json(const json& j, StreamRow& r) {
  r.stage = j.value("stage", std::string());
  r.status = j.value("status", std::string("passed"));
  r.reference = j.value("reference", false);
  read_optional(j, "reason", r.reason);
  read_optional(j, "label", r.label);
  read_optional(j, "width_bytes", r.width_bytes);
  read_optional(j, "unroll", r.unroll);
  read_optional(j, "passes", r.passes);
  read_optional(j, "load", r.load);
  read_optional(j, "store", r.store);
  read_optional(j, "scheme", r.scheme);
  read_optional(j, "grid", r.grid);
  read_optional(j, "threads_per_block", r.threads_per_block);
  read_optional(j, "blocks_per_sm", r.blocks_per_sm);
  read_optional(j, "blocks", r.blocks);
  read_optional(j, "dst_shift_bytes", r.dst_shift_bytes);
  read_optional(j, "bytes_in_flight_per_sm", r.bytes_in_flight_per_sm);
  read_optional(j, "counted_bytes_per_launch", r.counted_bytes_per_launch);
  read_optional(j, "gb_s", r.gb_s);
}

void to_json(json& j, const StreamConfirmation& c) {
  j = {{"finding", c.finding},
       {"winner_row", c.winner_row},
       {"search_value", c.search_value},
       {"status", c.status}};
  write_optional(j, "reason", c.reason);
  if (c.passed()) {
    j["value"] = c.value;
    j["samples"] = c.samples;
  }
  write_optional(j, "gb_s", c.gb_s);
  write_optional(j, "verified_with_passes", c.verified_with_passes);
}
void from_json(const json& j, StreamConfirmation& c) {
  j.at("finding").get_to(c.finding);
  j.at("winner_row").get_to(c.winner_row);
  j.at("search_value").get_to(c.search_value);
  j.at("status").get_to(c.status);
  read_optional(j, "reason", c.reason);
  if (c.passed()) {
    j.at("value").get_to(c.value);
    j.at("samples").get_to(c.samples);
    c.gb_s = j.at("gb_s").get<GbpsStats>();
  }
  read_optional(j, "verified_with_passes", c.verified_with_passes);
}

void to_json(json& j, const StreamSamples& s) {
  j = {{"variants", s.variants}, {"references", s.references}};
  write_optional(j, "confirmations", s.confirmations);
}
void from_json(const json& j, StreamSamples& s) {
  j.at("variants").get_to(s.variants);
  s.references.clear();
  if (const auto it = j.find("references"); it != j.end()) it->get_to(s.references);
  read_optional(j, "confirmations", s.confirmations);
}

namespace {

/// The first member a candidate row needs that it lacks ("" when it has them all).
std::string missing_in_candidate(const StreamRow& r) {
  const std::pair<const char*, bool> needed[] = {
      {"width_bytes", r.width_bytes.has_value()},
      {"unroll", r.unroll.has_value()},
      {"load", r.load.has_value()},
      {"store", r.store.has_value()},
      {"scheme", r.scheme.has_value()},
      {"threads_per_block", r.threads_per_block.has_value()},
      {"blocks_per_sm", r.blocks_per_sm.has_value()},
      {"bytes_in_flight_per_sm", r.bytes_in_flight_per_sm.has_value()},
      {"counted_bytes_per_launch", r.counted_bytes_per_launch.has_value()},
      {"blocks (a grid covering the array)", r.persistent() || r.blocks.has_value()}};
  for (const auto& [name, there] : needed)
    if (!there) return name;
  return "";
}

}  // namespace

void StreamSamples::check() const {
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const auto& r = variants[i];
    if (r.candidate()) {
      const std::string missing = missing_in_candidate(r);
      require_samples(missing.empty(),
                      "samples.variants[" + std::to_string(i) + "] passed without " + missing);
    }
    if (r.reference)
      require_samples(r.label && r.gb_s && r.counted_bytes_per_launch,
                      "samples.variants[" + std::to_string(i) +
                          "] is a reference without its label, gb_s or bytes per launch");
  }
  for (std::size_t i = 0; i < references.size(); ++i) {
    const auto& r = references[i];
    require_samples(
        r.label && r.gb_s && r.counted_bytes_per_launch,
        "samples.references[" + std::to_string(i) + "] lacks its label, gb_s or bytes per launch");
  }
  if (!confirmations) return;
  for (std::size_t i = 0; i < confirmations->size(); ++i) {
    const auto& c = (*confirmations)[i];
    const std::string at = "samples.confirmations[" + std::to_string(i) + "]";
    require_samples(c.winner_row < variants.size(), at + " names row " +
                                                        std::to_string(c.winner_row) + " of " +
                                                        std::to_string(variants.size()));
    if (c.passed())
      require_samples(variants[c.winner_row].candidate(), at + " passed for row " +
                                                              std::to_string(c.winner_row) +
                                                              ", which is not a passed search row");
  }
}

}  // namespace gpuprobe::probes::bwhost
