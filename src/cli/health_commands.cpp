#include "cli/health_commands.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli/profiles.hpp"
#include "core/error.hpp"
#include "core/json_input.hpp"
#include "report/baseline.hpp"
#include "report/check.hpp"
#include "report/writer.hpp"

#ifndef GPUPROBE_SOURCE_BASELINES
#define GPUPROBE_SOURCE_BASELINES ""
#endif

namespace gpuprobe::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json load_baseline_file(const std::string& path) {
  json b = json_input::load_file(path, "baseline written by 'gpuprobe baseline build'");
  report::check_baseline_shape(b, path);
  return b;
}

/// --source-commits FILE: "<result path> <git commit> [<path in the repository>]" per line
/// ('#' starts a comment).
std::map<std::string, std::pair<std::string, std::string>> read_source_commits(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--source-commits: cannot read '" + path + "'");
  std::map<std::string, std::pair<std::string, std::string>> m;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string file, commit, repo_path, extra;
    ss >> file >> commit >> repo_path >> extra;
    const bool hex = !commit.empty() && commit.size() <= 64 &&
                     commit.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (file.empty() || !hex || !extra.empty())
      throw UsageError("--source-commits " + path + ":" + std::to_string(n) +
                       ": expected '<result path> <git commit (hex)> [<path in repository>]'");
    m[file] = {commit, repo_path};
  }
  return m;
}

int build_command(const HealthCommands& h, const RunOptions& o, std::ostream& out) {
  if (o.out_dir.empty()) throw UsageError("baseline build needs --out FILE.json");
  if (fs::is_directory(o.out_dir))
    throw UsageError("baseline build --out " + o.out_dir + " is a folder; give a FILE.json");
  const auto commits = h.source_commits.empty()
                           ? std::map<std::string, std::pair<std::string, std::string>>{}
                           : read_source_commits(h.source_commits);
  std::vector<report::BaselineSource> sources;
  std::set<std::string> seen;
  int skipped = 0;
  for (const auto& p : h.build_paths) {
    if (!seen.insert(fs::weakly_canonical(p).string()).second)
      throw UsageError("'" + p + "' is given twice");
    try {
      report::BaselineSource s{p, json_input::load_result(p), "", ""};
      if (const auto it = commits.find(p); it != commits.end())
        s.git_commit = it->second.first, s.repo_path = it->second.second;
      sources.push_back(std::move(s));
    } catch (const UsageError& e) {
      out << "skipped " << e.what() << "\n";
      ++skipped;
    }
  }
  if (sources.empty())
    throw UsageError("none of the " + std::to_string(h.build_paths.size()) +
                     " results could be read; nothing to build a baseline from");
  json b = report::build_baseline(sources);
  b["skipped_unreadable"] = skipped;
  const fs::path target(o.out_dir);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  report::write_file_atomically(target, b.dump(1) + "\n");
  out << "baseline " << report::baseline_line(b) << " (" << skipped
      << " unreadable result(s) skipped) -> " << o.out_dir << "\n";
  return 0;
}

/// Every valid shipped baseline: file stem -> (path, baseline), the first folder winning.
std::map<std::string, std::pair<fs::path, json>> shipped(std::vector<std::string>* invalid) {
  std::map<std::string, std::pair<fs::path, json>> m;
  for (const auto& dir : baseline_directories()) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      if (m.count(f.stem().string())) continue;
      try {
        m[f.stem().string()] = {f, load_baseline_file(f.string())};
      } catch (const UsageError& e) {
        if (invalid) invalid->push_back(e.what());
      }
    }
  }
  return m;
}

int list_baselines(std::ostream& out) {
  std::vector<std::string> invalid;
  const auto all = shipped(&invalid);
  if (all.empty() && invalid.empty()) {
    out << "no shipped baselines found (looked in $GPUPROBE_BASELINE_DIR, "
           "<exe>/../share/gpuprobe/baselines, <exe>/../baselines and the source tree)\n";
    return 0;
  }
  for (const auto& [name, pb] : all)
    out << name << "  " << report::baseline_line(pb.second) << "  (" << pb.first.string() << ")\n";
  for (const auto& why : invalid) out << "invalid: " << why << "\n";
  return 0;
}

int check_command(const HealthCommands& h, std::ostream& out) {
  const json result = json_input::load_result(h.check_path);
  std::string name;
  const json baseline = load_baseline_for(h.baseline_spec, result, h.any_model, name);
  const json c = report::check_result(result, baseline, name);
  if (h.format == "json")
    out << c.dump(2) << "\n";
  else if (h.format == "prometheus")
    out << report::check_prometheus(c);
  else if (h.format == "junit")
    out << report::check_junit(c);
  else
    out << report::check_text(c);
  return c.value("out_of_family", false) ? kOutOfFamilyExit : 0;
}

