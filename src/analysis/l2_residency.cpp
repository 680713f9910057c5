#include "analysis/l2_residency.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/confidence.hpp"
#include "core/line_select.hpp"
#include "core/stats.hpp"
#include "core/text_input.hpp"

namespace gpuprobe::analysis::residency {

std::string Samples::problem() const {
  std::size_t there = 0, gone = 0;
  for (const auto& t : trials) {
    if (t.cycles.empty())
      return "a trial of group " + text_input::quoted(t.group) + " has no cycles";
    if (!(t.select_share > 0.0 && t.select_share <= 1.0))
      return "a trial of group " + text_input::quoted(t.group) + " has select_share outside (0, 1]";
    there += t.group == "control_there";
    gone += t.group == "control_gone";
  }
  if (!there || !gone || l2_bytes == 0)
    return "samples need both controls (control_there, control_gone) and l2_bytes";
  return "";
}

Classifier classify(const std::vector<Trial>& trials) {
  std::vector<double> there, gone;
  for (const auto& t : trials) {
    if (t.group == "control_there") there.insert(there.end(), t.cycles.begin(), t.cycles.end());
    if (t.group == "control_gone") gone.insert(gone.end(), t.cycles.begin(), t.cycles.end());
  }
  Classifier c;
  if (there.empty() || gone.empty()) return c;
  c.there_median = stats::median(there);
  c.gone_median = stats::median(gone);
  // Lines in the L2 come near and far (a partitioned L2), so the midpoint of the slowest there
  // and the fastest gone, when they do not overlap; else of the medians.
  const double there_p95 = stats::quantile(there, 0.95), gone_p5 = stats::quantile(gone, 0.05);
  c.threshold =
      there_p95 < gone_p5 ? (there_p95 + gone_p5) / 2 : (c.there_median + c.gone_median) / 2;
  c.separation = confidence::separation(confidence::separation_z(there, gone));
  return c;
}

double stayed(const Trial& t, const Classifier& c) {
  if (t.cycles.empty()) return 0.0;
  const auto n =
      std::count_if(t.cycles.begin(), t.cycles.end(), [&](double x) { return x < c.threshold; });
  return static_cast<double>(n) / static_cast<double>(t.cycles.size());
}

double rule_capacity(const std::string& rule, double share, std::uint64_t set_aside,
                     std::uint64_t l2_bytes, int ways) {
  const double l = static_cast<double>(set_aside), l2 = static_cast<double>(l2_bytes);
  if (rule == "bytes") return share * l;
  if (ways <= 0 || l2 <= 0) return 0.0;
  const double q = static_cast<double>(ways) * l / l2;
  const double whole = rule == "ways_floor" ? std::floor(q + 1e-9) : std::round(q);
  return l2 * whole / static_cast<double>(ways);
}

double rule_predict(const RuleFit& fit, const RulePoint& p, std::uint64_t l2_bytes, int ways) {
  if (p.window_bytes == 0) return 0.0;
  const double c = rule_capacity(fit.rule, fit.share, p.set_aside_bytes, l2_bytes, ways);
  return std::min(p.hit_ratio, c / static_cast<double>(p.window_bytes));
}

namespace {

double rms_of(const std::string& rule, double share, const std::vector<RulePoint>& points,
              std::uint64_t l2_bytes, int ways, double plain) {
  RuleFit f;
  f.rule = rule;
  f.share = share;
  double sum = 0;
  for (const auto& p : points) {
    const double e = std::max(plain, rule_predict(f, p, l2_bytes, ways)) - p.measured;
    sum += e * e;
  }
  return points.empty() ? 0.0 : std::sqrt(sum / static_cast<double>(points.size()));
}

}  // namespace

RuleFit fit_rule(const std::vector<RulePoint>& points, std::uint64_t l2_bytes, int ways,
                 double plain) {
  RuleFit fit;
  fit.points = points.size();
  if (points.empty()) return fit;
  const bool any_kept = std::any_of(points.begin(), points.end(),
                                    [&](const RulePoint& p) { return p.measured > plain + 0.1; });
  if (!any_kept) {
    fit.rule = "none";
    return fit;
  }
  // The bytes rule's share: a grid over 0 .. 2 (a set-aside may hold less or, with copies in
  // both partitions counted once, more than it names).
  double best_share = 0, best_rms = std::numeric_limits<double>::max();
  for (int i = 1; i <= 400; ++i) {
    const double k = i * 0.005;
    const double r = rms_of("bytes", k, points, l2_bytes, ways, plain);
    if (r < best_rms) {
      best_rms = r;
      best_share = k;
    }
  }
  struct Candidate {
    std::string rule;
    double share, rms;
  };
  std::vector<Candidate> c{{"bytes", best_share, best_rms}};
  if (ways > 0)
    for (const std::string r : {"ways_floor", "ways_round"})
      c.push_back({r, 0.0, rms_of(r, 0.0, points, l2_bytes, ways, plain)});
  std::sort(c.begin(), c.end(),
            [](const Candidate& a, const Candidate& b) { return a.rms < b.rms; });
  fit.rule = c.front().rule;
  fit.share = c.front().share;
  fit.rms = c.front().rms;
  fit.runner_up_rms = c.size() > 1 ? c[1].rms : c.front().rms;
  if (c.size() > 1) {
    fit.runner_up = c[1].rule;
    fit.runner_up_share = c[1].share;
  }
  // The bytes rule with its share at 1 / ways steps is a ways rule too: prefer the ways rule
  // only when it fits clearly better, the bytes rule (fewer assumptions) otherwise.
  if (c.size() > 1 && c.front().rule != "bytes" && best_rms - c.front().rms < 0.01) {
    fit.rule = "bytes";
    fit.share = best_share;
    fit.runner_up_rms = c.front().rms;
    fit.runner_up = c.front().rule;
    fit.runner_up_share = 0;
    fit.rms = best_rms;
  }
  return fit;
}

void to_json(nlohmann::json& j, const Samples& s) {
  j = {{"l2_bytes", s.l2_bytes},
       {"l2_ways", s.l2_ways},
       {"max_set_aside_bytes", s.max_set_aside_bytes},
       {"max_window_bytes", s.max_window_bytes},
       {"set_aside_found_bytes", s.set_aside_found_bytes},
       {"requests", s.requests},
       {"trials", s.trials}};
  if (!s.discard.empty()) j["discard"] = s.discard;
}

void from_json(const nlohmann::json& j, Samples& s) {
  j.at("l2_bytes").get_to(s.l2_bytes);
  j.at("l2_ways").get_to(s.l2_ways);
  j.at("max_set_aside_bytes").get_to(s.max_set_aside_bytes);
  j.at("max_window_bytes").get_to(s.max_window_bytes);
  j.at("set_aside_found_bytes").get_to(s.set_aside_found_bytes);
  j.at("requests").get_to(s.requests);
  j.at("trials").get_to(s.trials);
  s.discard.clear();
  if (j.contains("discard")) j.at("discard").get_to(s.discard);
}

DiscardVerdict judge_discard(const std::vector<DiscardTrial>& trials) {
  DiscardVerdict v;
  std::size_t dropped = 0, written = 0;
  for (const auto& t : trials) {
    const double words = static_cast<double>(t.own_words + t.marked_words + t.other_words);
    if (words <= 0) continue;
    const double kept = static_cast<double>(t.marked_words) / words;
    const double old = static_cast<double>(t.own_words) / words;
    if (!t.discarded) {
      ++v.controls;
      v.stored_kept += kept;
      v.controls_ok += kept >= 0.95;
      continue;
    }
    ++v.discarded;
    v.discarded_kept += kept;
    v.discarded_old += old;
    dropped += old >= 0.95;
    written += kept >= 0.95;
  }
  if (v.controls) v.stored_kept /= static_cast<double>(v.controls);
  if (v.discarded) {
    v.discarded_kept /= static_cast<double>(v.discarded);
    v.discarded_old /= static_cast<double>(v.discarded);
  }
  if (!v.controls || !v.discarded || v.controls_ok * 2 <= v.controls) return v;
  v.agreeing = std::max({dropped, written, v.discarded - dropped - written});
  v.outcome = v.agreeing == dropped ? "dropped" : v.agreeing == written ? "written_back" : "mixed";
  v.confidence = confidence::combine({confidence::agreement(v.controls_ok, v.controls),
                                      confidence::agreement(v.agreeing, v.discarded)});
  return v;
}

}  // namespace gpuprobe::analysis::residency

