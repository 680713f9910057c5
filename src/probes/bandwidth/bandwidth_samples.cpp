// The JSON conversions of the pattern experiments' samples (the run writes
// them field by field beside the timing record; analyze reads only these).
#include "probes/bandwidth/bandwidth_samples.hpp"

namespace gpuprobe::probes::bwhost {

using nlohmann::json;

void to_json(json& j, const GbpsStats& s) {
  j = {{"median", s.median}, {"min", s.min}, {"p5", s.p5}, {"p95", s.p95}, {"n", s.n}};
  if (s.values) j["values"] = *s.values;
}

void from_json(const json& j, GbpsStats& s) {
  j.at("median").get_to(s.median);
  j.at("min").get_to(s.min);
  j.at("p5").get_to(s.p5);
  j.at("p95").get_to(s.p95);
  j.at("n").get_to(s.n);
  s.values = j.contains("values") && j.at("values").is_array()
                 ? std::optional(j.at("values").get<std::vector<double>>())
                 : std::nullopt;
}

void from_json(const json& j, SectorModel& m) {
  j.at("sectors_per_request").get_to(m.sectors_per_request);
  j.at("request_efficiency").get_to(m.request_efficiency);
  j.at("dram_efficiency_32b").get_to(m.dram_efficiency_32b);
  j.at("dram_efficiency_64b").get_to(m.dram_efficiency_64b);
  for (auto [key, field] :
       {std::pair{"copy_dram_efficiency_rmw_32b", &m.copy_dram_efficiency_rmw_32b},
        std::pair{"copy_dram_efficiency_rmw_64b", &m.copy_dram_efficiency_rmw_64b}})
    *field = j.contains(key) ? std::optional(j.at(key).get<double>()) : std::nullopt;
}

void from_json(const json& j, StrideRow& r) {
  j.at("variant").get_to(r.variant);
  j.at("stride_elements").get_to(r.stride_elements);
  j.at("useful_gb_s").get_to(r.useful_gb_s);
  j.at("model").get_to(r.model);
}
void from_json(const json& j, StrideSamples& s) { j.at("rows").get_to(s.rows); }

void from_json(const json& j, OffsetRow& r) {
  j.at("variant").get_to(r.variant);
  j.at("offset_elements").get_to(r.offset_elements);
  j.at("useful_gb_s").get_to(r.useful_gb_s);
  j.at("request_efficiency").get_to(r.request_efficiency);
  j.at("read_model").at("lines_per_request").get_to(r.read_lines_per_request);
}
void from_json(const json& j, OffsetSamples& s) { j.at("rows").get_to(s.rows); }

void from_json(const json& j, LayoutRow& r) {
  j.at("layout").get_to(r.layout);
  j.at("useful_gb_s").get_to(r.useful_gb_s);
  const auto& m = j.at("model");
  m.at("load_sectors_per_warp").get_to(r.model.load_sectors_per_warp);
  m.at("request_efficiency").get_to(r.model.request_efficiency);
  m.at("dram_efficiency_32b").get_to(r.model.dram_efficiency_32b);
}
void from_json(const json& j, LayoutSamples& s) { j.at("rows").get_to(s.rows); }

void from_json(const json& j, TransposeRow& r) {
  j.at("kernel").get_to(r.kernel);
  j.at("useful_gb_s").get_to(r.useful_gb_s);
  const auto& m = j.at("model");
  m.at("read_sectors_per_warp").get_to(r.model.read_sectors_per_warp);
  m.at("write_sectors_per_warp").get_to(r.model.write_sectors_per_warp);
  m.at("shared_load_ways").get_to(r.model.shared_load_ways);
  m.at("request_efficiency").get_to(r.model.request_efficiency);
  m.at("dram_efficiency_32b").get_to(r.model.dram_efficiency_32b);
}
void from_json(const json& j, TransposeSamples& s) { j.at("rows").get_to(s.rows); }

}  // namespace gpuprobe::probes::bwhost
