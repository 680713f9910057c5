#include "probes/bandwidth/stream_select.hpp"

#include <sstream>

#include "core/confidence.hpp"
#include "core/samples.hpp"
#include "probes/bandwidth/bandwidth_common.hpp"

namespace gpuprobe::probes::bwhost {
namespace {

std::string describe(const StreamRow& row) {
  std::ostringstream d;
  d << *row.width_bytes << " B/thread";
  if (*row.load != "-") d << ", " << *row.load;
  if (*row.store != "-") d << ", " << *row.store;
  d << ", unroll " << *row.unroll << ", " << *row.scheme << " index, ";
  if (!row.persistent())
    d << "a grid covering the array (" << *row.blocks << " blocks of " << *row.threads_per_block
      << " threads)";
  else
    d << *row.blocks_per_sm << " x " << *row.threads_per_block << " threads per SM";
  if (row.passes.value_or(1) > 1) d << ", " << *row.passes << " passes per launch";
  if (row.dst_shift_bytes.value_or(0) > 0)
    d << ", destination " << *row.dst_shift_bytes << " B into its allocation";
  return d.str();
}

/// A cell of the variants table: the value, or "" when the row does not hold it.
template <class V>
json cell(const std::optional<V>& v) {
  return v ? json(*v) : json("");
}

}  // namespace

std::map<std::string, std::size_t> stream_winners(const std::vector<StreamRow>& rows,
                                                  const std::string& base) {
  std::map<std::string, std::size_t> out;
  std::optional<std::size_t> best, single;
  std::map<int, std::size_t> by_width;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const StreamRow& row = rows[i];
    if (!row.candidate()) continue;
    const double med = row.median();
    if (!best || med > rows[*best].median()) best = i;
    if (row.passes.value_or(1) == 1 && (!single || med > rows[*single].median())) single = i;
    auto it = by_width.find(*row.width_bytes);
    if (it == by_width.end())
      by_width.emplace(*row.width_bytes, i);
    else if (med > rows[it->second].median())
      it->second = i;
  }
  if (!best) return out;
  out[base] = *best;
  if (rows[*best].passes.value_or(1) > 1 && single) out[base + ".single_pass"] = *single;
  for (const auto& [w, i] : by_width) out[base + ".width_" + std::to_string(w) + "b"] = i;
  return out;
}

Curve stream_variants_curve(const std::vector<StreamRow>& rows, double peak) {
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
    const bool ok = row.gb_s.has_value();
    auto stat = [&](double GbpsStats::*k) -> json { return ok ? json(row.gb_s->stats.*k) : ""; };
    c.rows.push_back({row.stage,
                      cell(row.width_bytes),
                      cell(row.load),
                      cell(row.store),
                      cell(row.unroll),
                      cell(row.scheme),
                      cell(row.passes),
                      cell(row.threads_per_block),
                      cell(row.blocks_per_sm),
                      cell(row.dst_shift_bytes),
                      cell(row.bytes_in_flight_per_sm),
                      ok ? cell(row.gb_s->launches_per_sample) : json(""),
                      stat(&GbpsStats::median),
                      stat(&GbpsStats::min),
                      stat(&GbpsStats::p5),
                      stat(&GbpsStats::p95),
                      ok ? json(row.gb_s->stats.n) : json(""),
                      peak,
                      ok ? cell(row.gb_s->percent_of_peak_median) : json(""),
                      row.status,
                      cell(row.reason)});
  }
  return c;
}

