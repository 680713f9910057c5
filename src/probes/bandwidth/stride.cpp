// bandwidth.stride and bandwidth.offset: strided and misaligned float access, useful GB/s beside
// the sectors per warp request the sector model predicts.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

#include "core/error.hpp"
#include "core/samples.hpp"
#include "counters/counters.hpp"
#include "probes/bandwidth/bandwidth_common.hpp"

namespace gpuprobe::probes::bwhost {

Curve stride_table(const json& rows, double peak) {
  // The sector model's line: stride 1's useful GB/s scaled by the DRAM efficiency it predicts.
  std::map<std::string, double> at_stride1;
  for (const auto& row : rows)
    if (row.at("stride_elements") == 1)
      at_stride1[row.at("variant")] = row.at("useful_gb_s").at("median").get<double>() /
                                      row.at("model").at("dram_efficiency_32b").get<double>();
  return pattern_table(
      rows, {"variant", "stride_elements"},
      {"sectors_per_request", "request_efficiency", "dram_efficiency_32b", "dram_efficiency_64b",
       "copy_dram_efficiency_rmw_32b", "copy_dram_efficiency_rmw_64b", "moved_gb_s_dram_model",
       "peak_gb_s", "percent_of_peak_moved_dram_model", "model_useful_gb_s"},
      [&](const json& row) -> std::vector<json> {
        const auto& m = row.at("model");
        const double moved = row.at("useful_gb_s").at("median").get<double>() /
                             m.at("dram_efficiency_32b").get<double>();
        return {m.at("sectors_per_request"),
                m.at("request_efficiency"),
                m.at("dram_efficiency_32b"),
                m.at("dram_efficiency_64b"),
                m.at("copy_dram_efficiency_rmw_32b"),
                m.at("copy_dram_efficiency_rmw_64b"),
                moved,
                peak,
                percent_of(moved, peak),
                at_stride1[row.at("variant")] * m.at("dram_efficiency_32b").get<double>()};
      });
}

Curve offset_table(const json& rows, double peak) {
  return pattern_table(
      rows, {"variant", "offset_elements"},
      {"read_sectors_per_request", "read_lines_per_request", "write_sectors_per_request",
       "write_lines_per_request", "request_efficiency", "peak_gb_s", "percent_of_peak"},
      [&](const json& row) -> std::vector<json> {
        const auto& rm = row.at("read_model");
        const auto& wm = row.at("write_model");
        return {rm.at("sectors_per_request"),
                rm.at("lines_per_request"),
                wm.is_null() ? json(0) : wm.at("sectors_per_request"),
                wm.is_null() ? json(0) : wm.at("lines_per_request"),
                row.at("request_efficiency"),
                peak,
                row.at("useful_gb_s").at("percent_of_peak_median")};
      });
}

namespace {

using units::kKiB;
using units::kMiB;

/// --counters on a read row: global load sectors per warp request against the sector model's
/// prediction for a warp's 32 `access` (strided, consecutive) 4-byte loads.
counters::Expectation load_sectors_check(double predicted, const std::string& access) {
  return {"global load sectors per request",
          "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
          "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
          "sectors/request",
          predicted,
          0.05,
          true,
          "sector model: 32-byte sectors a warp's 32 " + access + " 4-byte loads touch"};
}

// ---------------------------------------------------------------------------------------------
// bandwidth.stride

class StrideExperiment : public BandwidthExperiment {
 public:
  std::string id() const override { return "bandwidth.stride"; }
  std::string description() const override {
    return "strided float access (strides 1..32): strided copy and strided read, useful GB/s "
           "beside the sectors per warp request the sector model predicts";
  }
  std::vector<Axis> typed_axes() const override {
    return {int_axis("stride_elements",
                     std::vector<std::int64_t>(kDefaultStrides.begin(), kDefaultStrides.end()),
                     "elements",
                     "thread j accesses element j * stride; stride 1 (the baseline of the "
                     "efficiencies) is always measured; --strides sets it too",
                     1, kMaxStride),
            string_axis("variant", {"copy", "read"},
                        "copy: dst[j*s] = src[j*s]; read: XOR of src[j*s]"),
            fixed(int_axis("element_bytes", {4}, "B", "float elements")),
            array_bytes_axis("the span each stride walks")};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    Bench bench(ctx);
    const auto& info = bench.info();
    const auto& o = ctx.options;
    const auto axes = axis_values(o);
    const std::uint64_t array = array_bytes(info, axes);
    const std::uint64_t n = array / 4;
    const double peak = dram_peak_gb_s(info);
    const std::vector<int> strides = with_baseline(axes.int32s("stride_elements"), 1);
    const std::uint32_t seed_src = derive_seed(o.seed, 21), seed_poison = derive_seed(o.seed, 22);
    DeviceArray src(array), dst(array);
    bench.fill(src.as<float>(), n, seed_src);
    bench.fill(dst.as<float>(), n, seed_poison);
    bench.sync();
    const auto l = bench.launch(pattern_bps());
    json rows = json::array();
    for (const std::string variant : {"copy", "read"}) {
      if (!axes.contains("variant", variant)) continue;
      const bool copy = variant == "copy";
      for (int s : strides) {
        const std::uint64_t m = n / static_cast<std::uint64_t>(s);
        const auto acc = analysis::strided_bytes(m, s, 0, copy);
        // Two launch shapes: the persistent grid, and a grid that covers the span once (four
        // elements per thread, no loop), as plain strided kernels do; the faster one is the row.
        bw::Launch cover = l;
        {
          const std::uint64_t per_block = static_cast<std::uint64_t>(l.threads) * 4;
          cover.blocks =
              static_cast<unsigned>(std::max<std::uint64_t>((m + per_block - 1) / per_block, 1));
        }
        const bw::Launch* shape = &l;
        auto launch = [&](std::uint32_t* out) {
          if (copy)
            bw::launch_strided_copy(*shape, src.as<float>(), dst.as<float>(), 0, 0, s, m);
          else
            bw::launch_strided_read(*shape, src.as<float>(), 0, s, m, out);
        };
        const auto t_persistent = bench.measure([&] { launch(nullptr); }, acc.useful_bytes);
        shape = &cover;
        const auto t_cover = bench.measure([&] { launch(nullptr); }, acc.useful_bytes);
        const bool cover_wins = t_cover.gb_s.summary.median > t_persistent.gb_s.summary.median;
        shape = cover_wins ? &cover : &l;
        const auto& t = cover_wins ? t_cover : t_persistent;
        const std::string what = id() + " " + variant + " stride " + std::to_string(s);
        const std::uint64_t spot = bench.check_pattern(launch, copy, dst.as<float>(), n, seed_src,
                                                       seed_poison, 0, 0, s, m, what);
        json row = pattern_row(t, acc.useful_bytes, peak);
        row["variant"] = variant;
        row["stride_elements"] = s;
        row["elements"] = m;
        row["grid"] = cover_wins ? "covering" : "persistent";
        row["blocks"] = shape->blocks;
        row["persistent_grid_gb_s_median"] = t_persistent.gb_s.summary.median;
        row["covering_grid_gb_s_median"] = t_cover.gb_s.summary.median;
        row["model"] = model_json({4, s, 0, 0, analysis::kWarpThreads});
        row["moved_bytes_per_launch_request_model"] = acc.moved_bytes_request;
        row["moved_bytes_per_launch_dram_model"] = acc.moved_bytes_stream;
        row["verified"] = true;
        row["host_spot_checked_elements"] = spot;
        rows.push_back(row);
      }
    }
    note_protocol(r);
    r.parameters = common_parameters(info, axes);
    r.parameters["strides"] = strides;
    r.parameters["elements_in_span"] = n;
    r.parameters["blocks_per_sm"] = l.blocks / std::max(1, info.sm_count);
    r.parameters["unroll"] = 4;
    r.parameters["kernels"] = "copy: dst[j*s] = src[j*s]; read: XOR of src[j*s]; j < span/s, float";
    r.parameters["convention"] = kUsefulConvention;
    r.samples = {{"rows", rows}};
    if (counters::requested(ctx)) {  // sectors per load request against the sector model
      counters::Declaration d;
      for (const auto& row : rows) {
        if (row.at("variant") != "read") continue;
        const int s = row.at("stride_elements");
        const std::uint64_t m = n / static_cast<std::uint64_t>(s);
        bw::Launch shape = l;  // the row's launch shape (persistent or covering grid)
        shape.blocks = row.at("blocks").get<unsigned>();
        d.probes.push_back(
            {"read, stride " + std::to_string(s),
             {{"stride_elements", s}},
             [&bench, &src, shape, s, m] {
               bw::launch_strided_read(shape, src.as<float>(), 0, s, m, nullptr);
               bench.sync();
             },
             {load_sectors_check(row.at("model").at("sectors_per_request").get<double>(),
                                 "strided")}});
      }
      r.samples["counters"] = counters::collect(ctx, d);
    }
    Curve c = stride_table(rows, peak);
    c.hints = chart_hints("bandwidth.stride: useful GB/s against stride, with the sector model",
                          "stride_elements", "elements", "useful_gb_s_median", "GB/s", true)
                  .by({"variant"})
                  .with_model({"model_useful_gb_s"});
    r.curves.push_back(c);
    r.statistics = {{"rows_measured", rows.size()}};
  }
  int samples_version() const override { return StrideSamples::kVersion; }
  void analyze(ExperimentResult& r) const override {
    counters::cross_check(r);
    const double peak = r.parameters.value("peak_gb_s", 0.0);
    const auto rows = samples_as<StrideSamples>(r).rows;
    std::map<std::string, double> base;
    for (const auto& row : rows)
      if (row.stride_elements == 1) base[row.variant] = row.useful_gb_s.median;
    for (const auto& row : rows) {
      const int s = row.stride_elements;
      const std::string& variant = row.variant;
      const auto& st = row.useful_gb_s;
      const double useful = st.median;
      const auto& m = row.model;
      if (s == 1) {
        auto f = bandwidth_finding("dram.strided_" + variant + ".s1_bandwidth", st, peak,
                                   "median useful GB/s of the unit-stride float " + variant +
                                       " (the baseline of the stride efficiencies)");
        r.findings.push_back(f);
        continue;
      }
      const double b = base.count(variant) ? base[variant] : 0;
      const double measured = b > 0 ? useful / b : 0;
      auto f = efficiency_finding(
          "dram.strided_" + variant + ".s" + std::to_string(s) + "_efficiency", measured,
          m.request_efficiency, m.dram_efficiency_32b, st,
          "useful GB/s at stride " + std::to_string(s) +
              " / useful GB/s at stride 1; the sector "
              "model predicts " +
              std::to_string(m.sectors_per_request) + " sectors per warp request");
      f.extra["stride_elements"] = s;
      f.extra["useful_gb_s"] = useful;
      f.extra["sectors_per_request"] = m.sectors_per_request;
      f.extra["predicted_dram_efficiency_64b_percent"] = m.dram_efficiency_64b * 100;
      const auto& rmw32 = m.copy_dram_efficiency_rmw_32b;
      const auto& rmw64 = m.copy_dram_efficiency_rmw_64b;
      if (variant == "copy" && rmw32) {
        f.extra["predicted_copy_efficiency_rmw_32b_percent"] = *rmw32 * 100;
        f.extra["predicted_copy_efficiency_rmw_64b_percent"] = rmw64.value() * 100;
        f.extra["moved_gb_s_copy_rmw_32b_model"] = useful / *rmw32;
      }
      // Which prediction the measurement sits closest to (relative distance).
      std::string closest;
      double distance = 0;
      const std::pair<const char*, std::optional<double>> predictions[] = {
          {"dram_efficiency_32b", m.dram_efficiency_32b},
          {"dram_efficiency_64b", m.dram_efficiency_64b},
          {"copy_dram_efficiency_rmw_32b", rmw32},
          {"copy_dram_efficiency_rmw_64b", rmw64}};
      for (const auto& [key, predicted] : predictions) {
        if (!predicted || (variant != "copy" && std::string(key).rfind("copy", 0) == 0)) continue;
        const double d = std::fabs(measured - *predicted) / *predicted;
        if (closest.empty() || d < distance) {
          closest = key;
          distance = d;
        }
      }
      if (!closest.empty()) {
        f.extra["closest_model"] = closest;
        f.extra["closest_model_relative_error"] = distance;
      }
      f.extra["moved_gb_s_dram_model"] = useful / m.dram_efficiency_32b;
      f.extra["peak_gb_s"] = peak;
      f.extra["percent_of_peak_moved_dram_model"] =
          percent_of(useful / m.dram_efficiency_32b, peak);
      r.findings.push_back(f);
    }
  }

