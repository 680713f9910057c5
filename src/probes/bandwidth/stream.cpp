// bandwidth.read / bandwidth.write / bandwidth.copy: streaming DRAM bandwidth with 4, 8 and 16
// bytes per access. A search (measure::Search) over cache operators, unroll factors, grid shapes
// and widths picks the winners; each winner is then re-measured in a confirmation pass on fresh
// buffers with fresh data and the full repetition count, verified with the pass count it was
// timed with, and only the confirmation is reported (docs/FAMILIES.md, "Search, then confirm").
#include <algorithm>
#include <map>
#include <sstream>

#include "core/confidence.hpp"
#include "core/error.hpp"
#include "counters/counters.hpp"
#include "measure/search.hpp"
#include "probes/bandwidth/bandwidth_common.hpp"
#include "probes/bandwidth/stream_select.hpp"

namespace gpuprobe::probes::bwhost {
namespace {

using measure::Measured;
using units::kKiB;
using units::kMiB;

/// One point of the search: the kernel and how it is launched.
struct Config {
  StreamVariant v;
  int blocks_per_sm = kMaxBlocksPerSm;
  unsigned threads = kThreadsPerBlock;
  std::uint64_t dst_shift = 0;  ///< bytes between the destination allocation and the copy's dst
  /// One grid covering the whole array (each thread does `unroll` vectors once, no loop), as
  /// simple copy kernels do, instead of a persistent grid of blocks_per_sm x SMs.
  bool cover = false;
};
using StreamSearch = measure::Search<Config>;
using Row = StreamSearch::Row;

std::string key_of(const Config& c) {
  std::ostringstream k;
  k << c.v.width_bytes << "B/ld" << static_cast<int>(c.v.load) << "/st"
    << static_cast<int>(c.v.store) << "/u" << c.v.unroll << "/s" << static_cast<int>(c.v.scheme)
    << "/p" << c.v.passes << "/" << c.blocks_per_sm << "x" << c.threads << "/shift" << c.dst_shift
    << (c.cover ? "/cover" : "");
  return k.str();
}

json variant_json(const StreamVariant& v, StreamKind kind) {
  json j = {{"width_bytes", v.width_bytes},
            {"unroll", v.unroll},
            {"scheme", bw::to_string(v.scheme)},
            {"passes", v.passes}};
  j["load"] = kind == StreamKind::kWrite ? "-" : bw::to_string(v.load);
  j["store"] = kind == StreamKind::kRead ? "-" : bw::to_string(v.store);
  return j;
}

std::vector<int> widths_of(const AxisValues& axes) {
  std::vector<int> w = axes.int32s("width_bytes");
  std::sort(w.begin(), w.end());
  w.erase(std::unique(w.begin(), w.end()), w.end());
  return w;
}

/// The arrays and kernels of one streaming experiment, measuring and verifying one
/// configuration at a time. The search and the confirmation each get their own (fresh buffers,
/// fresh data).
class StreamRig {
 public:
  StreamRig(Context& ctx, StreamKind kind, const std::string& id, const AxisValues& axes,
            std::uint32_t salt)
      : bench_(ctx),
        kind_(kind),
        kind_name_(analysis::to_string(kind)),
        id_(id),
        array_(array_bytes(bench_.info(), axes)),
        n_(array_ / 4),
        peak_(dram_peak_gb_s(bench_.info())),
        bytes_(analysis::stream_bytes(kind, array_)),
        seed_src_(derive_seed(ctx.options.seed, salt + 11)),
        seed_poison_(derive_seed(ctx.options.seed, salt + 12)),
        seed_write_(derive_seed(ctx.options.seed, salt + 13)) {
    if (reads()) {
      src_ = DeviceArray(array_);
      bench_.fill(src_.as<float>(), n_, seed_src_);
    }
    if (writes()) {
      // A copy may write at a distance from the start of its allocation (stage dst_shift).
      dst_ = DeviceArray(array_ + (kind_ == StreamKind::kCopy ? kMaxDstShift : 0));
      bench_.fill(dst_.as<float>(), dst_.bytes() / 4, seed_poison_);
    }
    bench_.sync();
    if (kind_ == StreamKind::kRead) one_pass_xor_ = host_xor(0, 1, n_, seed_src_);
  }

