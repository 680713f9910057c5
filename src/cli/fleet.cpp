#include "cli/fleet.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli/health_commands.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/finding_value.hpp"
#include "core/json_input.hpp"
#include "core/text_input.hpp"
#include "probes/link/link.hpp"
#include "report/check.hpp"
#include "report/fleet.hpp"
#include "report/output_dir.hpp"
#include "report/writer.hpp"

#ifdef GPUPROBE_MPI
#include <mpi.h>
#endif

namespace gpuprobe::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string stamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

/// A result file: parsed by json_input (one line for a missing, unreadable or non-JSON file) and,
/// when it is of the schema this build writes, checked field by field like every other loader;
/// results of another schema are left to the fleet report, which names the mismatch.
json read_json_file(const std::string& path) {
  json r = json_input::load_file(path, "result.json written by gpuprobe");
  const json version = r.is_object() ? r.value("schema_version", json()) : json();
  if (version.is_number_integer() && version.get<long long>() >= kOldestResultSchemaVersion &&
      version.get<long long>() <= kResultSchemaVersion)
    json_input::check_result_shape(r, path);
  return r;
}

void write_text(const fs::path& path, const std::string& text) {
  try {
    report::write_file_atomically(path, text);  // no link, device, FIFO or input replaced
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError("cannot write " + text_input::quoted(path.string()) + " (" + e.what() + ")");
  }
}

/// Writes fleet.json and fleet.txt into dir and prints the table.
void write_fleet(const std::string& dir, const json& report, std::ostream& out) {
  fs::create_directories(dir);
  write_text(fs::path(dir) / "fleet.json", report.dump(2) + "\n");
  const std::string table = report::fleet_table(report);
  write_text(fs::path(dir) / "fleet.txt", table);
  out << table << "fleet report: " << (fs::path(dir) / "fleet.json").string() << "\n";
}

/// NVLink multicast stays off on every multi-GPU run (docs/LINKS.md): set for this process
/// and anything it starts, whatever the caller's environment said.
json force_multicast_off() {
  json env = json::object();
  for (const auto& [k, v] : probes::multicast_off_environment()) {
    setenv(k.c_str(), v.c_str(), 1);
    env[k] = v;
  }
  return env;
}

std::vector<const Experiment*> per_gpu_experiments(const std::vector<std::string>& ids) {
  const auto& registry = Registry::builtin();
  std::vector<const Experiment*> chosen;
  if (ids.empty()) {
    for (const auto& e : registry.all()) chosen.push_back(e.get());
  } else {
    chosen = registry.select(ids);
    registry.add_required(chosen);  // as `run` does; the rank's result lists what ran
  }
  std::vector<const Experiment*> per_gpu;
  for (const auto* e : chosen)
    if (!e->whole_node()) per_gpu.push_back(e);
  return per_gpu;
}

int cuda_gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

/// Judges every compared GPU against the baseline (--baseline): each member gets "baseline"
/// (verdict, out-of-family findings, slowness), the report "baseline" and a count in its
/// summary. A GPU the baseline cannot judge (another model, nothing shared) throws UsageError
/// when `strict`, else is recorded with the reason. Returns whether any GPU is out of family.
bool judge_against_baseline(json& report, const std::vector<report::FleetMember>& members,
                            const std::string& spec, bool strict) {
  std::map<std::string, const report::FleetMember*> by_label;
  for (const auto& m : members) by_label[m.label] = &m;
  int out = 0;
  json info;
  for (auto& j : report["members"]) {
    if (j.value("status", "") != "ok") continue;
    const auto* m = by_label.at(j["label"].get<std::string>());
    try {
      std::string name;
      const json b = load_baseline_for(spec, m->result, false, name);
      const json c = report::check_result(m->result, b, name);
      if (info.is_null())
        info = {{"name", name},
                {"gpu_model", b["gpu_model"]},
                {"cards", b["cards"]},
                {"runs", b["runs"]},
                {"rule", c["rule"]}};
      j["baseline"] = {{"out_of_family", c["out_of_family"]},
                       {"verdict", c["verdict"]},
                       {"out_of_family_findings", c["out_of_family_findings"]},
                       {"shared_findings", c["summary"]["shared"]},
                       {"slowness_spreads", report::slowness_in_spreads(c)}};
      out += c["out_of_family"].get<bool>();
    } catch (const UsageError& e) {
      if (strict) throw UsageError(m->label + ": " + e.what());
      j["baseline"] = {{"error", e.what()}};
    }
  }
  report["baseline"] = info.is_null() ? json{{"name", spec}} : info;
  report["summary"]["baseline_out_of_family"] = out;
  return out > 0;
}

