// bandwidth.sweep and bandwidth.hierarchy.
//
// Why these exist (issue 3, items 3 and 4): seed 003's "memory hierarchy" table measured a 4 KB
// sequential dependent chain (a latency walk that one cache line set holds, i.e. neither a
// bandwidth nor a hierarchy) and a single 64 MB run (one sample, of a size that on an H200 is
// neither in L2 nor well past it), so its numbers mean little. This tool instead:
//  - sweeps the working set log-spaced (3 points per octave, refined at the knees) in two
//    regimes and finds the plateaus (L1, L2, DRAM) and the capacities between them with the same
//    change-point analysis as latency.sweep (analysis::find_levels on log bandwidth);
//      L1 regime: every SM reads its own private slice of W bytes (W per SM) with ld.global.ca
//        16-B loads at full occupancy; bytes per SM cycle from %clock64 per SM;
//      L2 regime: the whole grid reads one region of W bytes (total) with ld.global.cg (L1
//        bypassed); GB/s from %globaltimer over the timed part of every block;
//  - repeats every point until the protocol's spread target holds, sizing each launch to about
//    1 ms of timed reads, and verifies every launch: each block's wrapping sum of the words it
//    read is compared with the host's sum of the same words (data from a hash of the index);
//  - puts register file, shared memory, L1, L2 and DRAM bandwidth in one table beside the
//    latencies the latency family measured (bandwidth.hierarchy).
// Conventions: GB/s = 1e9 bytes/s; bytes counted are bytes the kernel asks for (16-B loads,
// every byte used); B/clk/SM uses the SM clock measured in the kernel (cycles / globaltimer).
#include "probes/bandwidth/bandwidth_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>

#include "analysis/levels.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "device/device_buffer.hpp"
#include "probes/bandwidth/bandwidth.hpp"
#include "probes/bandwidth/bandwidth_kernels.hpp"

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
  for (std::uint64_t c = 0; c < chunk_.size(); ++c) {
    chunk_[c] = direct(c * kChunkWords, kChunkWords, false);
    chunk_xor_[c] = direct(c * kChunkWords, kChunkWords, true);
  }
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

int best_variant(const nlohmann::json& rows) {
  int best = -1;
  double top = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    if (!row.value("verified", false) || !row.contains("measurement")) continue;
    const double med = row.at("measurement").value("median", 0.0);
    if (best < 0 || med > top) {
      best = static_cast<int>(i);
      top = med;
    }
  }
  return best;
}

}  // namespace bwsweep

