// cache.l2.far_hit, built on the cache-structure sequences (device/sequence.hpp), so it runs on
// the real GPU and on a modelled one alike. After an L2 flush a reference SM on the other side
// reads 256 probed lines (each then sits in its home partition, and perhaps as a copy near the
// reference); the measured SM then times its first and its second read of every line. Lines
// homed near the reference are, for the measured SM, far hits on the first read: the pure
// far-hit latency. The second read tells whether the measured SM's near partition kept a copy.
// Larger sets of far-homed lines (classified by the partition's address function, fitted here
// or taken from cache.l2.partition) tell how many copies fit and which go first. The sequence's
// per-load scale is moved onto the chase's by a hot chase: far = chase near hit + (far - near).
#include "probes/cache/l2_far_hit.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/l2_far_hit.hpp"
#include "core/confidence.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/finding_names.hpp"
#include "core/samples.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "device/cuda_device.hpp"
#include "device/device_buffer.hpp"
#include "device/sequence.hpp"
#include "measure/capacity_bisection.hpp"
#include "measure/l2_flush.hpp"
#include "measure/replicates.hpp"
#include "probes/cache/cache_samples.hpp"
#include "probes/cache/l2_far_hit_kernels.hpp"
#include "probes/cache/partition_sides.hpp"
#include "probes/cache/sequence_session.hpp"

namespace gpuprobe::probes {
namespace {

using cache_samples::ChaseSearch;
using cache_samples::ChaseSides;
using cache_samples::ColdChases;
using cache_samples::CopyChases;
using cache_samples::FarHitSamples;
using nlohmann::json;
using units::kKiB;
using units::kMiB;

using sides::kLine;
using sides::kPage;
constexpr int kPages = 4;         // the latency rounds' lines
constexpr int kBufferPages = 32;  // the copy-capacity chases' lines (64 MiB)
constexpr int kPageProbeLines = 8;
constexpr int kCapacityBisections = 7;
constexpr int kLinesPerPage = 64;
constexpr int kRounds = 5;
constexpr int kColdRounds = 3;
constexpr std::uint64_t kColdChaseSteps = 8192;
constexpr int kReferenceCandidates = 16;
constexpr std::uint64_t kChaseBytes = 2 * kMiB;
constexpr std::size_t kFirstCapacityStep = 256;

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

analysis::FarHitInput input_from(const FarHitSamples& samples) {
  analysis::FarHitInput in;
  in.offsets = samples.offsets;
  for (const auto& r : samples.rounds) in.rounds.push_back({r.first, r.second});
  in.chase_cycles = samples.chase.cycles_per_step;
  return in;
}

class L2FarHit : public Experiment {
 public:
  std::string id() const override { return "cache.l2.far_hit"; }
  std::vector<std::string> produces() const override {
    return {finding::kL2FarHitLatency, "l2.replication", "l2.replica_capacity*",
            finding::kDramLatencyNearHome, finding::kDramLatencyFarHome};
  }
  std::string description() const override {
    return "pure L2 far-hit latency (first read of a line the far partition holds and the near "
           "one does not, after a reference SM on the other side placed it; on the chase's "
           "scale), replication of far-homed lines into the near partition after a read, and "
           "how many copies fit";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(int_axis("lines", {256}, "lines", "4 pages x 64 random lines (ld.global.cg)")),
            fixed(int_axis("rounds", {static_cast<std::int64_t>(kRounds)}, "rounds",
                           "flush, place, time rounds")),
            fixed(string_axis("reference", {"first_two_class_sm"},
                              "the first of up to 16 SMs whose placement gives two latency "
                              "classes")),
            fixed(string_axis("capacity_steps", {"doubling"},
                              "256, 512, ... far-homed lines, up to the sequence limit"))};
  }
  std::vector<std::string> depends_on() const override { return {"cache.l2.partition"}; }

