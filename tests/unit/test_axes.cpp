// Typed axes: parsing and resolving --axis, the declarations of the builtin experiments, and
// the result's parameters["axes"].
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/app.hpp"
#include "cli/option_axes.hpp"
#include "cli_runner.hpp"
#include "core/axis.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;

std::vector<Axis> sample_axes() {
  Axis fixed_axis = fixed(int_axis("size", {4096}, "B", "chosen by the experiment"));
  return {int_axis("stride", {1, 2, 4}, "words", "lane stride", 1, 32),
          string_axis("op", {"ffma", "dfma"}, "instruction", {"ffma", "dfma", "imad"}),
          bool_axis("multicast", {false, true}, "TMA multicast"), fixed_axis};
}

std::vector<AxisOverride> overrides(std::initializer_list<const char*> texts) {
  std::vector<AxisOverride> v;
  for (const char* t : texts) v.push_back(parse_axis_override(t));
  return v;
}

TEST(Axes, ParseOverride) {
  const auto o = parse_axis_override("smem.bank_conflicts.stride_words=1,2,32");
  EXPECT_EQ(o.experiment, "smem.bank_conflicts");
  EXPECT_EQ(o.axis, "stride_words");
  EXPECT_EQ(o.values, (std::vector<std::string>{"1", "2", "32"}));
  for (const char* bad : {"stride=1", "x.stride", "x.=1", ".a=1", "x.a=", "x.a=1,,2"})
    EXPECT_THROW(parse_axis_override(bad), UsageError) << bad;
}

TEST(Axes, DefaultsWithoutOverrides) {
  const auto v = resolve_axes("e", sample_axes(), overrides({"other.stride=3"}));
  EXPECT_EQ(v.ints("stride"), (std::vector<std::int64_t>{1, 2, 4}));
  EXPECT_EQ(v.strings("op"), (std::vector<std::string>{"ffma", "dfma"}));
  EXPECT_EQ(v.bools("multicast"), (std::vector<bool>{false, true}));
  EXPECT_FALSE(v.overridden("stride"));
  EXPECT_TRUE(v.contains("op", "dfma"));
  EXPECT_FALSE(v.contains("op", "imad"));
  EXPECT_EQ(v.to_json().at("size"), json::array({4096}));
}

TEST(Axes, OverridesAreTypedAndChecked) {
  const auto v = resolve_axes("e", sample_axes(),
                              overrides({"e.stride=32,8,8", "e.op=imad", "e.multicast=true"}));
  EXPECT_EQ(v.ints("stride"), (std::vector<std::int64_t>{32, 8}));  // order kept, duplicate gone
  EXPECT_TRUE(v.overridden("stride"));
  EXPECT_EQ(v.strings("op"), (std::vector<std::string>{"imad"}));
  EXPECT_EQ(v.bools("multicast"), (std::vector<bool>{true}));
  for (const char* bad : {"e.stride=33", "e.stride=0", "e.stride=1.5", "e.stride=x", "e.op=hfma2",
                          "e.multicast=maybe", "e.nope=1", "e.size=8192"})
    EXPECT_THROW(resolve_axes("e", sample_axes(), overrides({bad})), UsageError) << bad;
}

TEST(Axes, IntAxisWithAllowedValues) {
  Axis a = int_axis("warps", {8, 16}, "warps", "", 8, 64);
  a.allowed = {8, 16, 24};
  EXPECT_EQ(resolve_axes("e", {a}, overrides({"e.warps=24"})).ints("warps"),
            (std::vector<std::int64_t>{24}));
  EXPECT_THROW(resolve_axes("e", {a}, overrides({"e.warps=20"})), UsageError);
}

TEST(Axes, JsonAndListLine) {
  const auto j = to_json(sample_axes()[0]);
  EXPECT_EQ(j.at("type"), "int");
  EXPECT_EQ(j.at("values"), json::array({1, 2, 4}));
  EXPECT_EQ(j.at("unit"), "words");
  EXPECT_EQ(describe(sample_axes()[0]), "stride (int, words) = 1,2,4: lane stride");
  EXPECT_NE(describe(sample_axes()[3]).find("[fixed]"), std::string::npos);
}

