// The JSON conversions of hopper.pipeline's samples (pipeline_samples.hpp).
#include "probes/hopper/pipeline_samples.hpp"

namespace gpuprobe::probes::hopper {

using nlohmann::json;

void to_json(json& j, const PipelinePoint& p) {
  j = {{"shape", p.shape}, {"mode", p.mode}, {"stages", p.stages}, {"verified", p.verified}};
  write_optional(j, "bm", p.bm);
  write_optional(j, "multicast", p.multicast);
  write_optional(j, "arrive", p.arrive);
  write_optional(j, "a_operand", p.a_operand);
  write_optional(j, "blocks", p.blocks);
  write_optional(j, "dynamic_smem_bytes", p.dynamic_smem_bytes);
  write_optional(j, "ns_per_kstep", p.ns_per_kstep);
  write_optional(j, "ns_per_kstep_summary", p.ns_per_kstep_summary);
  write_optional(j, "sm_clock_mhz", p.sm_clock_mhz);
  write_optional(j, "smem_bytes_per_kstep", p.smem_bytes_per_kstep);
  write_optional(j, "smem_bytes_per_clk", p.smem_bytes_per_clk);
  write_optional(j, "tiles_per_s", p.tiles_per_s);
  write_optional(j, "gb_s", p.gb_s);
  if (p.tflops)
    j["tflops"] = *p.tflops;
  else if (p.verified)
    j["tflops"] = nullptr;  // copy_only: no math
  write_optional(j, "error", p.error);
}

void from_json(const json& j, PipelinePoint& p) {
  j.at("shape").get_to(p.shape);
  read_optional(j, "bm", p.bm);
  j.at("mode").get_to(p.mode);
  j.at("stages").get_to(p.stages);
  read_optional(j, "multicast", p.multicast);
  read_optional(j, "arrive", p.arrive);
  read_optional(j, "a_operand", p.a_operand);
  read_optional(j, "blocks", p.blocks);
  read_optional(j, "dynamic_smem_bytes", p.dynamic_smem_bytes);
  j.at("verified").get_to(p.verified);
  read_optional(j, "ns_per_kstep", p.ns_per_kstep);
  read_optional(j, "ns_per_kstep_summary", p.ns_per_kstep_summary);
  read_optional(j, "sm_clock_mhz", p.sm_clock_mhz);
  read_optional(j, "smem_bytes_per_kstep", p.smem_bytes_per_kstep);
  read_optional(j, "smem_bytes_per_clk", p.smem_bytes_per_clk);
  read_optional(j, "tiles_per_s", p.tiles_per_s);
  read_optional(j, "gb_s", p.gb_s);
  p.tflops.reset();
  if (const auto it = j.find("tflops"); it != j.end() && !it->is_null())
    p.tflops = it->get<double>();
  read_optional(j, "error", p.error);
}

void to_json(json& j, const PipelineSamples& s) {
  j = {{"points", s.points}};
  write_optional(j, "arrive_check", s.arrive_check);
  write_optional(j, "overlap_replicates", s.overlap_replicates);
  write_optional(j, "sm_count", s.sm_count);
}
void from_json(const json& j, PipelineSamples& s) {
  j.at("points").get_to(s.points);
  read_optional(j, "arrive_check", s.arrive_check);
  read_optional(j, "overlap_replicates", s.overlap_replicates);
  read_optional(j, "sm_count", s.sm_count);
}

void PipelineSamples::check() const {
  const auto check_list = [](const std::vector<PipelinePoint>& list) {
    for (const auto& p : list) {
      if (!p.verified) continue;
      const std::string what = p.shape + " " + p.mode + " stages " + std::to_string(p.stages);
      require_samples(p.ns_per_kstep && p.ns_per_kstep_summary && p.tiles_per_s && p.gb_s,
                      "verified point " + what +
                          " lacks ns_per_kstep, ns_per_kstep_summary, tiles_per_s or gb_s");
      require_samples(p.mode == "copy_only" || p.tflops,
                      "verified point " + what + " lacks tflops");
    }
  };
  check_list(points);
  if (arrive_check) check_list(*arrive_check);
  if (overlap_replicates)
    for (const auto& pass : *overlap_replicates) check_list(pass);
}

}  // namespace gpuprobe::probes::hopper