  int samples_version() const override { return FarHitSamples::kVersion; }
  void run(Context& ctx, ExperimentResult& r) const override {
    auto* seq = as_sequencer(ctx.device);
    if (!seq) return cache_structure::waive(r, cache_structure::kNoSequencer);
    const int sms = ctx.device.info().sm_count;
    if (sms < 2) {
      r.status = Status::kWaived;
      r.reason = "one SM: no other side to place lines from";
      return;
    }
    auto buf = seq->alloc_probe_buffer(kBufferPages * kPage);
    const auto lines = sides::random_lines(kPages, kLinesPerPage, ctx.options.seed);
    const auto warm = sides::warm_lines(kPages);
    const int measured = 0;
    // The reference: the first candidate whose placement splits the measured SM's first reads
    // into two classes (an SM on its own side leaves none when far lines are copied near).
    const auto ref =
        sides::find_reference(*seq, *buf, warm, lines, measured, sms, kReferenceCandidates);
    const int reference = ref.sm;
    const json& tried = ref.tried;
    r.parameters = {{"measured_sm", measured},
                    {"reference_candidates", tried},
                    {"lines", lines.size()},
                    {"pages", kPages},
                    {"op", "cg"},
                    {"protocol",
                     "flush the L2 (2 x L2 streamed); the reference SM reads every probed line "
                     "(dependent ld.global.cg); the measured SM reads the last line of every "
                     "64 KiB region (untimed, warms the translations), then times its first and "
                     "its second read of every probed line (one dependent load each, %clock64 "
                     "around it)"}};
    if (reference < 0) {
      r.status = Status::kWaived;
      r.reason = "one L2 partition: no reference SM among " + std::to_string(tried.size()) +
                 " splits the first reads into near and far hits";
      return;
    }
    r.parameters["reference_sm"] = reference;
    FarHitSamples samples;
    samples.offsets = lines;
    for (int k = 0; k < kRounds; ++k) {
      const auto rd = sides::run_round(*seq, *buf, warm, lines, reference, measured);
      samples.rounds.push_back({rd.first, rd.second});
    }
    // DRAM by home: after a flush, the measured SM's first read of every probed line misses.
    samples.cold_rounds.emplace();
    for (int k = 0; k < kColdRounds; ++k)
      samples.cold_rounds->push_back(
          sides::run_round(*seq, *buf, warm, lines, -1, measured, false).first);
    // The chase's scale: a hot chase over a set far below one partition.
    auto chain = ctx.device.make_chain({kChaseBytes, static_cast<std::uint32_t>(kLine), 11});
    device::ChaseParams cp;
    cp.op = device::LoadOp::kCg;
    cp.warmup_steps = 2 * chain->nodes();
    cp.timed_steps = 4 * chain->nodes();
    const auto ct = ctx.device.chase(*chain, cp);
    const double mhz = ct.elapsed_ns > 0 ? ct.total_cycles / ct.elapsed_ns * 1000.0
                                         : ctx.device.info().sm_clock_max_mhz;
    r.parameters["sm_clock_mhz"] = mhz;
    samples.chase = {kChaseBytes, ct.cycles_per_step, ct.smid, cp.timed_steps};
    r.samples = samples;
    const auto a = analysis::analyze_far_hit(input_from(samples));
    if (!a.split) return;  // analyze says why
    // Copy capacity: far-homed lines (by the partition's address function) read once, then
    // again; steps double until the sequence limit.
    std::uint64_t prior_mask = 0;
    if (const auto f = ctx.prior.get(finding::kL2PartitionHashMask, 0.5))
      prior_mask = static_cast<std::uint64_t>(f->value);
    const auto fit = analysis::fit_side(lines, a.line_far, prior_mask);
    r.parameters["prior_hash_mask"] = hex(prior_mask);
    if (!fit.found) return;
    std::vector<std::uint64_t> far_lines;
    for (std::uint64_t o = 0; o < kPages * kPage; o += kLine)
      if (!sides::is_warm_line(o) && analysis::predict_side(fit, o) == 1) far_lines.push_back(o);
    std::mt19937_64 rng(ctx.options.seed + 1);
    std::shuffle(far_lines.begin(), far_lines.end(), rng);
    // The copy-capacity steps stay within the sequence length they were calibrated with on the
    // H200 (19370 accesses); longer sequences are refilled between timed loads.
    constexpr std::size_t kCalibratedSequence = 19370;
    const std::size_t room =
        (std::min(seq->max_sequence_length(), kCalibratedSequence) - warm.size()) / 3;
    const std::size_t max_lines = std::min(room, far_lines.size());
    samples.capacity_steps.emplace();
    for (std::size_t k = kFirstCapacityStep;; k = std::min(2 * k, max_lines)) {
      if (k > max_lines) break;
      std::vector<std::uint64_t> set(far_lines.begin(), far_lines.begin() + k);
      const auto rd = sides::run_round(*seq, *buf, warm, set, reference, measured);
      samples.capacity_steps->push_back({k, rd.first, rd.second});
      if (k == max_lines) break;
    }
    r.parameters["capacity_max_lines"] = max_lines;
    if (const std::uint64_t* base = device::cuda_probe_base(*buf))
      samples.copy_chases = copy_chases(ctx, *seq, *buf, base, fit.mask, reference, measured);
    r.samples = samples;
  }

