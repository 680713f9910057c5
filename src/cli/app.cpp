#include "cli/app.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

#include "build_info.hpp"
#include "cli/compare_command.hpp"
#include "cli/fleet.hpp"
#include "cli/health_commands.hpp"
#include "cli/help.hpp"
#include "cli/option_axes.hpp"
#include "cli/options_check.hpp"
#include "cli/profiles.hpp"
#include "cli/result_commands.hpp"
#include "core/environment.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/files.hpp"
#include "core/json_input.hpp"
#include "core/progress.hpp"
#include "core/repeatability.hpp"
#include "core/text_input.hpp"
#include "core/units.hpp"
#include "device/device.hpp"
#include "device/model_export.hpp"
#include "report/output_dir.hpp"
#include "report/summary.hpp"
#include "report/writer.hpp"

namespace gpuprobe::cli {
namespace {

using nlohmann::json;

using units::utc_now;

json device_json(const device::DeviceInfo& d) {
  return {{"kind", d.kind},
          {"name", d.name},
          {"ordinal", d.ordinal},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sm_count", d.sm_count},
          {"l2_bytes", d.l2_bytes},
          {"global_memory_bytes", d.global_mem_bytes},
          {"shared_per_sm_bytes", d.shared_per_sm_bytes},
          {"shared_per_block_optin_bytes", d.shared_per_block_optin_bytes},
          {"sm_clock_max_mhz", d.sm_clock_max_mhz},
          {"mem_clock_max_mhz", d.mem_clock_max_mhz},
          {"mem_bus_width_bits", d.mem_bus_width_bits},
          {"dram_bandwidth_theoretical_gb_s", device::dram_peak_gb_s(d)},
          {"uuid", d.uuid},
          {"extra", d.extra}};
}

/// The clocks record of one experiment: readings before and after, the summary of those taken
/// while it ran (`during`), the SM clock drift, and whether any of them shows a throttle.
json clocks_json(const device::ClockReading& before, const device::ClockReading& after,
                 json during) {
  json j = {{"before", device::to_json(before)}, {"after", device::to_json(after)}};
  if (before.valid && after.valid && before.sm_mhz > 0) {
    const double drift = (after.sm_mhz - before.sm_mhz) / before.sm_mhz * 100;
    j["sm_clock_drift_percent"] = drift;
    j["sm_clock_drift_flagged"] = std::fabs(drift) > 2.0;
    const std::uint64_t idle_bit = 0x1;  // gpu_idle is not a throttle
    j["throttled"] = ((before.throttle_reasons | after.throttle_reasons) & ~idle_bit) != 0 ||
                     during.value("throttled", false);
  } else {
    j["note"] = "clocks unknown (NVML not available)";
  }
  j["during"] = std::move(during);
  return j;
}

struct Cli {
  RunOptions options;
  FamilyOptions family;  ///< aliases of axes: become axis_overrides (cli/option_axes.hpp)
  std::string loads_text;
  std::string min_size_text, max_size_text;
  std::string carveouts_text, strides_text, offsets_text, word_sizes_text, seed_text;
  std::string array_text;
  std::vector<std::string> axis_texts;
  std::vector<std::string> ids;
  bool info_json = false;
  bool device_given = false;
  bool quiet = false;     ///< --quiet: no progress line
  bool verbose = false;   ///< --verbose: every finding on the terminal, not only the summary
  bool list_all = false;  ///< list --all: also the settings each experiment chooses itself
  /// Experiments `run` added because a chosen one requires them (Registry::add_required), and
  /// the lines that say so (printed once the input is found valid).
  std::vector<std::string> added_ids, added_lines;
};

std::vector<device::LoadOp> parse_loads(const std::string& text) {
  std::vector<device::LoadOp> ops;
  if (text.empty() || text.find_first_not_of(',') == std::string::npos)
    throw UsageError("--loads is empty; allowed: default, ca, cg, cv, nc, all");
  for (const auto& item : text_input::split_list(text, "--loads")) {
    if (item == "all") {
      for (auto op : device::all_load_ops()) ops.push_back(op);
    } else {
      ops.push_back(device::parse_load_op(item));
    }
  }
  if (ops.empty()) throw UsageError("--loads is empty; allowed: default, ca, cg, cv, nc, all");
  return ops;
}

/// The chosen experiments sorted into those that run and those waived (by the device or by
/// the options), each runnable one validated. A `run` whose every chosen experiment is waived
/// is refused, even where what they require could run: it would measure nothing asked for.
struct Triage {
  std::vector<const Experiment*> runnable;
  std::vector<std::pair<const Experiment*, std::string>> waived;
};
Triage triage(const std::vector<const Experiment*>& chosen, device::Device& dev, const Cli& cli,
              const std::string& command) {
  Triage t;
  for (const auto* e : chosen) {
    auto why = e->waiver(dev.info());
    if (!why) why = e->options_waiver(dev.info(), cli.options);
    if (why) {
      t.waived.emplace_back(e, *why);
      continue;
    }
    e->axis_values(cli.options);  // an option's value outside this experiment's axis: refused
    e->validate(dev, cli.options);
    t.runnable.push_back(e);
  }
  const auto asked = [&](const Experiment* e) {
    return std::find(cli.added_ids.begin(), cli.added_ids.end(), e->id()) == cli.added_ids.end();
  };
  if (!t.waived.empty() && command == "run" &&
      std::none_of(t.runnable.begin(), t.runnable.end(), asked))
    throw UsageError("experiment " + t.waived.front().first->id() +
                     " does not apply here: " + t.waived.front().second);
  return t;
}

/// result.json's header: the tool and its build, the command, the device, its environment,
/// the conventions, the chase kernels and the timer's calibration.
json result_header(device::Device& dev, int argc, const char* const* argv,
                   const std::string& command, const std::string& started) {
  json argv_json = json::array();
  for (int i = 0; i < argc; ++i) argv_json.push_back(argv[i]);
  json header = {
      {"schema_version", kResultSchemaVersion},
      {"tool",
       {{"name", "gpuprobe"},
        {"version", build::kVersion},
        {"git_sha", build::kGitSha},
        {"argv", argv_json},
        {"build",
         {{"cxx_compiler", build::kCxxCompiler},
          {"cuda_compiler", build::kCudaCompiler},
          {"cuda_architectures", build::kCudaArchitectures},
          {"build_type", build::kBuildType},
          {"cuda_flags", build::kCudaFlags}}}}},
      {"command", command},
      {"started_utc", started},
      {"device", device_json(dev.info())},
      {"environment", dev.environment()},
      {"conventions",
       {{"latency",
         "dependent chain, cycles per load (SM clock64); ns = cycles / measured SM clock"},
        {"statistics", "median, min, p5, p95, MAD over repetitions; stopping rule in protocol"}}}};
  const auto timer = dev.calibrate_timer();
  header["kernels"] = dev.chase_kernel_info();
  header["timer"] = {{"clock64_overhead_cycles", timer.clock64_overhead_cycles},
                     {"clock32_overhead_cycles", timer.clock32_overhead_cycles},
                     {"note", "one clock64 read per chase end; amortised over >= 1024 steps"}};
  return header;
}

/// Runs and analyses one experiment, with its clocks and wall time; a CUDA error that leaves
/// the device unusable sets `sticky`, and every later experiment is an error without running.
ExperimentResult run_one(const Experiment& e, device::Device& dev, const Cli& cli,
                         FindingBoard& board, bool& sticky) {
  ExperimentResult r;
  r.id = e.id();
  r.samples_version = e.samples_version();
  r.protocol = to_json(cli.options.protocol);
  r.protocol["timer"] = "clock64 in-kernel (cycles); %globaltimer for the SM clock";
  const auto t0 = std::chrono::steady_clock::now();
  const auto before = dev.read_clocks();
  // Clocks, power and throttle reasons while the experiment runs (every 50 ms, NVML only).
  env::ClockSampler during([&dev] { return dev.read_clocks(); }, 50.0);
  if (sticky) {
    r.status = Status::kError;
    r.reason = "not run: an earlier experiment left the device in an unusable state";
  } else {
    try {
      Context ctx{dev, cli.options, board};
      run_experiment(e, ctx, r);
      if (!e.typed_axes().empty()) r.parameters["axes"] = e.axis_values(cli.options).to_json();
      e.analyze(r);
      for (const auto& f : r.findings) board.add(f);
    } catch (const CudaError& ex) {
      r.status = Status::kError;
      r.reason = ex.what();
      sticky = ex.sticky();
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& ex) {
      r.status = Status::kError;
      r.reason = ex.what();
    }
  }
  progress::end();
  json sampled = during.stop();
  r.clocks = clocks_json(before, dev.read_clocks(), std::move(sampled));
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

int run_experiments(const std::vector<const Experiment*>& chosen, Cli& cli, int argc,
                    const char* const* argv, std::ostream& out, const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  const std::string started = utc_now();
  if (cli.options.out_dir.empty())
    cli.options.out_dir = "gpuprobe-results/" + utc_now("%Y%m%dT%H%M%SZ");
  // Empty, new, or an earlier result (replaced by the writer); not locked by another run.
  report::check_result_folder(cli.options.out_dir);
  auto dev = device::open_device(cli.options.device);
  // Everything that can be wrong with the input is found before anything is written.
  const Triage t = triage(chosen, *dev, cli, command);
  for (const auto& line : cli.added_lines) out << "also running " << line << "\n";
  cli.added_lines.clear();  // said once, also over the runs of `repeat`
  report::ResultWriter writer(cli.options.out_dir,
                              result_header(*dev, argc, argv, command, started));
  out << "gpuprobe " << build::kVersion << " on " << dev->info().name << " -> "
      << cli.options.out_dir << "\n";
  for (const auto& [e, why] : t.waived) {
    ExperimentResult r;
    r.id = e->id();
    r.status = Status::kWaived;
    r.reason = why;
    writer.add(r);
    out << "  " << r.id << ": waived (" << why << ")\n";
  }
  if (!cli.quiet && progress::stderr_is_terminal()) progress::enable(&std::cerr);  // --quiet
  FindingBoard board;
  int errors = 0, position = 0;
  bool sticky = false;
  for (const auto* e : t.runnable) {
    progress::begin(++position, static_cast<int>(t.runnable.size()), e->id());
    const ExperimentResult r = run_one(*e, *dev, cli, board, sticky);
    if (r.status == Status::kError) ++errors;
    writer.add(r);
    out << "  " << r.id << ": " << to_string(r.status);
    if (!r.reason.empty()) out << " (" << r.reason << ")";
    out << ", " << format_number(r.wall_s, 0.01) << " s\n";
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  writer.finish(
      {{"wall_s", wall},
       {"finished_utc", utc_now()},
       {"summary",
        {{"experiments", chosen.size()}, {"errors", errors}, {"waived", t.waived.size()}}}});
  if (cli.verbose) out << "\n" << report::summary_table(writer.result());
  out << "\n" << report::summary_text(report::summary_card(writer.result()));
  out << "\nwall time " << format_number(wall) << " s; results: " << cli.options.out_dir
      << "/result.json, report: " << cli.options.out_dir << "/report.html\n";
  return errors ? 1 : 0;
}

/// `gpuprobe repeat N`: the chosen experiments N times back to back into <out>/run1..runN, then
/// <out>/repeat.json and a table of every finding's run-to-run spread against its stated one.
int run_repeat(int n, const std::vector<const Experiment*>& chosen, Cli& cli, int argc,
               const char* const* argv, std::ostream& out, const std::string& command) {
  if (cli.options.out_dir.empty())
    cli.options.out_dir = "gpuprobe-results/" + utc_now("%Y%m%dT%H%M%SZ") + "-repeat";
  const std::string dir = cli.options.out_dir;
  report::check_writable(dir);
  for (int i = 1; i <= n; ++i)  // every run's folder before the first run writes anything
    report::check_result_folder(dir + "/run" + std::to_string(i));
  std::vector<json> results;
  int worst = 0;
  for (int i = 1; i <= n; ++i) {
    cli.options.out_dir = dir + "/run" + std::to_string(i);
    out << "repeat: run " << i << " of " << n << "\n";
    worst = std::max(worst, run_experiments(chosen, cli, argc, argv, out, command));
    results.push_back(json_input::load_result(cli.options.out_dir + "/result.json"));
  }
  const json t = repeatability::table(results);
  report::write_file_atomically(std::filesystem::path(dir) / "repeat.json", t.dump(2) + "\n");
  out << "\n" << repeatability::format(t) << "repeat: " << dir << "/repeat.json\n";
  return worst;
}

/// The subcommands, and the variables their options and positionals fill. CLI11 keeps the
/// addresses of these variables: one Commands lives, unmoved, for the whole parse.
struct Commands {
  CLI::App* info = nullptr;
  CLI::App* list = nullptr;
  CLI::App* run = nullptr;
  CLI::App* characterize = nullptr;
  CLI::App* analyze = nullptr;
  std::string analyze_path, analyze_format = "table";
  CLI::App* compare = nullptr;
  std::vector<std::string> compare_paths;
  CompareOptions compare_options;
  CLI::App* export_model = nullptr;
  std::string export_in, export_out, export_format = "json";
  CLI::App* replay = nullptr;
  std::string replay_path;
  std::vector<std::string> replay_runs;
  CLI::App* report = nullptr;
  std::string report_path;
  CLI::App* repeat = nullptr;
  int repeat_n = 0;
  std::vector<std::string> repeat_ids;
  CLI::App* summary = nullptr;
  std::string summary_path;
  CLI::App* repeat_table = nullptr;
  std::vector<std::string> table_paths;
  FleetCommands fleet;
  HealthCommands health;
};

/// The options every subcommand shares (before or after it).
void add_global_options(CLI::App& app, Cli& cli) {
  auto& o = cli.options;
  app.option_defaults()->always_capture_default();
  app.add_option("--device,-d", o.device,
                 "GPU to measure: a CUDA ordinal (0), cuda:N, or model:NAME (h200, a100, "
                 "rtx5080, tiny) for the modelled GPU");
  app.add_option("--out,-o", o.out_dir,
                 "directory for result.json, CSVs and report.html (default: "
                 "gpuprobe-results/<UTC time>)");
  app.add_option("--loads", cli.loads_text,
                 "load operators, comma-separated: default, ca, cg, cv, nc, all");
  app.add_option("--min-size", cli.min_size_text, "smallest working set (e.g. 1K)");
  app.add_option("--max-size", cli.max_size_text, "largest working set (default 4 x L2)");
  app.add_option("--node-stride", o.node_stride,
                 "bytes between chase nodes: 128 = one per line, 8 = one per element")
      ->check(CLI::PositiveNumber);
  app.add_option("--carveouts", cli.carveouts_text,
                 "shared-memory carveouts in percent (-1 = driver default): the carveout_percent "
                 "axis");
  app.add_option("--seed", cli.seed_text, "seed of the random chains (0..2^64-1)");
  app.add_option("--array-size", cli.array_text,
                 "bytes per array for the streaming bandwidth kernels (default 16 x L2): the "
                 "array_bytes axis, and link.peer's and hopper.tma's arrays");
  app.add_option("--strides", cli.strides_text,
                 "element strides, comma-separated: the stride_elements and stride_words axes");
  app.add_option("--offsets", cli.offsets_text,
                 "start offsets in elements, comma-separated: the offset_elements and "
                 "diagnostic_offset_elements axes");
  app.add_option("--word-sizes", cli.word_sizes_text,
                 "bytes per access: 4, 8 or 16, comma-separated: the width_bytes and word_bytes "
                 "axes");
  app.add_option("--axis", cli.axis_texts,
                 "override an axis of an experiment: <experiment>.<axis>=v1,v2 (repeatable; "
                 "'gpuprobe list' shows the axes)");
  app.add_option("--min-reps", o.protocol.min_repetitions, "fewest repetitions per measurement")
      ->check(CLI::Range(1, 1000));
  app.add_option("--max-reps", o.protocol.max_repetitions, "most repetitions per measurement")
      ->check(CLI::Range(1, 1000));
  app.add_option("--spread", o.protocol.target_spread,
                 "stop repeating when (p95-p5)/median falls to this")
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag(
      "--counters", o.counters,
      "read hardware counters (CUPTI) over separate untimed launches and cross-check them");
  app.add_flag("--quiet,-q", cli.quiet, "no progress line on stderr");
  app.add_flag("--verbose,-v", cli.verbose,
               "print every finding on the terminal, not only the summary card");
  app.fallthrough();
}

/// The commands that measure: info, list, run, characterize.
void add_measuring_commands(CLI::App& app, Cli& cli, Commands& c) {
  c.info = app.add_subcommand("info", "print the device and its environment (JSON)");
  c.list = app.add_subcommand("list", "list the experiments and what --axis can change in each");
  c.list->add_flag("--all", cli.list_all,
                   "also the settings each experiment chooses itself (fixed axes, recorded in "
                   "result.json but not changeable)");
  c.run = app.add_subcommand(
      "run", "run the experiments whose ids match the globs, and those they cannot run without");
  c.run->add_option("ids", cli.ids, "experiment ids or globs, e.g. 'latency.*'")->required();
  c.characterize =
      app.add_subcommand("characterize", "run every experiment; write result, CSVs and report");
}

/// The commands that read recorded results: analyze, compare, export-model, replay, report.
void add_result_commands(CLI::App& app, Commands& c) {
  c.analyze = app.add_subcommand(
      "analyze", "re-run the analysis on the samples of a recorded result.json (no GPU needed)");
  c.analyze->add_option("result", c.analyze_path, "a result.json written by gpuprobe")->required();
  c.analyze
      ->add_option("--format", c.analyze_format,
                   "table (default: every finding, one per line) or json (the re-analysed result, "
                   "whole, on stdout)")
      ->check(CLI::IsMember({"table", "json"}));
  c.compare = app.add_subcommand(
      "compare",
      "what changed between two recorded results: each finding's difference judged against "
      "both runs' stated noise, most significant first (--out DIR also writes compare.html)");
  c.compare->add_option("results", c.compare_paths, "two result.json files written by gpuprobe")
      ->required()
      ->expected(2);
  c.compare->add_flag("--changed", c.compare_options.changed_only,
                      "only the findings that moved beyond noise or differ");
  c.compare
      ->add_option("--format", c.compare_options.format,
                   "text (default), md (a markdown table), csv or json")
      ->check(CLI::IsMember({"text", "md", "csv", "json"}));
  c.export_model = app.add_subcommand(
      "export-model",
      "write the cache hierarchy a recorded result measured as a model file, to replay it with "
      "--device model:<file.json>");
  c.export_model->add_option("result", c.export_in, "a result.json written by gpuprobe")
      ->required();
  c.export_model->add_option("model", c.export_out, "the model file to write (default: stdout)");
  c.export_model
      ->add_option("--format", c.export_format,
                   "json (a model file) or accelsim (GPGPU-Sim / Accel-Sim -gpgpu_cache lines)")
      ->check(CLI::IsMember({"json", "accelsim"}));
  c.replay = app.add_subcommand(
      "replay",
      "export the model a recorded result measured and replay the result's latency.sweep on it: "
      "measured against replayed latency at every working set, the worst error per region "
      "(into --out, default <result's dir>/replay)");
  c.replay->add_option("result", c.replay_path, "a result.json written by gpuprobe")->required();
  c.replay->add_option("--runs", c.replay_runs,
                       "other results of the same GPU (e.g. repeat's run*/result.json): the "
                       "replay is also judged against the range their sweeps give at the "
                       "working sets they share, and their own spread is reported");
  c.report = app.add_subcommand(
      "report", "write report.html for a recorded result.json (into --out, default beside it)");
  c.report->add_option("result", c.report_path, "a result.json written by gpuprobe")->required();
}

/// repeat, summary, repeat-table, and the fleet's and the health's commands.
void add_repeat_and_other_commands(CLI::App& app, Commands& c) {
  c.repeat = app.add_subcommand(
      "repeat",
      "run characterize (or the experiments given) N times back to back; write repeat.json and a "
      "table of every finding's run-to-run spread against its stated confidence");
  c.repeat->add_option("n", c.repeat_n, "number of runs (at least 2)")
      ->required()
      ->check(CLI::Range(2, 100));
  c.repeat->add_option("ids", c.repeat_ids,
                       "experiment ids or globs (default: all), and those they cannot run "
                       "without");
  c.summary = app.add_subcommand(
      "summary", "print the summary card of a recorded result.json (--verbose: every finding too)");
  c.summary->add_option("result", c.summary_path, "a result.json written by gpuprobe")->required();
  c.repeat_table = app.add_subcommand(
      "repeat-table",
      "the table of `repeat` from recorded results (two or more result.json of the same "
      "experiments); writes <out>/repeat.json when --out is given");
  c.repeat_table->add_option("results", c.table_paths, "result.json files")->required();
  add_fleet_commands(app, c.characterize, c.fleet);
  add_health_commands(app, c.characterize, c.list, c.health);
  app.set_version_flag("--version", version_text(), "print gpuprobe's version and git SHA");
}

/// Parses the command line: -1 to go on, or the exit code of help, version or a parse error.
int parse_command_line(CLI::App& app, int argc, const char* const* argv, std::ostream& out,
                       std::ostream& err) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    out << help_text(app);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return 0;
  } catch (const CLI::CallForAllHelp& e) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    if (msg.find('\n') != std::string::npos) msg = msg.substr(0, msg.find('\n'));
    err << "gpuprobe: error: " << text_input::escape_controls(msg) << " (see gpuprobe --help)\n";
    return 2;
  }
  if (app.get_subcommands().empty()) {
    err << "gpuprobe: error: a subcommand is required, one of: " << subcommand_names(app)
        << " (see gpuprobe --help)\n";
    return 2;
  }
  return -1;
}

/// The options given as text (sizes, lists, the seed, axes) into cli.options, checked together.
void read_option_texts(const CLI::App& app, Cli& cli) {
  auto& o = cli.options;
  if (!cli.loads_text.empty()) o.loads = parse_loads(cli.loads_text);
  if (!cli.min_size_text.empty()) o.min_size = units::parse_size(cli.min_size_text, "--min-size");
  if (!cli.max_size_text.empty()) o.max_size = units::parse_size(cli.max_size_text, "--max-size");
  // Integer lists and the seed: one parser each, the same refusals everywhere.
  auto& f = cli.family;
  for (const auto& [name, text, list] :
       {std::tuple{"--carveouts", &cli.carveouts_text, &f.carveouts},
        std::tuple{"--strides", &cli.strides_text, &f.strides},
        std::tuple{"--offsets", &cli.offsets_text, &f.offsets},
        std::tuple{"--word-sizes", &cli.word_sizes_text, &f.word_sizes}})
    if (app.count(name) > 0) *list = text_input::parse_int_list(*text, name);
  if (app.count("--seed") > 0) o.seed = text_input::parse_seed(cli.seed_text, "--seed");
  if (!cli.array_text.empty()) f.array_bytes = units::parse_size(cli.array_text, "--array-size");
  o.array_bytes = f.array_bytes;
  if (o.protocol.max_repetitions < o.protocol.min_repetitions)
    throw UsageError("--max-reps is smaller than --min-reps");
  OptionsGiven given{app.count("--loads") > 0, app.count("--out") > 0, {}};
  for (const auto& [name, text] :
       {std::pair{"--min-size", &cli.min_size_text}, std::pair{"--max-size", &cli.max_size_text},
        std::pair{"--array-size", &cli.array_text}})
    if (app.count(name) > 0 && text->empty()) given.empty.push_back(name);
  check_common_options(o, given);
  check_family_options(f);
  // The family options first, so that an --axis for the same axis wins.
  o.axis_overrides = family_overrides(Registry::builtin(), f);
  for (const auto& text : cli.axis_texts) o.axis_overrides.push_back(parse_axis_override(text));
  check_axis_overrides(Registry::builtin(), o.axis_overrides);
}

/// One experiment's axes for `list`: how it runs (a sweep over the product of its axes, with
/// the product's size, or an adaptive search), those --axis can change, and the fixed ones (the
/// experiment chooses them itself) counted in one line, or listed with --all. An experiment
/// whose fixed axis has no values chooses its points at run time: a search, said so.
void list_axes(const Experiment& e, bool all, std::ostream& out) {
  std::size_t fixed = 0;
  bool search = false;
  for (const auto& a : e.typed_axes()) {
    if (!a.overridable) {
      ++fixed;
      search = search || a.values.empty();
      if (!all) continue;
    }
    out << "    --axis " << e.id() << "." << describe(a) << "\n";
  }
  if (e.is_sweep()) {
    const auto axes = resolve_axes(e.id(), e.typed_axes(), {});
    const auto n = axes.product_size();
    out << "    runs: a sweep over its axes, " << n << (n == 1 ? " point" : " points") << " ("
        << axes.product_text() << "), each measured on its own\n";
  } else if (search) {
    out << "    runs: a search: it chooses its points at run time (adaptively, or from earlier "
           "findings)\n";
  } else {
    out << "    runs: a procedure of its own (run() visits its points itself)\n";
  }
  if (fixed == 0 || all) return;
  out << "    (" << fixed << (fixed == 1 ? " setting" : " settings") << " it chooses itself)\n";
}

/// `gpuprobe list`: every experiment, what it uses, its axes (and, given --device, its waiver).
int list_command(const Cli& cli, std::ostream& out) {
  const auto& registry = Registry::builtin();
  std::unique_ptr<device::Device> dev;
  if (cli.device_given) dev = device::open_device(cli.options.device);
  std::size_t width = 0;
  for (const auto& e : registry.all()) width = std::max(width, e->id().size());
  for (const auto& e : registry.all()) {
    out << e->id();
    for (std::size_t i = e->id().size(); i < width + 2; ++i) out << ' ';
    out << e->description();
    const auto uses = e->depends_on();
    for (std::size_t i = 0; i < uses.size(); ++i)
      out << (i ? ", " : " [uses findings of ") << uses[i] << (i + 1 == uses.size() ? "]" : "");
    if (dev)
      if (auto why = e->waiver(dev->info())) out << " [waived: " << *why << "]";
    out << "\n";
    list_axes(*e, cli.list_all, out);
  }
  if (!cli.list_all)
    out << "(gpuprobe list --all also shows the settings each experiment chooses itself)\n";
  return 0;
}

/// `gpuprobe info`: the device, its environment and its clocks, as JSON.
int info_command(const RunOptions& o, std::ostream& out) {
  auto dev = device::open_device(o.device);
  json j = {{"device", device_json(dev->info())},
            {"environment", dev->environment()},
            {"clocks", device::to_json(dev->read_clocks())}};
  out << j.dump(2) << "\n";
  return 0;
}

/// `gpuprobe repeat-table`: repeat's table from recorded results (and <out>/repeat.json).
int repeat_table_command(const std::vector<std::string>& paths, const std::string& out_dir,
                         std::ostream& out) {
  if (paths.size() < 2)
    throw UsageError("repeat-table needs two or more result.json files; got " +
                     std::to_string(paths.size()));
  std::vector<json> results;
  for (const auto& p : paths) results.push_back(json_input::load_result(p));
  const json t = repeatability::table(results);
  if (!out_dir.empty()) {
    report::check_writable(out_dir);
    const report::OutputLock lock(out_dir);  // creates the folder
    report::write_file_atomically(std::filesystem::path(out_dir) / "repeat.json", t.dump(2) + "\n");
  }
  out << repeatability::format(t);
  return 0;
}

/// The commands that measure nothing (list, info and those reading recorded results): their
/// exit code, or -1 when none of them was given.
int run_non_measuring_command(Commands& c, Cli& cli, std::ostream& out) {
  if (const int rc = run_health_commands(c.health, cli.options, out); rc >= 0) return rc;
  if (c.list->parsed()) return list_command(cli, out);
  if (c.info->parsed()) return info_command(cli.options, out);
  if (c.analyze->parsed()) return analyze_command(c.analyze_path, c.analyze_format, out);
  if (c.summary->parsed()) return summary_command(c.summary_path, cli.verbose, out);
  if (c.repeat_table->parsed())
    return repeat_table_command(c.table_paths, cli.options.out_dir, out);
  if (c.report->parsed()) return report_command(c.report_path, cli.options.out_dir, out);
  if (c.replay->parsed()) {
    std::string dir = cli.options.out_dir;
    if (dir.empty()) dir = (std::filesystem::path(c.replay_path).parent_path() / "replay").string();
    if (!cli.quiet && progress::stderr_is_terminal()) progress::enable(&std::cerr);
    return replay_command(c.replay_path, dir, out, c.replay_runs);
  }
  if (c.compare->parsed()) {
    c.compare_options.out_dir = cli.options.out_dir;
    return compare_command(c.compare_paths.at(0), c.compare_paths.at(1), c.compare_options, out);
  }
  if (c.export_model->parsed())
    return export_model_command(c.export_in, c.export_out, c.export_format, out);
  return -1;
}

/// The commands that measure: fleet, run, characterize (a profile or everything), repeat.
int run_measuring_command(const CLI::App& app, Commands& c, Cli& cli, int argc,
                          const char* const* argv, std::ostream& out, std::ostream& err) {
  const auto& registry = Registry::builtin();
  const Runner runner = [&](const RunOptions& ro, const std::vector<const Experiment*>& ex,
                            std::ostream& os, const std::string& cmd) {
    Cli one = cli;
    one.options = ro;
    return run_experiments(ex, one, argc, argv, os, cmd);
  };
  if (const int rc = run_fleet_commands(c.fleet, cli.options, cli.device_given, runner, out, err);
      rc >= 0)
    return rc;
  std::vector<const Experiment*> chosen;
  std::string command;
  // What the chosen experiments cannot run without runs too, and is said.
  auto with_required = [&](std::vector<const Experiment*> selected) {
    const auto before = selected;
    cli.added_lines = registry.add_required(selected);
    for (const auto* e : selected)
      if (std::find(before.begin(), before.end(), e) == before.end())
        cli.added_ids.push_back(e->id());
    return selected;
  };
  if (c.run->parsed()) {
    chosen = with_required(registry.select(cli.ids));
    command = "run";
  } else if (c.characterize->parsed() && !c.health.profile.empty()) {
    chosen = apply_profile(find_profile(c.health.profile), cli.options, app.count("--loads") > 0);
    command = "characterize";
  } else if (c.characterize->parsed()) {
    for (const auto& e : registry.all()) chosen.push_back(e.get());
    command = "characterize";
  } else if (c.repeat->parsed()) {
    if (c.repeat_ids.empty())
      for (const auto& e : registry.all()) chosen.push_back(e.get());
    else
      chosen = with_required(registry.select(c.repeat_ids));
    return run_repeat(c.repeat_n, chosen, cli, argc, argv, out,
                      c.repeat_ids.empty() ? "characterize" : "run");
  }
  return run_experiments(chosen, cli, argc, argv, out, command);
}

}  // namespace

