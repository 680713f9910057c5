// The JSON conversions of the Hopper family's samples (hopper_samples.hpp).
#include "probes/hopper/hopper_samples.hpp"

namespace gpuprobe::probes::hopper {

using nlohmann::json;

namespace {
/// A member that reads as `fallback` when absent.
template <typename V>
void read_or(const json& j, const char* key, V& v, V fallback) {
  const auto it = j.find(key);
  v = it == j.end() ? std::move(fallback) : it->template get<V>();
}
}  // namespace

void to_json(json& j, const WgmmaCheck& c) {
  j = {{"type", c.type}, {"encoding", c.encoding},       {"wrong", c.wrong},
       {"of", c.of},     {"first_wrong", c.first_wrong}, {"passed", c.passed}};
}
void from_json(const json& j, WgmmaCheck& c) {
  j.at("type").get_to(c.type);
  j.at("encoding").get_to(c.encoding);
  j.at("wrong").get_to(c.wrong);
  j.at("of").get_to(c.of);
  j.at("first_wrong").get_to(c.first_wrong);
  j.at("passed").get_to(c.passed);
}

void to_json(json& j, const WgmmaPoint& p) {
  j = {{"type", p.type},
       {"warpgroups_per_sm", p.warpgroups_per_sm},
       {"wgmma_per_group", p.wgmma_per_group},
       {"wait_group", p.wait_group},
       {"tflops", p.tflops},
       {"flop_per_clk_per_sm_median", p.flop_per_clk_per_sm_median},
       {"sm_clock_mhz_measured", p.sm_clock_mhz_measured}};
  write_optional(j, "wgmma_per_warpgroup", p.wgmma_per_warpgroup);
  write_optional(j, "blocks", p.blocks);
  write_optional(j, "distinct_sms_min", p.distinct_sms_min);
}
void from_json(const json& j, WgmmaPoint& p) {
  j.at("type").get_to(p.type);
  j.at("warpgroups_per_sm").get_to(p.warpgroups_per_sm);
  j.at("wgmma_per_group").get_to(p.wgmma_per_group);
  j.at("wait_group").get_to(p.wait_group);
  read_optional(j, "wgmma_per_warpgroup", p.wgmma_per_warpgroup);
  read_optional(j, "blocks", p.blocks);
  j.at("tflops").get_to(p.tflops);
  j.at("flop_per_clk_per_sm_median").get_to(p.flop_per_clk_per_sm_median);
  j.at("sm_clock_mhz_measured").get_to(p.sm_clock_mhz_measured);
  read_optional(j, "distinct_sms_min", p.distinct_sms_min);
}
void to_json(json& j, const WgmmaSamples& s) {
  j = {{"checks", s.checks}, {"points", s.points}, {"sm_count", s.sm_count}};
}
void from_json(const json& j, WgmmaSamples& s) {
  read_or(j, "checks", s.checks, {});
  j.at("points").get_to(s.points);
  j.at("sm_count").get_to(s.sm_count);
}

void to_json(json& j, const DsmemChase& c) {
  j = {{"cycles_per_load", c.cycles_per_load},
       {"wrong_end_nodes", c.wrong_end_nodes},
       {"verified", c.verified}};
}
void from_json(const json& j, DsmemChase& c) {
  j.at("cycles_per_load").get_to(c.cycles_per_load);
  read_or(j, "wrong_end_nodes", c.wrong_end_nodes, std::uint64_t{0});
  j.at("verified").get_to(c.verified);
}
void to_json(json& j, const DsmemBandwidth& b) {
  j = {{"gb_s", b.gb_s},
       {"launches_failing_verification", b.launches_failing_verification},
       {"verified", b.verified}};
  write_optional(j, "blocks", b.blocks);
  write_optional(j, "threads_per_block", b.threads_per_block);
  write_optional(j, "bytes_per_block_buffer", b.bytes_per_block_buffer);
  write_optional(j, "reps", b.reps);
  write_optional(j, "gb_s_events_median", b.gb_s_events_median);
}
void from_json(const json& j, DsmemBandwidth& b) {
  read_optional(j, "blocks", b.blocks);
  read_optional(j, "threads_per_block", b.threads_per_block);
  read_optional(j, "bytes_per_block_buffer", b.bytes_per_block_buffer);
  read_optional(j, "reps", b.reps);
  j.at("gb_s").get_to(b.gb_s);
  read_optional(j, "gb_s_events_median", b.gb_s_events_median);
  read_or(j, "launches_failing_verification", b.launches_failing_verification, std::uint64_t{0});
  j.at("verified").get_to(b.verified);
}
void to_json(json& j, const DsmemRow& r) {
  j = {{"cluster_size", r.cluster_size}, {"launched", r.launched}};
  write_optional(j, "max_active_clusters", r.max_active_clusters);
  write_optional(j, "reason", r.reason);
  write_optional(j, "latency_peer", r.latency_peer);
  write_optional(j, "latency_self", r.latency_self);
  write_optional(j, "bandwidth", r.bandwidth);
}
void from_json(const json& j, DsmemRow& r) {
  j.at("cluster_size").get_to(r.cluster_size);
  read_optional(j, "max_active_clusters", r.max_active_clusters);
  j.at("launched").get_to(r.launched);
  read_optional(j, "reason", r.reason);
  read_optional(j, "latency_peer", r.latency_peer);
  read_optional(j, "latency_self", r.latency_self);
  read_optional(j, "bandwidth", r.bandwidth);
}
void to_json(json& j, const DsmemSamples& s) {
  j = json::object();
  write_optional(j, "cluster_sizes", s.cluster_sizes);
}
void from_json(const json& j, DsmemSamples& s) {
  read_optional(j, "cluster_sizes", s.cluster_sizes);
}
void DsmemSamples::check() const {
  if (!cluster_sizes) return;
  for (const auto& r : *cluster_sizes)
    require_samples(!r.launched || (r.latency_peer && r.latency_self && r.bandwidth),
                    "cluster size " + std::to_string(r.cluster_size) +
                        " was launched but lacks latency_peer, latency_self or bandwidth");
}

void to_json(json& j, const TmaLatencyPoint& p) {
  j = {{"copy", p.copy},
       {"regime", p.regime},
       {"bytes", p.bytes},
       {"cycles", p.cycles},
       {"verified", p.verified}};
  write_optional(j, "replicate", p.replicate);
  write_optional(j, "cycles_samples", p.cycles_samples);
  write_optional(j, "sample_offsets", p.sample_offsets);
  write_optional(j, "sample_smids", p.sample_smids);
  write_optional(j, "words_checked", p.words_checked);
  write_optional(j, "words_wrong", p.words_wrong);
  write_optional(j, "first_wrong", p.first_wrong);
  write_optional(j, "smid", p.smid);
}
void from_json(const json& j, TmaLatencyPoint& p) {
  read_optional(j, "replicate", p.replicate);
  j.at("copy").get_to(p.copy);
  j.at("regime").get_to(p.regime);
  j.at("bytes").get_to(p.bytes);
  j.at("cycles").get_to(p.cycles);
  read_optional(j, "cycles_samples", p.cycles_samples);
  read_optional(j, "sample_offsets", p.sample_offsets);
  read_optional(j, "sample_smids", p.sample_smids);
  read_optional(j, "words_checked", p.words_checked);
  read_optional(j, "words_wrong", p.words_wrong);
  read_optional(j, "first_wrong", p.first_wrong);
  j.at("verified").get_to(p.verified);
  read_optional(j, "smid", p.smid);
}
void to_json(json& j, const TmaLatencySamples& s) {
  j = json::object();
  write_optional(j, "points", s.points);
}
void from_json(const json& j, TmaLatencySamples& s) { read_optional(j, "points", s.points); }

void to_json(json& j, const TmaBandwidthPoint& p) {
  j = {{"direction", p.direction},
       {"tile_bytes", p.tile_bytes},
       {"stages", p.stages},
       {"gb_s", p.gb_s},
       {"verified", p.verified}};
  write_optional(j, "source", p.source);
  write_optional(j, "source_bytes", p.source_bytes);
  write_optional(j, "passes_per_launch", p.passes_per_launch);
  write_optional(j, "bytes_per_launch", p.bytes_per_launch);
  write_optional(j, "percent_of_peak_median", p.percent_of_peak_median);
  write_optional(j, "launches", p.launches);
  write_optional(j, "launches_failing_verification", p.launches_failing_verification);
  write_optional(j, "first_failure", p.first_failure);
}
void from_json(const json& j, TmaBandwidthPoint& p) {
  j.at("direction").get_to(p.direction);
  read_optional(j, "source", p.source);
  read_optional(j, "source_bytes", p.source_bytes);
  j.at("tile_bytes").get_to(p.tile_bytes);
  j.at("stages").get_to(p.stages);
  read_optional(j, "passes_per_launch", p.passes_per_launch);
  read_optional(j, "bytes_per_launch", p.bytes_per_launch);
  j.at("gb_s").get_to(p.gb_s);
  read_optional(j, "percent_of_peak_median", p.percent_of_peak_median);
  read_optional(j, "launches", p.launches);
  read_optional(j, "launches_failing_verification", p.launches_failing_verification);
  read_optional(j, "first_failure", p.first_failure);
  j.at("verified").get_to(p.verified);
}
void to_json(json& j, const TmaBandwidthSamples& s) {
  j = json::object();
  write_optional(j, "points", s.points);
}
void from_json(const json& j, TmaBandwidthSamples& s) { read_optional(j, "points", s.points); }

}  // namespace gpuprobe::probes::hopper