  /// Steady-state chases of one SM over far-homed lines only and over near-homed lines only,
  /// with the working set bisected: while the near partition keeps copies of the far lines,
  /// their chase runs at the near-hit latency. The lines of all 32 pages are classified first
  /// (each page has its own constant in the partition function).
  CopyChases copy_chases(Context& ctx, Sequencer& seq, ProbeBuffer& buf, const std::uint64_t* base,
                         std::uint64_t mask, int reference, int measured) const {
    const auto plines = sides::random_lines(kBufferPages, kPageProbeLines, ctx.options.seed + 7);
    const auto pwarm = sides::warm_lines(kBufferPages);
    analysis::FarHitInput pin;
    pin.offsets = plines;
    for (int k = 0; k < 2; ++k) {
      const auto rd = sides::run_round(seq, buf, pwarm, plines, reference, measured);
      pin.rounds.push_back({rd.first, rd.second});
    }
    const auto pa = analysis::analyze_far_hit(pin);
    CopyChases out;
    out.page_lines = plines.size();
    out.split = pa.split;
    if (!pa.split) return out;
    const auto fit = analysis::fit_side(plines, pa.line_far, mask);
    out.mask = hex(fit.mask);
    out.fit_accuracy = fit.accuracy;
    if (!fit.found || fit.accuracy < 0.95) return out;
    std::vector<std::uint64_t> side_lines[2];
    for (std::uint64_t o = 0; o < kBufferPages * kPage; o += kLine)
      if (!sides::is_warm_line(o)) {
        const int sd = analysis::predict_side(fit, o);
        if (sd >= 0) side_lines[sd].push_back(o);
      }
    std::mt19937_64 rng(ctx.options.seed + 3);
    const std::uint64_t words = kBufferPages * kPage / 8;
    std::vector<std::uint64_t> image(words);
    for (std::uint64_t i = 0; i < words; ++i) image[i] = i * 8;
    const auto b = reinterpret_cast<std::uint64_t>(base);
    const int sms = ctx.device.info().sm_count;
    device::DeviceArray<std::uint32_t> claim(1);
    device::DeviceArray<farhit::SmChaseOut> dout(1);
    // A cold chase (flushed L2, no warm-up, every step a first touch) times DRAM misses of one
    // home on the chase's own scale.
    measure::L2Flush flush(measure::L2Flush::bytes_for(ctx.device.info().l2_bytes, 4 * kMiB), sms);
    auto chase = [&](int side, std::uint64_t bytes, bool cold = false) {
      std::vector<std::uint64_t> set = side_lines[side];
      std::shuffle(set.begin(), set.end(), rng);
      set.resize(std::min<std::size_t>(set.size(), bytes / kLine));
      for (std::size_t k = 0; k < set.size(); ++k)
        image[set[k] / 8] = b + set[(k + 1) % set.size()];
      GP_CUDA_CHECK(cudaMemcpy(const_cast<std::uint64_t*>(base), image.data(), words * 8,
                               cudaMemcpyHostToDevice));
      for (std::uint64_t o : set) image[o / 8] = o;  // back to the identity for the next set
      if (cold) flush.flush();
      const std::uint64_t n = set.size();
      const std::uint64_t warmup = cold ? 0 : 2 * n;
      const std::uint64_t steps = std::min<std::uint64_t>(n, cold ? kColdChaseSteps : 32768);
      claim.zero();
      dout.zero();
      farhit::chase_on_sm(base + set[0] / 8, warmup, steps, measured,
                          static_cast<unsigned>(8 * sms), claim.get(), dout.get());
      const auto o = dout.download()[0];
      if (!o.ran)
        throw VerificationError(id() + ": no block reached SM " + std::to_string(measured));
      if (o.end_address != b + set[(warmup + steps) % n])
        throw VerificationError(id() + ": copy chase ended on the wrong line");
      return static_cast<double>(o.cycles) / steps;
    };
    ChaseSides searches;
    for (int side : {1, 0}) {
      const std::uint64_t hi = side_lines[side].size() * kLine;
      const auto s =
          measure::search_capacity([&](std::uint64_t bytes) { return chase(side, bytes); },
                                   1 * kMiB, hi, kCapacityBisections, kLine);
      ChaseSearch& search = side ? searches.far_homed : searches.near_homed;
      for (const auto& p : s.probes) search.probes.emplace_back(p.bytes, p.cycles);
      search.valid = s.valid;
      search.lo = s.lo;
      search.hi = s.hi;
    }
    ColdChases cold;
    for (int side : {0, 1})
      for (int k = 0; k < measure::kReplicates; ++k)
        (side ? cold.far_homed : cold.near_homed)
            .push_back(chase(side, side_lines[side].size() * kLine, true));
    out.cold_chases = cold;
    // Back to every word holding its offset (the sequencer's invariant).
    GP_CUDA_CHECK(cudaMemcpy(const_cast<std::uint64_t*>(base), image.data(), words * 8,
                             cudaMemcpyHostToDevice));
    out.searches = searches;
    return out;
  }