// Every experiment declares typed axes, its JSON axes come from them, and its defaults resolve
// (a declaration whose defaults break its own rules fails here).
TEST(Axes, BuiltinExperimentsDeclareTypedAxes) {
  for (const auto& e : Registry::builtin().all()) {
    const auto axes = e->typed_axes();
    EXPECT_FALSE(axes.empty()) << e->id();
    EXPECT_EQ(e->axes().size(), axes.size()) << e->id();
    for (const auto& a : axes) {
      EXPECT_EQ(a.name.find('.'), std::string::npos) << e->id() << "." << a.name;
      EXPECT_EQ(e->axes().at(a.name), to_json(a)) << e->id();
      if (!a.overridable || a.values.empty()) continue;
      std::string text = e->id() + "." + a.name + "=";
      for (std::size_t i = 0; i < a.values.size(); ++i)
        text += (i ? "," : "") +
                (a.values[i].is_string() ? a.values[i].get<std::string>() : a.values[i].dump());
      EXPECT_NO_THROW(check_axis_overrides(Registry::builtin(), overrides({text.c_str()}))) << text;
    }
  }
}

TEST(Axes, CheckAgainstTheRegistry) {
  EXPECT_NO_THROW(check_axis_overrides(Registry::builtin(),
                                       overrides({"compute.throughput.accumulators=1,16"})));
  try {
    check_axis_overrides(Registry::builtin(), overrides({"compute.throughput.acumulators=1"}));
    FAIL() << "unknown axis accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("accumulators"), std::string::npos) << e.what();
  }
  try {
    check_axis_overrides(Registry::builtin(), overrides({"compute.thruput.accumulators=1"}));
    FAIL() << "unknown experiment accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("compute.throughput"), std::string::npos) << e.what();
  }
  EXPECT_THROW(
      check_axis_overrides(Registry::builtin(), overrides({"compute.throughput.accumulators=17"})),
      UsageError);
}

// The family options are aliases of axes: --strides, --offsets, --word-sizes, --carveouts and
// --array-size become overrides of every experiment's axis they feed; an --axis given after them
// wins; bad values are refused.
std::vector<std::string> targets(const std::vector<AxisOverride>& v, const std::string& option) {
  std::vector<std::string> out;
  for (const auto& o : v)
    if (o.option == option) out.push_back(o.experiment + "." + o.axis);
  return out;
}

TEST(Axes, FamilyOptionsAreAliasesOfAxes) {
  cli::FamilyOptions f;
  f.strides = {5, 7};
  f.offsets = {3};
  f.word_sizes = {8};
  f.carveouts = {0, 50};
  f.array_bytes = 1 << 26;
  const auto v = cli::family_overrides(Registry::builtin(), f);
  EXPECT_EQ(targets(v, "--strides"),
            (std::vector<std::string>{"smem.bank_conflicts.stride_words",
                                      "bandwidth.stride.stride_elements"}));
  EXPECT_EQ(targets(v, "--offsets"),
            (std::vector<std::string>{"bandwidth.offset.offset_elements",
                                      "bandwidth.offset.diagnostic_offset_elements"}));
  EXPECT_EQ(targets(v, "--carveouts"),
            (std::vector<std::string>{"latency.carveout.carveout_percent"}));
  const auto words = targets(v, "--word-sizes");
  for (const char* t :
       {"bandwidth.read.width_bytes", "bandwidth.write.width_bytes", "bandwidth.copy.width_bytes",
        "smem.bank_conflicts.word_bytes", "smem.bandwidth.word_bytes"})
    EXPECT_NE(std::find(words.begin(), words.end(), t), words.end()) << t;
  const auto arrays = targets(v, "--array-size");
  for (const char* t : {"bandwidth.read.array_bytes", "bandwidth.stride.array_bytes",
                        "bandwidth.offset.array_bytes", "bandwidth.transpose.array_bytes"})
    EXPECT_NE(std::find(arrays.begin(), arrays.end(), t), arrays.end()) << t;
  // Not given: no override.
  EXPECT_TRUE(cli::family_overrides(Registry::builtin(), cli::FamilyOptions{}).empty());
  // The values reach the experiments; a later --axis for the same axis wins.
  const Experiment* stride = Registry::builtin().find("bandwidth.stride");
  ASSERT_NE(stride, nullptr);
  RunOptions o;
  EXPECT_EQ(stride->axis_values(o).int32s("stride_elements"),
            (std::vector<int>{1, 2, 3, 4, 8, 16, 32}));
  o.axis_overrides = v;
  EXPECT_EQ(stride->axis_values(o).int32s("stride_elements"), (std::vector<int>{5, 7}));
  o.axis_overrides.push_back(parse_axis_override("bandwidth.stride.stride_elements=2,64"));
  EXPECT_NO_THROW(check_axis_overrides(Registry::builtin(), o.axis_overrides));
  EXPECT_EQ(stride->axis_values(o).int32s("stride_elements"), (std::vector<int>{2, 64}));
  const Experiment* offset = Registry::builtin().find("bandwidth.offset");
  ASSERT_NE(offset, nullptr);
  EXPECT_EQ(offset->axis_values(o).int32s("diagnostic_offset_elements"), (std::vector<int>{3}));
  // --strides 40 is a bandwidth.stride value: the registry check leaves it to smem when it runs.
  f = {};
  f.strides = {40};
  const auto wide = cli::family_overrides(Registry::builtin(), f);
  EXPECT_NO_THROW(check_axis_overrides(Registry::builtin(), wide));
  RunOptions w;
  w.axis_overrides = wide;
  EXPECT_THROW(Registry::builtin().find("smem.bank_conflicts")->axis_values(w), UsageError);
  EXPECT_THROW(cli::check_family_options(f = cli::FamilyOptions{{65}, {}, {}, {}, 0}), UsageError);
}

