#include "probes/bandwidth/stream_select.hpp"

#include <sstream>

#include "core/confidence.hpp"
#include "probes/bandwidth/bandwidth_common.hpp"

namespace gpuprobe::probes::bwhost {
namespace {

bool candidate(const json& row) {
  return row.value("status", std::string("passed")) == "passed" && !row.value("reference", false) &&
         row.contains("gb_s");
}
double median_of(const json& row) { return row.at("gb_s").at("median").get<double>(); }

std::string describe(const json& row) {
  std::ostringstream d;
  d << row.at("width_bytes").get<int>() << " B/thread";
  if (row.at("load") != "-") d << ", " << row.at("load").get<std::string>();
  if (row.at("store") != "-") d << ", " << row.at("store").get<std::string>();
  d << ", unroll " << row.at("unroll").get<int>() << ", " << row.at("scheme").get<std::string>()
    << " index, ";
  if (row.value("grid", "persistent") != "persistent")
    d << "a grid covering the array (" << row.at("blocks").get<std::uint64_t>() << " blocks of "
      << row.at("threads_per_block").get<int>() << " threads)";
  else
    d << row.at("blocks_per_sm").get<int>() << " x " << row.at("threads_per_block").get<int>()
      << " threads per SM";
  if (row.value("passes", 1) > 1) d << ", " << row.at("passes").get<int>() << " passes per launch";
  if (row.value("dst_shift_bytes", 0) > 0)
    d << ", destination " << row.at("dst_shift_bytes").get<std::uint64_t>()
      << " B into its allocation";
  return d.str();
}

}  // namespace

std::map<std::string, std::size_t> stream_winners(const json& rows, const std::string& base) {
  std::map<std::string, std::size_t> out;
  std::optional<std::size_t> best, single;
  std::map<int, std::size_t> by_width;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& row = rows[i];
    if (!candidate(row)) continue;
    const double med = median_of(row);
    if (!best || med > median_of(rows[*best])) best = i;
    if (row.value("passes", 1) == 1 && (!single || med > median_of(rows[*single]))) single = i;
    auto it = by_width.find(row.at("width_bytes").get<int>());
    if (it == by_width.end())
      by_width.emplace(row.at("width_bytes").get<int>(), i);
    else if (med > median_of(rows[it->second]))
      it->second = i;
  }
  if (!best) return out;
  out[base] = *best;
  if (rows[*best].value("passes", 1) > 1 && single) out[base + ".single_pass"] = *single;
  for (const auto& [w, i] : by_width) out[base + ".width_" + std::to_string(w) + "b"] = i;
  return out;
}

Curve stream_variants_curve(const json& rows, double peak) {
  Curve c{"variants",
          {"stage",
           "width_bytes",
           "load",
           "store",
           "unroll",
           "scheme",
           "passes",
           "threads_per_block",
           "blocks_per_sm",
           "dst_shift_bytes",
           "bytes_in_flight_per_sm",
           "launches_per_sample",
           "gb_s_median",
           "gb_s_min",
           "gb_s_p5",
           "gb_s_p95",
           "n",
           "peak_gb_s",
           "percent_of_peak",
           "status",
           "reason"},
          {}};
  for (const auto& row : rows) {
    const bool ok = row.contains("gb_s");
    auto cell = [&](const char* k) -> json { return row.contains(k) ? row.at(k) : json(""); };
    auto stat = [&](const char* k) -> json { return ok ? row.at("gb_s").at(k) : json(""); };
    c.rows.push_back({cell("stage"),
                      cell("width_bytes"),
                      cell("load"),
                      cell("store"),
                      cell("unroll"),
                      cell("scheme"),
                      cell("passes"),
                      cell("threads_per_block"),
                      cell("blocks_per_sm"),
                      cell("dst_shift_bytes"),
                      cell("bytes_in_flight_per_sm"),
                      stat("launches_per_sample"),
                      stat("median"),
                      stat("min"),
                      stat("p5"),
                      stat("p95"),
                      stat("n"),
                      peak,
                      stat("percent_of_peak_median"),
                      row.value("status", std::string("passed")),
                      cell("reason")});
  }
  return c;
}