int merge(const FleetCommands& c, const RunOptions& o, std::ostream& out) {
  if (o.out_dir.empty()) throw UsageError("fleet merge needs --out DIR for fleet.json");
  report::check_writable(o.out_dir);
  std::vector<report::FleetMember> members;
  std::set<std::string> seen;
  for (const auto& p : c.merge_paths) {
    json r = read_json_file(p);  // first: a loop or an over-long name is refused here
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(p, ec);
    if (!seen.insert(ec ? p : canonical.string()).second)
      throw UsageError(text_input::quoted(p) + " is given twice");
    if (!r.contains("experiments") || !r.contains("schema_version"))
      throw UsageError(text_input::quoted(p) + " is not a gpuprobe result.json");
    members.push_back({p, std::move(r), "", {{"result_path", p}}});
  }
  // Results of another schema or experiment set: exit 2 (nothing written).
  json report = report::fleet_report(members, false);
  const bool off = !c.baseline.empty() && judge_against_baseline(report, members, c.baseline, true);
  const report::OutputLock lock(o.out_dir);
  write_fleet(o.out_dir, report, out);
  return off ? kOutOfFamilyExit : 0;
}

int characterize_gpus(const FleetCommands& c, RunOptions o, const Runner& run, std::ostream& out) {
  const int count = cuda_gpu_count();
  const auto gpus = parse_gpu_list(c.gpus, count);
  if (o.out_dir.empty()) o.out_dir = "gpuprobe-results/" + stamp();
  report::check_writable(o.out_dir);
  for (int g : gpus)
    report::check_result_folder((fs::path(o.out_dir) / ("gpu" + std::to_string(g))).string());
  report::check_result_folder((fs::path(o.out_dir) / "node").string());
  const json multicast = gpus.size() > 1 ? force_multicast_off() : json::object();
  const auto per_gpu = per_gpu_experiments({});
  std::vector<const Experiment*> node_wide;
  for (const auto& e : Registry::builtin().all())
    if (e->whole_node()) node_wide.push_back(e.get());

  int rc = 0;
  std::vector<report::FleetMember> members;
  for (int g : gpus) {
    RunOptions one = o;
    one.device = std::to_string(g);
    one.out_dir = (fs::path(o.out_dir) / ("gpu" + std::to_string(g))).string();
    out << "== GPU " << g << " -> " << one.out_dir << "\n";
    report::FleetMember m{"gpu" + std::to_string(g), json(), "", {{"cuda_ordinal", g}}};
    try {
      rc = std::max(rc, run(one, per_gpu, out, "characterize"));
      m.result = read_json_file((fs::path(one.out_dir) / "result.json").string());
    } catch (const UsageError&) {
      throw;  // bad options are bad for every GPU: one line, exit 2
    } catch (const std::exception& e) {
      m.error = e.what();
      rc = std::max(rc, 1);
    }
    members.push_back(std::move(m));
  }
  // What loads the whole node runs once, alone, after every per-GPU run.
  json links = json::object();
  if (!node_wide.empty()) {
    RunOptions node = o;
    node.device = std::to_string(gpus.front());
    node.out_dir = (fs::path(o.out_dir) / "node").string();
    out << "== whole node -> " << node.out_dir << "\n";
    rc = std::max(rc, run(node, node_wide, out, "characterize"));
    const json r = read_json_file((fs::path(node.out_dir) / "result.json").string());
    for (const auto& e : r.value("experiments", json::array())) {
      if (e.value("id", "") != "link.peer") continue;
      links = {{"status", e.value("status", "")},
               {"reason", e.value("reason", "")},
               {"statistics", e.value("statistics", json::object())}};
      const std::string text = e.value("statistics", json::object()).value("matrix_text", "");
      if (!text.empty()) out << "\n" << text;
    }
  }
  json summary = report::fleet_report(members, true);
  summary["kind"] = "gpuprobe.node";
  summary["gpus"] = gpus;
  summary["links"] = links;
  summary["multicast_off_environment"] = multicast;
  write_text(fs::path(o.out_dir) / "node_summary.json", summary.dump(2) + "\n");
  const std::string table = report::fleet_table(summary);
  write_text(fs::path(o.out_dir) / "node_summary.txt", table);
  out << "\n"
      << table << "node summary: " << (fs::path(o.out_dir) / "node_summary.json").string() << "\n";
  return rc;
}

