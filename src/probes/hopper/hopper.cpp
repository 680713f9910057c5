// Hopper tensor-core throughput: wgmma.mma_async m64n256k16 with A and B in shared memory
// (matrix descriptors, no swizzle), bf16 and f16 inputs, f32 accumulators, on every SM, with
// the number of warpgroups per SM, wgmmas per commit group and wgmma.wait_group N swept.
// Every number comes from launches whose accumulators all matched the host reference.
#include "probes/hopper/hopper.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/stats.hpp"
#include "measure/checks.hpp"
#include "measure/gpu.hpp"
#include "probes/hopper/hopper_kernels.hpp"
#include "probes/hopper/hopper_samples.hpp"

namespace gpuprobe::probes {

namespace hopper_layout {

std::uint32_t element_offset(const TileLayout& l, int row, int k) {
  return static_cast<std::uint32_t>(row / 8) * l.row_stride +
         static_cast<std::uint32_t>(k / 8) * l.k_stride +
         static_cast<std::uint32_t>(row % 8) * 16u + static_cast<std::uint32_t>(k % 8) * 2u;
}

std::uint64_t descriptor_bits(std::uint32_t lbo_bytes, std::uint32_t sbo_bytes) {
  return (static_cast<std::uint64_t>((lbo_bytes >> 4) & 0x3FFFu) << 16) |
         (static_cast<std::uint64_t>((sbo_bytes >> 4) & 0x3FFFu) << 32);
}

std::uint64_t descriptor_bits_swizzle128(std::uint32_t sbo_bytes) {
  return descriptor_bits(16, sbo_bytes) | (std::uint64_t{1} << 62);
}

void accumulator_position(int thread, int reg, int& row, int& col) {
  const int warp = thread / 32, lane = thread % 32;
  const int j = reg / 4, q = reg % 4;
  row = 16 * warp + lane / 4 + 8 * (q / 2);
  col = 8 * j + 2 * (lane % 4) + (q % 2);
}

std::uint16_t bf16_bits(float f) {
  std::uint32_t u;
  static_assert(sizeof(u) == sizeof(f));
  std::memcpy(&u, &f, sizeof u);
  return static_cast<std::uint16_t>(u >> 16);
}

std::uint16_t f16_bits(int v) {
  if (v == 0) return 0;
  const std::uint16_t sign = v < 0 ? 0x8000u : 0u;
  unsigned a = static_cast<unsigned>(v < 0 ? -v : v);
  int e = 0;
  while ((a >> (e + 1)) != 0) ++e;  // floor(log2 a)
  const unsigned mant = ((a << (10 - e)) & 0x3FFu);
  return static_cast<std::uint16_t>(sign | static_cast<unsigned>(e + 15) << 10 | mant);
}

}  // namespace hopper_layout

namespace {

using nlohmann::json;
namespace wgmma_kernels = hopper;
namespace layout = hopper_layout;

/// Dense bf16/f16 tensor FLOP per clock per SM of Hopper (1024 FMA).
constexpr double kFlopPerClkPerSm = 4096;
/// Datasheet dense peak, H100 SXM5 / H200 SXM (132 SMs): 1,979 TFLOPS BF16/FP16 "with
/// sparsity" in the NVIDIA H100 and H200 datasheets, i.e. 989.4 dense = 132 x 4096 x 1830 MHz.
constexpr double kDatasheetTflops132 = 989.4;
constexpr std::uint32_t kMmasPerWarpgroup = 16384;  // |accumulator| <= 144 x 16384 < 2^24: exact

struct Candidate {
  const char* name;
  layout::TileLayout a, b;
  std::uint32_t lbo_a, sbo_a, lbo_b, sbo_b;
};

/// Descriptor encodings tried on one tile until one reproduces the host product. The first is
/// the reading of the PTX ISA (K-major, no swizzle: LBO = distance between core matrices
/// adjacent in K, SBO = adjacent in M/N); the others are there so that a misreading is
/// reported as such instead of as a wrong number.
std::vector<Candidate> candidates() {
  const layout::TileLayout k_inner{256, 128};  // (row group, k group) at rg * 256 + kg * 128
  const layout::TileLayout a_k_outer{128, 1024}, b_k_outer{128, 4096};
  return {
      {"k_inner, LBO=k 128, SBO=row 256", k_inner, k_inner, 128, 256, 128, 256},
      {"k_inner, LBO=row 256, SBO=k 128", k_inner, k_inner, 256, 128, 256, 128},
      {"k_outer, LBO=k, SBO=row 128", a_k_outer, b_k_outer, 1024, 128, 4096, 128},
      {"k_outer, LBO=row 128, SBO=k", a_k_outer, b_k_outer, 128, 1024, 128, 4096},
  };
}

const char* type_name(wgmma_kernels::MmaType t) {
  return t == wgmma_kernels::MmaType::kBf16 ? "bf16" : "f16";
}

struct Problem {
  std::vector<int> a, b;          ///< A[m][k] (64 x 16), B[n][k] (256 x 16), values +-1..3
  std::vector<std::int64_t> ref;  ///< C[m][n] = sum_k A[m][k] B[n][k]
};

Problem make_problem(std::uint64_t seed) {
  Problem p;
  std::mt19937_64 rng(seed);
  const int values[] = {-3, -2, -1, 1, 2, 3};
  std::uniform_int_distribution<int> pick(0, 5);
  p.a.resize(wgmma_kernels::kM * wgmma_kernels::kK);
  p.b.resize(wgmma_kernels::kN * wgmma_kernels::kK);
  for (auto& x : p.a) x = values[pick(rng)];
  for (auto& x : p.b) x = values[pick(rng)];
  p.ref.assign(wgmma_kernels::kM * wgmma_kernels::kN, 0);
  for (int m = 0; m < wgmma_kernels::kM; ++m)
    for (int n = 0; n < wgmma_kernels::kN; ++n) {
      std::int64_t s = 0;
      for (int k = 0; k < wgmma_kernels::kK; ++k)
        s += p.a[m * wgmma_kernels::kK + k] * p.b[n * wgmma_kernels::kK + k];
      p.ref[m * wgmma_kernels::kN + n] = s;
    }
  return p;
}

std::vector<std::uint16_t> make_image(const Problem& p, const Candidate& c,
                                      wgmma_kernels::MmaType t) {
  std::vector<std::uint16_t> img((wgmma_kernels::kTileABytes + wgmma_kernels::kTileBBytes) / 2, 0);
  auto bits = [&](int v) {
    return t == wgmma_kernels::MmaType::kBf16 ? layout::bf16_bits(static_cast<float>(v))
                                              : layout::f16_bits(v);
  };
  for (int m = 0; m < wgmma_kernels::kM; ++m)
    for (int k = 0; k < wgmma_kernels::kK; ++k)
      img[layout::element_offset(c.a, m, k) / 2] = bits(p.a[m * wgmma_kernels::kK + k]);
  for (int n = 0; n < wgmma_kernels::kN; ++n)
    for (int k = 0; k < wgmma_kernels::kK; ++k)
      img[(wgmma_kernels::kTileABytes + layout::element_offset(c.b, n, k)) / 2] =
          bits(p.b[n * wgmma_kernels::kK + k]);
  return img;
}

struct CheckResult {
  std::uint64_t wrong = 0;
  std::string first;
};

/// What `warpgroups` warpgroups must hold after `scale` wgmmas: scale x the host product at each
/// accumulator's position (the layout of the output), the same for every warpgroup. A value
/// that a float cannot hold is NaN: no accumulator can equal it.
std::vector<float> expected_accumulators(const Problem& p, std::size_t warpgroups, double scale) {
  const std::size_t per_wg =
      static_cast<std::size_t>(wgmma_kernels::kAccumulators) * wgmma_kernels::kThreadsPerWarpgroup;
  std::vector<float> want(per_wg * warpgroups);
  for (int reg = 0; reg < wgmma_kernels::kAccumulators; ++reg)
    for (int t = 0; t < wgmma_kernels::kThreadsPerWarpgroup; ++t) {
      int row, col;
      layout::accumulator_position(t, reg, row, col);
      const double v = scale * static_cast<double>(p.ref[row * wgmma_kernels::kN + col]);
      const float f = static_cast<float>(v);
      want[static_cast<std::size_t>(reg) * wgmma_kernels::kThreadsPerWarpgroup + t] =
          static_cast<double>(f) == v ? f : std::numeric_limits<float>::quiet_NaN();
    }
  for (std::size_t w = 1; w < warpgroups; ++w)
    std::copy(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(per_wg),
              want.begin() + static_cast<std::ptrdiff_t>(w * per_wg));
  return want;
}

/// Every warpgroup's accumulators (`out`, want.size() of them) against the expected image, on
/// the host's cores (up to 17 MB per launch).
CheckResult check_accumulators(const float* out, const std::vector<float>& want, const Problem& p,
                               double scale) {
  CheckResult r;
  const auto mm = parallel::count_mismatches(out, want.data(), want.size());
  r.wrong = mm.count;
  if (mm.count) {
    const std::size_t i = mm.first;
    const std::size_t per_wg = static_cast<std::size_t>(wgmma_kernels::kAccumulators) *
                               wgmma_kernels::kThreadsPerWarpgroup;
    const int t = static_cast<int>(i % wgmma_kernels::kThreadsPerWarpgroup),
              reg = static_cast<int>(i % per_wg / wgmma_kernels::kThreadsPerWarpgroup);
    int row, col;
    layout::accumulator_position(t, reg, row, col);
    r.first = "warpgroup " + std::to_string(i / per_wg) + " thread " + std::to_string(t) +
              " register " + std::to_string(reg) + " (row " + std::to_string(row) + ", col " +
              std::to_string(col) + "): " + std::to_string(out[i]) + ", expected " +
              std::to_string(scale * static_cast<double>(p.ref[row * wgmma_kernels::kN + col]));
  }
  return r;
}

/// What every wgmma launch of one run uses: the problem, its buffers and the launch shape.
struct WgmmaRig {
  const Problem& prob;
  device::DeviceArray<std::uint16_t>& image;
  device::DeviceArray<float>& out;
  device::PinnedArray<float>& out_host;  ///< every launch's accumulators land here
  device::DeviceArray<measure::BlockTiming>& records;
  int sm_count = 0;
  std::uint32_t smem = 0;
};

/// The first descriptor encoding whose single wgmma on one tile reproduces the host product for
/// `type`, each attempt appended to `checks`; nothing when none does.
std::optional<Candidate> find_encoding(WgmmaRig& rig, wgmma_kernels::MmaType type,
                                       std::vector<hopper::WgmmaCheck>& checks) {
  const Problem& prob = rig.prob;
  auto& image = rig.image;
  auto& out = rig.out;
  auto& records = rig.records;
  const std::uint32_t smem = rig.smem;
  std::optional<Candidate> chosen;
  for (const auto& c : candidates()) {
    image.upload(make_image(prob, c, type));
    wgmma_kernels::WgmmaLaunch l;
    l.type = type;
    l.wait = 0;
    l.per_group = 1;
    l.warpgroups = 1;
    l.blocks = 1;
    l.groups = 1;
    l.dynamic_smem = smem;
    l.desc_a = layout::descriptor_bits(c.lbo_a, c.sbo_a);
    l.desc_b = layout::descriptor_bits(c.lbo_b, c.sbo_b);
    out.zero();
    wgmma_kernels::launch_wgmma(l, image.get(), out.get(), records.get());
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    const auto res = check_accumulators(
        out.download(wgmma_kernels::kAccumulators * wgmma_kernels::kThreadsPerWarpgroup).data(),
        expected_accumulators(prob, 1, 1.0), prob, 1.0);
    hopper::WgmmaCheck check;
    check.type = type_name(type);
    check.encoding = c.name;
    check.wrong = res.wrong;
    check.of = wgmma_kernels::kM * wgmma_kernels::kN;
    check.first_wrong = res.first;
    check.passed = res.wrong == 0;
    checks.push_back(check);
    if (res.wrong == 0) {
      chosen = c;
      break;
    }
  }
  return chosen;
}

/// One point of the sweep: `wgs` warpgroups per SM, `per_group` wgmmas per commit group,
/// wgmma.wait_group `wait`; repeated until stable, every launch's accumulators checked.
hopper::WgmmaPoint measure_point(WgmmaRig& rig, const Candidate& c, wgmma_kernels::MmaType type,
                                 int wgs, int per_group, int wait,
                                 const ProtocolOptions& protocol) {
  const Problem& prob = rig.prob;
  auto& image = rig.image;
  auto& out = rig.out;
  auto& out_host = rig.out_host;
  auto& records = rig.records;
  const int sm_count = rig.sm_count;
  const std::uint32_t smem = rig.smem;
  wgmma_kernels::WgmmaLaunch l;
  l.type = type;
  l.wait = wait;
  l.per_group = per_group;
  l.warpgroups = wgs;
  l.blocks = sm_count;
  l.groups = kMmasPerWarpgroup / per_group;
  l.dynamic_smem = smem;
  l.desc_a = layout::descriptor_bits(c.lbo_a, c.sbo_a);
  l.desc_b = layout::descriptor_bits(c.lbo_b, c.sbo_b);
  const double mmas = static_cast<double>(l.groups) * per_group;
  const double flop_per_block = mmas * wgs * wgmma_kernels::kFlopPerMma;
  const std::size_t total_wgs = static_cast<std::size_t>(sm_count) * wgs;
  std::vector<double> clocks, per_clk, sms_seen;
  const std::vector<float> want = expected_accumulators(prob, total_wgs, mmas);
  auto once = [&](int rep) {
    wgmma_kernels::launch_wgmma(l, image.get(), out.get(), records.get());
    GP_CUDA_CHECK(cudaDeviceSynchronize());
    out.download_to(out_host.data(), want.size());
    const auto res = check_accumulators(out_host.data(), want, prob, mmas);
    if (res.wrong)
      throw VerificationError("hopper.wgmma.throughput " + std::string(type_name(type)) + ": " +
                              std::to_string(res.wrong) + " wrong accumulators after " +
                              std::to_string(mmas) + " wgmmas; first: " + res.first);
    const auto recs = records.download(static_cast<std::size_t>(sm_count));
    std::uint64_t g0 = std::numeric_limits<std::uint64_t>::max(), g1 = 0;
    std::vector<double> mhz, fpc;
    std::vector<std::uint32_t> ids;
    for (const auto& x : recs) {
      g0 = std::min(g0, x.g0);
      g1 = std::max(g1, x.g1);
      ids.push_back(x.smid);
      if (x.g1 > x.g0 && x.c1 > x.c0) {
        mhz.push_back(static_cast<double>(x.c1 - x.c0) / static_cast<double>(x.g1 - x.g0) * 1e3);
        fpc.push_back(flop_per_block / static_cast<double>(x.c1 - x.c0));
      }
    }
    std::sort(ids.begin(), ids.end());
    const auto distinct = std::unique(ids.begin(), ids.end()) - ids.begin();
    if (g1 <= g0 || mhz.empty()) throw VerificationError("hopper.wgmma.throughput: no timer span");
    if (rep >= 0) {
      clocks.push_back(stats::median(mhz));
      per_clk.push_back(stats::median(fpc));
      sms_seen.push_back(static_cast<double>(distinct));
    }
    return flop_per_block * sm_count / static_cast<double>(g1 - g0) * 1e-3;  // TFLOP/s
  };
  const auto m = repeat_until_stable(once, protocol);
  hopper::WgmmaPoint p;
  p.type = type_name(type);
  p.warpgroups_per_sm = wgs;
  p.wgmma_per_group = per_group;
  p.wait_group = wait;
  p.wgmma_per_warpgroup = mmas;
  p.blocks = sm_count;
  p.tflops = RecordedSummary::of(m);
  p.flop_per_clk_per_sm_median = stats::median(per_clk);
  p.sm_clock_mhz_measured = stats::median(clocks);
  p.distinct_sms_min = *std::min_element(sms_seen.begin(), sms_seen.end());
  return p;
}

/// What the run did, for the record (with the datasheet peak on 132-SM parts).
json wgmma_parameters(int sm_count, std::uint32_t smem, std::uint64_t seed) {
  const bool sxm132 = sm_count == 132;
  return json{{"instruction",
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.{bf16,f16}.{bf16,f16}, "
               "A and B descriptors (K-major, no swizzle, no transpose), scale-d 1"},
              {"loop",
               "per warpgroup: groups x (wgmma.fence; wgmma_per_group wgmmas on the same "
               "128 f32 accumulators; wgmma.commit_group; wgmma.wait_group N); then "
               "wgmma.wait_group 0"},
              {"wgmma_per_warpgroup", kMmasPerWarpgroup},
              {"flop_per_wgmma", wgmma_kernels::kFlopPerMma},
              {"blocks", sm_count},
              {"dynamic_smem_bytes", smem},
              {"inputs", "A 64x16, B 256x16, values in {-3..3}\\{0} (seed " + std::to_string(seed) +
                             "), exact in bf16/f16; every accumulator of every launch must equal "
                             "wgmmas x (A B^T) exactly"},
              {"tflops", "FLOP of all blocks / (last block end - first block start, %globaltimer)"},
              {"clock_peak",
               "4096 dense FLOP/clk/SM x SMs x SM clock measured in the run (clock64 over "
               "%globaltimer, median over blocks)"},
              {"datasheet_peak_tflops", sxm132 ? json(kDatasheetTflops132) : json(nullptr)},
              {"datasheet_source",
               "NVIDIA H100 SXM5 / H200 SXM datasheets: 1,979 TFLOPS BF16 and FP16 "
               "Tensor Core with sparsity = 989.4 dense (= 132 SMs x 4096 FLOP/clk x "
               "1830 MHz); applied only to 132-SM parts"},
              {"sm_count", sm_count}};
}

/// The table of every point, charted against warpgroups per SM.
Curve wgmma_table(const std::vector<hopper::WgmmaPoint>& points) {
  Curve cv{"table",
           {"type", "warpgroups_per_sm", "wgmma_per_group", "wait_group", "tflops_median", "p5",
            "p95", "flop_per_clk_per_sm", "sm_clock_mhz"},
           {}};
  for (const auto& p : points)
    cv.rows.push_back({p.type, p.warpgroups_per_sm, p.wgmma_per_group, p.wait_group,
                       p.tflops.median, p.tflops.p5_or_throw(), p.tflops.p95_or_throw(),
                       p.flop_per_clk_per_sm_median, p.sm_clock_mhz_measured});
  cv.hints = chart_hints("wgmma throughput against warpgroups per SM (best configuration)",
                         "warpgroups_per_sm", "", "tflops_median", "TFLOP/s")
                 .by({"type"})
                 .best("max");
  return cv;
}

class HopperWgmmaThroughput : public Experiment {
 public:
  std::string id() const override { return "hopper.wgmma.throughput"; }
  int samples_version() const override { return hopper::WgmmaSamples::kVersion; }
  std::string description() const override {
    return "wgmma.mma_async m64n256k16 bf16/f16 -> f32, A and B from shared memory (descriptors), "
           "every SM, 1-2 warpgroups per SM, 1 or 4 wgmmas per commit group, wgmma.wait_group 0/1: "
           "TFLOP/s against the datasheet and against 4096 FLOP/clk/SM x SMs x measured clock; "
           "accumulators checked against a host product";
  }
  std::vector<Axis> typed_axes() const override {
    return {
        fixed(string_axis("type", {"bf16", "f16"}, "input type of wgmma")),
        fixed(int_axis("wait_group", {0, 1}, "", "wgmma.wait_group argument")),
        fixed(int_axis("wgmma_per_group", {1, 4}, "", "wgmma instructions per commit group")),
        fixed(int_axis("warpgroups_per_sm", {1, 2}, "warpgroups", "resident warpgroups per SM"))};
  }
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return waive_unless_sm90a(info, kNeedsSm90a, kNeedsCudaGpu);
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    const int sm_count = gpu.sm_count, smem_per_sm = gpu.shared_per_sm,
              optin = gpu.shared_per_block_optin;
    if (!wgmma_kernels::wgmma_compiled())
      throw VerificationError("hopper.wgmma.throughput: this binary holds no sm_90a wgmma code");
    // More than half an SM's shared memory per block: one block per SM.
    const std::uint32_t need = wgmma_kernels::kTileABytes + wgmma_kernels::kTileBBytes + 1024;
    const std::uint32_t smem = std::min<std::uint32_t>(
        static_cast<std::uint32_t>(optin), std::max<std::uint32_t>(need, smem_per_sm / 2 + 1024));
    wgmma_kernels::wgmma_prepare(smem);
    const Problem prob = make_problem(ctx.options.seed);
    const std::size_t max_wgs = static_cast<std::size_t>(sm_count) * 2;
    device::DeviceArray<std::uint16_t> image(
        (wgmma_kernels::kTileABytes + wgmma_kernels::kTileBBytes) / 2);
    device::DeviceArray<float> out(max_wgs * wgmma_kernels::kAccumulators *
                                   wgmma_kernels::kThreadsPerWarpgroup);
    device::PinnedArray<float> out_host(out.size());  // every launch's accumulators land here
    device::DeviceArray<measure::BlockTiming> records(static_cast<std::size_t>(sm_count));