void analyze_stream(ExperimentResult& r, const std::string& base,
                    const std::string& reference_suffix) {
  const auto& rows = r.samples.at("variants");
  const double peak = r.parameters.value("peak_gb_s", 0.0);
  std::size_t candidates = 0;
  for (const auto& row : rows) candidates += candidate(row) ? 1 : 0;
  // Confirmations as recorded, or for an older record the search's best rows standing in.
  const bool confirmed = r.samples.contains("confirmations");
  json confirmations = json::array();
  if (confirmed) {
    confirmations = r.samples.at("confirmations");
  } else {
    for (const auto& [finding, i] : stream_winners(rows, base)) {
      const json& row = rows[i];
      json c = {{"finding", finding},
                {"winner_row", i},
                {"search_value", median_of(row)},
                {"status", "passed"},
                {"value", median_of(row)},
                {"samples", row.at("gb_s").value("values", std::vector<double>{})},
                {"gb_s", row.at("gb_s")}};
      confirmations.push_back(c);
    }
  }
  std::string failed;
  json not_emitted = json::array();
  for (const auto& c : confirmations) {
    const std::string name = c.at("finding");
    const json& row = rows.at(c.at("winner_row").get<std::size_t>());
    if (c.at("status") != "passed") {
      failed += (failed.empty() ? "" : "; ") + name + ": " + c.value("reason", std::string("?"));
      continue;
    }
    const double value = c.at("value").get<double>();
    const auto samples = c.at("samples").get<std::vector<double>>();
    if (confirmed && samples.size() < 3) {
      // Too few samples for any precision: no evidence, no finding.
      not_emitted.push_back(name + ": the confirmation has " + std::to_string(samples.size()) +
                            " samples; at least 3 are needed");
      continue;
    }
    std::string method = confirmed ? "confirmation pass (fresh buffers and data, " +
                                         std::to_string(samples.size()) +
                                         " repetitions) of the search's winner over " +
                                         std::to_string(candidates) + " passed variants: "
                                   : "search's best median over " + std::to_string(candidates) +
                                         " variants (recorded without a confirmation pass): ";
    Finding f{
        name,          value, "GB/s", confidence::precision(samples, value), method + describe(row),
        json::object()};
    const json& st = c.at("gb_s");
    f.extra["peak_gb_s"] = peak;
    f.extra["percent_of_peak"] = percent_of(value, peak);
    f.extra["min_gb_s"] = st.at("min");
    f.extra["p5_gb_s"] = st.at("p5");
    f.extra["p95_gb_s"] = st.at("p95");
    f.extra["repetitions"] = st.at("n");
    f.extra["search_median_gb_s"] = c.at("search_value");
    if (value > 0)
      f.extra["search_over_confirmed_percent"] =
          (c.at("search_value").get<double>() / value - 1.0) * 100.0;
    f.extra["bytes_per_thread"] = row.at("width_bytes");
    f.extra["variant"] = {{"load", row.at("load")},
                          {"store", row.at("store")},
                          {"unroll", row.at("unroll")},
                          {"scheme", row.at("scheme")},
                          {"passes", row.value("passes", 1)},
                          {"dst_shift_bytes", row.value("dst_shift_bytes", 0)},
                          {"blocks_per_sm", row.at("blocks_per_sm")},
                          {"threads_per_block", row.at("threads_per_block")}};
    f.extra["counted_bytes_per_launch"] = row.at("counted_bytes_per_launch");
    f.extra["verified_with_passes"] = c.value("verified_with_passes", row.value("passes", 1));
    r.findings.push_back(f);
  }
  // The driver's own kernels: measured once, not selected, so reported as measured.
  json refs = r.samples.value("references", json::array());
  for (const auto& row : rows)
    if (row.value("reference", false)) refs.push_back(row);
  for (const auto& row : refs) {
    auto f = bandwidth_finding(base + reference_suffix, row.at("gb_s"), peak,
                               "the driver's own kernel: " + row.at("label").get<std::string>());
    f.extra["counted_bytes_per_launch"] = row.at("counted_bytes_per_launch");
    r.findings.push_back(f);
  }
  // Evidence for saturation: the best search median at each amount of data in flight per SM.
  std::map<std::uint64_t, double> by_flight;
  std::map<int, double> by_unroll;
  for (const auto& row : rows) {
    if (!candidate(row)) continue;
    const double med = median_of(row);
    auto& f = by_flight[row.at("bytes_in_flight_per_sm").get<std::uint64_t>()];
    f = std::max(f, med);
    if (row.at("stage") == "bytes_in_flight") {
      auto& u = by_unroll[row.at("unroll").get<int>()];
      u = std::max(u, med);
    }
  }
  json flight = json::array();
  for (const auto& [b, g] : by_flight)
    flight.push_back({{"bytes_in_flight_per_sm", b},
                      {"best_gb_s", g},
                      {"percent_of_peak", percent_of(g, peak)}});
  json unroll = json::array();
  for (const auto& [u, g] : by_unroll)
    unroll.push_back({{"unroll", u}, {"best_gb_s", g}, {"percent_of_peak", percent_of(g, peak)}});
  r.statistics["best_by_bytes_in_flight_per_sm"] = flight;
  r.statistics["best_by_unroll"] = unroll;
  r.statistics["confirmations"] = confirmations.size();
  if (!not_emitted.empty()) r.statistics["findings_not_emitted"] = not_emitted;
  if (!failed.empty()) {
    r.statistics["failed_confirmations"] = failed;
    r.status = Status::kError;
    r.reason = "a reported winner failed its confirmation: " + failed;
  }
}

}  // namespace gpuprobe::probes::bwhost