TEST(Axes, BandwidthAxesRefuseBadValues) {
  for (const char* bad : {"bandwidth.stride.stride_elements=65", "bandwidth.stride.variant=write",
                          "bandwidth.offset.offset_elements=-1", "bandwidth.read.width_bytes=12",
                          "bandwidth.transpose.kernel=tiled2", "bandwidth.read.unroll=2",
                          "bandwidth.read.array_bytes=0"})
    EXPECT_THROW(check_axis_overrides(Registry::builtin(), overrides({bad})), UsageError) << bad;
  const Experiment* offset = Registry::builtin().find("bandwidth.offset");
  ASSERT_NE(offset, nullptr);
  RunOptions p;
  p.axis_overrides = overrides({"bandwidth.offset.variant=read"});
  const auto v = offset->axis_values(p);
  EXPECT_TRUE(v.contains("variant", "read"));
  EXPECT_FALSE(v.contains("variant", "copy"));
  EXPECT_EQ(v.int32s("diagnostic_offset_elements"),
            (std::vector<int>{0, 1, 4, 8, 12, 16, 24, 31, 32}));
}

int gp(std::vector<std::string> args, std::string* out_text = nullptr) {
  const auto o = test_cli::gp(std::move(args));
  if (out_text) *out_text = o.out + o.err;
  return o.code;
}

TEST(Axes, CliRefusesABadOverrideAndListsAxes) {
  std::string text;
  EXPECT_EQ(gp({"--axis", "smem.bank_conflicts.stride_words=40", "--device", "model:tiny", "run",
                "latency.shared"},
               &text),
            2);
  EXPECT_NE(text.find("stride_words"), std::string::npos) << text;
  EXPECT_EQ(gp({"list"}, &text), 0);
  EXPECT_NE(text.find("--axis compute.throughput.accumulators (int, chains) = 1,2,"),
            std::string::npos)
      << text;
}

TEST(Axes, ListShowsWhatAUserCanChangeAndCountsTheRest) {
  std::string text, all;
  ASSERT_EQ(gp({"list"}, &text), 0);
  ASSERT_EQ(gp({"list", "--all"}, &all), 0);
  // A fixed axis is listed only with --all; without it, counted on one line per experiment.
  EXPECT_EQ(text.find("[fixed]"), std::string::npos) << text;
  EXPECT_NE(all.find("--axis latency.sweep.working_set_bytes (int, B) [fixed]"), std::string::npos);
  EXPECT_NE(text.find("    runs: a search: it chooses its points at run time (adaptively, or "
                      "from earlier findings)\n    (3 settings it chooses itself)\n"),
            std::string::npos)
      << text;
  // What --axis can change is listed either way.
  for (const std::string* t : {&text, &all})
    EXPECT_NE(t->find("--axis link.host.memory (string) = pinned,pageable"), std::string::npos);
  EXPECT_LT(text.size(), all.size());
}

TEST(Axes, ResultParametersCarryTheAxes) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpuprobe_axes_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ASSERT_EQ(gp({"--device", "model:tiny", "--out", dir.string(), "run", "latency.shared"}), 0);
  std::ifstream in(dir / "result.json");
  const auto r = json::parse(in);
  const auto& e = r.at("experiments").at(0);
  EXPECT_EQ(e.at("parameters").at("axes").at("working_set_bytes"),
            json::array({4096, 32768, 98304}));
  EXPECT_EQ(e.at("samples_version"), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpuprobe
