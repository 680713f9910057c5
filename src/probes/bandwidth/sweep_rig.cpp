// What bandwidth.sweep and bandwidth.hierarchy share: the pure helpers (word sums the host checks
// every launch against, the L1 working set from the measured L1 capacity, the best variant) and
// the analysis helpers (sorted points, plateau and point confidence, level tables, curves).
// bandwidth_sweep.cpp says what the two experiments measure, how, and their conventions.
#include "probes/bandwidth/sweep_rig.hpp"

#include <numeric>

#include "core/confidence.hpp"
#include "core/finding_names.hpp"
#include "core/parallel.hpp"

namespace gpuprobe::probes {

// ---------------------------------------------------------------------------------------------
// Pure helpers

namespace bwsweep {

LaunchRates rates_of(const std::vector<bws::BlockRecord>& records,
                     const std::vector<double>& bytes_per_block) {
  if (records.size() != bytes_per_block.size() || records.empty())
    throw std::invalid_argument("rates_of: one byte count per block record is needed");
  struct Sm {
    double bytes = 0;
    std::uint64_t c0 = std::numeric_limits<std::uint64_t>::max(), c1 = 0;
    std::uint64_t t0 = std::numeric_limits<std::uint64_t>::max(), t1 = 0;
    int blocks = 0;
  };
  std::map<std::uint32_t, Sm> sms;
  std::uint64_t g0 = std::numeric_limits<std::uint64_t>::max(), g1 = 0;
  double total = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    Sm& s = sms[r.smid];
    s.bytes += bytes_per_block[i];
    s.c0 = std::min(s.c0, r.clock_start);
    s.c1 = std::max(s.c1, r.clock_end);
    s.t0 = std::min(s.t0, r.ns_start);
    s.t1 = std::max(s.t1, r.ns_end);
    ++s.blocks;
    g0 = std::min(g0, r.ns_start);
    g1 = std::max(g1, r.ns_end);
    total += bytes_per_block[i];
  }
  LaunchRates out;
  std::vector<double> bpc, mhz;
  for (const auto& kv : sms) {
    const Sm& s = kv.second;
    if (s.c1 <= s.c0) throw std::invalid_argument("rates_of: an SM has an empty cycle span");
    bpc.push_back(s.bytes / static_cast<double>(s.c1 - s.c0));
    if (s.t1 > s.t0)
      mhz.push_back(static_cast<double>(s.c1 - s.c0) / static_cast<double>(s.t1 - s.t0) * 1e3);
    out.max_blocks_on_an_sm = std::max(out.max_blocks_on_an_sm, s.blocks);
  }
  if (g1 <= g0) throw std::invalid_argument("rates_of: the launch has an empty time span");
  out.sms = static_cast<int>(sms.size());
  out.bytes_per_clk_per_sm = stats::median(bpc);
  out.bytes_per_clk_per_sm_min = *std::min_element(bpc.begin(), bpc.end());
  out.span_ns = static_cast<double>(g1 - g0);
  out.gb_s = total / out.span_ns;
  out.clock_mhz = mhz.empty() ? 0.0 : stats::median(mhz);
  return out;
}

double slices_block_bytes(std::uint64_t slice_bytes, std::uint32_t slots,
                          std::uint32_t timed_passes) {
  return static_cast<double>(slice_bytes / std::max<std::uint32_t>(slots, 1)) * timed_passes;
}

double shared_grid_bytes(std::uint64_t region_bytes, std::uint32_t timed_passes) {
  return static_cast<double>(region_bytes) * timed_passes;
}

WordSums::WordSums(std::uint64_t words, std::uint32_t seed) : words_(words), seed_(seed) {
  chunk_.resize(words / kChunkWords);
  chunk_xor_.resize(words / kChunkWords);
  // Up to a GiB of words (bandwidth.hierarchy's DRAM set, twice per run): both folds of a
  // chunk in one pass over its words, the chunks spread over the host's cores.
  parallel::for_ranges(
      chunk_.size(),
      [&](unsigned, std::size_t a, std::size_t b) {
        for (std::uint64_t c = a; c < b; ++c) {
          std::uint32_t sum = 0, x = 0;
          for (std::uint64_t i = c * kChunkWords; i < (c + 1) * kChunkWords; ++i) {
            const std::uint32_t v = bw::value_bits(i, seed_);
            sum += v;
            x ^= v;
          }
          chunk_[c] = sum;
          chunk_xor_[c] = x;
        }
      },
      16);
}

std::uint32_t WordSums::direct(std::uint64_t first, std::uint64_t count, bool xor_fold) const {
  std::uint32_t s = 0;
  for (std::uint64_t i = first; i < first + count; ++i)
    s = xor_fold ? s ^ bw::value_bits(i, seed_) : s + bw::value_bits(i, seed_);
  return s;
}

std::uint32_t WordSums::fold(std::uint64_t first, std::uint64_t count, bool xor_fold) const {
  if (first + count > words_) throw std::out_of_range("WordSums: range past the data");
  const auto& chunks = xor_fold ? chunk_xor_ : chunk_;
  auto op = [xor_fold](std::uint32_t a, std::uint32_t b) { return xor_fold ? a ^ b : a + b; };
  std::uint32_t s = 0;
  std::uint64_t i = first;
  const std::uint64_t end = first + count;
  while (i < end && i % kChunkWords != 0) s = op(s, bw::value_bits(i++, seed_));
  while (i + kChunkWords <= end && i / kChunkWords < chunks.size()) {
    s = op(s, chunks[i / kChunkWords]);
    i += kChunkWords;
  }
  return op(s, direct(i, end - i, xor_fold));
}

std::uint32_t WordSums::sum(std::uint64_t first, std::uint64_t count) const {
  return fold(first, count, false);
}

std::uint32_t WordSums::xor_of(std::uint64_t first, std::uint64_t count) const {
  return fold(first, count, true);
}

std::uint32_t repeat_fold(bool xor_fold, std::uint32_t one_pass, std::uint32_t passes) {
  if (!xor_fold) return one_pass * passes;
  if (passes % 2 == 0)
    throw std::invalid_argument("repeat_fold: an even number of XOR passes cancels out");
  return one_pass;
}

std::uint32_t fold_words(bws::Fold f, const std::vector<std::uint32_t>& words) {
  std::uint32_t s = 0;
  for (std::uint32_t w : words) s = bws::fold_is_xor(f) ? s ^ w : s + w;
  return s;
}

int best_variant(const std::vector<bandwidth_rig::RigPoint>& rows) {
  int best = -1;
  double top = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    if (!row.verified || !row.measurement) continue;
    const double med = row.measurement->median;
    if (best < 0 || med > top) {
      best = static_cast<int>(i);
      top = med;
    }
  }
  return best;
}