static int run_unguarded(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"gpuprobe: measures and reverse-engineers a GPU's memory subsystem", "gpuprobe"};
  app.require_subcommand(0, 1);
  Cli cli;
  Commands commands;
  add_global_options(app, cli);
  add_measuring_commands(app, cli, commands);
  add_result_commands(app, commands);
  add_repeat_and_other_commands(app, commands);
  if (const int rc = parse_command_line(app, argc, argv, out, err); rc >= 0) return rc;
  cli.device_given = app.count("--device") > 0;
  try {
    read_option_texts(app, cli);
    if (const int rc = run_non_measuring_command(commands, cli, out); rc >= 0) return rc;
    return run_measuring_command(app, commands, cli, argc, argv, out, err);
  } catch (const UsageError& e) {
    err << "gpuprobe: error: " << text_input::escape_controls(e.what()) << "\n";
    return 2;
  } catch (const CudaError& e) {
    err << "gpuprobe: CUDA error: " << text_input::escape_controls(e.what()) << "\n";
    return 1;
  }
}

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  // Nothing the user gives may abort the program: whatever escapes the command is reported in
  // one line. A UsageError is the user's to fix (2); anything else is gpuprobe's fault (1).
  // Every message is one line: control characters in quoted input are escaped, not printed.
  const auto one_line = [](const std::string& s) { return text_input::escape_controls(s); };
  files::forget_inputs();  // the inputs of an earlier command in this process are not ours
  try {
    return run_unguarded(argc, argv, out, err);
  } catch (const std::filesystem::filesystem_error& e) {
    // Raised at the file-system boundary (a loop of links, an over-long name, a path that
    // changed under us): the user's to fix, one line naming the path and the reason.
    err << "gpuprobe: error: " << one_line(files::describe(e)) << "\n";
    return 2;
  } catch (const UsageError& e) {
    err << "gpuprobe: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "gpuprobe: internal error: " << one_line(e.what()) << "\n";
    return 1;
  } catch (...) {
    err << "gpuprobe: internal error: unknown exception\n";
    return 1;
  }
}

}  // namespace gpuprobe::cli
