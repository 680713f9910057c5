// The JSON conversions of smem.bank_conflicts' and smem.bandwidth's samples.
#include "probes/smem/smem_samples.hpp"

#include "core/confidence.hpp"

namespace gpuprobe::probes::smem {

using nlohmann::json;

double MeasuredSummary::precision() const {
  if (!n || !mad) return 0.0;
  return confidence::precision_from_mad(*n, *mad, median);
}

void to_json(json& j, const MeasuredSummary& s) {
  j = {{"median", s.median}};
  if (s.n) j["n"] = *s.n;
  if (s.mad) j["mad"] = *s.mad;
}
void from_json(const json& j, MeasuredSummary& s) {
  // Presence first, as precision_of_summary asks; then the median, which every reader needs.
  const bool has_n = j.contains("n"), has_mad = j.contains("mad");
  s.n = has_n && has_mad && j.contains("median") ? std::optional(j.at("n").get<std::size_t>())
                                                 : std::nullopt;
  s.mad = s.n ? std::optional(j.at("mad").get<double>()) : std::nullopt;
  j.at("median").get_to(s.median);
}

void to_json(json& j, const BankCase& c) {
  j = {{"word_bytes", c.word_bytes},
       {"stride", c.stride},
       {"mode", c.mode},
       {"threads", c.threads},
       {"chains_per_thread", c.chains_per_thread},
       {"loads_per_chain", c.loads_per_chain},
       {"cycles_per_access", c.cycles_per_access}};
}
void from_json(const json& j, BankCase& c) {
  j.at("word_bytes").get_to(c.word_bytes);
  j.at("stride").get_to(c.stride);
  j.at("mode").get_to(c.mode);
  c.threads = j.value("threads", 0);
  c.chains_per_thread = j.value("chains_per_thread", 0);
  c.loads_per_chain = j.value("loads_per_chain", std::uint32_t{0});
  j.at("cycles_per_access").get_to(c.cycles_per_access);
}
void to_json(json& j, const BankSamples& s) { j = {{"cases", s.cases}}; }
void from_json(const json& j, BankSamples& s) { j.at("cases").get_to(s.cases); }

void to_json(json& j, const BandwidthPoint& p) {
  j = {{"word_bytes", p.word_bytes},
       {"bytes_per_clk_per_sm", p.bytes_per_clk_per_sm},
       {"bytes_per_s_median", p.bytes_per_s_median},
       {"sm_clock_mhz_measured", p.sm_clock_mhz_measured}};
}
void from_json(const json& j, BandwidthPoint& p) {
  j.at("word_bytes").get_to(p.word_bytes);
  j.at("bytes_per_clk_per_sm").get_to(p.bytes_per_clk_per_sm);
  j.at("bytes_per_s_median").get_to(p.bytes_per_s_median);
  j.at("sm_clock_mhz_measured").get_to(p.sm_clock_mhz_measured);
}
void to_json(json& j, const BandwidthSamples& s) { j = {{"points", s.points}}; }
void from_json(const json& j, BandwidthSamples& s) { j.at("points").get_to(s.points); }

}  // namespace gpuprobe::probes::smem
