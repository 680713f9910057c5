// cache.l2.persisting: what the persisting set-aside keeps. The driver's limits are read and the
// set-aside's accepted values probed; then regions placed under an access-policy window
// (hitProp persisting) are followed by plain traffic of twice the L2, and a first pass over
// sampled lines says what stayed (residency_trials.hpp). Windows of several sizes, set-asides
// and hit ratios give the capacity rule, which a second layout of the window (another offset,
// other sizes) must then predict; hitProp streaming and missProp are compared with plain
// placement under lighter traffic. The set-aside found is put back and every persisting line
// reset when the experiment ends, whatever happens (SetAsideGuard).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "analysis/l2_residency.hpp"
#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/finding_names.hpp"
#include "core/l2_residency.hpp"
#include "core/samples.hpp"
#include "core/units.hpp"
#include "probes/cache/l2_residency.hpp"
#include "probes/cache/residency_trials.hpp"
#include "probes/cache/sequence_session.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
using residency::kControlBytes;
using residency::Placement;
using residency::whole_mib;
using units::kMiB;
namespace rs = analysis::residency;

constexpr std::uint64_t kSecondLayoutGap = 6 * kMiB;  // not a multiple of any power-of-two unit

/// Everything one run asks, in order; `area` = the largest region (the second layout starts
/// after it).
struct Plan {
  std::vector<Placement> trials;
  std::uint64_t area = 0;
  std::uint64_t cap_end = 0;  ///< where the cap trials' regions end (they start at 0)
};