#ifdef GPUPROBE_MPI
/// Where this rank runs: its rank, the number of ranks, its rank on its node, its host.
struct RankPlace {
  int rank = 0, ranks = 1, local = 0;
  std::string host;
};
RankPlace mpi_place() {
  int already = 0;
  MPI_Initialized(&already);
  if (!already) MPI_Init(nullptr, nullptr);
  RankPlace p;
  MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p.ranks);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, p.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &p.local);
  MPI_Comm_free(&node);
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int host_len = 0;
  MPI_Get_processor_name(host, &host_len);
  p.host = std::string(host, host_len);
  return p;
}

/// This rank's run into DIR/rank<r>: what it sends rank 0 (its result, exit code and wall
/// time, or its error; usage_error when the options are at fault, with `usage_text`).
json run_rank(const FleetCommands& c, const RunOptions& o, bool device_given, const Runner& run,
              const RankPlace& place, std::string& usage_text) {
  json payload = {{"rank", place.rank}, {"local_rank", place.local}, {"host", place.host}};
  bool usage_error = false;
  try {
    if (o.out_dir.empty()) throw UsageError("fleet needs --out DIR (shared by the ranks)");
    const std::string device =
        rank_device(o.device, device_given, place.rank, place.ranks, place.local);
    payload["device_spec"] = device;
    RunOptions mine = o;
    mine.device = device;
    const std::string dir = (fs::path(o.out_dir) / ("rank" + std::to_string(place.rank))).string();
    mine.out_dir = dir;
    const auto chosen = per_gpu_experiments(c.ids);
    std::ostringstream log;
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = run(mine, chosen, log, "fleet");
    payload["run_wall_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    payload["exit_code"] = rc;
    write_text(fs::path(dir) / "run.log", log.str());
    std::ifstream in(fs::path(dir) / "result.json");
    std::stringstream text;
    text << in.rdbuf();
    payload["result"] = json::parse(text.str());
  } catch (const UsageError& e) {
    // The same options on every rank: the same error everywhere, reported once by rank 0.
    usage_error = true;
    usage_text = e.what();
    payload["error"] = e.what();
  } catch (const std::exception& e) {
    payload["error"] = e.what();
  }
  payload["usage_error"] = usage_error;
  return payload;
}

/// Every rank's payload on rank 0 (sizes by MPI_Gather, the JSON text by MPI_Gatherv), in rank
/// order; nothing on the other ranks.
std::vector<json> gather_payloads(const json& payload, const RankPlace& place) {
  const std::string text = payload.dump();
  int size = static_cast<int>(text.size());
  const bool root = place.rank == 0;
  std::vector<int> sizes(root ? place.ranks : 0), offsets(root ? place.ranks : 0);
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<char> all;
  if (root) {
    long total = 0;
    for (int r = 0; r < place.ranks; ++r) offsets[r] = static_cast<int>(total), total += sizes[r];
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(text.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  std::vector<json> payloads;
  for (std::size_t r = 0; r < sizes.size(); ++r)
    payloads.push_back(json::parse(all.begin() + offsets[r], all.begin() + offsets[r] + sizes[r]));
  return payloads;
}

/// Rank 0's fleet members from the payloads (a rank on another node wrote its files there:
/// a copy of what it sent is kept here); `rc` becomes 1 when a rank failed.
std::vector<report::FleetMember> fleet_members(std::vector<json> payloads, const RunOptions& o,
                                               int& rc, double& slowest) {
  std::vector<report::FleetMember> members;
  for (std::size_t r = 0; r < payloads.size(); ++r) {
    json& p = payloads[r];
    report::FleetMember m;
    m.label = "rank" + std::to_string(r);
    if (p.contains("result")) {
      m.result = std::move(p["result"]);
      p.erase("result");
      const auto target = fs::path(o.out_dir) / m.label / "result.json";
      if (!fs::exists(target)) {
        fs::create_directories(target.parent_path());
        write_text(target, m.result.dump(2) + "\n");
      }
    }
    if (p.contains("error")) {
      m.error = p["error"];
      rc = 1;
    } else if (!p.contains("result") && m.result.is_null()) {
      m.error = "no result";
      rc = 1;
    }
    if (p.value("exit_code", 0) != 0) rc = 1;
    slowest = std::max(slowest, p.value("run_wall_s", 0.0));
    m.info = p;
    members.push_back(std::move(m));
  }
  return members;
}

/// One rank per GPU: each runs the experiments into DIR/rank<r>, rank 0 gathers every result
/// and writes the fleet report. MPI is used for ranks, the gather and barriers only.
int mpi_fleet(const FleetCommands& c, RunOptions o, bool device_given, const Runner& run,
              std::ostream& out, std::ostream& err) {
  const RankPlace place = mpi_place();
  const json multicast = force_multicast_off();
  const auto t_start = std::chrono::steady_clock::now();
  std::string usage_text;
  // Rank 0 makes the shared directory first: ranks creating it at once race in check_writable.
  if (place.rank == 0 && !o.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.out_dir, ec);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // every rank starts together
  const json payload = run_rank(c, o, device_given, run, place, usage_text);
  int rc = payload.value("usage_error", false) ? 2 : 0;
  std::vector<json> payloads = gather_payloads(payload, place);
  if (place.rank == 0) {
    // The same bad options on every rank: one line, exit 2, nothing written.
    int usage_errors = 0;
    for (const auto& p : payloads) usage_errors += p.value("usage_error", false);
    if (usage_errors == place.ranks) {
      err << "gpuprobe: error: " << usage_text << "\n";
      MPI_Finalize();
      return 2;
    }
    rc = 0;
    double slowest = 0;
    const auto members = fleet_members(std::move(payloads), o, rc, slowest);
    json report = report::fleet_report(members, true);
    // A failed rank (1) outranks a GPU out of family (3).
    if (!c.baseline.empty() && judge_against_baseline(report, members, c.baseline, false) &&
        rc == 0)
      rc = kOutOfFamilyExit;
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    report["mpi"] = {
        {"ranks", place.ranks},
        {"wall_s", total},
        {"slowest_rank_run_wall_s", slowest},
        {"fleet_overhead_s", total - slowest},
        {"fleet_overhead_percent", slowest > 0 ? (total - slowest) / slowest * 100 : 0.0},
        {"multicast_off_environment", multicast}};
    write_fleet(o.out_dir, report, out);
    out << "fleet overhead: " << (total - slowest) << " s over the slowest rank's " << slowest
        << " s\n";
  }
  MPI_Finalize();
  // The fleet's verdict is rank 0's; a failed rank is in the report, so mpirun's exit code is
  // rank 0's alone.
  return place.rank == 0 ? rc : 0;
}
#endif

}  // namespace

std::vector<int> parse_gpu_list(const std::string& text, int count) {
  std::vector<int> gpus;
  if (count <= 0) throw UsageError("--gpus " + text + ": no CUDA GPU on this node");
  if (text == "all") {
    for (int g = 0; g < count; ++g) gpus.push_back(g);
    return gpus;
  }
  std::set<int> seen;
  for (const auto& item : text_input::split_list(text, "--gpus")) {
    if (item.empty() || item.size() > 4 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--gpus " + text + ": give 'all' or GPU ordinals like 0,1");
    const int g = std::stoi(item);
    if (g >= count)
      throw UsageError("--gpus " + text + ": this node has " + std::to_string(count) + " GPU" +
                       (count == 1 ? "" : "s") + " (0.." + std::to_string(count - 1) + ")");
    if (!seen.insert(g).second)
      throw UsageError("--gpus " + text + ": GPU " + item + " is given twice");
    gpus.push_back(g);
  }
  if (gpus.empty()) throw UsageError("--gpus is empty; give 'all' or GPU ordinals like 0,1");
  return gpus;
}

std::string rank_device(const std::string& device_option, bool device_given, int rank, int ranks,
                        int local_rank) {
  if (!device_given) return "cuda:" + std::to_string(local_rank);
  std::vector<std::string> specs;
  std::stringstream ss(device_option);
  std::string item;
  while (std::getline(ss, item, ',')) specs.push_back(item);
  if (specs.size() == 1) return specs[0];
  if (static_cast<int>(specs.size()) != ranks)
    throw UsageError("--device lists " + std::to_string(specs.size()) + " devices for " +
                     std::to_string(ranks) + " ranks; give one, or one per rank");
  return specs.at(rank);
}

void add_fleet_commands(CLI::App& app, CLI::App* characterize, FleetCommands& c) {
  c.characterize = characterize;
  characterize->add_option("--gpus", c.gpus,
                           "every GPU of this node ('all') or a list (0,1): one result per GPU in "
                           "DIR/gpu<N>, whole-node experiments once in DIR/node, and "
                           "DIR/node_summary.json");
  c.fleet = app.add_subcommand(
      "fleet",
      "compare GPUs: under mpirun (built with -DGPUPROBE_MPI=ON) one rank per GPU runs the "
      "experiments and rank 0 writes DIR/fleet.json; 'fleet merge' does it from result files");
  c.fleet->add_option("ids", c.ids, "experiment ids or globs (default: every per-GPU experiment)");
  c.merge = c.fleet->add_subcommand(
      "merge", "fleet report from recorded results (e.g. of a Slurm array job): --out DIR");
  c.merge->add_option("results", c.merge_paths, "result.json files written by gpuprobe")
      ->required();
  const char* baseline_help =
      "also judge each GPU against a baseline (a shipped name or FILE.json; 'gpuprobe check' "
      "rules): its verdict in fleet.json and the table, exit 3 when any is out of family";
  c.fleet->add_option("--baseline", c.baseline, baseline_help);
  c.merge->add_option("--baseline", c.baseline, baseline_help);
}

int run_fleet_commands(const FleetCommands& c, RunOptions options, bool device_given,
                       const Runner& run, std::ostream& out, std::ostream& err) {
  if (c.characterize && c.characterize->parsed() && !c.gpus.empty()) {
    if (device_given) throw UsageError("--gpus and --device exclude each other");
    return characterize_gpus(c, options, run, out);
  }
  if (!c.fleet || !c.fleet->parsed()) return -1;
  if (c.merge->parsed()) return merge(c, options, out);
#ifdef GPUPROBE_MPI
  return mpi_fleet(c, options, device_given, run, out, err);
#else
  (void)device_given;
  (void)err;
  throw UsageError(
      "this gpuprobe was built without MPI: rebuild with -DGPUPROBE_MPI=ON for 'mpirun -n N "
      "gpuprobe fleet', or merge results with 'gpuprobe fleet merge DIR/*/result.json --out F'");
#endif
}

}  // namespace gpuprobe::cli