std::string result_model(const json& result) {
  const json d = result.value("device", json::object());
  return d.is_object() && d.contains("name") && d["name"].is_string() ? d["name"].get<std::string>()
                                                                      : "";
}

}  // namespace

std::vector<fs::path> baseline_directories() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("GPUPROBE_BASELINE_DIR"); env && *env)
    candidates.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path().parent_path() / "share" / "gpuprobe" / "baselines");
    candidates.push_back(exe.parent_path().parent_path() / "baselines");
  }
  if (*GPUPROBE_SOURCE_BASELINES) candidates.emplace_back(GPUPROBE_SOURCE_BASELINES);
  std::vector<fs::path> dirs;
  std::set<std::string> seen;
  for (const auto& c : candidates) {
    if (!fs::is_directory(c, ec)) continue;
    if (seen.insert(fs::weakly_canonical(c, ec).string()).second) dirs.push_back(c);
  }
  return dirs;
}

json load_baseline_for(const std::string& spec, const json& result, bool any_model,
                       std::string& name) {
  const std::string model = result_model(result);
  json b;
  if (spec.find('/') != std::string::npos ||
      (spec.size() > 5 && spec.compare(spec.size() - 5, 5, ".json") == 0)) {
    b = load_baseline_file(spec);
    name = spec;
  } else {
    std::vector<std::string> invalid;
    const auto all = shipped(&invalid);
    std::string known;
    for (const auto& [n, pb] : all)
      known += (known.empty() ? "" : ", ") + n + " (" + pb.second.value("gpu_model", "") + ")";
    if (known.empty()) known = "none";
    if (!spec.empty()) {
      const auto it = all.find(spec);
      if (it == all.end())
        throw UsageError("--baseline " + spec + ": no such shipped baseline; shipped: " + known +
                         " (or give a FILE.json)");
      b = it->second.second;
      name = spec;
    } else {
      for (const auto& [n, pb] : all)
        if (pb.second.value("gpu_model", "") == model) b = pb.second, name = n;
      if (b.is_null())
        throw UsageError("no shipped baseline for GPU model '" + model + "' (shipped: " + known +
                         "); give --baseline FILE.json");
    }
  }
  const std::string base_model = b.value("gpu_model", "");
  if (base_model != model && !any_model)
    throw UsageError("baseline '" + name + "' is of GPU model '" + base_model +
                     "', the result of '" + model + "' (--any-model compares them anyway)");
  return b;
}

void add_health_commands(CLI::App& app, CLI::App* characterize, CLI::App* list, HealthCommands& h) {
  h.characterize = characterize;
  h.list = list;
  characterize->add_option("--profile", h.profile,
                           "run only the experiments of a named profile ('quick': what a fleet "
                           "health check needs; 'gpuprobe list --profile quick' shows it)");
  list->add_option("--profile", h.profile, "list the experiments and options of a profile");
  h.baseline = app.add_subcommand(
      "baseline", "what cards of one GPU model measure: 'baseline build' and 'baseline list'");
  h.baseline->require_subcommand(1);
  h.build = h.baseline->add_subcommand(
      "build", "a baseline from results of several cards (and runs): --out FILE.json");
  h.build->add_option("results", h.build_paths, "result.json files written by gpuprobe")
      ->required();
  h.build->add_option("--source-commits", h.source_commits,
                      "a file of '<result path> <git commit> [<path in repository>]' lines: "
                      "where each result came from, recorded in the baseline's sources");
  h.list_baselines = h.baseline->add_subcommand("list", "the shipped baselines");
  h.check = app.add_subcommand(
      "check",
      "is this card normal? judge a result against the baseline of its GPU model; exit 0 in "
      "family, 3 out of family, 2 bad input");
  h.check->add_option("result", h.check_path, "a result.json written by gpuprobe")->required();
  h.check->add_option("--baseline", h.baseline_spec,
                      "a shipped baseline's name (gpuprobe baseline list) or a FILE.json "
                      "(default: the shipped one of the result's GPU model)");
  h.check->add_option("--format", h.format, "text, json, prometheus or junit")
      ->check(CLI::IsMember({"text", "json", "prometheus", "junit"}));
  h.check->add_flag("--any-model", h.any_model, "judge against a baseline of another GPU model");
}

int run_health_commands(const HealthCommands& h, const RunOptions& options, std::ostream& out) {
  if (h.build && h.build->parsed()) return build_command(h, options, out);
  if (h.list_baselines && h.list_baselines->parsed()) return list_baselines(out);
  if (h.check && h.check->parsed()) return check_command(h, out);
  if (h.list && h.list->parsed() && !h.profile.empty()) {
    list_profile(find_profile(h.profile), out);
    return 0;
  }
  return -1;
}

}  // namespace gpuprobe::cli
