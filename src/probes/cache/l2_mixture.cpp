// cache.l2.mixture: the latency sweep's slope between the L2 near-partition knee and the L2's is
// a mixture (issue 10): some loads hit the SM's own partition, the others are far hits or DRAM
// misses. A sampled chase (Device::sampled_chase: every 32nd load of one warm pass timed on its
// own) at working sets from 0.95 to 1.6 x l2.near_capacity gives, per working set, the share of
// near hits and the mean cost of the rest; per 2 MiB page of the chain, the share of its own
// loads, and whether the pages differ beyond sampling noise (a page's frame enters the L2 index,
// cache.l2.set_index_bits, so pages may load the partition unevenly). On the slope (0.95 to
// 1.25 x) three more allocations of each working set (the same chain, order and protocol, at
// the end of a fresh allocation 1, 2, 3 x its size larger, so on other physical pages): how
// much the mixture, and the chase's latency, move with the pages an allocation happens to get.
#include "probes/cache/l2_mixture.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/l2_far_hit.hpp"
#include "analysis/placement.hpp"
#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/finding_names.hpp"
#include "core/samples.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "probes/cache/cache_samples.hpp"

namespace gpuprobe::probes {
namespace {

using cache_samples::MixtureChase;
using cache_samples::MixtureDraw;
using cache_samples::MixtureSamples;
using nlohmann::json;
using units::kMiB;

constexpr std::uint32_t kLine = 128;
constexpr std::uint32_t kEvery = 32;
constexpr std::uint64_t kPageBytes = 2 * kMiB;
constexpr std::uint64_t kReferenceBytes = 2 * kMiB;
constexpr std::size_t kMinPageSamples = 64;
const std::vector<double> kFactors{0.95, 1.05, 1.15, 1.25, 1.4, 1.6};
/// Working sets (the first factors) measured at other allocations too, and how many more.
constexpr std::size_t kDrawnFactors = 4;
constexpr std::size_t kExtraDraws = 3;
/// Read by no other experiment or tool, so not in core/finding_names.hpp.
constexpr const char* kCopyShareRatio = "l2.mixture.copy_share_ratio";

/// One pass of a fresh chain of `bytes` (`offset` into its allocation) warms the L2 (make_chain
/// flushed it), then one pass is sampled: every kEvery-th load timed on its own.
std::pair<std::uint64_t, device::SampledChase> sampled_pass(device::Device& dev,
                                                            std::uint64_t bytes, std::uint64_t seed,
                                                            std::uint64_t offset = 0) {
  auto chain = dev.make_chain({bytes, kLine, seed, offset});
  device::ChaseParams p;
  p.op = device::LoadOp::kCg;
  p.warmup_steps = chain->nodes();
  p.timed_steps = chain->nodes();
  return {chain->nodes() * kLine, dev.sampled_chase(*chain, p, kEvery)};
}

/// The sampled loads of one working set: cycles and the line (node) of the buffer each one
/// read (its 2 MiB page is node x 128 / 2 MiB; results before the placement unit recorded the
/// page instead, and are still read).
MixtureChase sample(device::Device& dev, std::uint64_t bytes, std::uint64_t seed) {
  const auto [ws, s] = sampled_pass(dev, bytes, seed);
  return {ws,           s.cycles, std::vector<std::uint64_t>(s.nodes.begin(), s.nodes.end()),
          std::nullopt, s.smid,   s.verified};
}

/// One more allocation of a working set: the point's chain (same size, seed and protocol)
/// `offset` bytes into a fresh allocation; the samples kept as a histogram of their cycles
/// (the analysis needs only their distribution).
MixtureDraw draw(device::Device& dev, std::uint64_t bytes, std::uint64_t offset,
                 std::uint64_t seed) {
  const auto [ws, s] = sampled_pass(dev, bytes, seed, offset);
  std::map<std::uint32_t, std::uint64_t> histogram;
  for (auto c : s.cycles) ++histogram[c];
  return {ws, offset, {histogram.begin(), histogram.end()}, s.smid, s.verified};
}

class L2Mixture : public Experiment {
 public:
  std::string id() const override { return "cache.l2.mixture"; }
  std::vector<std::string> produces() const override {
    return {finding::kL2MixtureMissLatency, finding::kL2MixturePageSpread,
            finding::kL2MixtureAllocationSpread, finding::kL2MixturePlacementUnit, kCopyShareRatio};
  }
  std::string description() const override {
    return "one SM's chase (ld.global.cg) at 0.95 .. 1.6 x l2.near_capacity with every 32nd "
           "load timed on its own: the share of loads the SM's own L2 partition serves, what "
           "the others cost, how the share differs between the chase's 2 MiB pages and, on the "
           "slope, between allocations of one size, the largest block whose loads share "
           "their fate (the placement unit), and whether copies of lines homed in the other "
           "partition keep the near share of lines homed in the SM's own";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(number_axis("working_set_factor", kFactors, "x l2.near_capacity",
                              "working sets around the near-partition knee")),
            fixed(int_axis("sample_every", {kEvery}, "loads",
                           "one load in this many of one warm pass is timed"))};
  }
  std::vector<std::string> depends_on() const override {
    return {"latency.sweep", "cache.l2.partition", "cache.l2.far_hit"};
  }
  std::vector<std::string> required() const override { return {"latency.sweep"}; }
  // The near knee lies at about half the L2 (one partition's copies); a sweep stopped below the
  // L2, or started past half of it, cannot find it with the points around it that make it a
  // knee.
  std::optional<std::string> options_waiver(const device::DeviceInfo& info,
                                            const RunOptions& o) const override {
    const std::uint64_t l2 = info.l2_bytes;
    if (l2 == 0) return std::nullopt;
    if (o.max_size != 0 && o.max_size < l2)
      return "--max-size " + units::format_bytes(o.max_size) +
             " stops latency.sweep before the near-partition knee (about half the L2) this "
             "experiment is drawn around; it needs at least the L2 (" +
             units::format_bytes(l2) + ")";
    if (o.min_size != 0 && o.min_size > l2 / 4)
      return "--min-size " + units::format_bytes(o.min_size) +
             " starts latency.sweep too close to the near-partition knee (about half the L2) "
             "this experiment is drawn around; it needs at most a quarter of the L2 (" +
             units::format_bytes(l2 / 4) + ")";
    return std::nullopt;
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto near = ctx.prior.get(finding::kL2NearCapacity, 0.0);
    const auto hit = ctx.prior.get(finding::kL2HitLatency, 0.0);
    if (!near || !hit || near->value <= 0) {
      r.status = Status::kWaived;
      r.reason =
          "no l2.near_capacity from latency.sweep: it found no near-partition knee (one L2 "
          "partition, or a knee too soft to find), or it did not pass";
      return;
    }
    const auto far = ctx.prior.get(finding::kL2FarHitLatency, 0.0);
    const auto mask = ctx.prior.get(finding::kL2PartitionHashMask, 0.0);
    auto& dev = ctx.device;
    // The scale: a chase far below one partition (2 MiB, at most a quarter of it), every load a
    // near hit; its sampled median
    // is the near level with the timer's cost on it.
    const auto reference_bytes = std::min<std::uint64_t>(
        kReferenceBytes, static_cast<std::uint64_t>(near->value / 4) / kLine * kLine);
    // At least 64 samples on the reference (analyze needs 16).
    MixtureSamples samples;
    samples.reference = sample(dev, std::max<std::uint64_t>(reference_bytes, 64 * kEvery * kLine),
                               ctx.options.seed + 100);
    auto& points = samples.points;
    for (std::size_t k = 0; k < kFactors.size(); ++k) {
      const auto bytes = static_cast<std::uint64_t>(kFactors[k] * near->value) / kLine * kLine;
      if (bytes + 2 * dev.info().l2_bytes + 512 * kMiB > dev.free_memory()) break;
      points.push_back(sample(dev, bytes, ctx.options.seed + 101 + k));
    }
    // More allocations of the slope's working sets: the point's chain at the end of a fresh
    // allocation 1, 2, 3 x its size (rounded up to 2 MiB) larger, so on other physical pages.
    auto& draws = samples.draws.emplace();
    for (std::size_t k = 0; k < std::min(kDrawnFactors, points.size()); ++k) {
      const auto bytes = points[k].working_set_bytes;
      const std::uint64_t step = units::round_up(bytes, kPageBytes);
      if (bytes + kExtraDraws * step + 2 * dev.info().l2_bytes + 512 * kMiB > dev.free_memory())
        break;
      for (std::size_t d = 1; d <= kExtraDraws; ++d)
        draws.push_back(draw(dev, bytes, d * step, ctx.options.seed + 101 + k));
    }
    if (points.empty()) {
      r.status = Status::kWaived;
      r.reason = "not even 0.95 x l2.near_capacity fits in free GPU memory beside the L2 flush";
      return;
    }
    r.parameters = {{"op", "cg"},
                    {"sample_every", kEvery},
                    {"page_bytes", kPageBytes},
                    {"l2_near_capacity_bytes", near->value},
                    {"l2_hit_latency_cycles", hit->value},
                    {"l2_far_hit_latency_cycles", far ? far->value : 0.0},
                    {"partition_hash_mask", mask ? mask->value : 0.0},
                    {"factors", kFactors},
                    {"drawn_factors", kDrawnFactors},
                    {"extra_draws", kExtraDraws},
                    {"protocol",
                     "per working set: a fresh chain (make_chain flushes the L2), one untimed "
                     "pass, then one pass with every 32nd load timed on its own (%clock64 "
                     "around the dependent ld.global.cg); a chase of 2 MiB (at most a quarter of "
                     "l2.near_capacity) alike for the scale; at the first 4 working sets 3 more "
                     "allocations: the point's chain (same seed and protocol) at offset 1, 2, "
                     "3 x its size rounded up to 2 MiB into a fresh allocation (other physical "
                     "pages), its samples kept as a histogram of cycles"}};
    r.samples = samples;
  }
  int samples_version() const override { return MixtureSamples::kVersion; }
  void analyze(ExperimentResult& r) const override;
};

struct PointStats {
  double bytes = 0, near_share = 0, miss_mean = 0, page_min = 0, page_max = 0, z = 0;
  std::size_t n = 0, misses = 0, pages = 0;
};

/// One allocation of a working set: the mean latency of its sampled loads on the chase's scale
/// (the timer's cost taken off), its standard error, and its share of near hits.
struct Allocation {
  double bytes = 0, offset = 0, mean = 0, se = 0, near_share = 0;
  std::size_t n = 0;
};

/// Accumulates (cycles, count) pairs into an Allocation.
struct AllocationSum {
  double sum = 0, sum2 = 0, n = 0, near = 0;
  void add(double cycles, double count, double offset, double threshold) {
    const double v = cycles - offset;
    sum += v * count;
    sum2 += v * v * count;
    n += count;
    if (cycles < threshold) near += count;
  }
  Allocation done(double bytes, double at) const {
    Allocation a;
    a.bytes = bytes;
    a.offset = at;
    if (!(n <= 1e15))
      throw UsageError("cache.l2.mixture: a histogram counts more than 1e15 samples");
    a.n = static_cast<std::size_t>(n);
    if (n <= 0) return a;
    a.mean = sum / n;
    a.near_share = near / n;
    const double var = n > 1 ? std::max(0.0, (sum2 - sum * sum / n) / (n - 1)) : 0.0;
    a.se = std::sqrt(var / n);
    return a;
  }
};

/// One point's samples for the placement unit: the byte each read, and whether it hit near.
struct PlacementPoint {
  double near_share = 0;
  std::vector<std::pair<std::uint64_t, bool>> samples;
};

/// The placement unit: how far apart two loads can lie and still share their fate (near hit or
/// not). At the points where between 10 % and 90 % of the loads hit near, every pair of samples
/// whose smallest common aligned block is b bytes (up to 4 KiB for the first level, then 8 KiB
/// .. 8 MiB) agrees or not; phi(b) is their agreement beyond what independent fates at the
/// point's share give (1: always the same fate, 0: independent), pooled over the points. Where
/// the set index places whole blocks of some size (a physical frame's worth of lines), phi
/// stays at its small-block level up to that size and falls past it. The unit is the size U
/// whose fit (phi constant up to U, falling by a fitted factor per doubling above it) leaves
/// the least chi^2 over all sizes; its confidence is how clearly it beats the next best
/// candidate and a phi constant over every size (separation of the square root of the smaller
/// chi^2 difference). A block's pairs are not
/// independent, so a level's standard error counts as observations its blocks that hold
/// samples in both halves (the blocks that give pairs at that level).
void analyze_placement(ExperimentResult& r, const std::vector<PlacementPoint>& points) {
  constexpr std::uint64_t kSmallest = 4096, kLargest = 8 * kMiB;
  constexpr double kMinPairs = 32;
  struct Level {
    double pairs = 0, agree = 0, expected = 0, blocks = 0;
  };
  std::map<std::uint64_t, Level> levels;
  std::size_t used = 0;
  for (const auto& p : points) {
    if (p.near_share < 0.1 || p.near_share > 0.9 || p.samples.size() < kMinPageSamples) continue;
    ++used;
    const double a0 = p.near_share * p.near_share + (1 - p.near_share) * (1 - p.near_share);
    auto samples = p.samples;  // by address: every block's samples lie side by side
    std::sort(samples.begin(), samples.end());
    double prev_pairs = 0, prev_agree = 0;
    for (std::uint64_t b = kSmallest; b <= kLargest; b *= 2) {
      double pairs = 0, agree = 0, giving = 0;
      for (std::size_t i = 0, j = 0; i < samples.size(); i = j) {
        double near = 0, miss = 0;
        bool low = false, high = false;  // samples in the block's first / second half
        for (j = i; j < samples.size() && samples[j].first / b == samples[i].first / b; ++j) {
          (samples[j].second ? near : miss) += 1;
          (samples[j].first % b < b / 2 ? low : high) = true;
        }
        const double n = near + miss;
        pairs += n * (n - 1) / 2;
        agree += near * (near - 1) / 2 + miss * (miss - 1) / 2;
        // The blocks that give pairs at this level: both halves hold samples (at the first
        // level, any two samples).
        giving += (b == kSmallest ? n >= 2 : (low && high)) ? 1 : 0;
      }
      // Pairs whose smallest common block is b: in one b-block, not in one (b / 2)-block.
      auto& l = levels[b];
      l.pairs += pairs - prev_pairs;
      l.agree += agree - prev_agree;
      l.expected += (pairs - prev_pairs) * a0;
      l.blocks += giving;
      prev_pairs = pairs;
      prev_agree = agree;
    }
  }
  if (used == 0) {
    r.statistics["placement_note"] =
        "no point with a near share between 0.1 and 0.9 and enough samples: no placement unit";
    return;
  }
  Curve c{"placement",
          {"block_bytes", "pairs", "agreement", "phi", "phi_standard_error"},
          {},
          chart_hints("how alike two sampled loads' fates are (near hit or not) by the smallest "
                      "aligned block that holds both: 1 = always alike, 0 = independent",
                      "block_bytes", "bytes", "phi", "fraction")};
  std::vector<analysis::PhiLevel> ok;  // the levels with enough pairs for a phi, smallest first
  for (const auto& [b, l] : levels) {
    if (l.pairs < kMinPairs || l.pairs - l.expected <= 0) continue;
    const double agreement = l.agree / l.pairs;
    const double room = 1 - l.expected / l.pairs;  // 1 - the agreement independence gives
    analysis::PhiLevel f;
    f.block_bytes = static_cast<double>(b);
    f.phi = (l.agree - l.expected) / (l.pairs - l.expected);
    f.se = std::sqrt(std::max(agreement * (1 - agreement), 1e-6) / std::max(l.blocks, 1.0)) / room;
    ok.push_back(f);
    c.rows.push_back({f.block_bytes, l.pairs, agreement, f.phi, f.se});
  }
  if (c.rows.empty()) {
    r.statistics["placement_note"] = "too few pairs of samples at every block size";
    return;
  }
  r.curves.push_back(c);
  const analysis::PhiLevel& base = ok.front();
  if (base.phi < 0.3) {
    r.statistics["placement_note"] =
        "loads in the smallest block with pairs share their fate no more than by chance (phi < "
        "0.3): no placement unit";
    return;
  }
  // Each candidate unit U: phi = A up to U and A d^log2(b / U) above it, fitted over every
  // size at once (analysis/placement.hpp); one run of four on GPU-af964f9c read 16 KiB at 0.71
  // by the earlier scan, which stopped at the first size significantly below the smallest's.
  const auto unit = analysis::best_placement_unit(ok);
  if (!unit.found) {
    r.statistics["placement_note"] = "fewer than four block sizes with pairs: no placement unit";
    return;
  }
  json fit_rows = json::array();
  for (const auto& f : unit.fits)
    fit_rows.push_back(
        {{"unit_bytes", ok[f.at].block_bytes}, {"chi2", f.chi2}, {"decay_per_doubling", f.d}});
  r.statistics["placement_fits"] = fit_rows;
  const auto& best = unit.best;
  const auto& runner_up = unit.runner_up;
  // phi does not fall past the unit (less than 5 % per doubling): no unit to name.
  if (best.d >= 0.95) {
    r.statistics["placement_note"] =
        "phi does not fall clearly below the smallest block's up to " +
        units::format_bytes(static_cast<std::uint64_t>(ok.back().block_bytes)) +
        " (the best fit loses under 5 % per doubling): the placement unit is at least that, or "
        "there is none: no finding";
    return;
  }
  const double delta = runner_up.chi2 - best.chi2;
  const double z = std::sqrt(unit.z2());
  r.findings.push_back(
      {finding::kL2MixturePlacementUnit,
       ok[best.at].block_bytes,
       "bytes",
       confidence::separation(z),
       "the largest aligned block within which the chase's sampled loads share their fate (near "
       "hit or not) alike: phi (agreement beyond chance) by block size fitted as a constant up "
       "to a unit U and a decay by a factor d per doubling above it (weighted least squares "
       "over every size at once), U the candidate of least chi^2; the set index places such "
       "blocks as wholes (a physical frame's worth of lines); confidence: how clearly the best "
       "unit beats the next best and phi constant over every size (z = sqrt of the smaller "
       "chi^2 difference)",
       {{"phi", ok[best.at].phi},
        {"phi_next", ok[best.at + 1].phi},
        {"phi_smallest_block", base.phi},
        {"smallest_block_bytes", base.block_bytes},
        {"decay_per_doubling", best.d},
        {"chi2", best.chi2},
        {"runner_up_bytes", ok[runner_up.at].block_bytes},
        {"delta_chi2", delta},
        {"flat_chi2", unit.flat_chi2},
        {"points", used}}});
}

/// The drawn allocations beside the points of the same working set: per working set the range
/// of the chase's mean latency and near share over its allocations; the finding is the widest
/// latency range relative to its median.
void analyze_allocations(ExperimentResult& r, const MixtureSamples& samples,
                         const std::vector<Allocation>& from_points, double offset,
                         double threshold) {
  if (!samples.draws) return;
  std::map<double, std::vector<Allocation>> by_size;
  for (const auto& d : *samples.draws) {
    AllocationSum sum;
    for (const auto& [cycles, count] : d.cycles_histogram)
      sum.add(cycles, static_cast<double>(count), offset, threshold);
    const auto bytes = static_cast<double>(d.working_set_bytes);
    const auto a = sum.done(bytes, static_cast<double>(d.offset_bytes));
    if (a.n >= kMinPageSamples) by_size[bytes].push_back(a);
  }
  if (by_size.empty()) return;
  for (const auto& a : from_points)
    if (by_size.count(a.bytes) && a.n >= kMinPageSamples) by_size[a.bytes].push_back(a);
  Curve c{"allocations",
          {"working_set_bytes", "allocations", "latency_min", "latency_median", "latency_max",
           "near_share_min", "near_share_max"},
          {},
          chart_hints("chase latency of one working set over several allocations (other "
                      "physical pages): median, with the lowest and highest dashed",
                      "working_set_bytes", "bytes", "latency_median", "cycles")
              .with_model({"latency_min", "latency_max"})};
  json per_draw = json::array();
  double widest = -1, widest_z = 0;
  json widest_extra;
  for (const auto& [bytes, as] : by_size) {
    if (as.size() < 2) continue;
    std::vector<double> means;
    const Allocation *lo = &as.front(), *hi = &as.front();
    double share_lo = 1, share_hi = 0;
    for (const auto& a : as) {
      means.push_back(a.mean);
      if (a.mean < lo->mean) lo = &a;
      if (a.mean > hi->mean) hi = &a;
      share_lo = std::min(share_lo, a.near_share);
      share_hi = std::max(share_hi, a.near_share);
      per_draw.push_back({{"working_set_bytes", bytes},
                          {"offset_bytes", a.offset},
                          {"mean_cycles", a.mean},
                          {"standard_error_cycles", a.se},
                          {"near_share", a.near_share},
                          {"samples", a.n}});
    }
    const double med = stats::median(means);
    c.rows.push_back(
        {bytes, static_cast<double>(as.size()), lo->mean, med, hi->mean, share_lo, share_hi});
    const double spread = med > 0 ? 100.0 * (hi->mean - lo->mean) / med : 0;
    if (spread > widest) {
      widest = spread;
      // Heterogeneity of all the allocations' means; a standard error is never below what
      // whole-cycle samples allow (1 / sqrt(12 n)).
      std::vector<double> w;
      for (const auto& a : as) {
        const double se = std::max(a.se, 1.0 / std::sqrt(12.0 * static_cast<double>(a.n)));
        w.push_back(1.0 / (se * se));
      }
      widest_z = confidence::heterogeneity_z(means, w);
      widest_extra = {{"working_set_bytes", bytes},     {"allocations", as.size()},
                      {"latency_min_cycles", lo->mean}, {"latency_median_cycles", med},
                      {"latency_max_cycles", hi->mean}, {"near_share_min", share_lo},
                      {"near_share_max", share_hi},     {"heterogeneity_z", widest_z}};
    }
  }
  if (c.rows.empty()) return;
  r.curves.push_back(c);
  r.statistics["allocations"] = per_draw;
  r.findings.push_back(
      {finding::kL2MixtureAllocationSpread, widest, "%", confidence::separation(widest_z),
       "widest range of the chase's mean latency over allocations of one working set (the "
       "sampled point and the same chain in 3 other allocations, other physical pages), "
       "relative to their median, over the slope's working sets (0.95 .. 1.25 x "
       "l2.near_capacity); confidence: how clearly the allocations' means differ beyond their "
       "sampling noise at that working set (chi-square heterogeneity as z)",
       widest_extra});
}

/// Copies against home lines: on the slope, the near-hit share of the lines homed in the other
/// partition (their near hits are copies) against that of the lines homed in the SM's own. A
/// line's home is the parity of its in-page offset under l2.partition.hash_mask, up to a
/// constant per 2 MiB page (the frame's bits); per page, the parity class whose misses cost
/// more (DRAM from its own home, not a far hit) is the near-homed one, where the two classes'
/// mean miss costs differ by z >= 3 with at least kMinMisses misses each (other pages are left
/// out). Finding: the pooled share of far-homed lines over that of near-homed lines at the
/// working sets where both lie within 0.05 .. 0.95 (1: copies and home lines share the
/// partition on equal terms; 0: copies are not kept); precision from the binomial standard
/// error (delta method).
void analyze_homes(ExperimentResult& r, const std::vector<MixtureChase>& points, std::uint64_t mask,
                   double offset, double threshold) {
  constexpr double kMinMisses = 8;
  constexpr double kMinZ = 3;
  Curve c{"homes",
          {"working_set_bytes", "near_share_near_homed", "near_share_far_homed",
           "samples_near_homed", "samples_far_homed", "pages_decided", "pages"},
          {},
          chart_hints("near-hit share by home partition: lines homed in the SM's own partition "
                      "and copies of lines homed in the other",
                      "working_set_bytes", "bytes", "near_share_near_homed", "fraction")
              .with_model({"near_share_far_homed"})};
  struct Class {
    std::size_t n = 0, near = 0;
    AllocationSum misses;  ///< the misses' costs (mean and standard error)
  };
  std::size_t pooled[2][2] = {{0, 0}, {0, 0}};  // [far-homed?][near, all]
  std::size_t used = 0;
  for (const auto& p : points) {
    if (!p.node) continue;  // results before nodes were kept
    const auto& cy = p.cycles;
    const auto& nd = *p.node;
    std::map<std::uint64_t, std::array<Class, 2>> pages;  // by page, by parity
    for (std::size_t i = 0; i < cy.size(); ++i) {         // analyze() checked: one node per sample
      const std::uint64_t at = nd[i] * kLine;
      auto& k = pages[at / kPageBytes][analysis::in_page_parity(mask, at)];
      const double v = cy[i];
      ++k.n;
      if (v < threshold)
        ++k.near;
      else
        k.misses.add(v, 1, offset, threshold);
    }
    Class homed[2];  // [0] near-homed, [1] far-homed
    std::size_t decided = 0;
    for (const auto& [page, k] : pages) {
      if (k[0].misses.n < kMinMisses || k[1].misses.n < kMinMisses) continue;
      const Allocation a = k[0].misses.done(0, 0), b = k[1].misses.done(0, 0);
      const double se = std::hypot(a.se, b.se);
      if (!(se > 0) || std::fabs(a.mean - b.mean) / se < kMinZ) continue;
      ++decided;
      const std::size_t near_homed = a.mean > b.mean ? 0 : 1;
      for (std::size_t j = 0; j < 2; ++j) {
        auto& h = homed[j == near_homed ? 0 : 1];
        h.n += k[j].n;
        h.near += k[j].near;
      }
    }
    const auto ws = static_cast<double>(p.working_set_bytes);
    const auto share = [](const Class& h) {
      return h.n ? json(static_cast<double>(h.near) / static_cast<double>(h.n)) : json(nullptr);
    };
    c.rows.push_back({ws, share(homed[0]), share(homed[1]), static_cast<double>(homed[0].n),
                      static_cast<double>(homed[1].n), static_cast<double>(decided),
                      static_cast<double>(pages.size())});
    bool inside = true;
    for (const auto& h : homed) {
      const double q = h.n ? static_cast<double>(h.near) / static_cast<double>(h.n) : 0;
      inside = inside && h.n >= kMinPageSamples && q >= 0.05 && q <= 0.95;
    }
    if (!inside) continue;
    ++used;
    for (std::size_t j = 0; j < 2; ++j) {
      pooled[j][0] += homed[j].near;
      pooled[j][1] += homed[j].n;
    }
  }
  if (c.rows.empty()) return;
  r.curves.push_back(c);
  if (used == 0) {
    r.statistics["homes_note"] =
        "no working set where both home classes hold between 5 % and 95 % near hits on pages "
        "whose two classes miss at clearly different costs";
    return;
  }
  const auto n_near = static_cast<double>(pooled[0][1]), n_far = static_cast<double>(pooled[1][1]);
  const double q_near = static_cast<double>(pooled[0][0]) / n_near;
  const double q_far = static_cast<double>(pooled[1][0]) / n_far;
  const double ratio = q_far / q_near;
  const double se =
      ratio * std::sqrt((1 - q_far) / (q_far * n_far) + (1 - q_near) / (q_near * n_near));
  r.findings.push_back(
      {kCopyShareRatio,
       ratio,
       "ratio",
       confidence::precision_from_standard_error(ratio, se),
       "on the slope, the near-hit share of lines homed in the other partition (served near only "
       "as copies) over that of lines homed in the SM's own; a line's home from the parity of "
       "its in-page offset under l2.partition.hash_mask, the near-homed class of each 2 MiB page "
       "the one whose misses cost more (DRAM rather than a far hit); pooled over the working "
       "sets where both shares lie within 0.05 .. 0.95; 1: copies and home lines share the "
       "partition on equal terms",
       {{"working_sets", used},
        {"near_share_near_homed", q_near},
        {"near_share_far_homed", q_far},
        {"samples_near_homed", pooled[0][1]},
        {"samples_far_homed", pooled[1][1]},
        {"standard_error", se}}});
}

/// One point's shares: each sample near or not (below `threshold`), the share per page and
/// the pages' spread; nullopt for a point without samples. `pp` gets the samples' lines (when
/// the point records them), `all` its cycles.
std::optional<PointStats> point_stats(const MixtureChase& p, double offset, double threshold,
                                      PlacementPoint& pp, AllocationSum& all) {
  const auto& cy = p.cycles;
  // The line each sample read ("node"), or, in results before it, its 2 MiB page (the
  // samples' check: one of them, one per sample).
  const bool by_node = p.node.has_value();
  const auto& pg = by_node ? *p.node : *p.page;
  PointStats s;
  s.bytes = static_cast<double>(p.working_set_bytes);
  std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> by_page;  // near, all
  double miss_sum = 0;
  for (std::size_t i = 0; i < cy.size(); ++i) {
    const double v = cy[i];
    all.add(v, 1, offset, threshold);
    const bool is_near = v < threshold;
    const std::uint64_t at = pg[i];
    if (by_node && at > (std::uint64_t{1} << 40))
      throw UsageError("cache.l2.mixture: a sample's node is beyond 2^40 lines");
    if (by_node) pp.samples.push_back({at * kLine, is_near});
    auto& b = by_page[by_node ? at * kLine / kPageBytes : at];
    b.first += is_near;
    ++b.second;
    if (!is_near) {
      miss_sum += v - offset;
      ++s.misses;
    }
  }
  s.n = cy.size();
  if (s.n == 0) return std::nullopt;
  s.near_share = static_cast<double>(s.n - s.misses) / static_cast<double>(s.n);
  pp.near_share = s.near_share;
  s.miss_mean = s.misses ? miss_sum / static_cast<double>(s.misses) : 0;
  // Heterogeneity of the pages' shares (pages with at least kMinPageSamples samples; a
  // partial last page with few is left out): binomial weights n / (q (1 - q)) about their
  // pooled share q, which is their weighted mean.
  s.page_min = 1;
  s.page_max = 0;
  std::size_t pooled_near = 0, pooled_all = 0;
  for (const auto& [page, b] : by_page)
    if (b.second >= kMinPageSamples) {
      pooled_near += b.first;
      pooled_all += b.second;
    }
  const double q =
      pooled_all ? static_cast<double>(pooled_near) / static_cast<double>(pooled_all) : 0;
  std::vector<double> shares, weights;
  for (const auto& [page, b] : by_page) {
    if (b.second < kMinPageSamples) continue;
    const double share = static_cast<double>(b.first) / static_cast<double>(b.second);
    s.page_min = std::min(s.page_min, share);
    s.page_max = std::max(s.page_max, share);
    ++s.pages;
    shares.push_back(share);
    // All shares equal q when q is 0 or 1: any weight gives Q = 0.
    weights.push_back(q > 0 && q < 1 ? static_cast<double>(b.second) / (q * (1 - q)) : 1.0);
  }
  s.z = confidence::heterogeneity_z(shares, weights);
  if (s.pages == 0) s.page_min = s.page_max = s.near_share;
  return s;
}

/// What a miss costs (l2.mixture_miss_latency) and how unevenly the pages share the partition
/// (l2.mixture_page_spread), from the points' shares.
void mixture_findings(ExperimentResult& r, const std::vector<PointStats>& pts) {
  // What a miss costs: the mean of the loads past the near level, at the working sets where
  // most loads miss (on the chase's scale); its confidence is how little it moves between them.
  std::vector<double> miss_means;
  for (const auto& s : pts)
    if (s.near_share < 0.5 && s.misses >= kMinPageSamples) miss_means.push_back(s.miss_mean);
  if (miss_means.size() >= 3) {
    const double v = stats::median(miss_means);
    r.findings.push_back(
        {finding::kL2MixtureMissLatency,
         v,
         "cycles",
         confidence::precision(miss_means, v),
         "mean cost of the sampled loads past the near level (far hits and DRAM misses), on the "
         "chase's scale (the 2 MiB chase's sampled median less l2.hit_latency taken off); "
         "median over the working sets where fewer than half the loads hit near",
         {{"per_working_set", miss_means}}});
  }
  // How unevenly the pages share the partition: at the working set whose share is nearest one
  // half, the range of the pages' shares; confidence = how clearly the pages differ beyond
  // binomial noise (the heterogeneity z as a separation).
  const PointStats* mid = nullptr;
  for (const auto& s : pts)
    if (s.pages >= 4 && s.near_share > 0.05 && s.near_share < 0.95 &&
        (!mid || std::fabs(s.near_share - 0.5) < std::fabs(mid->near_share - 0.5)))
      mid = &s;
  if (mid) {
    r.findings.push_back(
        {finding::kL2MixturePageSpread,
         mid->page_max - mid->page_min,
         "fraction",
         confidence::separation(mid->z),
         "range of the 2 MiB pages' near-hit shares at the working set whose share is nearest "
         "one half (pages with at least 64 samples); confidence: how clearly the pages differ "
         "beyond binomial noise (chi-square heterogeneity as z)",
         {{"working_set_bytes", mid->bytes},
          {"near_share", mid->near_share},
          {"pages", mid->pages},
          {"page_share_min", mid->page_min},
          {"page_share_max", mid->page_max},
          {"heterogeneity_z", mid->z}}});
  }
}

void L2Mixture::analyze(ExperimentResult& r) const {
  if (r.status == Status::kWaived) return;
  const auto samples = samples_as<MixtureSamples>(r);
  const std::vector<double> ref(samples.reference.cycles.begin(), samples.reference.cycles.end());
  if (ref.size() < 16) {
    r.statistics["note"] = "too few reference samples";
    return;
  }
  const double near_sampled = stats::median(ref);
  const double hit = r.parameters.value("l2_hit_latency_cycles", 0.0);
  const double far = r.parameters.value("l2_far_hit_latency_cycles", 0.0);
  const double offset = near_sampled - hit;  // the timer's cost on a sampled load
  // A load is a near hit below halfway to the far hit (on the sampled scale); without a far
  // hit, below 1.3 x the near level.
  const double threshold = far > hit ? near_sampled + 0.5 * (far - hit) : near_sampled * 1.3;
  std::vector<PointStats> pts;
  std::vector<Allocation> allocations;  // the points' (offset 0), then the draws'
  Curve c{"shares",
          {"working_set_bytes", "near_share", "miss_mean_cycles", "page_share_min",
           "page_share_max", "pages", "samples"},
          {},
          chart_hints("share of loads served by the SM's own L2 partition", "working_set_bytes",
                      "bytes", "near_share", "fraction")
              .with_model({"page_share_min", "page_share_max"})};
  std::vector<PlacementPoint> placement;
  for (const auto& p : samples.points) {
    PlacementPoint pp;
    AllocationSum all;
    const auto s = point_stats(p, offset, threshold, pp, all);
    if (!s) continue;
    if (!pp.samples.empty()) placement.push_back(std::move(pp));
    pts.push_back(*s);
    allocations.push_back(all.done(s->bytes, 0));
    c.rows.push_back({s->bytes, s->near_share, s->miss_mean, s->page_min, s->page_max,
                      static_cast<double>(s->pages), static_cast<double>(s->n)});
  }
  r.curves.push_back(c);
  analyze_placement(r, placement);
  analyze_allocations(r, samples, allocations, offset, threshold);
  const double mask = r.parameters.value("partition_hash_mask", 0.0);
  if (mask >= 1 && mask < static_cast<double>(kPageBytes) && std::floor(mask) == mask)
    analyze_homes(r, samples.points, static_cast<std::uint64_t>(mask), offset, threshold);
  else
    r.statistics["homes_note"] =
        "no split by home partition: the run recorded no l2.partition.hash_mask inside a 2 MiB "
        "page (cache.l2.partition did not run or found none, or the result predates the field)";
  r.statistics["near_level_sampled_cycles"] = near_sampled;
  r.statistics["timer_offset_cycles"] = offset;
  r.statistics["near_threshold_cycles"] = threshold;
  r.statistics["near_threshold_rule"] =
      far > hit ? "halfway from the sampled near level to l2.far_hit_latency"
                : "1.3 x the sampled near level (no far-hit latency above the near one)";
  mixture_findings(r, pts);
}

}  // namespace

void register_l2_mixture_experiments(Registry& registry) {
  registry.add(std::make_unique<L2Mixture>());
}

}  // namespace gpuprobe::probes