namespace {

/// A slice of `bytes` the L1 holds whole: the largest multiple of the variants' unrolled step
/// within 3/4 of it (whole_steps: a slice shorter than one step runs only the variants' one-load
/// tail loops, which read below the unrolled loop's rate), else half of it aligned down to
/// 4 KiB; 0 bytes when even that is under 4 KiB.
struct L1Slice {
  std::uint64_t bytes = 0;
  bool whole_steps = false;
};
L1Slice l1_slice_of(double bytes) {
  constexpr std::uint64_t kAlign = 4 * units::kKiB;
  const std::uint64_t step = l1_variant_step_bytes();
  const auto within = static_cast<std::uint64_t>(bytes * 3 / 4) / step * step;
  if (within >= step) return {within, true};
  const auto half = static_cast<std::uint64_t>(bytes / 2);
  return {half >= kAlign ? half / kAlign * kAlign : 0, false};
}

}  // namespace

L1WorkingSet l1_fallback(const device::DeviceInfo& d) {
  constexpr std::uint64_t kAlign = 4 * units::kKiB;
  if (d.l1_shared_unified_bytes >= 2 * 16 * units::kKiB)
    return {d.l1_shared_unified_bytes / 2 / kAlign * kAlign,
            "half the unified L1 / shared-memory size per SM (" +
                units::format_bytes(d.l1_shared_unified_bytes) +
                "); l1.capacity was not measured with confidence >= 0.5"};
  // The unified L1 / shared-memory array holds at least the largest shared-memory carveout,
  // and a kernel that uses no shared memory gets most of the array as L1: the carveout takes
  // the place of the unmeasured capacity.
  if (d.shared_per_sm_bytes >= 2 * 16 * units::kKiB) {
    const auto slice = l1_slice_of(static_cast<double>(d.shared_per_sm_bytes));
    const std::string carveout = units::format_bytes(d.shared_per_sm_bytes);
    if (slice.whole_steps)
      return {slice.bytes, "the largest multiple of the L1 variants' step per SM (" +
                               units::format_bytes(l1_variant_step_bytes()) +
                               ") within 3/4 of the largest shared-memory carveout per SM (" +
                               carveout + "): l1.capacity was not measured with confidence >= 0.5"};
    return {slice.bytes, "half the largest shared-memory carveout per SM (" + carveout +
                             "): l1.capacity was not measured with confidence >= 0.5"};
  }
  return {16 * units::kKiB,
          "16 KiB, the L1 regime's smallest working set: neither l1.capacity nor the L1's or "
          "shared memory's size is known"};
}