namespace {

using bwsweep::LaunchRates;
using nlohmann::json;

using units::kKiB;
using units::kMiB;
constexpr double kTargetTimedNs = 1.0e6;  ///< timed part of one launch: about 1 ms
constexpr std::uint32_t kMaxPasses = 1u << 22;
constexpr std::uint64_t kSliceAlign = 4 * kKiB;    ///< L1 regime working sets (per SM)
constexpr std::uint64_t kRegionAlign = 64 * kKiB;  ///< L2 regime working sets (total)
constexpr std::uint64_t kL1RegimeMin = 16 * kKiB;
constexpr std::uint64_t kHierarchyL1Bytes =
    128 * kKiB;  ///< per SM: inside the L1 at the default carveout
constexpr int kCoarsePerOctave = 3;
constexpr std::size_t kMaxPointsPerRegime = 40;
constexpr double kWavefrontBytes = 128.0;  ///< L1 data path per SM per clock

constexpr int most_blocks_per_sm() {
  int m = 1;
  for (const auto& v : bws::kL1Variants) m = std::max(m, v.blocks_per_sm);
  for (const auto& v : bws::kL2Variants) m = std::max(m, v.blocks_per_sm);
  return m;
}
constexpr int kMostBlocksPerSm = most_blocks_per_sm();

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

/// GPU state of one experiment: stream, data (filled once), block records, counters.
class Rig {
 public:
  /// data_bytes(nsmid) gives the size of the data buffer.
  Rig(Context& ctx, const std::function<std::uint64_t(std::uint32_t)>& data_bytes)
      : info_(select(ctx.device.info())),
        protocol_(ctx.options.protocol),
        seed_(derive_seed(ctx.options.seed)),
        nsmid_(std::max(bws::query_nsmid(stream_.get()),
                        static_cast<std::uint32_t>(std::max(info_.sm_count, 1)))),
        words_(data_bytes(nsmid_) / 4),
        data_(words_ * 4),
        sums_(words_, seed_) {
    occ_[0] = bws::blocks_per_sm(0);
    occ_[1] = bws::blocks_per_sm(1);
    occ_[2] = bws::blocks_per_sm(2);
    for (int k = 0; k < 3; ++k)
      if (occ_[k] < 1) throw std::runtime_error("a bandwidth.sweep kernel cannot be resident");
    bws::prefer_max_l1();
    const int most = std::max({occ_[0], occ_[1], occ_[2]});
    max_blocks_ = static_cast<unsigned>(info_.sm_count * most);
    // The L1 regime launches one block per slot per possible SM id, the variants up to
    // kMostBlocksPerSm blocks per SM: records for the largest of these grids.
    const unsigned ids = std::max<unsigned>(nsmid_, static_cast<unsigned>(info_.sm_count));
    record_capacity_ = ids * static_cast<unsigned>(std::max(most, kMostBlocksPerSm));
    records_ = device::DeviceBuffer(sizeof(bws::BlockRecord) * record_capacity_);
    counters_ = device::DeviceBuffer(sizeof(std::uint32_t) * nsmid_);
    fma_out_ = device::DeviceBuffer(sizeof(float) * max_blocks_ * bws::kThreads);
    bw::launch_fill(data_.as<float>(), words_, 1, 0, seed_, info_.sm_count, stream_.get());
    GP_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  const device::DeviceInfo& info() const { return info_; }
  int occupancy(int kind) const { return occ_[kind]; }
  std::uint32_t nsmid() const { return nsmid_; }
  std::uint32_t seed() const { return seed_; }

  /// Resident blocks per SM of L1 (regime 0) or L2 (regime 1) kernel variant `variant`: the
  /// variant's own shape, capped by its occupancy (0: it cannot be resident).
  int variant_blocks_per_sm(int regime, int variant) {
    if (variant == 0) return occ_[regime];
    auto& cache = variant_occ_[regime];
    auto it = cache.find(variant);
    if (it == cache.end()) {
      const int occ =
          regime == 0 ? bws::l1_variant_occupancy(variant) : bws::l2_variant_occupancy(variant);
      const int want = regime == 0 ? bws::kL1Variants[variant].blocks_per_sm
                                   : bws::kL2Variants[variant].blocks_per_sm;
      it = cache.emplace(variant, std::min(occ, want)).first;
    }
    return it->second;
  }

  /// One point of the L1 regime: every SM reads its own slice of `slice_bytes`, with kernel
  /// variant `variant` (bws::kL1Variants; 0 is the sweep's kernel).
  json slices_point(std::uint64_t slice_bytes, int variant = 0) {
    const bws::L1Variant& v = bws::kL1Variants[variant];
    const bool xor_fold = bws::fold_is_xor(v.fold);
    const int resident = variant_blocks_per_sm(0, variant);
    if (resident < 1)
      throw std::runtime_error(std::string("bandwidth L1 variant ") + v.name +
                               " cannot be resident");
    const std::uint32_t slots = static_cast<std::uint32_t>(resident);
    const std::uint64_t vec_align = std::max<std::uint64_t>(slots, 1);
    std::uint64_t vectors = slice_bytes / 16 / vec_align * vec_align;
    vectors = std::max<std::uint64_t>(vectors, vec_align);
    slice_bytes = vectors * 16;
    const auto slices = nsmid_;  // SM s reads slice s: no two SMs share one
    if (vectors * slices * 16 > data_.bytes())
      throw std::runtime_error("bandwidth.sweep: slice larger than the data buffer");
    const unsigned blocks = slices * slots;
    if (blocks > record_capacity_)
      throw std::runtime_error("bandwidth.sweep: more blocks than block records");
    const std::uint32_t warm = 1;
    // Expected sum of each (slice, slot) sub-slice, computed once.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> expected;
    const std::uint64_t sub_words = vectors / slots * 4;
    auto run = [&](std::uint32_t passes, LaunchRates& rates) {
      bws::SliceParams p;
      p.data = data_.as<const uint4>();
      p.slice_vectors = static_cast<std::uint32_t>(vectors);
      p.slices = slices;
      p.slots = slots;
      p.warm_passes = warm;
      p.timed_passes = passes;
      p.slot_counters = counters_.as<std::uint32_t>();
      p.records = records_.as<bws::BlockRecord>();
      p.one = 1;
      bws::launch_l1_slices(p, blocks, stream_.get(), variant);
      const auto recs = fetch(blocks);
      for (const auto& r : recs) {
        const std::uint32_t slice = r.smid % slices, slot = r.slot % slots;
        auto it = expected.find({slice, slot});
        if (it == expected.end())
          it = expected
                   .emplace(std::make_pair(slice, slot),
                            xor_fold
                                ? sums_.xor_of(slice * vectors * 4 + slot * sub_words, sub_words)
                                : sums_.sum(slice * vectors * 4 + slot * sub_words, sub_words))
                   .first;
        const std::uint32_t want = bwsweep::repeat_fold(xor_fold, it->second, warm + passes);
        if (r.sum != want) {
          char buf[240];
          std::snprintf(buf, sizeof buf,
                        "bandwidth.sweep L1 regime (%llu B per SM, kernel %s): block on SM %u slot "
                        "%u read words folding (%s) to 0x%08x, expected 0x%08x",
                        static_cast<unsigned long long>(slice_bytes), v.name, r.smid, r.slot,
                        xor_fold ? "xor" : "sum", r.sum, want);
          throw VerificationError(buf);
        }
      }
      std::vector<double> bytes(recs.size(),
                                bwsweep::slices_block_bytes(slice_bytes, slots, passes));
      rates = bwsweep::rates_of(recs, bytes);
      ++verified_launches_;
    };
    // Timed passes a multiple of the unroll: every group of interleaved passes is full (and
    // warm + timed passes is odd, which an XOR fold needs).
    json j = measure(run, slice_bytes * static_cast<std::uint64_t>(info_.sm_count),
                     /*primary_is_bpc=*/true, 0, static_cast<std::uint32_t>(v.unroll));
    j["working_set_bytes"] = slice_bytes;
    j["working_set_total_bytes"] = slice_bytes * static_cast<std::uint64_t>(info_.sm_count);
    j["blocks"] = blocks;
    j["blocks_per_sm"] = slots;
    j["warm_passes_per_launch"] = warm;
    j["load"] = "ld.global.ca.v4.u32";
    return j;
  }

  /// One point of the L2 regime: the grid reads one region of `region_bytes` together, with
  /// kernel variant `variant` (bws::kL2Variants; 0 is the sweep's kernel).
  json shared_point(std::uint64_t region_bytes, int variant = 0) {
    const bws::L2Variant& v = bws::kL2Variants[variant];
    const int resident = variant_blocks_per_sm(1, variant);
    if (resident < 1)
      throw std::runtime_error(std::string("bandwidth L2 variant ") + v.name +
                               " cannot be resident");
    const std::uint64_t vectors = std::max<std::uint64_t>(region_bytes / 16, 1);
    region_bytes = vectors * 16;
    if (region_bytes > data_.bytes() || vectors > 0x7fffffffull)
      throw std::runtime_error("bandwidth.sweep: region larger than the data buffer");
    const unsigned blocks = static_cast<unsigned>(info_.sm_count * resident);
    if (blocks > record_capacity_)
      throw std::runtime_error("bandwidth.sweep: more blocks than block records");
    const std::uint32_t expected = sums_.sum(0, vectors * 4);
    auto run = [&](std::uint32_t passes, LaunchRates& rates) {
      bws::SharedParams p;
      p.data = data_.as<const uint4>();
      p.vectors = static_cast<std::uint32_t>(vectors);
      p.warm_passes = 0;
      p.timed_passes = passes;
      p.records = records_.as<bws::BlockRecord>();
      p.rotations = static_cast<std::uint32_t>(v.rotations);
      bws::launch_l2_shared(p, blocks, stream_.get(), variant);
      const auto recs = fetch(blocks);
      std::uint32_t got = 0;
      for (const auto& r : recs) got += r.sum;
      if (got != expected * passes) {
        char buf[240];
        std::snprintf(buf, sizeof buf,
                      "bandwidth.sweep L2 regime (%llu B, kernel %s): the grid read words summing "
                      "to 0x%08x, expected 0x%08x",
                      static_cast<unsigned long long>(region_bytes), v.name, got,
                      expected * passes);
        throw VerificationError(buf);
      }
      // The grid's bytes are spread over its blocks; per-SM cycles are not used for this regime
      // (B/clk/SM comes from the total rate and the measured clock below).
      std::vector<double> bytes(recs.size(), bwsweep::shared_grid_bytes(region_bytes, passes) /
                                                 static_cast<double>(recs.size()));
      rates = bwsweep::rates_of(recs, bytes);
      if (rates.clock_mhz > 0)
        rates.bytes_per_clk_per_sm =
            rates.gb_s * 1e3 / (rates.clock_mhz * static_cast<double>(info_.sm_count));
      ++verified_launches_;
    };
    json j = measure(run, region_bytes, /*primary_is_bpc=*/false, 0,
                     static_cast<std::uint32_t>(v.unroll));
    j["working_set_bytes"] = region_bytes;
    j["blocks"] = blocks;
    j["blocks_per_sm"] = resident;
    j["load"] = bws::load_name(v.load);
    return j;
  }

  /// Register-only FFMA throughput on every SM.
  json fma_point() {
    const unsigned blocks = static_cast<unsigned>(info_.sm_count * occ_[2]);
    const float a = 0.99993896484375f, b = 6.103515625e-05f;  // exact in binary; x -> ~1
    std::vector<float> out(static_cast<std::size_t>(blocks) * bws::kThreads);
    auto run = [&](std::uint32_t passes, LaunchRates& rates) {
      bws::FmaParams p;
      p.steps = passes * 16;
      p.a = a;
      p.b = b;
      p.out = fma_out_.as<float>();
      p.records = records_.as<bws::BlockRecord>();
      bws::launch_register_fma(p, blocks, stream_.get());
      const auto recs = fetch(blocks);
      GP_CUDA_CHECK(
          cudaMemcpy(out.data(), p.out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
      // The host replays 16 threads spread over the grid (fmaf is exact IEEE on both sides).
      for (int k = 0; k < 16; ++k) {
        const std::uint32_t t =
            static_cast<std::uint32_t>((static_cast<std::uint64_t>(k) * out.size()) / 16 + 37 * k);
        if (t >= out.size()) continue;
        float x[bws::kFmaChains];
        for (int c = 0; c < bws::kFmaChains; ++c) x[c] = bws::fma_start(t, c);
        for (std::uint32_t s = 0; s < p.steps; ++s)
          for (int c = 0; c < bws::kFmaChains; ++c) x[c] = std::fmaf(x[c], a, b);
        float sum = x[0];
        for (int c = 1; c < bws::kFmaChains; ++c) sum += x[c];
        if (sum != out[t]) {
          char buf[160];
          std::snprintf(buf, sizeof buf,
                        "bandwidth.hierarchy register FFMA: thread %u computed %.9g, host %.9g", t,
                        static_cast<double>(out[t]), static_cast<double>(sum));
          throw VerificationError(buf);
        }
      }
      // "bytes" here are lane-FFMAs; converted to register bytes by the caller.
      std::vector<double> ops(recs.size(),
                              static_cast<double>(p.steps) * bws::kFmaChains * bws::kThreads);
      rates = bwsweep::rates_of(recs, ops);
      ++verified_launches_;
    };
    json j = measure(run, 0, /*primary_is_bpc=*/true, /*start_passes=*/64);
    j["blocks"] = blocks;
    j["blocks_per_sm"] = occ_[2];
    j["chains_per_thread"] = bws::kFmaChains;
    return j;
  }

  int verified_launches() const { return verified_launches_; }

 private:
  using RunFn = std::function<void(std::uint32_t passes, LaunchRates& rates)>;

  /// Calibrates the passes per launch to about kTargetTimedNs of timed work, then repeats
  /// launches until the protocol is satisfied. The primary value is B/clk/SM (median over SMs)
  /// or GB/s.
  json measure(const RunFn& run, std::uint64_t bytes_per_pass_total, bool primary_is_bpc,
               std::uint32_t start_passes = 0, std::uint32_t pass_multiple = 4) {
    const double mult = static_cast<double>(std::max<std::uint32_t>(pass_multiple, 1));
    std::uint32_t passes = start_passes;
    if (passes == 0)
      passes = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(
          (512 * kMiB) / std::max<std::uint64_t>(bytes_per_pass_total, 1), 1, kMaxPasses));
    // Every launch, the calibration ones included, runs a multiple of pass_multiple timed
    // passes (an XOR-folding variant needs warm + timed passes odd).
    passes = static_cast<std::uint32_t>(
        std::clamp(std::ceil(passes / mult) * mult, mult, static_cast<double>(kMaxPasses)));
    // Sized from the timed span the blocks themselves record (%globaltimer): events around
    // the launch would also count the host's verification and the record copy. A multiple of
    // pass_multiple (four for the sweep's kernels), so that the kernels run every timed pass in
    // full interleaved groups.
    LaunchRates cal;
    for (int round = 0; round < 2; ++round) {
      run(passes, cal);
      const double ns = std::max(1e3, cal.span_ns);
      const double scaled = std::ceil(passes * kTargetTimedNs / ns / mult) * mult;
      passes = static_cast<std::uint32_t>(std::clamp(scaled, mult, double(kMaxPasses)));
    }
    std::vector<double> bpc, bpc_min, gbs, mhz;
    int max_blocks_on_sm = 0, sms = 0;
    auto once = [&](int rep) {
      LaunchRates r;
      run(passes, r);
      if (rep >= 0) {
        bpc.push_back(r.bytes_per_clk_per_sm);
        bpc_min.push_back(r.bytes_per_clk_per_sm_min);
        gbs.push_back(r.gb_s);
        mhz.push_back(r.clock_mhz);
        max_blocks_on_sm = std::max(max_blocks_on_sm, r.max_blocks_on_an_sm);
        sms = r.sms;
      }
      return primary_is_bpc ? r.bytes_per_clk_per_sm : r.gb_s;
    };
    const Measurement m = repeat_until_stable(once, protocol_);
    json j;
    j["timed_passes_per_launch"] = passes;
    j["primary"] = primary_is_bpc ? "bytes_per_clk_per_sm" : "gb_s";
    j["measurement"] = to_json(m);
    j["bytes_per_clk_per_sm"] = summary_json(bpc);
    j["bytes_per_clk_per_sm_slowest_sm"] = summary_json(bpc_min);
    j["gb_s"] = summary_json(gbs);
    j["sm_clock_mhz_measured"] = mhz.empty() ? 0.0 : stats::median(mhz);
    j["sms_seen"] = sms;
    j["max_blocks_on_one_sm"] = max_blocks_on_sm;
    j["verified"] = true;
    return j;
  }

  std::vector<bws::BlockRecord> fetch(unsigned blocks) {
    std::vector<bws::BlockRecord> recs(blocks);
    GP_CUDA_CHECK(cudaMemcpyAsync(recs.data(), records_.as<void>(),
                                  sizeof(bws::BlockRecord) * blocks, cudaMemcpyDeviceToHost,
                                  stream_.get()));
    GP_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    return recs;
  }

  static const device::DeviceInfo& select(const device::DeviceInfo& d) {
    GP_CUDA_CHECK(cudaSetDevice(d.ordinal));
    return d;
  }

  device::DeviceInfo info_;  // first: selecting the device precedes the stream and events
  bw::Stream stream_;
  ProtocolOptions protocol_;
  std::uint32_t seed_;
  std::uint32_t nsmid_;
  std::uint64_t words_;
  device::DeviceBuffer data_;
  bwsweep::WordSums sums_;
  device::DeviceBuffer records_, counters_, fma_out_;
  int occ_[3] = {0, 0, 0};
  std::map<int, int> variant_occ_[2];  ///< resident blocks per SM of L1 / L2 variants
  unsigned max_blocks_ = 0;
  unsigned record_capacity_ = 0;
  int verified_launches_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Analysis helpers (pure)

double primary_median(const json& p) { return p.at("measurement").at("median").get<double>(); }

std::vector<json> sorted_points(const json& points) {
  std::vector<json> v(points.begin(), points.end());
  std::stable_sort(v.begin(), v.end(), [](const json& a, const json& b) {
    return a.at("working_set_bytes").get<double>() < b.at("working_set_bytes").get<double>();
  });
  return v;
}

std::vector<analysis::CurvePoint> curve_of(const std::vector<json>& pts) {
  std::vector<analysis::CurvePoint> c;
  for (const auto& p : pts)
    c.push_back({p.at("working_set_bytes").get<double>(), primary_median(p),
                 p.at("measurement").at("mad").get<double>()});
  return c;
}

/// Confidence of a plateau's level: how tight its points are and how many there are.
double plateau_confidence(const analysis::Plateau& p) {
  const double rel = p.level > 0 ? p.noise / p.level : 1.0;
  const double tight = 1.0 / (1.0 + rel / 0.01);
  const double count = 1.0 - std::exp(-static_cast<double>(p.last - p.first + 1) / 2.0);
  return std::clamp(tight * count, 0.0, 1.0);
}

/// Median over a plateau's points of a secondary quantity (e.g. GB/s of the L1 regime).
double plateau_median(const std::vector<json>& pts, const analysis::Plateau& p,
                      const std::string& key) {
  std::vector<double> v;
  for (std::size_t i = p.first; i <= p.last && i < pts.size(); ++i)
    if (pts[i].contains(key) && pts[i].at(key).contains("median"))
      v.push_back(pts[i].at(key).at("median").get<double>());
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

Curve curve_table(const std::string& name, const std::vector<json>& pts, bool per_sm) {
  Curve c{name,
          {per_sm ? "working_set_bytes_per_sm" : "working_set_bytes", "working_set_total_bytes",
           "bytes_per_clk_per_sm_median", "bytes_per_clk_per_sm_mad", "slowest_sm_bytes_per_clk",
           "gb_s_median", "gb_s_mad", "n", "sm_clock_mhz_measured", "timed_passes_per_launch"},
          {}};
  for (const auto& p : pts) {
    const auto& b = p.at("bytes_per_clk_per_sm");
    const auto& g = p.at("gb_s");
    c.rows.push_back({p.at("working_set_bytes"),
                      p.value("working_set_total_bytes", p.at("working_set_bytes").get<double>()),
                      b.value("median", 0.0), b.value("mad", 0.0),
                      p.at("bytes_per_clk_per_sm_slowest_sm").value("median", 0.0),
                      g.value("median", 0.0), g.value("mad", 0.0),
                      p.at("measurement").value("n", 0.0), p.at("sm_clock_mhz_measured"),
                      p.at("timed_passes_per_launch")});
  }
  c.hints = per_sm ? chart_hints("every SM reads its own slice: bandwidth per SM against slice",
                                 "working_set_bytes_per_sm", "bytes",
                                 "bytes_per_clk_per_sm_median", "B/clk/SM", true)
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

// ---------------------------------------------------------------------------------------------
// bandwidth.sweep

/// What bandwidth.sweep and bandwidth.hierarchy share: one data buffer, sized by data_bytes()
/// for the number of SM ids the Rig will find, and no model of bandwidth on the modelled GPU.
class RigExperiment : public Experiment {
 public:
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return waive_on_model(info, kNoBandwidthModel);
  }
  void validate(const device::Device& dev, const RunOptions&) const override {
    // SM ids may run past the SM count (the H200's reach 160 for 132 SMs): size for that.
    const auto& d = dev.info();
    check_memory(dev, data_bytes(d, static_cast<std::uint32_t>(d.sm_count) * 160 / 132), id());
  }

 protected:
  /// Bytes of the data buffer for `nsmid` possible SM ids.
  virtual std::uint64_t data_bytes(const device::DeviceInfo& d, std::uint32_t nsmid) const = 0;
};

class BandwidthSweep : public RigExperiment {
 public:
  std::string id() const override { return "bandwidth.sweep"; }
  std::string description() const override {
    return "read bandwidth against working set, log-spaced 16 KiB per SM .. 4 x L2 and refined at "
           "the knees, in two regimes: each SM reading its own slice (ld.global.ca, B/clk/SM) "
           "and all SMs reading one region (ld.global.cg, GB/s); plateaus (L1, L2, DRAM) and "
           "capacities from the latency sweep's change-point analysis. Unlike seed 003 (one 4 KB "
           "chain, one 64 MB run) every point is repeated to a spread target and verified";
  }
  json axes() const override {
    return {{"l1_regime_working_set_bytes_per_sm", "16 KiB .. 4 x L2 / SMs, 3 per octave + knees"},
            {"l2_regime_working_set_bytes", "16 KiB x SMs .. 4 x L2, 3 per octave + knees"},
            {"access", "16-B loads, 2048 threads per SM, ~1 ms timed per launch"}};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& d = ctx.device.info();
    Rig rig(ctx, [&](std::uint32_t nsmid) { return data_bytes(d, nsmid); });
    const double sms = d.sm_count;
    const double top = 4.0 * static_cast<double>(d.l2_bytes);
    json l1_points = json::array(), l2_points = json::array();

    analysis::SweepOptions s1;
    s1.x_min = static_cast<double>(kL1RegimeMin);
    s1.x_max = static_cast<double>(align_down(top / sms, kSliceAlign));
    s1.coarse_per_octave = kCoarsePerOctave;
    s1.resolution = 0.03;
    s1.max_points = kMaxPointsPerRegime;
    s1.align = static_cast<double>(kSliceAlign);
    // One regime: the adaptive sweep over `so`, every point measured by `point` kept in `out`.
    auto sweep = [&](const analysis::SweepOptions& so, auto point, json& out) {
      analysis::adaptive_sweep(
          [&](double x) {
            json p = point(static_cast<std::uint64_t>(x));
            out.push_back(p);
            return analysis::CurvePoint{x, primary_median(p), p["measurement"]["mad"].get<double>()};
          },
          so);
    };
    sweep(s1, [&](std::uint64_t w) { return rig.slices_point(w); }, l1_points);

    analysis::SweepOptions s2 = s1;
    s2.x_min = static_cast<double>(align_down(kL1RegimeMin * sms, kRegionAlign));
    s2.x_max = static_cast<double>(align_down(top, kRegionAlign));
    s2.align = static_cast<double>(kRegionAlign);
    sweep(s2, [&](std::uint64_t w) { return rig.shared_point(w); }, l2_points);

    const auto a = sorted_points(l1_points), b = sorted_points(l2_points);
    r.parameters = {
        {"sm_count", d.sm_count},
        {"l2_bytes_reported", d.l2_bytes},
        {"threads_per_block", bws::kThreads},
        {"nsmid", rig.nsmid()},
        {"l1_regime",
         {{"load", "ld.global.ca.v4.u32 (16 B, L1-allocating)"},
          {"blocks_per_sm", rig.occupancy(0)},
          {"shared_memory_carveout_preference", "0 % (largest L1), kernel attribute"},
          {"layout",
           "SM s reads slice s (W bytes per SM), split among its blocks; "
           "one untimed pass per launch warms the L1"},
          {"value",
           "median over SMs of bytes / (SM's last block end - first block "
           "start) in %clock64 cycles"}}},
        {"l2_regime",
         {{"load", "ld.global.cg.v4.u32 (16 B, L2 only)"},
          {"blocks_per_sm", rig.occupancy(1)},
          {"layout", "the grid reads one region of W bytes per pass, grid-stride"},
          {"value", "bytes / (last block end - first block start) in %globaltimer ns"}}},
        {"points_per_octave_coarse", kCoarsePerOctave},
        {"knee_resolution", s1.resolution},
        {"target_timed_ns_per_launch", kTargetTimedNs},
        {"verification",
         "every launch: each block's wrapping 32-bit sum of the words it read equals "
         "the host's sum of value_bits(i, seed) over the same words x passes"},
        {"gb", "1e9 bytes"},
        {"data_seed", rig.seed()}};
    r.samples = {{"l1_regime", {{"points", a}}}, {"l2_regime", {{"points", b}}}};
    r.statistics = {{"points_measured", a.size() + b.size()},
                    {"verified_launches", rig.verified_launches()}};
    r.curves.push_back(curve_table("l1_regime", a, true));
    r.curves.push_back(curve_table("l2_regime", b, false));
  }

  void analyze(ExperimentResult& r) const override {
    const double l2 = r.parameters.value("l2_bytes_reported", 0.0);
    // ---- L1 regime: first plateau = L1, first transition = L1 capacity (bytes per SM).
    const auto a = sorted_points(r.samples.at("l1_regime").at("points"));
    if (!a.empty()) {
      const auto L = analysis::find_levels(curve_of(a));
      r.statistics["l1_regime_levels"] = levels_json(L, "B/clk/SM");
      if (!L.plateaus.empty() && L.plateaus.front().first == 0) {
        const auto& p = L.plateaus.front();
        Finding f{"l1.read_bandwidth",
                  p.level,
                  "B/clk/SM",
                  plateau_confidence(p),
                  "median of the first plateau of the L1 regime (each SM reading its own slice "
                  "with 16-B ld.global.ca, full occupancy, %clock64 per SM); " +
                      L.method,
                  json::object()};
        f.extra["gb_s_total"] = plateau_median(a, p, "gb_s");
        f.extra["percent_of_128_b_per_clk"] = p.level / kWavefrontBytes * 100.0;
        f.extra["slowest_sm_bytes_per_clk"] =
            plateau_median(a, p, "bytes_per_clk_per_sm_slowest_sm");
        f.extra["working_set_bytes_per_sm_range"] = {p.x_min, p.x_max};
        r.findings.push_back(f);
      }
      if (!L.transitions.empty() && L.plateaus.front().first == 0) {
        const auto& t = L.transitions.front();
        Finding f{"bandwidth.l1_capacity",
                  t.estimate,
                  "bytes",
                  t.confidence,
                  "largest working set per SM on the L1 bandwidth plateau (knee bracketed by "
                  "bisection); " +
                      L.method,
                  json::object()};
        f.extra["bracket_bytes"] = {t.x_last_on, t.x_first_off};
        f.extra["per"] = "SM";
        f.extra["level_below_b_per_clk"] = t.level_below;
        f.extra["level_above_b_per_clk"] = t.level_above;
        r.findings.push_back(f);
      }
    }
    // ---- L2 regime: the highest plateau that starts inside the L2 = L2; the last knee within
    //      [L2/8, 2 x L2] after it = L2 capacity; the last plateau past the L2 = DRAM.
    const auto b = sorted_points(r.samples.at("l2_regime").at("points"));
    if (b.empty()) return;
    const auto L = analysis::find_levels(curve_of(b));
    r.statistics["l2_regime_levels"] = levels_json(L, "GB/s");
    std::optional<std::size_t> l2p;
    for (std::size_t i = 0; i < L.plateaus.size(); ++i) {
      if (l2 > 0 && L.plateaus[i].x_min >= l2) continue;
      if (!l2p || L.plateaus[i].level > L.plateaus[*l2p].level) l2p = i;
    }
    if (l2p) {
      const auto& p = L.plateaus[*l2p];
      Finding f{"l2.read_bandwidth",
                p.level,
                "GB/s",
                plateau_confidence(p),
                "median of the highest plateau below the L2 size in the L2 regime (all SMs "
                "reading one region with 16-B ld.global.cg, %globaltimer); " +
                    L.method,
                json::object()};
      f.extra["bytes_per_clk_per_sm"] = plateau_median(b, p, "bytes_per_clk_per_sm");
      f.extra["tb_per_s"] = p.level / 1e3;
      f.extra["working_set_bytes_range"] = {p.x_min, p.x_max};
      json by_ws = json::array();
      for (const auto& q : b) {
        const double w = q.at("working_set_bytes").get<double>();
        if (w >= 4.0 * kMiB && (l2 <= 0 || w <= 1.5 * l2)) by_ws.push_back({w, primary_median(q)});
      }
      f.extra["gb_s_by_working_set_bytes"] = by_ws;
      r.findings.push_back(f);
    }
    std::vector<std::size_t> knees;
    for (std::size_t i = 0; i < L.transitions.size(); ++i) {
      const auto& t = L.transitions[i];
      if (l2p && t.below < *l2p) continue;
      if (l2 <= 0 || (t.estimate >= l2 / 8 && t.estimate <= 2 * l2)) knees.push_back(i);
    }
    if (!knees.empty()) {
      const auto& t = L.transitions[knees.back()];
      Finding f{"bandwidth.l2_capacity",
                t.estimate,
                "bytes",
                t.confidence,
                "largest working set on the last plateau before the DRAM level of the L2 regime "
                "(knee bracketed by bisection); " +
                    L.method,
                json::object()};
      f.extra["bracket_bytes"] = {t.x_last_on, t.x_first_off};
      f.extra["level_below_gb_s"] = t.level_below;
      f.extra["level_above_gb_s"] = t.level_above;
      if (knees.size() > 1) {
        json earlier = json::array();
        for (std::size_t k = 0; k + 1 < knees.size(); ++k) {
          const auto& e = L.transitions[knees[k]];
          earlier.push_back({{"last_on_bytes", e.x_last_on},
                             {"first_off_bytes", e.x_first_off},
                             {"level_below_gb_s", e.level_below},
                             {"level_above_gb_s", e.level_above},
                             {"confidence", e.confidence}});
        }
        f.extra["earlier_knees_inside_l2"] = earlier;
        f.extra["note"] =
            "bandwidth falls in steps before the L2 capacity (e.g. the far L2 "
            "partition): see earlier_knees_inside_l2";
      }
      r.findings.push_back(f);
    }
    // A DRAM level is claimed only from working sets of at least 8 x L2: below that, repeated
    // passes still hit the L2 often enough to read above the DRAM peak (seen on the H200: 5.2
    // TB/s at 4 x L2 against a 4.81 TB/s peak). The sweep stops at 4 x L2, so DRAM bandwidth
    // is bandwidth.read's finding; the curve past L2 is kept in the samples.
    std::optional<analysis::Plateau> last;
    if (!L.plateaus.empty()) last = L.plateaus.back();
    if (last && l2 > 0 && last->x_min >= 8 * l2 && (!l2p || *l2p + 1 != L.plateaus.size())) {
      Finding f{"dram.read_bandwidth_sweep",
                last->level,
                "GB/s",
                plateau_confidence(*last),
                "median of the last plateau (working sets of 8 x L2 and more) of the L2 regime; " +
                    L.method,
                json::object()};
      f.extra["working_set_bytes_range"] = {last->x_min, last->x_max};
      f.extra["bytes_per_clk_per_sm"] = plateau_median(b, *last, "bytes_per_clk_per_sm");
      r.findings.push_back(f);
    }
  }

 private:
  /// The L2 regime reads up to 4 x L2; the L1 regime up to 4 x L2 / SMs per slice, one slice
  /// per possible SM id.
  std::uint64_t data_bytes(const device::DeviceInfo& d, std::uint32_t nsmid) const override {
    const std::uint64_t sms = static_cast<std::uint64_t>(std::max(d.sm_count, 1));
    const std::uint64_t slice =
        align_down(4.0 * static_cast<double>(d.l2_bytes) / sms, kSliceAlign);
    return std::max<std::uint64_t>(4 * d.l2_bytes + 2 * kMiB, slice * nsmid) / (64 * kKiB) *
               (64 * kKiB) +
           64 * kKiB;
  }
};

// ---------------------------------------------------------------------------------------------
// bandwidth.hierarchy

class BandwidthHierarchy : public RigExperiment {
 public:
  std::string id() const override { return "bandwidth.hierarchy"; }
  std::string description() const override {
    return "one table: register file, shared memory, L1, L2 and DRAM read bandwidth beside each "
           "level's latency from earlier findings (latency.*, smem.bandwidth). Seed 003's table "
           "came from a 4 KB sequential chain and one 64 MB run, so its numbers mean little; "
           "here L1, L2, DRAM and register bandwidth are measured at full occupancy at one "
           "working set well inside each level (repeated, verified), the rest is taken from the "
           "experiments that measure it properly, and a missing one is left empty with a note";
  }
  json axes() const override {
    return {{"levels", {"register", "shared", "l1", "l2", "dram"}},
            {"l1_working_set_bytes_per_sm", kHierarchyL1Bytes},
            {"l2_working_set_bytes", "min(16 MiB, L2 / 4)"},
            {"dram_working_set_bytes", "16 x L2"},
            {"l1_variants", variant_names(bws::kL1Variants)},
            {"l2_variants", variant_names(bws::kL2Variants)}};
  }
  std::vector<std::string> depends_on() const override {
    return {"latency.sweep",   "latency.shared", "smem.bandwidth",
            "compute.latency", "bandwidth.read", "bandwidth.sweep"};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& d = ctx.device.info();
    Rig rig(ctx, [&](std::uint32_t nsmid) { return data_bytes(d, nsmid); });
    const std::uint64_t l2_ws = align_down(
        std::min<double>(16.0 * kMiB, static_cast<double>(d.l2_bytes) / 4), kRegionAlign);
    json m;
    // L1 and L2: every kernel variant, each verified; analyze() reports the best verified one.
    m["l1_variants"] = search_variants(
        "L1", bws::kL1VariantCount, describe_l1_variant,
        [&](int i) { return rig.variant_blocks_per_sm(0, i); },
        [&](int i) { return rig.slices_point(kHierarchyL1Bytes, i); });
    m["l2_variants"] = search_variants(
        "L2", bws::kL2VariantCount, describe_l2_variant,
        [&](int i) { return rig.variant_blocks_per_sm(1, i); },
        [&](int i) { return rig.shared_point(l2_ws, i); });
    m["dram"] = rig.shared_point(align_down(16.0 * static_cast<double>(d.l2_bytes), kRegionAlign));
    m["register"] = rig.fma_point();
    // Earlier findings, copied so that analyze stays pure.
    json prior = json::object();
    for (const char* name :
         {"l1.hit_latency", "l2.hit_latency", "l2.far_hit_latency", "dram.latency",
          "shared.latency", "smem.bandwidth", "compute.ffma.latency", "dram.read_bandwidth",
          "l1.read_bandwidth", "l2.read_bandwidth", "dram.read_bandwidth_sweep"}) {
      if (const auto f = ctx.prior.get(name, 0.0)) prior[name] = to_json(*f);
    }
    r.parameters = {
        {"sm_count", d.sm_count},
        {"l2_bytes_reported", d.l2_bytes},
        {"sm_clock_max_mhz", d.sm_clock_max_mhz},
        {"register_convention",
         "register-file read bandwidth = lane FFMAs per clock per SM x 3 source "
         "operands x 4 B (12 B per FFMA; the 4 B written are shown separately); "
         "operand reuse caches are ignored, so this is the operand bandwidth the "
         "datapath consumes, not a count of register-file bank reads"},
        {"l1",
         "each SM reads its own " + units::format_bytes(kHierarchyL1Bytes) +
             " slice (shared out among its blocks), 16-B ld.global.ca; " +
             std::to_string(bws::kL1VariantCount) +
             " kernel variants (fold, addressing, unroll, block shape), the best verified one "
             "reported"},
        {"l2", "all SMs read one region of " + units::format_bytes(l2_ws) + ", 16-B loads; " +
                   std::to_string(bws::kL2VariantCount) +
                   " kernel variants (load operator, unroll, rotations, block shape), the best "
                   "verified one reported"},
        {"variant_search",
         "every variant is measured with the same protocol and verified on every launch (the "
         "fold of every word read against the host's fold of the same words); a variant that "
         "fails verification is recorded with its error and never reported"},
        {"dram", "all SMs read one region of 16 x L2, 16-B ld.global.cg"},
        {"latency_source",
         "findings of earlier experiments (latency.sweep, latency.shared, "
         "compute.latency); nothing extra is measured when one is missing"},
        {"gb", "1e9 bytes"}};
    r.samples = {{"measured", m}, {"prior", prior}};
    r.statistics = {{"verified_launches", rig.verified_launches()}};
  }

  void analyze(ExperimentResult& r) const override {
    const auto& m = r.samples.at("measured");
    const auto& prior = r.samples.at("prior");
    // L1 / L2: the best verified variant when the record has a variant search, else the single
    // point of older records.
    auto chosen = [&](const std::string& level) -> json {
      const std::string key = level + "_variants";
      if (!m.contains(key)) return m.at(level);
      const int b = bwsweep::best_variant(m.at(key));
      if (b < 0)
        throw VerificationError("bandwidth.hierarchy: no verified " + level + " kernel variant");
      return m.at(key)[static_cast<std::size_t>(b)];
    };
    const json l1 = chosen("l1"), l2 = chosen("l2");
    auto pf = [&](const std::string& n) -> const json* {
      return prior.contains(n) ? &prior.at(n) : nullptr;
    };
    // A finding's extra fields are written beside its value (to_json(Finding)); older records
    // may keep them under "extra".
    auto field = [](const json& f, const std::string& key) -> std::optional<double> {
      if (f.contains(key) && f.at(key).is_number()) return f.at(key).get<double>();
      if (f.contains("extra") && f.at("extra").contains(key) && f.at("extra").at(key).is_number())
        return f.at("extra").at(key).get<double>();
      return std::nullopt;
    };
    Curve c{"table",
            {"level", "bandwidth_b_per_clk_per_sm", "bandwidth_gb_s_total", "bandwidth_source",
             "latency_cycles", "latency_ns", "latency_source", "note"},
            {}};
    auto latency_cells = [&](const std::string& name, std::vector<json>& row) {
      if (const json* f = pf(name)) {
        row.push_back(f->at("value"));
        const auto ns = field(*f, "value_ns");
        row.push_back(ns ? json(*ns) : json(""));
        row.push_back(name);
      } else {
        row.push_back("");
        row.push_back("");
        row.push_back(name + " absent (run the latency family first)");
      }
    };
    auto measured_row = [&](const std::string& level, const json& p, const std::string& lat,
                            const std::string& note) {
      const std::string variant =
          p.contains("variant") ? "kernel " + p.at("variant").get<std::string>() + ", " : "";
      std::vector<json> row{
          level, p.at("bytes_per_clk_per_sm").value("median", 0.0),
          p.at("gb_s").value("median", 0.0),
          "measured here (" + variant + p.value("load", std::string("")) + ", " +
              units::format_bytes(p.at("working_set_bytes").get<std::uint64_t>()) +
              (level == "l1" ? " per SM)" : ")")};
      latency_cells(lat, row);
      row.push_back(note);
      c.rows.push_back(row);
    };
    // Register file.
    {
      const auto& p = m.at("register");
      const double ffma = p.at("bytes_per_clk_per_sm").value("median", 0.0);  // lane FFMA/clk/SM
      const double gops = p.at("gb_s").value("median", 0.0);                  // lane FFMA per ns
      std::vector<json> row{"register", ffma * bwsweep::kRegisterBytesReadPerFfma,
                            gops * bwsweep::kRegisterBytesReadPerFfma,
                            "measured here (register-only FFMA, 12 B read per lane FFMA)"};
      latency_cells("compute.ffma.latency", row);
      char note[200];
      std::snprintf(note, sizeof note,
                    "%.6g lane FFMA/clk/SM; latency column is the FFMA dependent-issue latency "
                    "(a register operand has no load latency of its own)",
                    ffma);
      row.push_back(note);
      c.rows.push_back(row);
      Finding f{"register.read_bandwidth",
                ffma * bwsweep::kRegisterBytesReadPerFfma,
                "B/clk/SM",
                spread(p),
                "register-only FFMA throughput x 12 B (3 source operands x 4 B)",
                json::object()};
      f.extra["ffma_per_clk_per_sm"] = ffma;
      f.extra["gb_s_total"] = gops * bwsweep::kRegisterBytesReadPerFfma;
      f.extra["write_b_per_clk_per_sm"] = ffma * bwsweep::kRegisterBytesWrittenPerFfma;
      r.findings.push_back(f);
    }
    // Shared memory: from smem.bandwidth only.
    {
      std::vector<json> row{"shared"};
      if (const json* f = pf("smem.bandwidth")) {
        const double v = f->at("value").get<double>();
        const auto tb = field(*f, "total_tb_per_s");
        row.push_back(v);
        row.push_back(tb ? json(*tb * 1e3) : json(""));
        row.push_back("smem.bandwidth");
      } else {
        row.insert(row.end(), {"", "", "smem.bandwidth absent (run the compute family first)"});
      }
      latency_cells("shared.latency", row);
      row.push_back(pf("smem.bandwidth") ? "" : "shared-memory bandwidth not measured here");
      c.rows.push_back(row);
    }
    measured_row("l1", l1, "l1.hit_latency", "");
    measured_row("l2", l2, "l2.hit_latency",
                 pf("l2.far_hit_latency")
                     ? "far L2 partition latency: " + pf("l2.far_hit_latency")->at("value").dump() +
                           " cycles"
                     : "");
    {
      std::string note;
      if (const json* f = pf("dram.read_bandwidth"))
        note = "bandwidth.read streaming: " + f->at("value").dump() + " GB/s";
      measured_row("dram", m.at("dram"), "dram.latency", note);
    }
    c.hints = table_hints("bandwidth and latency per level");
    r.curves.push_back(c);
    for (const char* level : {"l1", "l2"})
      if (m.contains(std::string(level) + "_variants"))
        r.curves.push_back(variant_curve(level, m.at(std::string(level) + "_variants")));
    // Findings of the measured levels (hierarchy-specific names: the sweep owns the plain ones).
    auto add = [&](const std::string& name, const json& p, bool per_sm) {
      const double v = per_sm ? p.at("bytes_per_clk_per_sm").value("median", 0.0)
                              : p.at("gb_s").value("median", 0.0);
      Finding f{name,
                v,
                per_sm ? "B/clk/SM" : "GB/s",
                spread(p),
                "bandwidth.hierarchy point: " + p.value("load", std::string("")) + " at " +
                    units::format_bytes(p.at("working_set_bytes").get<std::uint64_t>()),
                json::object()};
      f.extra[per_sm ? "gb_s_total" : "bytes_per_clk_per_sm"] =
          per_sm ? p.at("gb_s").value("median", 0.0)
                 : p.at("bytes_per_clk_per_sm").value("median", 0.0);
      const std::string key = name == "hierarchy.l1.read_bandwidth"   ? "l1_variants"
                              : name == "hierarchy.l2.read_bandwidth" ? "l2_variants"
                                                                      : "";
      if (!key.empty() && m.contains(key)) {
        const json& rows = m.at(key);
        int verified = 0;
        json medians = json::object(), failed = json::object();
        for (const auto& row : rows) {
          const std::string n = row.at("variant").get<std::string>();
          if (row.value("verified", false)) {
            ++verified;
            medians[n] = row.at("measurement").value("median", 0.0);
          } else {
            failed[n] = row.value("error", std::string("not verified"));
          }
        }
        f.method = "best median over " + std::to_string(verified) + " verified of " +
                   std::to_string(rows.size()) + " kernel variants (kernel " +
                   p.at("variant").get<std::string>() + "): " + f.method;
        f.extra["variant"] = p.at("variant");
        f.extra["variant_fold"] = p.value("fold", std::string(""));
        f.extra["variant_threads_per_block"] = p.value("threads_per_block", 0);
        f.extra["variant_blocks_per_sm"] = p.value("blocks_per_sm", 0);
        f.extra["variant_unroll"] = p.value("unroll", 0);
        f.extra["variants_verified"] = verified;
        f.extra["variant_medians"] = medians;
        f.extra["variants_failed"] = failed;
        if (!rows.empty() && rows[0].value("verified", false)) {
          const double base = rows[0].at("measurement").value("median", 0.0);
          f.extra["baseline_variant"] = rows[0].at("variant");
          f.extra["baseline_median"] = base;
          if (base > 0) f.extra["gain_over_baseline_percent"] = (v / base - 1.0) * 100.0;
        }
      }
      r.findings.push_back(f);
    };
    add("hierarchy.l1.read_bandwidth", l1, true);
    add("hierarchy.l2.read_bandwidth", l2, false);
    add("hierarchy.dram.read_bandwidth", m.at("dram"), false);
  }

 private:
  template <class V, std::size_t N>
  static json variant_names(const V (&variants)[N]) {
    json names = json::array();
    for (const auto& v : variants) names.push_back(v.name);
    return names;
  }

  /// Measures every variant of one regime; a variant that cannot be resident or fails
  /// verification is kept with its error (verified false) and no measurement. Throws
  /// VerificationError when no variant verifies.
  static json search_variants(const std::string& regime, int count,
                              const std::function<json(int)>& describe,
                              const std::function<int(int)>& resident,
                              const std::function<json(int)>& measure_one) {
    json rows = json::array();
    std::string errors;
    for (int i = 0; i < count; ++i) {
      json row = describe(i);
      if (resident(i) < 1) {
        row["verified"] = false;
        row["error"] = "cannot be resident";
      } else {
        try {
          row.update(measure_one(i));
        } catch (const VerificationError& e) {
          row["verified"] = false;
          row["error"] = e.what();
        }
      }
      if (!row.value("verified", false))
        errors +=
            "; " + row.at("variant").get<std::string>() + ": " + row.at("error").get<std::string>();
      rows.push_back(row);
    }
    if (bwsweep::best_variant(rows) < 0)
      throw VerificationError("bandwidth.hierarchy " + regime + ": no kernel variant verified" +
                              errors);
    return rows;
  }

  /// One row per variant: what it is, its numbers (empty when it did not verify), its error.
  static Curve variant_curve(const std::string& level, const json& rows) {
    Curve c{level + "_variants",
            {"variant",
             "fold",
             "addressing",
             "load",
             "unroll",
             "rotations",
             "threads_per_block",
             "blocks_per_sm_requested",
             "blocks_per_sm",
             "max_blocks_on_one_sm",
             "bytes_per_clk_per_sm_median",
             "bytes_per_clk_per_sm_mad",
             "gb_s_median",
             "gb_s_mad",
             "primary",
             "n",
             "sm_clock_mhz_measured",
             "timed_passes_per_launch",
             "verified",
             "error"},
            {}};
    for (const auto& row : rows) {
      const bool ok = row.value("verified", false) && row.contains("measurement");
      auto num = [&](const char* key, const char* stat) -> json {
        if (!ok || !row.contains(key)) return "";
        return row.at(key).value(stat, 0.0);
      };
      auto cell = [&](const char* key) -> json { return row.contains(key) ? row.at(key) : ""; };
      c.rows.push_back({row.at("variant"),
                        cell("fold"),
                        cell("addressing"),
                        cell("load"),
                        cell("unroll"),
                        cell("rotations"),
                        cell("threads_per_block"),
                        cell("blocks_per_sm_requested"),
                        ok ? cell("blocks_per_sm") : json(""),
                        ok ? cell("max_blocks_on_one_sm") : json(""),
                        num("bytes_per_clk_per_sm", "median"),
                        num("bytes_per_clk_per_sm", "mad"),
                        num("gb_s", "median"),
                        num("gb_s", "mad"),
                        ok ? cell("primary") : json(""),
                        ok ? json(row.at("measurement").value("n", 0.0)) : json(""),
                        ok ? cell("sm_clock_mhz_measured") : json(""),
                        ok ? cell("timed_passes_per_launch") : json(""),
                        json(ok),
                        json(row.value("error", std::string("")))});
    }
    c.hints = table_hints(level + " kernel variants");
  return c;
  }

  static double spread(const json& p) {
    const auto& s = p.at("measurement");
    const double med = s.value("median", 0.0);
    const double sp = med > 0 ? (s.value("p95", 0.0) - s.value("p5", 0.0)) / med : 1.0;
    return std::clamp(stats::confidence_from_spread(sp), 0.0, 1.0);
  }
  std::uint64_t data_bytes(const device::DeviceInfo& d, std::uint32_t nsmid) const override {
    return std::max<std::uint64_t>(16 * d.l2_bytes + kMiB, kHierarchyL1Bytes * nsmid) /
               (64 * kKiB) * (64 * kKiB) +
           64 * kKiB;
  }
};

}  // namespace

void register_bandwidth_sweep_experiments(Registry& registry) {
  registry.add(std::make_unique<BandwidthSweep>());
  registry.add(std::make_unique<BandwidthHierarchy>());
}

}  // namespace gpuprobe::probes