Plan plan_for(std::uint64_t l2, std::uint64_t max_set_aside, std::uint64_t max_window,
              std::uint64_t found, const std::vector<std::int64_t>& window_percent,
              const std::vector<std::int64_t>& hit_percent, int repeats, int ways) {
  Plan plan;
  const double s = static_cast<double>(max_set_aside);
  const auto window = [&](double bytes) { return std::min(whole_mib(bytes), max_window); };
  std::uint64_t largest = std::max(kControlBytes, window(static_cast<double>(l2) / 4));
  for (auto p : window_percent) largest = std::max(largest, window(s * p / 100.0));
  // Per set or a byte budget: the largest set-aside's whole ways, contiguous and scattered.
  Placement cap_base;
  cap_base.group = "cap";
  cap_base.set_aside_bytes = max_set_aside;
  cap_base.windowed = true;
  cap_base.window.hit_ratio = 1.0;
  cap_base.window.hit = AccessProperty::kPersisting;
  cap_base.window.miss = AccessProperty::kStreaming;
  cap_base.traffic_bytes = 2 * l2;
  const auto caps = residency::cap_placements(cap_base, l2, ways, max_window);
  for (const auto& p : caps) plan.cap_end = std::max(plan.cap_end, p.region_bytes);
  largest = std::max(largest, window(2 * s));
  plan.area = (largest + kSecondLayoutGap + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
  const std::uint64_t second = plan.area + kSecondLayoutGap;
  const auto add = [&](Placement p) {
    for (int r = 0; r < repeats; ++r) {
      p.repeat = r;
      p.select_seed = residency::scatter_seed(p, r);
      plan.trials.push_back(p);
    }
  };
  const auto windowed = [&](std::string group, std::uint64_t set_aside, std::uint64_t offset,
                            std::uint64_t bytes, double hit, AccessProperty hit_prop,
                            AccessProperty miss_prop, std::uint64_t traffic) {
    Placement p;
    p.group = std::move(group);
    p.set_aside_bytes = set_aside;
    p.region_offset = offset;
    p.region_bytes = bytes;
    p.windowed = true;
    p.window.hit_ratio = hit;
    p.window.hit = hit_prop;
    p.window.miss = miss_prop;
    p.traffic_bytes = traffic;
    return p;
  };
  const auto plain = [&](std::string group, std::uint64_t set_aside, std::uint64_t bytes,
                         std::uint64_t traffic) {
    Placement p;
    p.group = std::move(group);
    p.set_aside_bytes = set_aside;
    p.region_bytes = bytes;
    p.traffic_bytes = traffic;
    return p;
  };
  const auto P = AccessProperty::kPersisting, S = AccessProperty::kStreaming,
             N = AccessProperty::kNormal;
  const std::uint64_t heavy = 2 * l2, light = l2 / 2;
  const std::uint64_t full = max_set_aside;
  add(plain("control_there", found, kControlBytes, 0));
  Placement gone = plain("control_gone", found, kControlBytes, 0);
  gone.place = false;
  add(gone);
  add(plain("plain", full, window(s / 2), heavy));
  for (auto pct : window_percent)
    add(windowed("window_size", full, 0, window(s * pct / 100.0), 1.0, P, S, heavy));
  for (double share : {0.25, 0.5, 0.75}) {
    const auto set_aside = whole_mib(s * share);
    add(windowed("set_aside", set_aside, 0, window(2.0 * set_aside), 1.0, P, S, heavy));
  }
  for (auto h : hit_percent) add(windowed("hit_ratio", full, 0, window(s), h / 100.0, P, S, heavy));
  add(plain("plain_light", found, window(l2 / 4.0), light));
  add(windowed("hit_streaming", found, 0, window(l2 / 4.0), 1.0, S, S, light));
  add(windowed("miss_normal", full, 0, window(2 * s), 0.5, P, N, light));
  add(windowed("miss_streaming", full, 0, window(2 * s), 0.5, P, S, light));
  add(windowed("confirm", full, second, window(1.5 * s), 0.5, P, S, heavy));
  add(windowed("confirm", full, second, window(2 * s), 0.75, P, S, heavy));
  add(windowed("confirm", whole_mib(s / 2), second, window(s), 1.0, P, S, heavy));
  for (const auto& p : caps) add(p);
  return plan;
}

class L2Persisting : public Experiment {
 public:
  std::string id() const override { return "cache.l2.persisting"; }
  std::string description() const override {
    return "what the persisting L2 set-aside keeps: the driver's limits, then windows "
           "(cudaAccessPolicyWindow, hitProp persisting) of several sizes, set-asides and hit "
           "ratios, each followed by plain traffic of 2 x L2 and a timed first pass over 512 "
           "sampled lines; the capacity rule, checked on a second layout; whether the capacity "
           "is per set (contiguous against scattered lines); hitProp streaming and missProp "
           "against plain loads";
  }
  std::vector<std::string> depends_on() const override { return {"cache.l2.ways"}; }
  std::vector<std::string> produces() const override { return {"l2.persisting.*"}; }
  std::vector<Axis> typed_axes() const override {
    return {int_axis("window_percent", {25, 50, 75, 100, 125, 150, 200}, "%",
                     "window sizes, in percent of the largest set-aside", 5, 400),
            int_axis("hit_ratio_percent", {25, 50, 75}, "%",
                     "hitRatio of the windows as large as the set-aside", 1, 100),
            int_axis("repeats", {2}, "trials", "trials of every question", 1, 8)};
  }
  std::optional<std::string> waiver(const device::DeviceInfo& d) const override {
    if (d.cc_major < 8) return std::string("needs compute capability 8.0 (the L2 set-aside)");
    return std::nullopt;
  }
  void validate(const device::Device& d, const RunOptions& o) const override {
    auto* l2 = as_l2_residency(const_cast<device::Device&>(d));
    if (!l2) return;
    const auto limits = l2->persisting_limits();
    // The default sizes are clamped to the window limit by the plan; sizes a user asks for are
    // measured as asked, so one beyond the limit is refused.
    const auto axes = axis_values(o);
    if (!axes.overridden("window_percent")) return;
    for (auto p : axes.ints("window_percent")) {
      const double bytes = static_cast<double>(limits.max_set_aside_bytes) * p / 100.0;
      if (limits.max_window_bytes != 0 && bytes > static_cast<double>(limits.max_window_bytes))
        throw UsageError("cache.l2.persisting: window_percent " + std::to_string(p) + " is " +
                         units::format_bytes(static_cast<std::uint64_t>(bytes)) +
                         ", beyond accessPolicyMaxWindowSize (" +
                         units::format_bytes(limits.max_window_bytes) + ")");
    }
  }
  int samples_version() const override { return 1; }
  void run(Context& ctx, ExperimentResult& r) const override;
  void analyze(ExperimentResult& r) const override;
};

void L2Persisting::run(Context& ctx, ExperimentResult& r) const {
  auto* seq = as_sequencer(ctx.device);
  auto* l2 = as_l2_residency(ctx.device);
  if (!seq || !l2)
    return cache_structure::waive(r, "this device has no L2 residency controls (L2Residency)");
  const auto limits = l2->persisting_limits();
  if (limits.max_set_aside_bytes == 0)
    return cache_structure::waive(r, "persistingL2CacheMaxSize is 0: no persisting set-aside");
  const auto axes = axis_values(ctx.options);
  const std::uint64_t l2_bytes = ctx.device.info().l2_bytes;
  SetAsideGuard guard(*l2);
  const auto ways = ctx.prior.get(finding::kCacheL2Ways);
  const int l2_ways = ways ? static_cast<int>(ways->value) : 0;
  const auto plan =
      plan_for(l2_bytes, limits.max_set_aside_bytes, limits.max_window_bytes, guard.found(),
               axes.ints("window_percent"), axes.ints("hit_ratio_percent"),
               static_cast<int>(axes.ints("repeats").front()), l2_ways);
  // The traffic lies past every region: both layouts and the cap trials' spans.
  const std::uint64_t traffic_offset = std::max(
      2 * plan.area + kSecondLayoutGap, (plan.cap_end + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB));
  auto buffer = seq->alloc_probe_buffer(traffic_offset + 2 * l2_bytes);
  residency::TrialRunner runner(*l2, *seq, *buffer, traffic_offset, ctx.options.seed);
  rs::Samples samples;
  samples.l2_bytes = l2_bytes;
  samples.l2_ways = l2_ways;
  samples.max_set_aside_bytes = limits.max_set_aside_bytes;
  samples.max_window_bytes = limits.max_window_bytes;
  samples.set_aside_found_bytes = guard.found();
  const std::uint64_t odd = limits.max_set_aside_bytes / 3 + 4096 + 1;
  for (std::uint64_t ask :
       {std::uint64_t{0}, odd, limits.max_set_aside_bytes, limits.max_set_aside_bytes + 8 * kMiB})
    samples.requests.push_back(runner.request(ask));
  for (const auto& p : plan.trials) samples.trials.push_back(runner.run(p));
  r.parameters = {{"axes", axes.to_json()},
                  {"sampled_lines", residency::kSampledLines},
                  {"sm", 0},
                  {"second_layout_offset_bytes", plan.area + kSecondLayoutGap},
                  {"traffic_bytes_heavy", 2 * l2_bytes},
                  {"traffic_bytes_light", l2_bytes / 2}};
  r.protocol["l2_flush"] = "persisting lines reset, then the L2 flushed, before every trial";
  r.protocol["restore"] = "the set-aside found is put back and persisting lines reset at the end";
  r.samples = samples;
}

Finding limit_finding(const FindingKey& key, const std::string& name, double value,
                      const std::string& method) {
  return Finding{
      key.name ? std::string(key.name) : name, value, "bytes", 1.0, method, json::object()};
}

/// The step the driver keeps set-asides in: the greatest common divisor of every size it read
/// back (the one found, those asked, those the trials ran at), beside a way of the L2.
Finding set_aside_unit_finding(const rs::Samples& s) {
  std::vector<std::uint64_t> sizes{s.set_aside_found_bytes};
  for (const auto& q : s.requests)
    if (q.accepted) sizes.push_back(q.read_back_bytes);
  for (const auto& t : s.trials) sizes.push_back(t.set_aside_bytes);
  std::uint64_t unit = 0;
  std::size_t nonzero = 0;
  for (auto b : sizes)
    if (b > 0) {
      unit = std::gcd(unit, b);
      ++nonzero;
    }
  Finding f{"l2.persisting.set_aside_unit",
            static_cast<double>(unit),
            "bytes",
            nonzero >= 3 ? 1.0 : 0.3,
            "the greatest common divisor of every set-aside cudaDeviceGetLimit read back (the "
            "one found, those asked and those the trials ran at): the step the driver keeps a "
            "set-aside in",
            json::object()};
  f.extra["sizes"] = nonzero;
  if (s.l2_ways > 0 && unit > 0)
    f.extra["ways_of_l2"] = static_cast<double>(unit) * s.l2_ways / static_cast<double>(s.l2_bytes);
  return f;
}

/// What the driver did with a set-aside beyond its maximum.
int beyond_max_code(const rs::Samples& s) {
  for (const auto& q : s.requests) {
    if (q.requested_bytes <= s.max_set_aside_bytes) continue;
    if (!q.accepted) return 0;
    return q.read_back_bytes == q.requested_bytes ? 2 : 1;
  }
  return 0;
}

Finding rule_finding(const rs::RuleFit& fit, double separation) {
  const auto& labels = finding::labels::kPersistingRule;
  int code = -1;
  for (const auto& l : labels)
    if (fit.rule == l.label) code = l.code;
  // Confident when the best rule fits within a few percent and clearly better than the next.
  const double fit_quality = std::clamp(1.0 - fit.rms / 0.1, 0.0, 1.0);
  const double margin = std::clamp((fit.runner_up_rms - fit.rms) / 0.05, 0.0, 1.0);
  const double conf = fit.rule == "none"
                          ? separation
                          : confidence::combine({separation, fit_quality, std::max(margin, 0.5)});
  Finding f{finding::kL2PersistingRule.name,
            static_cast<double>(code),
            "class",
            conf,
            "the rule that predicts what windows larger than the set-aside keep after plain "
            "traffic of 2 x L2: persisting capacity a share of the set-aside's bytes, or whole "
            "ways of every set; fitted over the window-size and set-aside trials",
            json::object()};
  f.extra["label"] = fit.rule;
  f.extra["rms_error"] = fit.rms;
  f.extra["runner_up_rms_error"] = fit.runner_up_rms;
  f.extra["points"] = fit.points;
  if (fit.rule == "bytes") f.extra["share_of_set_aside"] = fit.share;
  return f;
}

void L2Persisting::analyze(ExperimentResult& r) const {
  if (r.status == Status::kWaived) return;
  const auto s = samples_as<analysis::residency::Samples>(r);
  const auto c = rs::classify(s.trials);
  const auto of = [&](const std::string& group) {
    return rs::retention_of(s.trials, c, [&](const rs::Trial& t) { return t.group == group; });
  };
  r.findings.push_back(limit_finding(finding::kL2PersistingMaxSetAside, "",
                                     static_cast<double>(s.max_set_aside_bytes),
                                     "cudaDeviceProp::persistingL2CacheMaxSize"));
  r.findings.push_back(limit_finding(finding::kL2PersistingMaxWindow, "",
                                     static_cast<double>(s.max_window_bytes),
                                     "cudaDeviceProp::accessPolicyMaxWindowSize"));
  r.findings.push_back(limit_finding({}, "l2.persisting.set_aside_found",
                                     static_cast<double>(s.set_aside_found_bytes),
                                     "cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize) "
                                     "before the experiment (put back after it)"));
  double rounding = 0;
  for (const auto& q : s.requests)
    if (q.accepted && q.requested_bytes <= s.max_set_aside_bytes)
      rounding = std::max(rounding, std::fabs(static_cast<double>(q.read_back_bytes) -
                                              static_cast<double>(q.requested_bytes)));
  r.findings.push_back(Finding{"l2.persisting.set_aside_rounding", rounding, "bytes", 1.0,
                               "the largest difference between a set-aside asked (up to the "
                               "maximum) and what cudaDeviceGetLimit read back",
                               json::object()});
  r.findings.push_back(set_aside_unit_finding(s));
  Finding beyond{finding::kL2PersistingBeyondMax.name,
                 static_cast<double>(beyond_max_code(s)),
                 "class",
                 1.0,
                 "what cudaDeviceSetLimit did with a set-aside 8 MiB beyond the maximum",
                 json::object()};
  beyond.extra["label"] = finding::labels::kSetAsideBeyondMax[beyond_max_code(s)].label;
  r.findings.push_back(beyond);

  const auto plain = of("plain");
  std::vector<rs::RulePoint> points, confirm;
  Curve curve{"retention",
              {"group", "set_aside_bytes", "window_bytes", "hit_ratio", "kept", "predicted"},
              {}};
  std::size_t agree = 0, specs = 0;
  for (const auto& t : s.trials) {
    if (!t.windowed || t.repeat != 0 || t.group == "cap_even" || t.group == "cap_scattered")
      continue;
    const auto same = rs::retention_of(s.trials, c, [&](const rs::Trial& u) {
      return u.group == t.group && u.region_offset == t.region_offset &&
             u.region_bytes == t.region_bytes && u.set_aside_bytes == t.set_aside_bytes &&
             u.hit_ratio == t.hit_ratio && u.hit_prop == t.hit_prop && u.miss_prop == t.miss_prop;
    });
    ++specs;
    agree += same.repeats_agree;
    const rs::RulePoint p{t.set_aside_bytes, t.region_bytes, t.hit_ratio, same.fraction};
    if (t.group == "window_size" || t.group == "set_aside" || t.group == "hit_ratio")
      points.push_back(p);
    if (t.group == "confirm") confirm.push_back(p);
  }
  const auto fit = rs::fit_rule(points, s.l2_bytes, s.l2_ways, plain.fraction);
  const double base_conf = confidence::combine(
      {c.separation, confidence::agreement(agree, std::max<std::size_t>(1, specs))});
  r.findings.push_back(rule_finding(fit, base_conf));
  const double capacity =
      rs::rule_capacity(fit.rule, fit.share, s.max_set_aside_bytes, s.l2_bytes, s.l2_ways);
  // Rules that fit alike but give the same capacity (a set-aside the driver keeps in whole
  // ways makes the bytes and ways rules one) leave the capacity certain though the rule is not.
  double cap_conf = r.findings.back().confidence;
  if (!fit.runner_up.empty() && capacity > 0) {
    const double other = rs::rule_capacity(fit.runner_up, fit.runner_up_share,
                                           s.max_set_aside_bytes, s.l2_bytes, s.l2_ways);
    if (std::fabs(other - capacity) <= 0.03 * capacity) {
      cap_conf = confidence::combine({base_conf, std::clamp(1.0 - fit.rms / 0.1, 0.0, 1.0)});
      r.findings.back().extra["same_capacity_as"] = fit.runner_up;
    }
  }
  Finding cap{finding::kL2PersistingCapacity.name,
              fit.rule == "none" ? 0.0 : capacity,
              "bytes",
              cap_conf,
              "persisting bytes the largest set-aside keeps after plain traffic of 2 x L2, by "
              "the fitted rule",
              json::object()};
  cap.extra["share_of_set_aside"] =
      s.max_set_aside_bytes ? cap.value / static_cast<double>(s.max_set_aside_bytes) : 0.0;
  cap.extra["share_of_l2"] = cap.value / static_cast<double>(s.l2_bytes);
  r.findings.push_back(cap);
  double worst = 0;
  for (auto p : points)
    curve.rows.push_back(
        {"fit", p.set_aside_bytes, p.window_bytes, p.hit_ratio, p.measured,
         std::max(plain.fraction, rs::rule_predict(fit, p, s.l2_bytes, s.l2_ways))});
  for (auto p : confirm) {
    const double predicted =
        std::max(plain.fraction, rs::rule_predict(fit, p, s.l2_bytes, s.l2_ways));
    worst = std::max(worst, std::fabs(predicted - p.measured));
    curve.rows.push_back(
        {"confirm", p.set_aside_bytes, p.window_bytes, p.hit_ratio, p.measured, predicted});
  }
  Finding confirmed{"l2.persisting.prediction_confirmed",
                    !confirm.empty() && fit.rule != "undecided" && worst <= 0.1 ? 1.0 : 0.0,
                    "bool",
                    base_conf,
                    "whether the rule, fitted on windows at offset 0, predicts within 0.1 what "
                    "windows of other sizes and hit ratios keep at another offset",
                    json::object()};
  confirmed.extra["worst_error"] = worst;
  confirmed.extra["confirm_windows"] = confirm.size();
  r.findings.push_back(confirmed);
  r.findings.push_back(Finding{"l2.persisting.plain_kept", plain.fraction, "fraction", base_conf,
                               "share of a plainly loaded region (half the set-aside) still in "
                               "the L2 after plain traffic of 2 x L2",
                               json::object()});
  const auto plain_light = of("plain_light"), streaming = of("hit_streaming");
  Finding goes_first{"l2.persisting.streaming_goes_first",
                     plain_light.fraction - streaming.fraction > 0.2 ? 1.0 : 0.0,
                     "bool",
                     base_conf,
                     "whether a region placed under a window with hitProp streaming keeps "
                     "clearly less (by 0.2) than one placed plainly, after traffic of L2 / 2",
                     json::object()};
  goes_first.extra["plain_kept"] = plain_light.fraction;
  goes_first.extra["streaming_kept"] = streaming.fraction;
  r.findings.push_back(goes_first);
  const auto miss_normal = of("miss_normal"), miss_streaming = of("miss_streaming");
  Finding miss{"l2.persisting.miss_streaming_cost",
               miss_normal.fraction - miss_streaming.fraction,
               "fraction",
               base_conf,
               "how much less a window of 2 x the set-aside at hitRatio 0.5 keeps with missProp "
               "streaming than with missProp normal, after traffic of L2 / 2",
               json::object()};
  miss.extra["miss_normal_kept"] = miss_normal.fraction;
  miss.extra["miss_streaming_kept"] = miss_streaming.fraction;
  r.findings.push_back(miss);
  curve.hints = chart_hints("share of a persisting window still in the L2, measured and predicted",
                            "window_bytes", "bytes", "kept", "fraction", false)
                    .by({"group"})
                    .with_model({"predicted"})
                    .points();
  r.curves.push_back(curve);
  residency::add_cap_rule(
      r, s, c, finding::kL2PersistingCapRule,
      "where the persisting capacity applies: per set (the set-aside's k ways of every set) or "
      "as a byte budget over the whole L2. The set-aside's k ways' bytes loaded under a "
      "persisting window (hitRatio 1) contiguously (every set gets k lines) and scattered at "
      "random over a span 1 / share times larger (a set gets Binomial(k / share, share) lines; "
      "the window covers the span), then traffic of 2 x L2: a per-set cap loses the lines a "
      "set gets beyond k, a byte budget keeps both alike");
  r.statistics = residency::classification_statistics(c);
}

}  // namespace

void register_l2_residency_experiments(Registry& registry) {
  registry.add(std::make_unique<L2Persisting>());
  register_l2_eviction_priority(registry);
}

}  // namespace gpuprobe::probes
