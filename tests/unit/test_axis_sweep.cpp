// The axis-product runner: a plain sweep's body is called once per point of the product of its
// non-fixed axes (after --axis), in the declared order; a search is not expanded; `list` says
// which each experiment is.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "core/axis.hpp"
#include "core/experiment.hpp"
#include "device/model_device.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;

std::vector<Axis> toy_axes() {
  return {string_axis("op", {"ffma", "dfma"}, "instruction", {"ffma", "dfma", "imad"}),
          fixed(int_axis("size", {4096}, "B", "chosen by the experiment")),
          int_axis("stride", {1, 2, 4}, "words", "lane stride", 1, 32)};
}

TEST(AxisProduct, FirstDeclaredAxisOutermostFixedAxesLeftOut) {
  const auto v = resolve_axes("toy", toy_axes(), {});
  EXPECT_EQ(v.product_size(), 6u);
  EXPECT_EQ(v.product_text(), "op 2 x stride 3");
  std::vector<json> seen;
  for (const auto& p : v.product()) seen.push_back(p.to_json());
  const std::vector<json> want = {{{"op", "ffma"}, {"stride", 1}}, {{"op", "ffma"}, {"stride", 2}},
                                  {{"op", "ffma"}, {"stride", 4}}, {{"op", "dfma"}, {"stride", 1}},
                                  {{"op", "dfma"}, {"stride", 2}}, {{"op", "dfma"}, {"stride", 4}}};
  EXPECT_EQ(seen, want);
  EXPECT_THROW(v.product().front().at("size"), std::logic_error);  // fixed: not a point's
}

TEST(AxisProduct, OverridesSetTheValuesAndTheirOrder) {
  const auto v = resolve_axes(
      "toy", toy_axes(),
      {parse_axis_override("toy.stride=8,3"), parse_axis_override("toy.op=imad,ffma,imad")});
  const auto points = v.product();
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].string("op"), "imad");
  EXPECT_EQ(points[0].integer("stride"), 8);
  EXPECT_EQ(points[1].int32("stride"), 3);
  EXPECT_EQ(points[3].string("op"), "ffma");
  EXPECT_EQ(points[3].integer("stride"), 3);
}

/// A sweep that records the points it was given, and an experiment that is not one.
struct Calls {
  std::vector<json> points;
  int begins = 0, finishes = 0, runs = 0;
};

class ToySweep : public Experiment {
 public:
  explicit ToySweep(Calls& calls, bool sweep) : calls_(calls), sweep_(sweep) {}
  std::string id() const override { return "toy"; }
  std::string description() const override { return "toy"; }
  std::vector<Axis> typed_axes() const override { return toy_axes(); }
  bool is_sweep() const override { return sweep_; }
  std::unique_ptr<Sweep> begin_sweep(Context&, ExperimentResult&) const override {
    struct S : Sweep {
      explicit S(Calls& c) : c(c) {}
      void run_point(const AxisPoint& p) override { c.points.push_back(p.to_json()); }
      void finish(ExperimentResult& r) override {
        ++c.finishes;
        r.samples = {{"points", c.points}};
      }
      Calls& c;
    };
    ++calls_.begins;
    return std::make_unique<S>(calls_);
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    if (sweep_) return Experiment::run(ctx, r);
    ++calls_.runs;  // a search: it chooses its own points
  }
  void analyze(ExperimentResult&) const override {}

 private:
  Calls& calls_;
  bool sweep_;
};