std::uint64_t l1_variant_step_bytes() {
  std::uint64_t step = 1;
  for (const auto& v : bws::kL1Variants)
    step = std::lcm(step, static_cast<std::uint64_t>(v.unroll) * v.threads *
                              static_cast<std::uint64_t>(v.blocks_per_sm) * 16);
  return step;
}

L1WorkingSet l1_working_set(const device::DeviceInfo& d, const FindingBoard& prior) {
  if (const auto f = prior.get(finding::kL1Capacity, 0.5)) {
    const std::string measured = units::format_bytes(static_cast<std::uint64_t>(f->value)) +
                                 ", confidence " + std::to_string(f->confidence);
    const std::string step = units::format_bytes(l1_variant_step_bytes());
    const auto slice = l1_slice_of(f->value);
    if (slice.whole_steps)
      return {slice.bytes, "the largest multiple of the L1 variants' step per SM (" + step +
                               ": unroll x threads x blocks x 16 B) within 3/4 of the measured "
                               "l1.capacity (" +
                               measured + ")"};
    if (slice.bytes > 0)
      return {slice.bytes, "half the measured l1.capacity (" + measured +
                               "; under one step of the unrolled variants, " + step + ")"};
  }
  return l1_fallback(d);
}

}  // namespace bwsweep

namespace bandwidth_rig {

const char* fold_name(bws::Fold f) {
  switch (f) {
    case bws::Fold::kSum4:
      return "sum4 (acc + x + y + z + w)";
    case bws::Fold::kAdd3:
      return "add3 (a + x + y, b + z + w)";
    case bws::Fold::kXor3:
      return "xor3 (a ^ x ^ y, b ^ z ^ w)";
    case bws::Fold::kMixed:
      return "mixed (a + x + y, z * one + b, w * one + c)";
  }
  return "?";
}

/// What L1 / L2 kernel variant i is, as recorded beside its measurement.
json describe_l1_variant(int i) {
  const auto& v = bws::kL1Variants[i];
  return {{"variant", v.name},
          {"variant_index", i},
          {"fold", fold_name(v.fold)},
          {"host_fold", bws::fold_is_xor(v.fold) ? "xor" : "wrapping sum"},
          {"addressing", v.linear ? "linear (immediate offsets, one pass at a time)"
                                  : "rotated (passes interleaved, index wrap per load)"},
          {"load", bws::load_name(bws::Load::kCa)},
          {"unroll", v.unroll},
          {"threads_per_block", v.threads},
          {"blocks_per_sm_requested", v.blocks_per_sm}};
}
json describe_l2_variant(int i) {
  const auto& v = bws::kL2Variants[i];
  return {{"variant", v.name},
          {"variant_index", i},
          {"fold", fold_name(i == 0 ? bws::Fold::kSum4 : bws::Fold::kAdd3)},
          {"host_fold", "wrapping sum"},
          {"load", bws::load_name(v.load)},
          {"unroll", v.unroll},
          {"rotations", v.rotations},
          {"threads_per_block", v.threads},
          {"blocks_per_sm_requested", v.blocks_per_sm}};
}

std::uint32_t derive_seed(std::uint64_t seed) {
  return bw::mix32(static_cast<std::uint32_t>(seed) ^ 0x6a09e667u ^
                   bw::mix32(static_cast<std::uint32_t>(seed >> 32)));
}

json summary_json(const std::vector<double>& v) {
  return v.empty() ? json::object() : stats::to_json(stats::summarize(v));
}

// ---------------------------------------------------------------------------------------------
// Analysis helpers (pure)

double primary_median(const RigPoint& p) { return p.primary_median(); }

std::vector<std::size_t> working_set_order(const std::vector<RigPoint>& points) {
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto ws = [&](std::size_t i) {
    return static_cast<double>(points[i].working_set_bytes.value_or(0));
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return ws(a) < ws(b); });
  return order;
}

std::vector<RigPoint> sorted_points(std::vector<RigPoint> points) {
  std::vector<RigPoint> v;
  for (std::size_t i : working_set_order(points)) v.push_back(std::move(points[i]));
  return v;
}

std::vector<analysis::CurvePoint> curve_of(const std::vector<RigPoint>& pts) {
  std::vector<analysis::CurvePoint> c;
  for (const auto& p : pts)
    c.push_back({static_cast<double>(p.working_set_bytes.value_or(0)), primary_median(p),
                 p.measurement && p.measurement->mad ? *p.measurement->mad : 0.0});
  return c;
}

double plateau_confidence(const std::vector<RigPoint>& pts, const analysis::Plateau& p) {
  std::vector<double> medians;
  for (std::size_t i = p.first; i <= p.last && i < pts.size(); ++i)
    medians.push_back(primary_median(pts[i]));
  return confidence::precision(medians, p.level);
}