    WgmmaRig rig{prob, image, out, out_host, records, sm_count, smem};
    hopper::WgmmaSamples samples;
    samples.sm_count = sm_count;
    auto& checks = samples.checks;
    auto& points = samples.points;
    for (auto type : {wgmma_kernels::MmaType::kBf16, wgmma_kernels::MmaType::kF16}) {
      // 1. One tile, one wgmma: find the descriptor encoding that reproduces A x B^T.
      const std::optional<Candidate> chosen = find_encoding(rig, type, checks);
      if (!chosen) {
        r.samples = {{"checks", checks}, {"points", points}};
        throw VerificationError(
            std::string("hopper.wgmma.throughput: no descriptor encoding reproduced the ") +
            type_name(type) + " host product on one tile (see samples.checks): " +
            (checks.empty() ? std::string() : checks.back().first_wrong));
      }
      const Candidate c = *chosen;
      image.upload(make_image(prob, c, type));
      // 2. The sweep, every launch checked.
      for (int wgs : {1, 2})
        for (int per_group : {1, 4})
          for (int wait : {0, 1})
            points.push_back(
                measure_point(rig, c, type, wgs, per_group, wait, ctx.options.protocol));
    }
    r.parameters = wgmma_parameters(sm_count, smem, ctx.options.seed);
    r.samples = samples;
    r.curves.push_back(wgmma_table(points));
  }
  void analyze(ExperimentResult& r) const override {
    const auto samples = samples_as<hopper::WgmmaSamples>(r);
    const auto& points = samples.points;
    const int sms = samples.sm_count;
    for (const char* type : {"bf16", "f16"}) {
      const hopper::WgmmaPoint* best = nullptr;
      for (const auto& p : points)
        if (p.type == type && (!best || p.tflops.median > best->tflops.median)) best = &p;
      if (!best) continue;
      const auto& p = *best;
      const double tf = p.tflops.median;
      const double mhz = p.sm_clock_mhz_measured;
      const double clock_peak = kFlopPerClkPerSm * sms * mhz * 1e-6;  // TFLOP/s
      Finding f{std::string("hopper.wgmma.") + type + ".tflops",
                tf,
                "TFLOP/s",
                p.tflops.precision(),
                "best configuration of the sweep: wgmma m64n256k16 " + std::string(type) +
                    " -> f32 from shared-memory descriptors on every SM (" +
                    std::to_string(p.warpgroups_per_sm) + " warpgroup(s)/SM, " +
                    std::to_string(p.wgmma_per_group) + " wgmma/group, wait_group " +
                    std::to_string(p.wait_group) +
                    "); FLOP / %globaltimer span; every accumulator checked",
                json::object()};
      f.extra["warpgroups_per_sm"] = p.warpgroups_per_sm;
      f.extra["wgmma_per_group"] = p.wgmma_per_group;
      f.extra["wait_group"] = p.wait_group;
      f.extra["sm_clock_mhz"] = mhz;
      f.extra["clock_peak_tflops"] = clock_peak;
      f.extra["percent_of_clock_peak"] = clock_peak > 0 ? tf / clock_peak * 100 : 0;
      f.extra["flop_per_clk_per_sm"] = p.flop_per_clk_per_sm_median;
      f.extra["percent_of_4096_flop_per_clk_per_sm"] =
          p.flop_per_clk_per_sm_median / kFlopPerClkPerSm * 100;
      if (sms == 132) {
        f.extra["datasheet_peak_tflops"] = kDatasheetTflops132;
        f.extra["percent_of_datasheet"] = tf / kDatasheetTflops132 * 100;
      }
      r.findings.push_back(f);
    }
    // wait_group 0 vs 1 at the same shape: what keeping a group in flight buys.
    for (const auto& p : points) {
      if (p.wait_group != 0) continue;
      for (const auto& q : points)
        if (q.wait_group == 1 && q.type == p.type && q.warpgroups_per_sm == p.warpgroups_per_sm &&
            q.wgmma_per_group == p.wgmma_per_group) {
          const double a = p.tflops.median, b = q.tflops.median;
          if (!(a > 0)) continue;  // no evidence: no ratio
          // A ratio is as precise as both of its medians: the product of their precisions.
          Finding f{
              "hopper.wgmma." + p.type + ".wg" + std::to_string(p.warpgroups_per_sm) +
                  ".per_group" + std::to_string(p.wgmma_per_group) + ".wait1_over_wait0",
              b / a,
              "ratio",
              confidence::combine({p.tflops.precision(), q.tflops.precision()}),
              "TFLOP/s with wgmma.wait_group 1 (one group left in flight) / with wait_group 0",
              {{"wait0_tflops", a}, {"wait1_tflops", b}}};
          r.findings.push_back(f);
        }
    }
  }
};

}  // namespace

void register_hopper_experiments(Registry& registry) {
  registry.add(std::make_unique<HopperWgmmaThroughput>());
}

}  // namespace gpuprobe::probes
