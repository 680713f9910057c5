#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <unordered_set>

#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "measure/cache_search.hpp"
#include "measure/cache_sequences.hpp"

namespace gpuprobe::measure::cache {

using namespace detail;
using device::LoadOp;

namespace {

/// The walks of infer_tlb: one line per cell at a random 1 KiB-aligned offset, walked
/// cyclically, each line's own cache latency subtracted. One generator draws every walk's
/// offsets and orders, in the order the walks run; the cache latency is the first walk's.
class TlbWalker {
 public:
  TlbWalker(Probe& p, TlbResult& r) : p_(p), r_(r), rng_(p.seed * 2654435761u) {}

  /// One line per `stride` cell at a random 1 KiB-aligned offset inside it, in the cells from
  /// `first` on.
  std::vector<std::uint64_t> lines_for(std::uint64_t n, std::uint64_t stride,
                                       std::uint64_t first = 0) {
    std::vector<std::uint64_t> v(n);
    const std::uint64_t slots = std::max<std::uint64_t>(stride / 1024, 1);
    for (std::uint64_t k = 0; k < n; ++k)
      v[k] = (first + k) * stride + (rng_() % slots) * 1024 % stride;
    return v;
  }

  /// Excess latency of a cyclic walk over `lines` above each line's own cache latency (the
  /// median of its re-reads right after the first read, when every TLB level holds its page).
  /// A walk over few lines subtracts few own latencies from every sample: with one re-read
  /// each, one noisy read can shift a whole plateau by a few cycles (enough to hide a 10-cycle
  /// step), so few lines are re-read more often.
  std::vector<double> excess(const std::vector<std::uint64_t>& lines) {
    AccessSequence base;
    base.op = LoadOp::kCg;
    base.sm = p_.sm;
    const std::size_t rereads = std::clamp<std::size_t>(
        kTlbOwnReads / std::max<std::size_t>(lines.size(), 1), 1, kTlbOwnReads);
    for (auto l : lines)
      for (std::size_t k = 0; k <= rereads; ++k) base.sequence.push_back(l);
    const auto bt = p_.call(base);
    std::vector<double> own(lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const auto at = bt.cycles.begin() + static_cast<std::ptrdiff_t>(i * (rereads + 1));
      own[i] =
          stats::median(std::vector<double>(at + 1, at + static_cast<std::ptrdiff_t>(rereads + 1)));
    }
    std::vector<std::size_t> order(lines.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng_);
    // Three timed rounds (at least 96 samples); two where the sequencer holds no more (walks
    // over more than a quarter of its accesses: the largest walks, where every step misses).
    int rounds = std::max<int>(3, static_cast<int>(96 / lines.size()) + 1);
    if (p_.max_sequence && (static_cast<std::size_t>(rounds) + 1) * lines.size() > p_.max_sequence)
      rounds = 2;
    AccessSequence s;
    s.op = LoadOp::kCg;
    s.sm = p_.sm;
    for (int k = 0; k <= rounds; ++k)
      for (auto i : order) s.sequence.push_back(lines[i]);
    s.timed_from = static_cast<std::uint32_t>(lines.size());
    const auto t = p_.call(s);
    std::vector<double> ex;
    for (std::size_t k = 0; k < t.cycles.size(); ++k)
      ex.push_back(t.cycles[k] - own[order[k % order.size()]]);
    if (own_median_ == 0) own_median_ = stats::median(own);
    return ex;
  }

  /// A walk over n cells of `stride`, recorded in the result's curve.
  std::vector<double> walk(std::uint64_t n, std::uint64_t stride) {
    auto e = excess(lines_for(n, stride));
    nlohmann::json row = {
        {"pages", n}, {"stride_bytes", stride}, {"excess_cycles", stats::median(e)}};
    r_.curve.push_back(row);
    return e;
  }

  /// A step: above 2 % of the cache latency and clear of both sides' noise.
  bool stepped(const std::vector<double>& below, const std::vector<double>& e) const {
    const double d = stats::median(e) - stats::median(below);
    return d > 0.02 * own_median_ &&
           confidence::separation(confidence::separation_z(below, e)) >= 0.9;
  }