double knee_confidence(const std::vector<RigPoint>& pts, const analysis::LevelAnalysis& L,
                       const analysis::Transition& t) {
  if (t.below + 1 >= L.plateaus.size()) return 0.0;
  auto medians = [&](const analysis::Plateau& p) {
    std::vector<double> v;
    for (std::size_t i = p.first; i <= p.last && i < pts.size(); ++i)
      v.push_back(primary_median(pts[i]));
    return v;
  };
  return confidence::separation(
      confidence::separation_z(medians(L.plateaus[t.below]), medians(L.plateaus[t.below + 1])));
}

double point_confidence(const RigPoint& p) {
  if (!p.measurement || !p.measurement->values) return 0.0;
  return confidence::precision(*p.measurement->values, p.measurement->median);
}

double plateau_median(const std::vector<RigPoint>& pts, const analysis::Plateau& p,
                      std::optional<RigStat> RigPoint::*rate) {
  std::vector<double> v;
  for (std::size_t i = p.first; i <= p.last && i < pts.size(); ++i)
    if (const auto& s = pts[i].*rate; s && s->median) v.push_back(*s->median);
  return v.empty() ? 0.0 : stats::median(v);
}

json levels_json(const analysis::LevelAnalysis& L, const std::string& unit) {
  json plateaus = json::array(), transitions = json::array();
  for (const auto& p : L.plateaus)
    plateaus.push_back({{"level", p.level},
                        {"noise_mad", p.noise},
                        {"unit", unit},
                        {"working_set_bytes_min", p.x_min},
                        {"working_set_bytes_max", p.x_max},
                        {"points", p.last - p.first + 1}});
  for (const auto& t : L.transitions)
    transitions.push_back({{"last_on_bytes", t.x_last_on},
                           {"first_off_bytes", t.x_first_off},
                           {"level_below", t.level_below},
                           {"level_above", t.level_above},
                           {"confidence", t.confidence}});
  return {{"plateaus", plateaus}, {"transitions", transitions}, {"method", L.method}};
}

namespace {

/// A cell of a table: the value, or "" when the point does not hold it.
template <class V>
json cell(const std::optional<V>& v) {
  return v ? json(*v) : json("");
}

}  // namespace

Curve curve_table(const std::string& name, const std::vector<RigPoint>& pts, bool per_sm) {
  Curve c{name,
          {per_sm ? "working_set_bytes_per_sm" : "working_set_bytes", "working_set_total_bytes",
           "bytes_per_clk_per_sm_median", "bytes_per_clk_per_sm_mad", "slowest_sm_bytes_per_clk",
           "gb_s_median", "gb_s_mad", "n", "sm_clock_mhz_measured", "timed_passes_per_launch"},
          {}};
  const auto mad = [](const std::optional<RigStat>& s) { return s && s->mad ? *s->mad : 0.0; };
  for (const auto& p : pts) {
    const auto ws = p.working_set_bytes.value_or(0);
    const auto n = p.measurement && p.measurement->n ? *p.measurement->n : 0;
    c.rows.push_back({ws,
                      p.working_set_total_bytes ? json(*p.working_set_total_bytes)
                                                : json(static_cast<double>(ws)),
                      RigPoint::median_of(p.bytes_per_clk_per_sm), mad(p.bytes_per_clk_per_sm),
                      RigPoint::median_of(p.bytes_per_clk_per_sm_slowest_sm),
                      RigPoint::median_of(p.gb_s), mad(p.gb_s), static_cast<double>(n),
                      cell(p.sm_clock_mhz_measured), cell(p.timed_passes_per_launch)});
  }
  c.hints = per_sm ? chart_hints("every SM reads its own slice: bandwidth per SM against slice",
                                 "working_set_bytes_per_sm", "bytes", "bytes_per_clk_per_sm_median",
                                 "B/clk/SM", true)
                         .marked()
                   : chart_hints("all SMs read one region: bandwidth against working set",
                                 "working_set_bytes", "bytes", "gb_s_median", "GB/s", true)
                         .marked();
  return c;
}

std::uint64_t align_down(double x, std::uint64_t a) {
  return std::max<std::uint64_t>(a, static_cast<std::uint64_t>(x) / a * a);
}

void check_memory(const device::Device& dev, std::uint64_t need, const std::string& id) {
  const std::uint64_t free = dev.free_memory();
  if (need + 256 * kMiB > free)
    throw UsageError(id + " needs " + units::format_bytes(need + 256 * kMiB) +
                     " of GPU memory but " + units::format_bytes(free) + " is free");
}

}  // namespace bandwidth_rig
}  // namespace gpuprobe::probes