  Bench& bench() { return bench_; }
  std::uint64_t elements() const { return n_; }
  std::uint64_t array_size() const { return array_; }
  /// DRAM bytes `c` means to read and to write per launch.
  std::pair<double, double> bytes_per_launch(const Config& c) const {
    return {static_cast<double>(bytes_.read_bytes) * c.v.passes,
            static_cast<double>(bytes_.write_bytes) * c.v.passes};
  }
  /// Launches `c` once and waits (the --counters probe; the same launch was timed and verified).
  std::function<void()> launcher(const Config& c) {
    const bw::Launch l = launch_of(c);
    const std::uint32_t bits = next_write_bits();
    return [this, c, l, bits] {
      launch_kernel(c, l, bits, nullptr);
      bench_.sync();
    };
  }
  std::uint32_t seed_src() const { return seed_src_; }

  /// `c` with its resident blocks per SM clamped to what the kernel's occupancy allows.
  Config normalise(Config c) const {
    const int occ = bw::stream_blocks_per_sm(kind_name_, c.v, c.threads);
    if (occ >= 1)
      c.blocks_per_sm = std::clamp(c.blocks_per_sm, 1,
                                   std::min(occ, static_cast<int>(kMaxThreadsPerSm / c.threads)));
    return c;
  }

  /// Times `c`, then verifies one more launch of it with the same pass count.
  Measured measure(const Config& c) {
    // A covering grid gives each thread the same vectors in every pass: a second pass would
    // re-read what the first just brought into the caches, reading far above the DRAM peak.
    if (c.cover && c.v.passes > 1)
      throw measure::SkipRow("a covering grid would re-read its vectors from the caches");
    const int occ = bw::stream_blocks_per_sm(kind_name_, c.v, c.threads);
    if (occ < 1)
      throw measure::SkipRow("a " + kind_name_ + " kernel cannot be resident with " +
                             std::to_string(c.threads) + " threads");
    const int cap = std::min(occ, static_cast<int>(kMaxThreadsPerSm / c.threads));
    const bw::Launch l = launch_of(c);
    const std::uint32_t timed_bits = next_write_bits();
    const auto t = bench_.measure([&] { launch_kernel(c, l, timed_bits, nullptr); },
                                  static_cast<double>(bytes_.counted_bytes()) * c.v.passes);
    const std::uint64_t spot = verify(c, l, id_ + " " + key_of(c));
    json row = variant_json(c.v, kind_);
    row["blocks_per_sm"] = c.blocks_per_sm;
    row["blocks_per_sm_max"] = cap;
    row["threads_per_block"] = l.threads;
    row["threads_per_sm"] = static_cast<std::uint64_t>(c.blocks_per_sm) * l.threads;
    row["blocks"] = l.blocks;
    row["dst_shift_bytes"] = c.dst_shift;
    row["grid"] = c.cover ? "covers the array, one iteration per thread" : "persistent";
    // What the resident threads of one SM access in one iteration: the loads in flight of a
    // read or copy kernel, the stores issued back to back of a write kernel.
    row["bytes_in_flight_per_sm"] =
        static_cast<std::uint64_t>(c.blocks_per_sm) * l.threads * c.v.unroll * c.v.width_bytes;
    row["read_bytes_per_launch"] = bytes_.read_bytes * c.v.passes;
    row["write_bytes_per_launch"] = bytes_.write_bytes * c.v.passes;
    row["counted_bytes_per_launch"] = bytes_.counted_bytes() * c.v.passes;
    row["gb_s"] = to_json(t, peak_);
    row["verified"] = true;
    row["verified_with_passes"] = c.v.passes;
    row["host_spot_checked_elements"] = spot;
    return {t.gb_s.values, t.gb_s.summary.median, row};
  }