 protected:
  double arrays_allocated() const override { return 2; }
};

// ---------------------------------------------------------------------------------------------
// bandwidth.offset

class OffsetExperiment : public BandwidthExperiment {
 public:
  std::string id() const override { return "bandwidth.offset"; }
  std::string description() const override {
    return "misaligned float copy (start offset 0..32 elements from a 256-B aligned base), plus "
           "copies misaligned on one side only and a misaligned read: useful GB/s beside the "
           "sectors and lines per warp request the model predicts";
  }
  std::vector<Axis> typed_axes() const override {
    std::vector<std::int64_t> offsets;
    for (int k = 0; k <= kDefaultMaxOffset; ++k) offsets.push_back(k);
    return {
        int_axis("offset_elements", offsets, "elements",
                 "start offset of the copy variant from a 256-B aligned base; 0 (the "
                 "baseline) is always measured; --offsets sets it and diagnostic_offset_elements",
                 0, kMaxOffset),
        int_axis("diagnostic_offset_elements", {0, 1, 4, 8, 12, 16, 24, 31, 32}, "elements",
                 "start offset of the other variants (misaligned on one side, read); 0 is "
                 "always measured",
                 0, kMaxOffset),
        string_axis("variant", {"copy", "copy_src_misaligned", "copy_dst_misaligned", "read"},
                    "copy: both sides at the offset; copy_src_misaligned / "
                    "copy_dst_misaligned: one side only; read: XOR of src[off + j]"),
        fixed(int_axis("element_bytes", {4}, "B", "float elements")),
        array_bytes_axis("each of the two arrays")};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    Bench bench(ctx);
    const auto& info = bench.info();
    const auto& o = ctx.options;
    const auto axes = axis_values(o);
    const std::uint64_t array = array_bytes(info, axes);
    const std::uint64_t n = array / 4;
    const std::uint64_t m = n - kMaxOffset;  // the same element count at every offset
    const double peak = dram_peak_gb_s(info);
    const std::vector<int> offsets = with_baseline(axes.int32s("offset_elements"), 0);
    const std::vector<int> diagnostic = with_baseline(axes.int32s("diagnostic_offset_elements"), 0);
    const std::uint32_t seed_src = derive_seed(o.seed, 31), seed_poison = derive_seed(o.seed, 32);
    DeviceArray src(array), dst(array);
    bench.fill(src.as<float>(), n, seed_src);
    bench.sync();
    const auto l = bench.launch(pattern_bps());
    json rows = json::array();
    const std::vector<std::string> variants = {"copy", "copy_src_misaligned", "copy_dst_misaligned",
                                               "read"};
    for (const auto& variant : variants) {
      if (!axes.contains("variant", variant)) continue;
      const bool copy = variant != "read";
      for (int off : variant == "copy" ? offsets : diagnostic) {
        const std::uint64_t src_lo = variant == "copy_dst_misaligned" ? 0 : off;
        const std::uint64_t dst_lo = variant == "copy_src_misaligned" ? 0 : off;
        const double useful = static_cast<double>(m) * 4.0 * (copy ? 2.0 : 1.0);
        auto launch = [&](std::uint32_t* out) {
          if (copy)
            bw::launch_strided_copy(l, src.as<float>(), dst.as<float>(), src_lo, dst_lo, 1, m);
          else
            bw::launch_strided_read(l, src.as<float>(), src_lo, 1, m, out);
        };
        const auto t = bench.measure([&] { launch(nullptr); }, useful);
        const std::string what = id() + " " + variant + " offset " + std::to_string(off);
        const std::uint64_t spot = bench.check_pattern(launch, copy, dst.as<float>(), n, seed_src,
                                                       seed_poison, src_lo, dst_lo, 1, m, what);
        const analysis::WarpAccess rd{4, 1, static_cast<std::int64_t>(src_lo), 0,
                                      analysis::kWarpThreads};
        const analysis::WarpAccess wr{4, 1, static_cast<std::int64_t>(dst_lo), 0,
                                      analysis::kWarpThreads};
        const std::uint64_t sectors =
            analysis::sectors_per_request(rd) + (copy ? analysis::sectors_per_request(wr) : 0);
        json row = pattern_row(t, useful, peak);
        row["variant"] = variant;
        row["offset_elements"] = off;
        row["src_offset_elements"] = src_lo;
        row["dst_offset_elements"] = copy ? json(dst_lo) : json(nullptr);
        row["elements"] = m;
        row["read_model"] = model_json(rd);
        row["write_model"] = copy ? model_json(wr) : json(nullptr);
        row["sectors_per_warp"] = sectors;
        row["request_efficiency"] = (copy ? 256.0 : 128.0) / static_cast<double>(sectors * 32);
        row["verified"] = true;
        row["host_spot_checked_elements"] = spot;
        rows.push_back(row);
      }
    }
    note_protocol(r);
    r.parameters = common_parameters(info, axes);
    r.parameters["offsets"] = offsets;
    r.parameters["diagnostic_offsets"] = diagnostic;
    r.parameters["elements"] = m;
    r.parameters["kernels"] =
        "copy: dst[off + j] = src[off + j]; copy_src_misaligned: dst[j] = src[off + j]; "
        "copy_dst_misaligned: dst[off + j] = src[j]; read: XOR of src[off + j]; j < n - 64, float";
    r.parameters["convention"] = kUsefulConvention;
    r.samples = {{"rows", rows}};
    if (counters::requested(ctx)) {  // sectors per load request against the sector model
      counters::Declaration d;
      for (const auto& row : rows) {
        if (row.at("variant") != "read") continue;
        const std::uint64_t off = row.at("src_offset_elements");
        d.probes.push_back(
            {"read, offset " + std::to_string(off),
             {{"offset_elements", off}},
             [&bench, &src, l, off, m] {
               bw::launch_strided_read(l, src.as<float>(), off, 1, m, nullptr);
               bench.sync();
             },
             {load_sectors_check(row.at("read_model").at("sectors_per_request").get<double>(),
                                 "consecutive")}});
      }
      r.samples["counters"] = counters::collect(ctx, d);
    }
    Curve c = offset_table(rows, peak);
    c.hints = chart_hints("bandwidth.offset: useful GB/s against start offset", "offset_elements",
                          "elements", "useful_gb_s_median", "GB/s")
                  .by({"variant"});
    r.curves.push_back(c);
    r.statistics = {{"rows_measured", rows.size()}};
  }
  int samples_version() const override { return OffsetSamples::kVersion; }
  void analyze(ExperimentResult& r) const override {
    counters::cross_check(r);
    const double peak = r.parameters.value("peak_gb_s", 0.0);
    const auto all = samples_as<OffsetSamples>(r).rows;
    std::map<std::string, std::vector<const OffsetRow*>> by;
    for (const auto& row : all) by[row.variant].push_back(&row);
    for (const auto& [variant, rows] : by) {
      const OffsetRow* aligned = nullptr;
      for (const auto* row : rows)
        if (row->offset_elements == 0) aligned = row;
      if (!aligned) continue;
      const double base = aligned->useful_gb_s.median;
      const std::string prefix = "dram.offset_" + variant;
      r.findings.push_back(bandwidth_finding(prefix + ".aligned_bandwidth", aligned->useful_gb_s,
                                             peak,
                                             "median useful GB/s at offset 0 (" + variant + ")"));
      if (!(base > 0)) continue;
      // Offsets that break 32-B sector alignment, and offsets that keep sectors whole but split
      // every warp's 128-B request over two lines.
      struct Group {
        std::string name, what;
        std::function<bool(int)> in;
      };
      const std::vector<Group> groups = {
          {"sector_misaligned",
           "offsets that are not a multiple of 8 floats (5 sectors, 2 lines per request)",
           [](int off) { return off % 8 != 0; }},
          {"line_misaligned",
           "offsets that are a multiple of 8 but not of 32 floats (4 sectors, 2 lines per request)",
           [](int off) { return off % 8 == 0 && off % 32 != 0; }}};
      const OffsetRow* worst = nullptr;
      for (const auto& g : groups) {
        std::vector<double> eff;
        double predicted = 0;
        const OffsetRow* example = nullptr;
        for (const auto* row : rows) {
          if (!g.in(row->offset_elements)) continue;
          const double med = row->useful_gb_s.median;
          eff.push_back(med / base);
          predicted = row->request_efficiency;
          example = row;
          if (!worst || med < worst->useful_gb_s.median) worst = row;
        }
        if (eff.empty()) continue;
        const double mean =
            std::accumulate(eff.begin(), eff.end(), 0.0) / static_cast<double>(eff.size());
        auto f = efficiency_finding(prefix + "." + g.name + "_efficiency", mean, predicted, 1.0,
                                    example->useful_gb_s,
                                    "mean useful GB/s over " + g.what +
                                        " / offset 0; the sector "
                                        "model predicts the request efficiency, and 100% at DRAM "
                                        "(neighbouring warps use the extra sector)");
        f.extra["offsets_averaged"] = eff.size();
        f.extra["read_lines_per_request"] = example->read_lines_per_request;
        r.findings.push_back(f);
      }
      if (worst) {
        auto f = efficiency_finding(prefix + ".worst_efficiency", worst->useful_gb_s.median / base,
                                    worst->request_efficiency, 1.0, worst->useful_gb_s,
                                    "slowest misaligned offset / offset 0");
        f.extra["offset_elements"] = worst->offset_elements;
        f.extra["useful_gb_s"] = worst->useful_gb_s.median;
        f.extra["peak_gb_s"] = peak;
        r.findings.push_back(f);
      }
    }
  }

 protected:
  double arrays_allocated() const override { return 2; }
};

}  // namespace

std::unique_ptr<Experiment> make_stride_experiment() {
  return std::make_unique<StrideExperiment>();
}
std::unique_ptr<Experiment> make_offset_experiment() {
  return std::make_unique<OffsetExperiment>();
}

}  // namespace gpuprobe::probes::bwhost
