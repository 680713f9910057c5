// bandwidth.layout (array of structs against struct of arrays) and bandwidth.transpose (naive,
// tiled and padded-tile transposes beside a plain copy), each beside the sector and bank model.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "core/error.hpp"
#include "core/samples.hpp"
#include "probes/bandwidth/bandwidth_common.hpp"

namespace gpuprobe::probes::bwhost {

Curve layout_table(const json& rows, double peak) {
  return pattern_table(rows, {"layout"},
                       {"load_sectors_per_warp", "store_sectors_per_warp", "request_efficiency",
                        "dram_efficiency_32b", "peak_gb_s", "percent_of_peak"},
                       [&](const json& row) -> std::vector<json> {
                         const auto& md = row.at("model");
                         return {md.at("load_sectors_per_warp"),
                                 md.at("store_sectors_per_warp"),
                                 md.at("request_efficiency"),
                                 md.at("dram_efficiency_32b"),
                                 peak,
                                 row.at("useful_gb_s").at("percent_of_peak_median")};
                       });
}

Curve transpose_table(const json& rows, double peak) {
  return pattern_table(rows, {"kernel"},
                       {"read_sectors_per_warp", "write_sectors_per_warp", "request_efficiency",
                        "shared_load_ways", "peak_gb_s", "percent_of_peak"},
                       [&](const json& row) -> std::vector<json> {
                         const auto& md = row.at("model");
                         return {md.at("read_sectors_per_warp"),
                                 md.at("write_sectors_per_warp"),
                                 md.at("request_efficiency"),
                                 md.at("shared_load_ways"),
                                 peak,
                                 row.at("useful_gb_s").at("percent_of_peak_median")};
                       });
}

namespace {

using units::kKiB;
using units::kMiB;

// ---------------------------------------------------------------------------------------------
// bandwidth.layout

class LayoutExperiment : public BandwidthExperiment {
 public:
  std::string id() const override { return "bandwidth.layout"; }
  std::string description() const override {
    return "array of structs {float x, y, z} vs struct of three arrays: read all three fields, "
           "write one float per element; useful GB/s beside the sector model";
  }
  std::vector<Axis> typed_axes() const override {
    return {string_axis("layout", {"aos", "soa"},
                        "aos: one array of {x, y, z}; soa: three arrays x, y, z"),
            array_bytes_axis("the array of structs (each SoA array is a third of it)")};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    Bench bench(ctx);
    const auto& info = bench.info();
    const auto& o = ctx.options;
    const std::uint64_t array = array_bytes(info, axis_values(o));
    const std::uint64_t n = array / 12;
    const double peak = dram_peak_gb_s(info);
    const std::uint32_t seed = derive_seed(o.seed, 41), seed_poison = derive_seed(o.seed, 42);
    DeviceArray aos(n * 12), x(n * 4), y(n * 4), z(n * 4), out(n * 4);
    bench.fill(aos.as<float>(), 3 * n, seed);
    bench.fill(x.as<float>(), n, seed, 3, 0);
    bench.fill(y.as<float>(), n, seed, 3, 1);
    bench.fill(z.as<float>(), n, seed, 3, 2);
    bench.sync();
    const auto l = bench.launch(pattern_bps());
    const double useful = static_cast<double>(n) * 16.0;
    json rows = json::array();
    const auto axes = axis_values(o);
    for (const std::string layout : {"aos", "soa"}) {
      if (!axes.contains("layout", layout)) continue;
      auto launch = [&] {
        if (layout == "aos")
          bw::launch_layout_aos(l, aos.as<float>(), out.as<float>(), n);
        else
          bw::launch_layout_soa(l, x.as<float>(), y.as<float>(), z.as<float>(), out.as<float>(), n);
      };
      const auto t = bench.measure(launch, useful);
      bench.fill(out.as<float>(), n, seed_poison);
      launch();
      ExpectSpec spec;
      spec.mode = ExpectMode::kLayoutSum;
      spec.seed_in = seed;
      const auto spot = bench.check(out.as<float>(), n, spec, id() + " " + layout);
      // Sector model per warp: three field loads and one store.
      std::uint64_t load_sectors = 0;
      for (int f = 0; f < 3; ++f)
        load_sectors +=
            analysis::sectors_per_request(layout == "aos" ? analysis::WarpAccess{4, 3, f, 0, 32}
                                                          : analysis::WarpAccess{4, 1, 0, 0, 32});
      const std::uint64_t store_sectors = analysis::sectors_per_request({4, 1, 0, 0, 32});
      // The three AoS field loads touch the same 12 sectors: distinct sectors per warp.
      const std::uint64_t distinct_load_sectors =
          3 * analysis::sectors_per_request({4, 1, 0, 0, 32});
      const double useful_per_warp = 32.0 * 16.0;
      json row = pattern_row(t, useful, peak);
      row["layout"] = layout;
      row["elements"] = n;
      row["model"] = {
          {"load_sectors_per_warp", load_sectors},
          {"store_sectors_per_warp", store_sectors},
          {"distinct_sectors_per_warp", distinct_load_sectors + store_sectors},
          {"useful_bytes_per_warp", useful_per_warp},
          {"request_efficiency",
           useful_per_warp / static_cast<double>((load_sectors + store_sectors) * 32)},
          {"dram_efficiency_32b",
           useful_per_warp / static_cast<double>((distinct_load_sectors + store_sectors) * 32)}};
      row["verified"] = true;
      row["host_spot_checked_elements"] = spot;
      rows.push_back(row);
    }
    note_protocol(r);
    r.parameters = common_parameters(info, axis_values(o));
    r.parameters["elements"] = n;
    r.parameters["kernel"] = "out[i] = (x + y) + z; AoS: one array of {x, y, z}; SoA: three arrays";
    r.parameters["useful_bytes_per_element"] = 16;
    r.parameters["convention"] = kUsefulConvention;
    r.samples = {{"rows", rows}};
    Curve c = layout_table(rows, peak);
    c.hints = table_hints("array-of-structs against struct-of-arrays");
    r.curves.push_back(c);
  }
  int samples_version() const override { return LayoutSamples::kVersion; }
  void analyze(ExperimentResult& r) const override {
    const double peak = r.parameters.value("peak_gb_s", 0.0);
    const auto rows = samples_as<LayoutSamples>(r).rows;
    std::map<std::string, const LayoutRow*> by;
    for (const auto& row : rows) by[row.layout] = &row;
    for (const auto& [layout, row] : by) {
      const auto& md = row->model;
      auto f = bandwidth_finding("dram.layout_" + layout + "_bandwidth", row->useful_gb_s, peak,
                                 "median useful GB/s (12 B read + 4 B written per element); the "
                                 "sector model predicts " +
                                     std::to_string(md.load_sectors_per_warp) +
                                     " load sectors per warp");
      f.extra["predicted_request_efficiency_percent"] = md.request_efficiency * 100;
      f.extra["predicted_dram_efficiency_percent"] = md.dram_efficiency_32b * 100;
      r.findings.push_back(f);
    }
    if (by.count("aos") && by.count("soa")) {
      const double a = by["aos"]->useful_gb_s.median;
      const double s = by["soa"]->useful_gb_s.median;
      const auto& ma = by["aos"]->model;
      const auto& ms = by["soa"]->model;
      Finding f{"dram.layout_aos_over_soa",
                s > 0 ? a / s * 100 : 0,
                "%",
                stats_precision(by["aos"]->useful_gb_s),
                "AoS useful GB/s / SoA useful GB/s",
                json::object()};
      f.extra["predicted_request_ratio_percent"] =
          ma.request_efficiency / ms.request_efficiency * 100;
      f.extra["predicted_dram_ratio_percent"] =
          ma.dram_efficiency_32b / ms.dram_efficiency_32b * 100;
      r.findings.push_back(f);
    }
  }