TEST(AxisProduct, TheRunnerCallsASweepOncePerPointAndASearchOnce) {
  device::ModelDevice dev(device::builtin_model_config("tiny"));
  RunOptions options;
  options.axis_overrides = {parse_axis_override("toy.stride=2,16,1")};
  FindingBoard board;
  Context ctx{dev, options, board};
  for (bool sweep : {true, false}) {
    Calls calls;
    ToySweep e(calls, sweep);
    ExperimentResult r;
    run_experiment(e, ctx, r);
    if (sweep) {
      EXPECT_EQ(calls.begins, 1);
      EXPECT_EQ(calls.finishes, 1);
      ASSERT_EQ(calls.points.size(), 6u);  // op 2 x stride 3
      EXPECT_EQ(calls.points[1], json({{"op", "ffma"}, {"stride", 16}}));
      EXPECT_EQ(calls.points[5], json({{"op", "dfma"}, {"stride", 1}}));
      EXPECT_EQ(r.samples.at("points").size(), 6u);
      EXPECT_EQ(calls.runs, 0);
    } else {
      EXPECT_EQ(calls.begins, 0);
      EXPECT_EQ(calls.runs, 1);
      EXPECT_TRUE(calls.points.empty());
    }
  }
}

json run_on_model(const std::vector<std::string>& axes, const std::string& id) {
  const auto dir = test_cli::temp_dir("axis_sweep");
  std::vector<std::string> args = {"--device", "model:h200", "--out", dir.string()};
  for (const auto& a : axes) args.insert(args.end(), {"--axis", a});
  args.insert(args.end(), {"run", id});
  const auto o = test_cli::gp(args);
  EXPECT_EQ(o.code, 0) << o.err;
  std::ifstream in(dir / "result.json");
  const auto r = json::parse(in);
  std::filesystem::remove_all(dir);
  return r.at("experiments").at(0);
}

TEST(AxisProduct, AnOverriddenSweepRunsExactlyItsProductInOrder) {
  const auto e =
      run_on_model({"cache.prefetch.stride_bytes=4096,128,1024", "cache.prefetch.level=l2,dram"},
                   "cache.prefetch");
  ASSERT_EQ(e.at("status"), "passed") << e.dump();
  const auto& rows = e.at("samples").at("strides");
  ASSERT_EQ(rows.size(), 6u);  // level 2 x stride_bytes 3
  const std::vector<std::pair<std::string, int>> want = {
      {"l2", 4096}, {"l2", 128}, {"l2", 1024}, {"dram", 4096}, {"dram", 128}, {"dram", 1024}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].at("level"), want[i].first) << i;
    EXPECT_EQ(rows[i].at("stride_bytes"), want[i].second) << i;
  }
  EXPECT_EQ(e.at("parameters").at("axes").at("stride_bytes"), json::array({4096, 128, 1024}));
}

TEST(AxisProduct, TheBuiltinSweepsAndSearchesSayWhichTheyAre) {
  // latency.carveout takes --axis for its carveouts but searches the working set itself: a
  // search, run() once (see TheRunnerCallsASweepOncePerPointAndASearchOnce).
  const auto& reg = Registry::builtin();
  EXPECT_FALSE(reg.find("latency.carveout")->is_sweep());
  EXPECT_FALSE(reg.find("latency.sweep")->is_sweep());
  for (const char* id : {"compute.throughput", "compute.latency", "cache.prefetch"})
    EXPECT_TRUE(reg.find(id)->is_sweep()) << id;
}

TEST(AxisProduct, ListSaysSweepOrSearch) {
  const auto o = test_cli::gp({"list"});
  ASSERT_EQ(o.code, 0);
  EXPECT_NE(o.out.find("    runs: a sweep over its axes, 256 points (op 4 x warps_per_sm 4 x "
                       "accumulators 16), each measured on its own"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("    runs: a sweep over its axes, 20 points (level 2 x stride_bytes 10)"),
            std::string::npos);
  const std::string text = "\n" + o.out;  // latency.sweep's line is the first
  const auto sweep_line = text.find("\nlatency.sweep ");
  ASSERT_NE(sweep_line, std::string::npos);
  EXPECT_EQ(text.find("    runs: a search: it chooses its points at run time", sweep_line),
            text.find("\n", sweep_line + 1) + 1)
      << o.out;
  // Every experiment says how it runs, once.
  std::size_t runs = 0;
  for (auto at = o.out.find("    runs: "); at != std::string::npos;
       at = o.out.find("    runs: ", at + 1))
    ++runs;
  EXPECT_EQ(runs, Registry::builtin().all().size());
}

}  // namespace
}  // namespace gpuprobe