  /// The driver's own kernel (cudaMemcpy / cudaMemset), measured and verified, for reference.
  json reference() {
    std::function<void()> ref;
    ExpectSpec spec;
    spec.seed_in = seed_src_;
    spec.seed_poison = seed_poison_;
    std::string label;
    if (kind_ == StreamKind::kCopy) {
      label = "cudaMemcpyAsync device to device";
      ref = [&] {
        GP_CUDA_CHECK(cudaMemcpyAsync(dst_.as<float>(), src_.as<float>(), array_,
                                      cudaMemcpyDeviceToDevice, bench_.stream()));
      };
      spec.mode = ExpectMode::kWindow;
      spec.hi = n_;
    } else {
      label = "cudaMemsetAsync 0x3f";
      ref = [&] {
        GP_CUDA_CHECK(cudaMemsetAsync(dst_.as<float>(), 0x3f, array_, bench_.stream()));
      };
      spec.mode = ExpectMode::kConstant;
      spec.constant_bits = 0x3f3f3f3fu;
    }
    const auto t = bench_.measure(ref, static_cast<double>(bytes_.counted_bytes()));
    bench_.fill(dst_.as<float>(), dst_.bytes() / 4, seed_poison_);
    ref();
    const auto spot = bench_.check(dst_.as<float>(), n_, spec, id_ + " " + label);
    return {{"stage", "driver_reference"},
            {"status", "passed"},
            {"reference", true},
            {"label", label},
            {"read_bytes_per_launch", bytes_.read_bytes},
            {"write_bytes_per_launch", bytes_.write_bytes},
            {"counted_bytes_per_launch", bytes_.counted_bytes()},
            {"gb_s", to_json(t, peak_)},
            {"verified", true},
            {"host_spot_checked_elements", spot}};
  }

 private:
  bool reads() const { return kind_ != StreamKind::kWrite; }
  bool writes() const { return kind_ != StreamKind::kRead; }

  bw::Launch launch_of(const Config& c) const {
    auto l = bench_.launch(c.blocks_per_sm, c.threads);
    if (c.cover) {
      const std::uint64_t vectors = n_ / static_cast<std::uint64_t>(c.v.width_bytes / 4);
      const std::uint64_t per_block = static_cast<std::uint64_t>(c.threads) * c.v.unroll;
      l.blocks = static_cast<unsigned>((vectors + per_block - 1) / per_block);
    }
    return l;
  }

  /// A fresh non-zero float per verification, so a launch that skips elements leaves the
  /// previous value (or the poison) behind.
  std::uint32_t next_write_bits() { return bw::value_bits(++write_counter_, seed_write_); }

  void launch_kernel(const Config& c, const bw::Launch& l, std::uint32_t bits,
                     std::uint32_t* xor_out) {
    float* d = writes() ? dst_.as<float>() + c.dst_shift / 4 : nullptr;
    switch (kind_) {
      case StreamKind::kRead:
        bw::launch_stream_read(c.v, l, src_.as<float>(), n_, xor_out);
        break;
      case StreamKind::kWrite:
        bw::launch_stream_write(c.v, l, d, n_, bits);
        break;
      case StreamKind::kCopy:
        bw::launch_stream_copy(c.v, l, src_.as<float>(), d, n_);
        break;
    }
  }

  std::uint64_t verify(const Config& c, const bw::Launch& l, const std::string& what) {
    if (kind_ == StreamKind::kRead) {
      const auto passes = static_cast<std::uint32_t>(c.v.passes);
      bench_.check_xor([&](std::uint32_t* out) { launch_kernel(c, l, 0, out); },
                       bw::stream_read_fold(one_pass_xor_, passes), what);
      return 0;
    }
    bench_.fill(dst_.as<float>(), dst_.bytes() / 4, seed_poison_);
    ExpectSpec spec;
    spec.seed_in = seed_src_;
    spec.seed_poison = seed_poison_;
    std::uint32_t bits = 0;
    if (kind_ == StreamKind::kWrite) {
      bits = next_write_bits();
      spec.mode = ExpectMode::kConstant;
      spec.constant_bits = bits;
    } else {
      spec.mode = ExpectMode::kWindow;
      spec.lo = 0;
      spec.hi = n_;
      spec.step = 1;
    }
    launch_kernel(c, l, bits, nullptr);
    return bench_.check(dst_.as<float>() + c.dst_shift / 4, n_, spec, what);
  }