 protected:
  double arrays_allocated() const override { return 1.0 + 1.0 + 1.0 / 3.0; }
};

// ---------------------------------------------------------------------------------------------
// bandwidth.transpose

class TransposeExperiment : public BandwidthExperiment {
 public:
  std::string id() const override { return "bandwidth.transpose"; }
  std::string description() const override {
    return "float matrix transpose: naive, 32x32 shared tile, tile with a 33-float pitch, and a "
           "plain copy of the same bytes; beside the sector and bank model";
  }
  std::vector<Axis> typed_axes() const override {
    return {string_axis("kernel", {"copy", "naive", "tiled", "tiled_padded"},
                        "copy: a plain copy of the same bytes; naive: rows read, columns written "
                        "straight to global memory; "
                        "tiled: a 32 x 32 shared tile; tiled_padded: the tile with a 33-float "
                        "pitch"),
            fixed(int_axis("matrix_n", {}, "floats",
                           "n x n floats, the largest multiple of 32 that fits in one array")),
            array_bytes_axis("each of the two matrices' arrays")};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    Bench bench(ctx);
    const auto& info = bench.info();
    const auto& o = ctx.options;
    const std::uint64_t array = array_bytes(info, axis_values(o));
    const std::uint64_t dim = transpose_n(array);
    if (dim < 32) throw UsageError("--array-size is too small for a 32 x 32 transpose");
    const std::uint64_t n = dim * dim;
    const double peak = dram_peak_gb_s(info);
    const std::uint32_t seed = derive_seed(o.seed, 51), seed_poison = derive_seed(o.seed, 52);
    DeviceArray in(n * 4), out(n * 4);
    bench.fill(in.as<float>(), n, seed);
    bench.sync();
    const auto l = bench.launch(pattern_bps());
    const double useful = static_cast<double>(n) * 8.0;
    json rows = json::array();
    const auto axes = axis_values(o);
    for (int k = -1; k < 3; ++k) {
      const std::string name =
          k < 0 ? "copy" : analysis::to_string(static_cast<analysis::TransposeKind>(k));
      if (!axes.contains("kernel", name)) continue;
      auto launch = [&] {
        if (k < 0)
          bw::launch_strided_copy(l, in.as<float>(), out.as<float>(), 0, 0, 1, n);
        else
          bw::launch_transpose(k, in.as<float>(), out.as<float>(), dim, bench.stream());
      };
      const auto t = bench.measure(launch, useful);
      bench.fill(out.as<float>(), n, seed_poison);
      launch();
      ExpectSpec spec;
      spec.seed_in = seed;
      spec.seed_poison = seed_poison;
      if (k < 0) {
        spec.mode = ExpectMode::kWindow;
        spec.hi = n;
      } else {
        spec.mode = ExpectMode::kTranspose;
        spec.n = dim;
      }
      const auto spot = bench.check(out.as<float>(), n, spec, id() + " " + name);
      json row = pattern_row(t, useful, peak);
      row["kernel"] = name;
      if (k < 0) {
        const analysis::WarpAccess row_access{4, 1, 0, 0, 32};
        row["model"] = {{"read_sectors_per_warp", analysis::sectors_per_request(row_access)},
                        {"write_sectors_per_warp", analysis::sectors_per_request(row_access)},
                        {"request_efficiency", 1.0},
                        {"dram_efficiency_32b", 1.0},
                        {"shared_store_ways", 0},
                        {"shared_load_ways", 0}};
      } else {
        const auto p = analysis::predict_transpose(static_cast<analysis::TransposeKind>(k), dim);
        row["model"] = {{"read_sectors_per_warp", p.read_sectors_per_warp},
                        {"write_sectors_per_warp", p.write_sectors_per_warp},
                        {"request_efficiency", p.request_efficiency},
                        {"dram_efficiency_32b", p.stream_efficiency},
                        {"shared_store_ways", p.shared_store_ways},
                        {"shared_load_ways", p.shared_load_ways},
                        {"tile_pitch_words", p.tile_pitch_words}};
      }
      row["verified"] = true;
      row["host_spot_checked_elements"] = spot;
      rows.push_back(row);
    }
    note_protocol(r);
    r.parameters = common_parameters(info, axis_values(o));
    r.parameters["matrix_n"] = dim;
    r.parameters["matrix_bytes"] = n * 4;
    r.parameters["block"] = "32 x 8 threads per 32 x 32 tile (4 elements per thread)";
    r.parameters["convention"] =
        "useful bytes = n x n x 4 read + n x n x 4 written. " + kUsefulConvention;
    r.samples = {{"rows", rows}};
    Curve c = transpose_table(rows, peak);
    c.hints = table_hints("transpose kernels");
    r.curves.push_back(c);
  }
  int samples_version() const override { return TransposeSamples::kVersion; }
  void analyze(ExperimentResult& r) const override {
    const double peak = r.parameters.value("peak_gb_s", 0.0);
    const auto rows = samples_as<TransposeSamples>(r).rows;
    double copy = 0;
    for (const auto& row : rows)
      if (row.kernel == "copy") copy = row.useful_gb_s.median;
    for (const auto& row : rows) {
      const std::string& k = row.kernel;
      const auto& md = row.model;
      auto f = bandwidth_finding(
          "transpose." + k + "_bandwidth", row.useful_gb_s, peak,
          k == "copy" ? std::string("median useful GB/s of a plain copy of the same matrix")
                      : "median useful GB/s; model: " + std::to_string(md.read_sectors_per_warp) +
                            " + " + std::to_string(md.write_sectors_per_warp) +
                            " sectors per warp, shared-memory load " +
                            std::to_string(md.shared_load_ways) + "-way");
      const double med = row.useful_gb_s.median;
      f.extra["percent_of_copy"] = copy > 0 ? med / copy * 100 : 0.0;
      f.extra["predicted_request_efficiency_percent"] = md.request_efficiency * 100;
      f.extra["predicted_dram_efficiency_percent"] = md.dram_efficiency_32b * 100;
      f.extra["shared_load_ways"] = md.shared_load_ways;
      r.findings.push_back(f);
    }
  }

 protected:
  double arrays_allocated() const override { return 2; }
};

}  // namespace

std::unique_ptr<Experiment> make_layout_experiment() {
  return std::make_unique<LayoutExperiment>();
}
std::unique_ptr<Experiment> make_transpose_experiment() {
  return std::make_unique<TransposeExperiment>();
}

}  // namespace gpuprobe::probes::bwhost