  /// Whether a walk over n cells of `stride` steps above `below`.
  bool steps_at(std::uint64_t n, std::uint64_t stride, const std::vector<double>& below) {
    return stepped(below, excess(lines_for(n, stride)));
  }

  /// The last cell count in [lo, hi) whose walk does not step above `below` (lo does not, hi
  /// does): where the rise first clears the criterion. A midpoint of the rise would move with
  /// whatever else the walks past the level add (cache misses of the walk's own lines).
  std::uint64_t crossing(std::uint64_t lo, std::uint64_t hi, std::uint64_t stride,
                         const std::vector<double>& below) {
    while (hi - lo > 1) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      (steps_at(mid, stride, below) ? hi : lo) = mid;
    }
    return lo;
  }

 private:
  Probe& p_;
  TlbResult& r_;
  std::mt19937_64 rng_;
  double own_median_ = 0;
};

/// A level's penalty replicates after the detection's own: walks over other cells at fresh
/// offsets (other pages, other lines, their own re-read latencies), each a plateau walk over
/// `below_cells` and one over `top` cells; each replicate's penalty carries both medians' errors.
void add_penalty_replicates(TlbWalker& w, TlbLevelResult& level, std::uint64_t below_cells,
                            std::uint64_t top, std::uint64_t max_pages,
                            std::uint64_t largest_page) {
  for (int j = 1; j < kTlbPenaltyReplicates; ++j) {
    const std::uint64_t ju = static_cast<std::uint64_t>(j);
    const std::uint64_t b0 = (ju + 1) * below_cells <= max_pages ? ju * below_cells : 0;
    const std::uint64_t a0 = (ju + 1) * top <= max_pages ? ju * top : 0;
    const auto eb = w.excess(w.lines_for(below_cells, largest_page, b0));
    const auto ea = w.excess(w.lines_for(top, largest_page, a0));
    level.penalty_replicates.push_back(stats::median(ea) - stats::median(eb));
    level.penalty_standard_errors.push_back(
        std::hypot(confidence::median_standard_error(ea), confidence::median_standard_error(eb)));
  }
}

/// The levels: walks over 1, 2, 4, ... cells of `largest_page`; every step up is a level.
void find_tlb_levels(TlbWalker& w, TlbResult& r, std::uint64_t largest_page,
                     std::uint64_t max_pages) {
  // The plateau before any level: the walks over 1 and 2 cells pooled (one walk's median alone
  // can sit a few cycles off, enough to hide a 10-cycle step).
  std::vector<double> base = w.excess(w.lines_for(1, largest_page));
  {
    const auto two = w.walk(2, largest_page);
    base.insert(base.end(), two.begin(), two.end());
  }
  std::uint64_t prev = 2;
  for (std::uint64_t n = 4; n <= max_pages; n *= 2) {
    auto e = w.walk(n, largest_page);
    if (!w.stepped(base, e)) {
      prev = n;
      continue;
    }
    // The rise goes on while each doubling adds less than the step so far (a gradual rise of
    // one level; a next level adds a step of its own at once).
    const double plateau = stats::median(base);
    std::vector<double> above = e;
    std::uint64_t top = n;
    for (std::uint64_t m = 2 * n; m <= std::min(4 * n, max_pages); m *= 2) {
      auto e2 = w.walk(m, largest_page);
      const double rise = stats::median(e2) - stats::median(above);
      if (rise <= 0 || rise >= stats::median(above) - plateau) break;
      above = e2;
      top = m;
    }
    TlbLevelResult level;
    level.entries = w.crossing(prev, n, largest_page, base);
    level.below = base;
    level.above = above;
    // The penalty from independent replicates, the detection's own walks first.
    level.penalty_replicates.push_back(stats::median(above) - plateau);
    level.penalty_standard_errors.push_back(std::hypot(confidence::median_standard_error(above),
                                                       confidence::median_standard_error(base)));
    // The plateau of the first level is the walks over 1 and 2 cells; of a later one, the walk
    // past the level before.
    const std::uint64_t below_cells = r.levels.empty() ? 2 : prev;
    add_penalty_replicates(w, level, below_cells, top, max_pages, largest_page);
    level.miss_penalty_cycles = stats::median(level.penalty_replicates);
    r.levels.push_back(level);
    base = above;
    prev = top;
    n = top;
  }
}

/// Coverage of a first-level entry from strides of 2, 4, ... x largest_page: the crossing
/// falls while the stride is below the coverage and stays from it on.
void coverage_above(TlbWalker& w, TlbResult& r, std::uint64_t buffer_bytes,
                    std::uint64_t largest_page, std::uint64_t cap_cells) {
  auto& l1 = r.levels.front();
  std::uint64_t prev_cells = l1.entries;
  r.page_curve.push_back({{"stride_bytes", largest_page},
                          {"crossing_cells", l1.entries},
                          {"reach_bytes", l1.entries * largest_page}});
  for (std::uint64_t stride = 2 * largest_page;; stride *= 2) {
    const std::uint64_t cells_max = std::min(buffer_bytes / stride, cap_cells);
    if (cells_max < 4 || cells_max < prev_cells) break;
    // The crossing sits between prev_cells / 4 and prev_cells (it falls by half while the
    // stride is below the coverage and stays once it is not).
    std::uint64_t lo = std::max<std::uint64_t>(prev_cells / 4, 1);
    if (w.steps_at(lo, stride, l1.below)) lo = 1;
    const std::uint64_t hi = std::min(cells_max, 2 * prev_cells + 2);
    if (!w.steps_at(hi, stride, l1.below)) break;  // no step within reach
    const std::uint64_t cells = w.crossing(lo, hi, stride, l1.below);
    r.page_curve.push_back(
        {{"stride_bytes", stride}, {"crossing_cells", cells}, {"reach_bytes", cells * stride}});
    r.coverage_at_least = stride / 2;
    // Stays within a quarter: the previous stride already gave each cell its own entry.
    if (4 * cells >= 3 * prev_cells) {
      r.page_bytes = stride / 2;
      r.coverage_at_least = 0;
      // Counted where each cell has an entry of its own: below the coverage a random-order
      // walk's cells share entries and its crossing overstates the entries.
      l1.entries = prev_cells;
      break;
    }
    prev_cells = cells;
  }
}

/// Coverage at or below the largest page: halve the stride while 1.5 x the entries still sit
/// past the crossing (each cell still needs its own entry); once they do not step, two cells
/// share an entry and the coverage is twice that stride.
void coverage_below(TlbWalker& w, TlbResult& r, std::uint64_t largest_page,
                    std::uint64_t smallest_page, std::uint64_t cap_cells) {
  const auto& l1 = r.levels.front();
  const auto n15 = (3 * l1.entries + 1) / 2;
  for (std::uint64_t stride = largest_page / 2; stride >= smallest_page; stride /= 2) {
    if (n15 > cap_cells) break;
    const bool stays = w.steps_at(n15, stride, l1.below);
    r.page_curve.push_back({{"stride_bytes", stride}, {"cells", n15}, {"steps", stays}});
    if (!stays) break;
    r.page_bytes = stride;
  }
}

}  // namespace

TlbResult infer_tlb(Probe& p, std::uint64_t largest_page, std::uint64_t max_pages,
                    std::uint64_t smallest_page) {
  TlbResult r;
  // A walk over n cells is n x (rounds + 1) accesses in one sequence, at least 3 n (two timed
  // rounds after the untimed one).
  const std::uint64_t cap_cells =
      p.max_sequence ? static_cast<std::uint64_t>(p.max_sequence / 3) : max_pages;
  max_pages = std::min({max_pages, p.buffer_bytes / largest_page, cap_cells});
  r.max_pages_tried = max_pages;
  TlbWalker w(p, r);
  find_tlb_levels(w, r, largest_page, max_pages);
  if (r.levels.empty()) return r;
  coverage_above(w, r, p.buffer_bytes, largest_page, cap_cells);
  if (r.page_bytes != largest_page) return r;
  coverage_below(w, r, largest_page, smallest_page, cap_cells);
  return r;
}

}  // namespace gpuprobe::measure::cache