  /// dram.latency_near_home / _far_home from the cold rounds (see analyze_dram_by_home).
  template <typename Ns>
  static void add_dram_by_home(ExperimentResult& r, const FarHitSamples& samples,
                               const analysis::FarHitResult& a, Ns ns) {
    const auto d = analysis::analyze_dram_by_home(a, *samples.cold_rounds);
    json st = {{"near_lines", d.near_lines.size()},
               {"far_lines", d.far_lines.size()},
               {"near_sequence_cycles", d.near_sequence_cycles},
               {"far_sequence_cycles", d.far_sequence_cycles},
               {"near_on_chase_scale_from_sequences", d.near_cycles},
               {"far_on_chase_scale_from_sequences", d.far_cycles},
               {"reads_not_from_dram", d.not_cold},
               {"reads", d.reads}};
    // Where the device ran cold chases over each home's lines (the CUDA device), they give the
    // values on the chase's own scale; the sequences' cold reads stay beside them as a
    // cross-check. Otherwise (the modelled GPU) the sequences' values are the findings.
    const ColdChases* cc = samples.copy_chases && samples.copy_chases->cold_chases
                               ? &*samples.copy_chases->cold_chases
                               : nullptr;
    struct Side {
      const char* name;
      double value;
      double confidence;
      json extra;
    };
    std::vector<Side> sides;
    const char* method = nullptr;
    if (cc) {
      method =
          "one SM's chase (ld.global.cg) over the lines of one home only (classified by the "
          "partition's address function), started right after an L2 flush with no warm-up: "
          "every step a first touch, a DRAM miss; 3 replicates (fresh random orders), median";
      for (const char* which : {"near_homed", "far_homed"}) {
        const auto& v = std::string(which) == "far_homed" ? cc->far_homed : cc->near_homed;
        // Each replicate is one chase's mean over 8192 loads: the spread between them (Student's
        // t on k - 1 degrees of freedom) is the standard error.
        const auto rs = confidence::summarize_replicates(v, std::vector<double>(v.size(), 0.0));
        sides.push_back({which,
                         rs.value,
                         rs.precision,
                         {{"value_ns", ns(rs.value)},
                          {"replicates_cycles", v},
                          {"standard_error", rs.standard_error}}});
      }
    } else if (d.found) {
      const double cold = confidence::agreement(d.reads - d.not_cold, d.reads);
      method =
          "first read of a probed line by the measured SM after an L2 flush (a DRAM miss), "
          "lines split by the side the latency rounds found; median per line over the cold "
          "rounds, mean over the lines; on the chase's scale: hot-chase near hit + (cold read "
          "- near first read of the same sequences)";
      sides.push_back(
          {"near_homed",
           d.near_cycles,
           confidence::combine({confidence::precision(d.near_lines, d.near_sequence_cycles), cold}),
           {{"value_ns", ns(d.near_cycles)}, {"sequence_cycles", d.near_sequence_cycles}}});
      sides.push_back(
          {"far_homed",
           d.far_cycles,
           confidence::combine({confidence::precision(d.far_lines, d.far_sequence_cycles), cold}),
           {{"value_ns", ns(d.far_cycles)}, {"sequence_cycles", d.far_sequence_cycles}}});
    }
    r.statistics["dram_by_home"] = st;
    if (sides.empty()) {
      r.statistics["dram_by_home"]["why_no_findings"] =
          "no cold chases, and fewer than 3 lines of a side read from DRAM after the flush";
      return;
    }
    r.findings.push_back(Finding{
        finding::kDramLatencyNearHome, sides[0].value, "cycles", sides[0].confidence,
        std::string("lines homed in the measured SM's partition: ") + method, sides[0].extra});
    r.findings.push_back(
        Finding{finding::kDramLatencyFarHome, sides[1].value, "cycles", sides[1].confidence,
                std::string("lines homed in the other partition: ") + method, sides[1].extra});
  }