namespace gpuprobe::analysis::residency {

std::uint64_t placed_bytes(const Trial& t) {
  const std::uint64_t threshold = line_select::threshold_of(t.select_share);
  if (threshold >= line_select::kAll) return t.region_bytes;
  constexpr std::uint64_t kLine = line_select::kLineBytes;
  std::uint64_t lines = 0;
  for (std::uint64_t o = t.region_offset / kLine * kLine; o < t.region_offset + t.region_bytes;
       o += kLine)
    lines += line_select::selected(o / kLine, t.select_seed, threshold);
  return lines * kLine;
}

double binomial_capped_share(int n, double p, int k) {
  if (n <= 0 || p <= 0 || k >= n) return 1.0;
  if (k <= 0) return 0.0;
  if (p >= 1) return static_cast<double>(k) / n;
  double capped = 0;
  for (int x = 0; x <= n; ++x) {
    const double log_pmf = std::lgamma(n + 1.0) - std::lgamma(x + 1.0) - std::lgamma(n - x + 1.0) +
                           x * std::log(p) + (n - x) * std::log1p(-p);
    capped += std::exp(log_pmf) * std::min(x, k);
  }
  return std::min(1.0, capped / (n * p));
}

namespace {

/// The pooled kept share of a group's trials at a set-aside, its sampled lines and bytes placed.
struct Pooled {
  double kept = 0;
  std::size_t lines = 0;
  std::uint64_t placed = 0, span = 0;
  std::size_t trials = 0;
};

Pooled pool(const std::vector<Trial>& trials, const Classifier& c, const std::string& group,
            std::uint64_t set_aside) {
  Pooled p;
  double stayed_lines = 0;
  for (const auto& t : trials) {
    if (t.group != group || t.set_aside_bytes != set_aside || t.cycles.empty()) continue;
    stayed_lines += stayed(t, c) * static_cast<double>(t.cycles.size());
    p.lines += t.cycles.size();
    if (p.trials++ == 0) {
      p.placed = placed_bytes(t);
      p.span = t.region_bytes;
    }
  }
  if (p.lines) p.kept = stayed_lines / static_cast<double>(p.lines);
  return p;
}

/// A pooled share's binomial standard error, never 0 (a share of all or none is known to about
/// one line in the sample).
double share_se(double r, std::size_t n) {
  const double lines = static_cast<double>(std::max<std::size_t>(n, 1));
  return std::sqrt((r * (1 - r) + 1 / lines) / lines);
}

}  // namespace

CapRuleVerdict judge_cap_rule(const std::vector<Trial>& trials, const Classifier& c,
                              std::uint64_t l2_bytes, int ways, std::uint64_t set_aside) {
  CapRuleVerdict v;
  v.set_aside_bytes = set_aside;
  const auto even = pool(trials, c, "cap_even", set_aside);
  const auto scattered = pool(trials, c, "cap_scattered", set_aside);
  v.even_kept = even.kept;
  v.scattered_kept = scattered.kept;
  v.even_lines = even.lines;
  v.scattered_lines = scattered.lines;
  if (!even.trials || !scattered.trials || ways <= 0 || l2_bytes == 0 || scattered.placed == 0)
    return v;
  const double l2 = static_cast<double>(l2_bytes), w = static_cast<double>(ways);
  v.cap_ways = static_cast<int>(std::floor(w * static_cast<double>(set_aside) / l2 + 1e-9));
  if (v.cap_ways <= 0) return v;
  // Lines per set: the span's (n) and the share of them selected.
  const int n = static_cast<int>(std::lround(w * static_cast<double>(scattered.span) / l2));
  const double share = static_cast<double>(scattered.placed) / static_cast<double>(scattered.span);
  v.lines_per_set = n * share;
  // Not scaled by what the even placement lost: a contiguous range's lines land a few sets
  // one line over k (the hash is not perfectly even), a loss the random draw already has.
  v.predicted_per_set = binomial_capped_share(n, share, v.cap_ways);
  v.predicted_byte_budget = std::min(
      1.0, even.kept * static_cast<double>(even.placed) / static_cast<double>(scattered.placed));
  const double se_s = share_se(scattered.kept, scattered.lines);
  const double se_e = share_se(even.kept, even.lines);
  const double se = std::sqrt(se_s * se_s + se_e * se_e);
  v.z_per_set = std::abs(scattered.kept - v.predicted_per_set) / se;
  v.z_byte_budget = std::abs(scattered.kept - v.predicted_byte_budget) / se;
  v.z_between = std::abs(v.predicted_per_set - v.predicted_byte_budget) / se;
  if (v.z_between < 2) {
    // The two rules predict the same here: what the data say is no choice between them.
    v.confidence = 0.1;
    return v;
  }
  const bool per_set = v.z_per_set <= v.z_byte_budget;
  const double z_near = per_set ? v.z_per_set : v.z_byte_budget;
  const double z_far = per_set ? v.z_byte_budget : v.z_per_set;
  const double off =
      std::abs(scattered.kept - (per_set ? v.predicted_per_set : v.predicted_byte_budget));
  if (z_near > 3 && off > 0.05) {
    v.outcome = "neither";
    v.confidence = confidence::combine({c.separation, confidence::separation(z_near)});
    return v;
  }
  v.outcome = per_set ? "per_set" : "byte_budget";
  v.confidence = confidence::combine({c.separation, confidence::separation(z_far)});
  return v;
}

}  // namespace gpuprobe::analysis::residency
