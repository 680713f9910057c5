#pragma once
// What bandwidth.sweep and bandwidth.hierarchy share (internal to src/probes/bandwidth/): the GPU
// rig that measures one point of the L1 regime (every SM reading its own slice), of the L2
// regime (all SMs reading one region) or of register FFMA throughput, and the analysis helpers.
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
#include "measure/cuda_event.hpp"
#include "probes/bandwidth/bandwidth.hpp"
#include "probes/bandwidth/bandwidth_kernels.hpp"
#include "probes/bandwidth/bandwidth_sweep.hpp"
#include "probes/bandwidth/rig_samples.hpp"

namespace gpuprobe::probes::bandwidth_rig {

using bwsweep::LaunchRates;
using nlohmann::json;

using units::kKiB;
using units::kMiB;
constexpr double kTargetTimedNs = 1.0e6;  ///< timed part of one launch: about 1 ms
constexpr std::uint32_t kMaxPasses = 1u << 22;
constexpr std::uint64_t kSliceAlign = 4 * kKiB;    ///< L1 regime working sets (per SM)
constexpr std::uint64_t kRegionAlign = 64 * kKiB;  ///< L2 regime working sets (total)
constexpr std::uint64_t kL1RegimeMin = 16 * kKiB;
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

const char* fold_name(bws::Fold f);
/// What L1 / L2 kernel variant i is, as recorded beside its measurement.
json describe_l1_variant(int i);
json describe_l2_variant(int i);
std::uint32_t derive_seed(std::uint64_t seed);
json summary_json(const std::vector<double>& v);

/// GPU state of one experiment: stream, data (filled once), block records, counters.
class Rig {
 public:
  /// data_bytes(nsmid) gives the size of the data buffer.
  /// salt != 0 gives other data than salt 0 (a confirmation's fresh buffers).
  Rig(Context& ctx, const std::function<std::uint64_t(std::uint32_t)>& data_bytes,
      std::uint32_t salt = 0)
      : info_(select(ctx.device.info())),
        protocol_(ctx.options.protocol),
        seed_(salt == 0 ? derive_seed(ctx.options.seed)
                        : bw::mix32(derive_seed(ctx.options.seed) + salt)),
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
  /// Replaces the repetition protocol of later measurements.
  void set_protocol(const ProtocolOptions& p) { protocol_ = p; }
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
    j["measurement"]["values"] = m.values;
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
  measure::CudaStream stream_;
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

double primary_median(const RigPoint& p);
/// The points sorted by working set (stable: equal working sets keep their order).
std::vector<RigPoint> sorted_points(std::vector<RigPoint> points);
/// The order sorted_points gives, as indices into `points`.
std::vector<std::size_t> working_set_order(const std::vector<RigPoint>& points);
std::vector<analysis::CurvePoint> curve_of(const std::vector<RigPoint>& pts);
/// Confidence of a plateau's level: confidence::precision of its points' medians around it.
double plateau_confidence(const std::vector<RigPoint>& pts, const analysis::Plateau& p);
/// Confidence of a knee: confidence::separation of the point medians of the plateaus on its
/// two sides.
double knee_confidence(const std::vector<RigPoint>& pts, const analysis::LevelAnalysis& L,
                       const analysis::Transition& t);
/// confidence::precision of a point's samples around its median (0 without samples).
double point_confidence(const RigPoint& p);
/// Median over a plateau's points of a secondary quantity (e.g. GB/s of the L1 regime); the
/// points without its median do not count.
double plateau_median(const std::vector<RigPoint>& pts, const analysis::Plateau& p,
                      std::optional<RigStat> RigPoint::*rate);
json levels_json(const analysis::LevelAnalysis& L, const std::string& unit);
Curve curve_table(const std::string& name, const std::vector<RigPoint>& pts, bool per_sm);
std::uint64_t align_down(double x, std::uint64_t a);
void check_memory(const device::Device& dev, std::uint64_t need, const std::string& id);

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
    // SM ids may run past the SM count (they are not dense): size for ids up to 160/132 of it.
    const auto& d = dev.info();
    check_memory(dev, data_bytes(d, static_cast<std::uint32_t>(d.sm_count) * 160 / 132), id());
  }

 protected:
  /// Bytes of the data buffer for `nsmid` possible SM ids.
  virtual std::uint64_t data_bytes(const device::DeviceInfo& d, std::uint32_t nsmid) const = 0;
};

std::unique_ptr<Experiment> make_sweep_experiment();
std::unique_ptr<Experiment> make_hierarchy_experiment();

}  // namespace gpuprobe::probes::bandwidth_rig