  void analyze(ExperimentResult& r) const override {
    if (r.status == Status::kWaived) return;
    const auto samples = samples_as<FarHitSamples>(r);
    const auto in = input_from(samples);
    const auto a = analysis::analyze_far_hit(in);
    const double mhz = r.parameters.value("sm_clock_mhz", 0.0);
    auto ns = [&](double c) { return mhz > 0 ? c / mhz * 1000.0 : 0.0; };
    r.statistics = {{"split", a.split},
                    {"threshold_cycles", a.threshold},
                    {"consistency", a.consistency},
                    {"far_lines", a.far_lines},
                    {"far_line_fraction", a.far_line_fraction},
                    {"near_first_cycles", a.near_first_cycles},
                    {"far_first_cycles", a.far_first_cycles},
                    {"far_second_cycles", a.far_second_cycles},
                    {"near_first_mean_cycles", a.near_first_mean},
                    {"far_first_mean_cycles", a.far_first_mean},
                    {"difference_cycles", a.difference_cycles},
                    {"difference_standard_error", a.difference_standard_error},
                    {"replicated_far_lines", a.replicated},
                    {"chase_cycles", in.chase_cycles},
                    {"chase_near_cycles", a.chase_near_cycles}};
    if (!a.split) {
      r.statistics["why_no_findings"] =
          "the measured SM's first reads formed one class: no far hit was seen";
      return;
    }
    const double agree = confidence::agreement(
        static_cast<std::size_t>(a.consistency * in.rounds.size() * in.offsets.size() + 0.5),
        in.rounds.size() * in.offsets.size());
    const double sep = confidence::separation(confidence::separation_z(a.near_first, a.far_first));
    r.findings.push_back(Finding{
        "l2.far_hit_latency",
        a.far_hit_cycles,
        "cycles",
        confidence::combine({a.near_first.size() >= 3 && a.far_first.size() >= 3
                                 ? confidence::summarize_replicates({a.far_hit_cycles},
                                                                    {a.difference_standard_error})
                                       .precision
                                 : 0.0,  // no spread to judge the means by
                             sep, agree}),
        "first read of a line the far partition holds and the near one does not (a reference "
        "SM on the other side placed it after a flush), on the chase's scale: hot-chase near "
        "hit (a mean over its lines) + (mean far first read - mean near first read) of the "
        "same sequences (per line: median over rounds)",
        {{"value_ns", ns(a.far_hit_cycles)},
         {"chase_near_cycles", a.chase_near_cycles},
         {"difference_cycles", a.difference_cycles},
         {"difference_standard_error", a.difference_standard_error},
         {"sequence_far_mean_cycles", a.far_first_mean},
         {"sequence_near_mean_cycles", a.near_first_mean},
         {"sequence_far_cycles", a.far_first_cycles},
         {"sequence_near_cycles", a.near_first_cycles}}});
    const std::size_t agreeing = a.replication ? a.replicated : a.far_lines - a.replicated;
    r.findings.push_back(Finding{
        "l2.replication",
        a.replication ? 1.0 : 0.0,
        "bool",
        confidence::agreement(agreeing, a.far_lines),
        "the measured SM's second read of a far-homed line it has just read: near latency "
        "(1: the near partition kept a copy) or far (0); value by majority of the far lines",
        {{"far_lines", a.far_lines},
         {"second_read_near", a.replicated},
         {"far_second_cycles", a.far_second_cycles}}});
    if (samples.cold_rounds) add_dram_by_home(r, samples, a, ns);
    if (!samples.capacity_steps) return;
    std::vector<analysis::ReplicaStep> steps;
    json cap_rows = json::array();
    std::size_t first_far = 0, first_n = 0;
    for (const auto& s : *samples.capacity_steps) {
      analysis::ReplicaStep st;
      st.lines = s.lines;
      st.second = s.second;
      for (double v : s.first) {
        first_far += v >= a.threshold;
        ++first_n;
      }
      steps.push_back(std::move(st));
    }
    const auto rep = analysis::analyze_replica_steps(steps, a.threshold);
    Curve cv{"replica_steps", {"far_lines", "bytes", "second_read_near_fraction"}, {}};
    for (std::size_t i = 0; i < steps.size(); ++i)
      cv.rows.push_back({steps[i].lines, steps[i].lines * kLine, rep.near_fraction[i]});
    r.curves.push_back(cv);
    // The classification of the capacity sets holds when their first reads were far.
    const double class_ok = confidence::agreement(first_far, first_n);
    r.statistics["capacity_first_reads_far"] = {first_far, first_n};
    if (!a.replication || steps.empty()) return;
    const auto& last = steps.back();
    const std::size_t near_last = static_cast<std::size_t>(std::count_if(
        last.second.begin(), last.second.end(), [&](double v) { return v < a.threshold; }));
    // The chases over far-homed lines only reach far larger sets than the sequences.
    const ChaseSearch* far_search = nullptr;
    const ChaseSearch* near_search = nullptr;
    if (samples.copy_chases && samples.copy_chases->searches) {
      far_search = &samples.copy_chases->searches->far_homed;
      near_search = &samples.copy_chases->searches->near_homed;
      Curve cc{"copy_chases", {"lines", "working_set_bytes", "cycles_per_load"}, {}};
      for (const ChaseSearch* which : {far_search, near_search})
        for (const auto& [bytes, cycles] : which->probes)
          cc.rows.push_back({which == far_search ? "far_homed" : "near_homed", bytes, cycles});
      r.curves.push_back(cc);
    }
    if (far_search && far_search->valid) {
      const auto lo = static_cast<double>(far_search->lo);
      const auto hi = static_cast<double>(far_search->hi);
      const double cap = 0.5 * (lo + hi), half = 0.5 * (hi - lo);
      const double within =
          half > 0 ? std::min(1.0, confidence::kDefaultTolerance * cap / half) : 1.0;
      json extra = {{"bracket_bytes", {lo, hi}}, {"far_homed_probes", far_search->probes}};
      if (near_search && near_search->valid)
        extra["near_homed_bracket_bytes"] = {near_search->lo, near_search->hi};
      r.findings.push_back(Finding{
          "l2.replica_capacity", cap, "bytes", confidence::combine({within, class_ok}),
          "one SM's steady-state chase (ld.global.cg) over far-homed lines only: the largest "
          "set still served at the near-hit latency (bisection; midpoint of the final bracket); "
          "the near-homed chase's bracket beside it for comparison (copies kept like home lines "
          "when the brackets coincide)",
          extra});
    } else if (far_search) {
      const auto& probes = far_search->probes;
      r.findings.push_back(Finding{
          "l2.replica_capacity_lower_bound",
          static_cast<double>(far_search->hi),
          "bytes",
          class_ok,
          "one SM's steady-state chase over far-homed lines only stayed at one latency up to "
          "every far-homed line of the 64 MiB buffer: the copies' capacity is at least this",
          {{"far_homed_probes", probes}}});
    } else if (!rep.evicted) {
      r.findings.push_back(Finding{
          "l2.replica_capacity_lower_bound",
          static_cast<double>(rep.kept_lines * kLine),
          "bytes",
          confidence::combine({confidence::agreement(near_last, last.second.size()), class_ok}),
          "far-homed lines read once and then again by one SM: every step up to the sequence "
          "limit kept >= 90 % of its copies near, so the copies' capacity is at least this "
          "(no eviction seen: the policy of the copies is not decided here)",
          {{"lines", rep.kept_lines}}});
    }
    if (rep.evicted)
      r.statistics["sequence_copy_eviction"] = {
          {"kept_lines", rep.kept_lines},
          {"first_evicting_lines", rep.first_evicting},
          {"evicted_mean_read_position", rep.evicted_position},
          {"evicted", rep.evicted_count}};
  }
};

}  // namespace

void register_l2_far_hit_experiments(Registry& registry) {
  registry.add(std::make_unique<L2FarHit>());
}

}  // namespace gpuprobe::probes