namespace {

/// An older record's stand-in for the confirmations: the search's best rows as they were
/// measured in the search.
std::vector<StreamConfirmation> search_best(const std::vector<StreamRow>& rows,
                                            const std::string& base) {
  std::vector<StreamConfirmation> out;
  for (const auto& [finding, i] : stream_winners(rows, base)) {
    const GbpsStats& st = rows[i].gb_s->stats;
    StreamConfirmation c;
    c.finding = finding;
    c.winner_row = i;
    c.search_value = st.median;
    c.status = "passed";
    c.value = st.median;
    c.samples = st.values.value_or(std::vector<double>{});
    c.gb_s = st;
    out.push_back(std::move(c));
  }
  return out;
}

/// The finding of one passed confirmation of `row` (the winner it re-measured).
Finding confirmed_finding(const StreamConfirmation& c, const StreamRow& row, double peak,
                          const std::string& method) {
  const double value = c.value;
  Finding f{
      c.finding,     value, "GB/s", confidence::precision(c.samples, value), method + describe(row),
      json::object()};
  const GbpsStats& st = *c.gb_s;
  f.extra["peak_gb_s"] = peak;
  f.extra["percent_of_peak"] = percent_of(value, peak);
  f.extra["min_gb_s"] = st.min;
  f.extra["p5_gb_s"] = st.p5;
  f.extra["p95_gb_s"] = st.p95;
  f.extra["repetitions"] = st.n;
  f.extra["search_median_gb_s"] = c.search_value;
  if (value > 0) f.extra["search_over_confirmed_percent"] = (c.search_value / value - 1.0) * 100.0;
  f.extra["bytes_per_thread"] = *row.width_bytes;
  f.extra["variant"] = {{"load", *row.load},
                        {"store", *row.store},
                        {"unroll", *row.unroll},
                        {"scheme", *row.scheme},
                        {"passes", row.passes.value_or(1)},
                        {"dst_shift_bytes", row.dst_shift_bytes.value_or(0)},
                        {"blocks_per_sm", *row.blocks_per_sm},
                        {"threads_per_block", *row.threads_per_block}};
  f.extra["counted_bytes_per_launch"] = *row.counted_bytes_per_launch;
  f.extra["verified_with_passes"] = c.verified_with_passes.value_or(row.passes.value_or(1));
  return f;
}

/// Evidence for saturation: the best search median at each amount of data in flight per SM,
/// and at each unroll of the bytes_in_flight stage.
void saturation_statistics(ExperimentResult& r, const std::vector<StreamRow>& rows, double peak) {
  std::map<std::uint64_t, double> by_flight;
  std::map<int, double> by_unroll;
  for (const auto& row : rows) {
    if (!row.candidate()) continue;
    const double med = row.median();
    auto& f = by_flight[*row.bytes_in_flight_per_sm];
    f = std::max(f, med);
    if (row.stage == "bytes_in_flight") {
      auto& u = by_unroll[*row.unroll];
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
}

}  // namespace

void analyze_stream(ExperimentResult& r, const std::string& base,
                    const std::string& reference_suffix) {
  const auto s = samples_as<StreamSamples>(r);
  const auto& rows = s.variants;
  const double peak = r.parameters.value("peak_gb_s", 0.0);
  std::size_t candidates = 0;
  for (const auto& row : rows) candidates += row.candidate() ? 1 : 0;
  // Confirmations as recorded, or for an older record the search's best rows standing in.
  const bool confirmed = s.confirmations.has_value();
  const std::vector<StreamConfirmation> confirmations =
      confirmed ? *s.confirmations : search_best(rows, base);
  std::string failed;
  json not_emitted = json::array();
  for (const auto& c : confirmations) {
    const StreamRow& row = rows[c.winner_row];
    if (!c.passed()) {
      failed += (failed.empty() ? "" : "; ") + c.finding + ": " + c.reason.value_or("?");
      continue;
    }
    if (confirmed && c.samples.size() < 3) {
      // Too few samples for any precision: no evidence, no finding.
      not_emitted.push_back(c.finding + ": the confirmation has " +
                            std::to_string(c.samples.size()) + " samples; at least 3 are needed");
      continue;
    }
    const std::string method = confirmed
                                   ? "confirmation pass (fresh buffers and data, " +
                                         std::to_string(c.samples.size()) +
                                         " repetitions) of the search's winner over " +
                                         std::to_string(candidates) + " passed variants: "
                                   : "search's best median over " + std::to_string(candidates) +
                                         " variants (recorded without a confirmation pass): ";
    r.findings.push_back(confirmed_finding(c, row, peak, method));
  }
  // The driver's own kernels: measured once, not selected, so reported as measured.
  std::vector<StreamRow> refs = s.references;
  for (const auto& row : rows)
    if (row.reference) refs.push_back(row);
  for (const auto& row : refs) {
    auto f = bandwidth_finding(base + reference_suffix, row.gb_s->stats, peak,
                               "the driver's own kernel: " + *row.label);
    f.extra["counted_bytes_per_launch"] = *row.counted_bytes_per_launch;
    r.findings.push_back(f);
  }
  saturation_statistics(r, rows, peak);
  r.statistics["confirmations"] = confirmations.size();
  if (!not_emitted.empty()) r.statistics["findings_not_emitted"] = not_emitted;
  if (!failed.empty()) {
    r.statistics["failed_confirmations"] = failed;
    r.status = Status::kError;
    r.reason = "a reported winner failed its confirmation: " + failed;
  }
}

}  // namespace gpuprobe::probes::bwhost