  Bench bench_;
  StreamKind kind_;
  std::string kind_name_, id_;
  std::uint64_t array_, n_;
  double peak_;
  analysis::ByteCount bytes_;
  std::uint32_t seed_src_, seed_poison_, seed_write_;
  std::uint32_t one_pass_xor_ = 0;
  std::uint32_t write_counter_ = 0;
  DeviceArray src_, dst_;
};

// ---------------------------------------------------------------------------------------------
// Stages: each looks at the rows so far and returns the configurations to try next.

struct Flavors {
  std::vector<std::pair<LoadFlavor, StoreFlavor>> pairs;
};

Flavors flavors_of(StreamKind kind) {
  const bool reads = kind != StreamKind::kWrite, writes = kind != StreamKind::kRead;
  const std::vector<LoadFlavor> loads = {LoadFlavor::kPlain, LoadFlavor::kNc, LoadFlavor::kCs,
                                         LoadFlavor::kNcNa256, LoadFlavor::kNcNaEf256};
  const std::vector<StoreFlavor> stores = {StoreFlavor::kPlain, StoreFlavor::kCs,
                                           StoreFlavor::kNaEf};
  Flavors f;
  for (auto lf : reads ? loads : std::vector<LoadFlavor>{LoadFlavor::kPlain})
    for (auto sf : writes ? stores : std::vector<StoreFlavor>{StoreFlavor::kPlain})
      f.pairs.emplace_back(lf, sf);
  return f;
}

/// The best passed configuration that `pick` accepts; `fallback` when none passed.
Config best_config(const StreamSearch& s, const StreamSearch::Pick& pick, const Config& fallback) {
  const auto b = s.best(pick);
  return b ? s.rows()[*b].config : fallback;
}

StreamSearch::Pick at_width(int w) {
  return [w](const Row& r) { return r.config.v.width_bytes == w; };
}

/// Stage cache_operator: every operator pair at the search width, unroll 4, a full SM.
std::vector<Config> stage_cache_operator(int width, const Flavors& f) {
  std::vector<Config> out;
  for (const auto& [lf, sf] : f.pairs)
    out.push_back(Config{StreamVariant{width, lf, sf, 4, IndexScheme::kGrid}});
  return out;
}

/// Stage bytes_in_flight: unroll x resident blocks x index scheme, with the best operators.
std::vector<Config> stage_bytes_in_flight(const Config& base) {
  std::vector<Config> out;
  for (int u : {1, 2, 4, 8})
    for (int bps : {1, 2, 4, kMaxBlocksPerSm})
      for (auto scheme : {IndexScheme::kGrid, IndexScheme::kBlock}) {
        if (u == 1 && scheme == IndexScheme::kBlock) continue;  // the same kernel as grid
        out.push_back(
            Config{StreamVariant{base.v.width_bytes, base.v.load, base.v.store, u, scheme}, bps});
      }
  return out;
}

/// Stage block_shape: threads per block x resident threads per SM, unroll 4 and 8.
std::vector<Config> stage_block_shape(const Config& base) {
  std::vector<Config> out;
  for (unsigned threads : {128u, 256u, 512u, 1024u})
    for (unsigned per_sm : {256u, 384u, 512u, 640u, 768u, 1024u, 1536u, 2048u}) {
      if (per_sm % threads != 0) continue;
      for (int u : {4, 8}) {
        Config c = base;
        c.threads = threads;
        c.blocks_per_sm = static_cast<int>(per_sm / threads);
        c.v.unroll = u;
        out.push_back(c);
      }
    }
  return out;
}

/// Stage dst_shift (copy): where the destination lies relative to the source, in DRAM terms.
std::vector<Config> stage_dst_shift(const Config& base) {
  std::vector<Config> out;
  for (std::uint64_t shift : {2 * kKiB, 64 * kKiB, kMiB + 256 * kKiB}) {
    Config c = base;
    c.dst_shift = shift;
    out.push_back(c);
  }
  return out;
}

/// Stage width: each other width with its own bytes in flight. A narrower access moves fewer
/// bytes per load, so the block shape that saturates DRAM at the search width leaves it short
/// (docs/FAMILIES.md, "Run to run"): unroll 2/4/8 x 256-thread blocks 2/4/8 per SM, plus the
/// search width's block shape and destination.
std::vector<Config> stage_width(const Config& base, const std::vector<int>& widths) {
  std::vector<Config> out;
  for (int w : widths) {
    if (w == base.v.width_bytes) continue;
    for (int u : {2, 4, 8}) {
      Config c = base;
      c.v.width_bytes = w;
      c.v.unroll = u;
      out.push_back(c);
      for (int bps : {2, 4, kMaxBlocksPerSm}) {
        Config d = c;
        d.threads = kThreadsPerBlock;
        d.blocks_per_sm = bps;
        out.push_back(d);
      }
    }
  }
  return out;
}

/// Stage covering_grid: one grid covering the array (the plain copy kernel of most tutorials).
std::vector<Config> stage_covering_grid(const Config& base) {
  std::vector<Config> out;
  for (unsigned threads : {256u, 512u, 1024u})
    for (int u : {1, 2, 4}) {
      Config c{StreamVariant{base.v.width_bytes, base.v.load, base.v.store, u, IndexScheme::kGrid}};
      c.threads = threads;
      c.cover = true;
      out.push_back(c);
    }
  return out;
}

/// Stage covering_grid_operator: the best covering grid with every other operator pair (the
/// operator that suits a persistent loop need not suit a grid that touches each vector once).
std::vector<Config> stage_covering_grid_operator(const Config& base, const Flavors& f) {
  std::vector<Config> out;
  for (const auto& [lf, sf] : f.pairs) {
    if (lf == base.v.load && sf == base.v.store) continue;
    Config c = base;
    c.v.load = lf;
    c.v.store = sf;
    out.push_back(c);
  }
  return out;
}

/// Stage passes: the best persistent kernel sweeping the array 2 and 4 times per launch, which
/// amortises the launch and its ramp-up and tail (each pass streams from DRAM again because a
/// persistent thread's vectors in one pass are 16 x L2 apart from the next).
std::vector<Config> stage_passes(const Config& base) {
  std::vector<Config> out;
  for (int passes : {2, 4}) {
    Config c = base;
    c.v.passes = passes;
    out.push_back(c);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

class StreamExperiment : public BandwidthExperiment {
 public:
  explicit StreamExperiment(StreamKind kind) : kind_(kind) {}
  std::string id() const override { return "bandwidth." + analysis::to_string(kind_); }
  std::string description() const override {
    switch (kind_) {
      case StreamKind::kRead:
        return "DRAM read bandwidth: grid-stride loads of 4/8/16 B per thread over an array of "
               "16 x L2, searching cache operators, unroll and grid shape, the winners "
               "confirmed on fresh buffers";
      case StreamKind::kWrite:
        return "DRAM write bandwidth: grid-stride stores of 4/8/16 B per thread over an array of "
               "16 x L2, the winners confirmed on fresh buffers (plus the driver's cudaMemset "
               "for reference)";
      case StreamKind::kCopy:
        return "DRAM copy bandwidth (bytes read + written): 4/8/16 B per thread between two "
               "arrays of 16 x L2, the winners confirmed on fresh buffers (plus the driver's "
               "cudaMemcpy for reference)";
    }
    return "";
  }
  std::vector<Axis> typed_axes() const override {
    Axis width = int_axis(
        "width_bytes", std::vector<std::int64_t>(kDefaultWidths.begin(), kDefaultWidths.end()), "B",
        "bytes per access of one thread; the search runs at the widest, the "
        "others follow its best kernel; --word-sizes sets it too");
    width.allowed = {4, 8, 16};
    std::vector<Axis> axes = {width};
    std::vector<std::string> loads, stores;
    for (const auto& [lf, sf] : flavors_of(kind_).pairs) {
      if (std::find(loads.begin(), loads.end(), bw::to_string(lf)) == loads.end())
        loads.push_back(bw::to_string(lf));
      if (std::find(stores.begin(), stores.end(), bw::to_string(sf)) == stores.end())
        stores.push_back(bw::to_string(sf));
    }
    if (kind_ != StreamKind::kWrite)
      axes.push_back(fixed(string_axis("load", loads, "load operators the search tries")));
    if (kind_ != StreamKind::kRead)
      axes.push_back(fixed(string_axis("store", stores, "store operators the search tries")));
    axes.push_back(fixed(int_axis("unroll", {1, 2, 4, 8}, "accesses",
                                  "independent accesses in flight per thread the search tries")));
    axes.push_back(fixed(int_axis("blocks_per_sm", {1, 2, 4, kMaxBlocksPerSm}, "blocks",
                                  "blocks of 256 threads per SM the search tries (the largest "
                                  "one the occupancy allows, at most 8)")));
    axes.push_back(
        array_bytes_axis(kind_ == StreamKind::kCopy ? "each of the two arrays" : "the array"));
    return axes;
  }
  int samples_version() const override { return StreamSamples::kVersion; }
  void run(Context& ctx, ExperimentResult& r) const override;
  void analyze(ExperimentResult& r) const override;

 protected:
  double arrays_allocated() const override { return kind_ == StreamKind::kCopy ? 2 : 1; }

 private:
  StreamKind kind_;
};

void StreamExperiment::run(Context& ctx, ExperimentResult& r) const {
  const auto& o = ctx.options;
  const auto widths = widths_of(axis_values(o));
  const int search_width = widths.back();
  const Flavors flavors = flavors_of(kind_);
  json rows, references = json::array(), confirmations = json::array(), search_summary;
  std::vector<StreamRow> typed_rows;  ///< the rows as analyze reads them
  std::uint64_t elements = 0;
  std::uint32_t seed_data = 0;
  std::map<std::string, std::size_t> winners;
  std::vector<Config> configs;
  json counter_record;
  {
    StreamRig rig(ctx, kind_, id(), axis_values(ctx.options), 0);
    elements = rig.elements();
    seed_data = rig.seed_src();
    StreamSearch s([&](const Config& c) { return rig.measure(c); }, key_of);
    auto run_stage = [&](const std::string& stage, const std::vector<Config>& cs) {
      std::vector<Config> norm;
      for (const auto& c : cs) norm.push_back(rig.normalise(c));
      s.run_stage(stage, norm);
    };
    const auto at_search = at_width(search_width);
    Config start{StreamVariant{search_width, LoadFlavor::kPlain, StoreFlavor::kPlain, 4,
                               IndexScheme::kGrid}};
    run_stage("cache_operator", stage_cache_operator(search_width, flavors));
    run_stage("bytes_in_flight", stage_bytes_in_flight(best_config(s, at_search, start)));
    run_stage("block_shape", stage_block_shape(best_config(s, at_search, start)));
    if (kind_ == StreamKind::kCopy)
      run_stage("dst_shift", stage_dst_shift(best_config(s, at_search, start)));
    run_stage("width", stage_width(best_config(s, at_search, start), widths));
    run_stage("covering_grid", stage_covering_grid(best_config(s, at_search, start)));
    run_stage("covering_grid_operator",
              stage_covering_grid_operator(
                  best_config(
                      s, [&](const Row& row) { return at_search(row) && row.config.cover; }, start),
                  flavors));
    run_stage("passes",
              stage_passes(best_config(
                  s, [&](const Row& row) { return at_search(row) && !row.config.cover; }, start)));
    rows = s.rows_json([&](const Config& c) { return variant_json(c.v, kind_); });
    typed_rows = rows.get<std::vector<StreamRow>>();
    search_summary = s.status_summary();
    for (const auto& row : s.rows()) configs.push_back(row.config);
    winners = stream_winners(typed_rows, "dram." + analysis::to_string(kind_) + "_bandwidth");
    if (kind_ != StreamKind::kRead) references.push_back(rig.reference());
  }
  // Confirmation: the search's buffers are gone; fresh ones with other data, and every
  // repetition the protocol allows (the stopping rule's early exit on a tight spread is what
  // let one short, lucky run stand for the figure).
  if (!winners.empty()) {
    StreamRig fresh(ctx, kind_, id(), axis_values(ctx.options), 100);
    ProtocolOptions p = o.protocol;
    p.min_repetitions = std::max(p.min_repetitions, p.max_repetitions);
    fresh.bench().set_protocol(p);
    std::map<std::size_t, json> done;
    std::map<std::size_t, bool> confirmed;
    for (const auto& [finding, row] : winners) {
      if (!done.count(row)) {
        const measure::Confirmation c{row, typed_rows[row].median(), measure::run_guarded([&] {
                                        return fresh.measure(configs[row]);
                                      })};
        done[row] = measure::to_json(c);
        confirmed[row] = c.ok();
      }
      json j = done[row];
      j["finding"] = finding;
      confirmations.push_back(j);
    }
    // --counters reads the confirmed winner of the headline finding on the confirmation's
    // buffers: the bytes it means to move against what DRAM moved; 2 % of the array either way.
    const auto best = winners.find("dram." + analysis::to_string(kind_) + "_bandwidth");
    if (counters::requested(ctx) && best != winners.end() && confirmed[best->second]) {
      const Config& c = configs[best->second];
      const std::string key = key_of(c);
      const auto bytes = fresh.bytes_per_launch(c);
      const double slack = 0.02 * static_cast<double>(fresh.array_size());
      auto check = [&](const char* what, const char* metric, double intended) {
        return counters::Expectation{
            what,     metric, "",    "bytes",
            intended, slack,  false, "bytes the kernel reads / writes per launch"};
      };
      counter_record = counters::collect(
          ctx, {{{key,
                  {{"kernel", key}},
                  fresh.launcher(c),
                  {check("DRAM bytes read per launch", "dram__bytes_read.sum", bytes.first),
                   check("DRAM bytes written per launch", "dram__bytes_write.sum", bytes.second)}}},
                3,
                {}});
    }
  }

  const auto& info = ctx.device.info();
  note_protocol(r);
  r.protocol["confirmation"] =
      "each winner re-measured on fresh buffers with other data, " +
      std::to_string(std::max(o.protocol.min_repetitions, o.protocol.max_repetitions)) +
      " repetitions, verified with the pass count it was timed with; only this is reported";
  r.parameters = common_parameters(info, axis_values(o));
  r.parameters["kind"] = analysis::to_string(kind_);
  r.parameters["elements"] = elements;
  r.parameters["widths_bytes"] = widths;
  r.parameters["search_width_bytes"] = search_width;
  r.parameters["counted_bytes"] = kind_ == StreamKind::kCopy
                                      ? "bytes read + bytes written (2 x array)"
                                  : kind_ == StreamKind::kRead ? "bytes read (array)"
                                                               : "bytes written (array)";
  r.parameters["search"] =
      "stage cache_operator: every operator at the widest access, unroll 4, 8 x 256 threads per "
      "SM; stage bytes_in_flight: the best operators with unroll 1/2/4/8 x 1/2/4/8 blocks of 256 "
      "x grid/block index scheme; stage block_shape: 128..1024 threads per block x 256..2048 "
      "threads per SM x unroll 4/8; stage dst_shift (copy): destination 2 KiB, 64 KiB, 1.25 MiB "
      "past its allocation's start; stage width: the other widths with unroll 2/4/8, each with "
      "2/4/8 blocks of 256 and the search width's block shape; stage covering_grid(_operator); "
      "stage passes: the best kernel sweeping the array 2 and 4 times per launch. Each stage "
      "starts from the best passed row so far; failed rows are kept with their reason";
  r.parameters["seed_data"] = seed_data;
  r.samples = {{"variants", rows}, {"references", references}, {"confirmations", confirmations}};
  if (!counter_record.is_null()) r.samples["counters"] = counter_record;
  r.statistics = {{"variants_measured", rows.size()}, {"search", search_summary}};
  if (search_summary.at("error").get<std::size_t>() > 0)
    r.reason = std::to_string(search_summary.at("error").get<std::size_t>()) + " of " +
               std::to_string(rows.size()) +
               " search rows failed: " + search_summary.at("errors").dump();
  Curve c = stream_variants_curve(typed_rows, dram_peak_gb_s(info));
  c.hints = chart_hints(id() + ": bandwidth against access width (best kernel per width)",
                        "width_bytes", "bytes", "gb_s_median", "GB/s", true)
                .best("max")
                .points();
  r.curves.push_back(c);
}

void StreamExperiment::analyze(ExperimentResult& r) const {
  counters::cross_check(r);
  analyze_stream(r, "dram." + analysis::to_string(kind_) + "_bandwidth",
                 kind_ == StreamKind::kCopy ? ".cudamemcpy_reference" : ".cudamemset_reference");
}

}  // namespace

std::unique_ptr<Experiment> make_stream_experiment(StreamKind kind) {
  return std::make_unique<StreamExperiment>(kind);
}

}  // namespace gpuprobe::probes::bwhost
