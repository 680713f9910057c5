#include "report/writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/finding_value.hpp"
#include "core/text_input.hpp"
#include "report/output_dir.hpp"
#include "report/summary.hpp"

namespace gpuprobe::report {
namespace fs = std::filesystem;

void check_writable(const std::string& dir) {
  if (dir.empty()) throw UsageError("output directory is empty; give a path with --out");
  fs::path p = fs::absolute(dir);
  std::error_code ec;
  // A dangling link, a loop of links or an over-long name: one line naming it, nothing made.
  if (fs::is_symlink(fs::symlink_status(p, ec)) && !fs::exists(fs::status(p, ec)))
    throw UsageError("output directory " + text_input::quoted(dir) +
                     " is a symbolic link that leads nowhere (dangling, or a loop of links); "
                     "give a directory or a new path");
  if (const std::string why = files::stat_problem(dir); !why.empty())
    throw UsageError("output directory " + text_input::quoted(dir) + " " + why);
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(p, ec))
      throw UsageError("output path " + text_input::quoted(dir) + " exists and is not a directory");
    if (::access(p.c_str(), W_OK) != 0)
      throw UsageError("output directory " + text_input::quoted(dir) + " is not writable");
    return;
  }
  fs::path parent = p.parent_path();
  // symlink_status: a dangling link on the way is something, not a folder to create.
  while (!parent.empty() && !fs::exists(fs::symlink_status(parent, ec)))
    parent = parent.parent_path();
  const auto cannot = [&] {
    return UsageError("output directory " + text_input::quoted(dir) + " cannot be created (" +
                      text_input::quoted(parent.string()) + " is not a writable directory)");
  };
  if (parent.empty() || !fs::is_directory(parent, ec)) throw cannot();
  // access() says yes to root everywhere; a real mkdir (removed at once) tells the truth.
  const fs::path probe = parent / (".gpuprobe-write-test-" + std::to_string(::getpid()));
  if (!fs::create_directory(probe, ec) || ec) throw cannot();
  fs::remove(probe, ec);
  // The path itself must be creatable too (e.g. /proc lets no one make folders).
  fs::path first = p;
  while (first.parent_path() != parent) first = first.parent_path();
  const fs::path probe2 = first.string() + ".gpuprobe-write-test";
  if (!fs::create_directory(probe2, ec) || ec) throw cannot();
  fs::remove(probe2, ec);
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  // The temporary lies beside the target (same file system, so rename is atomic) and is named
  // for this process, so two writers never share one.
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  files::check_output_target(path);  // no link, device, FIFO, read-only file or input replaced
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out << text;
    if (!out.flush()) {
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error("cannot write " + tmp.string());
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + path.string() + ": " +
                             ec.message());
  }
}

namespace {

std::string csv_cell(const nlohmann::json& v) {
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  if (v.is_number_float()) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.10g", v.get<double>());
    return buf;
  }
  return v.dump();
}

}  // namespace

std::string to_csv(const Curve& c) {
  std::ostringstream out;
  for (std::size_t i = 0; i < c.columns.size(); ++i) out << (i ? "," : "") << c.columns[i];
  out << "\n";
  for (const auto& row : c.rows) {
    for (std::size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << csv_cell(row[i]);
    out << "\n";
  }
  return out.str();
}

ResultWriter::ResultWriter(std::string dir, nlohmann::json header, std::ostream& notices)
    : dir_(std::move(dir)), result_(std::move(header)) {
  lock_ = std::make_shared<OutputLock>(dir_);  // creates dir_
  // The earlier run's files go first, so no stale CSV stays beside the new result.
  const auto earlier = earlier_result_files(dir_);
  if (!earlier.empty()) {
    std::size_t csvs = 0, experiments = 0;
    for (const auto& f : earlier) {
      csvs += f.extension() == ".csv";
      experiments += f.parent_path().filename() == "experiments";
    }
    notices << "gpuprobe: replacing the earlier result in " << dir_ << " (" << earlier.size()
            << " files it made: result.json, report.html, " << experiments << " in experiments/, "
            << csvs << " CSVs; other files stay)\n";
    for (const auto& f : earlier) fs::remove(f);
  }
  fs::create_directories(fs::path(dir_) / "experiments");
  result_["experiments"] = nlohmann::json::array();
  result_["complete"] = false;
  flush();
}

void ResultWriter::add(const ExperimentResult& r) {
  auto j = to_json(r);
  for (auto& c : j["curves"]) c["file"] = r.id + "." + c["name"].get<std::string>() + ".csv";
  for (const auto& c : r.curves)
    write_file_atomically(fs::path(dir_) / (r.id + "." + c.name + ".csv"), to_csv(c));
  write_file_atomically(fs::path(dir_) / "experiments" / (r.id + ".json"), j.dump(2) + "\n");
  result_["experiments"].push_back(j);
  flush();
}

void ResultWriter::finish(const nlohmann::json& extra) {
  result_.update(extra);
  result_["complete"] = true;
  flush();
  write_file_atomically(fs::path(dir_) / "report.html", html_report(result_, dir_));
  write_file_atomically(fs::path(dir_) / "FINDINGS.md", findings_markdown(result_));
}

void ResultWriter::flush() {
  write_file_atomically(fs::path(dir_) / "result.json", result_.dump(2) + "\n");
}

std::string summary_table(const nlohmann::json& result) {
  std::ostringstream out;
  char line[512];
  // The name column is as wide as the longest name, so long names never break the columns.
  int name_width = 7;
  for (const auto& e : result.at("experiments"))
    for (const auto& f : e.value("findings", nlohmann::json::array()))
      name_width = std::max(name_width, static_cast<int>(f.value("name", "").size()));
  std::snprintf(line, sizeof(line), "%-*s %14s %-12s %10s %5s  %s\n", name_width, "finding",
                "value", "unit", "ns", "conf", "experiment");
  out << line;
  std::map<std::string, std::vector<std::string>> waived;
  for (const auto& e : result.at("experiments")) {
    const std::string status = e.value("status", "");
    if (status == "waived") {
      waived[e.value("reason", "")].push_back(e.value("id", ""));
      continue;
    }
    if (status != "passed") {
      std::snprintf(line, sizeof(line), "%-34s %s: %s\n", e.value("id", "").c_str(), status.c_str(),
                    e.value("reason", "").c_str());
      out << line;
      continue;
    }
    for (const auto& f : e.at("findings")) {
      if (f.contains("load")) continue;  // per-load latencies go into the matrix below
      const TypedValue shown = typed_value(f);
      std::string ns;
      if (f.contains("value_ns") && f["value_ns"].is_number())
        ns = format_number(f["value_ns"].get<double>());
      std::snprintf(line, sizeof(line), "%-*s %14s %-12s %10s %5.2f  %s\n", name_width,
                    f.value("name", "").c_str(), shown.text.c_str(), shown.unit.c_str(), ns.c_str(),
                    f.value("confidence", 0.0), e.value("id", "").c_str());
      out << line;
    }
  }
  // Latency per level and load operator (latency.chase), cycles and ns.
  std::vector<std::string> loads, levels;
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> cell;
  for (const auto& e : result.at("experiments"))
    for (const auto& f : e.value("findings", nlohmann::json::array())) {
      if (!f.contains("load")) continue;
      const std::string load = f["load"], name = f["name"];
      const std::string level = name.substr(0, name.size() - load.size() - 1);
      if (std::find(loads.begin(), loads.end(), load) == loads.end()) loads.push_back(load);
      if (std::find(levels.begin(), levels.end(), level) == levels.end()) levels.push_back(level);
      cell[{level, load}] = {f.value("value", 0.0), f.value("value_ns", 0.0)};
    }
  if (!loads.empty()) {
    out << "\nlatency by load operator, cycles (ns) at the middle of each level's plateau\n";
    std::snprintf(line, sizeof(line), "%-22s", "level");
    out << line;
    for (const auto& l : loads) {
      std::snprintf(line, sizeof(line), " %16s", ("." + l).c_str());
      out << line;
    }
    out << "\n";
    for (const auto& lv : levels) {
      std::snprintf(line, sizeof(line), "%-22s", lv.c_str());
      out << line;
      for (const auto& l : loads) {
        auto it = cell.find({lv, l});
        char v[40] = "-";
        if (it != cell.end())
          std::snprintf(v, sizeof(v), "%.1f (%.1f)", it->second.first, it->second.second);
        std::snprintf(line, sizeof(line), " %16s", v);
        out << line;
      }
      out << "\n";
    }
  }
  // What the hardware counters said beyond the findings' one line: waivers and disagreements.
  for (const auto& e : result.at("experiments")) {
    const auto& s = e.value("samples", nlohmann::json::object());
    if (!s.contains("counters")) continue;
    const auto& c = s["counters"];
    if (c.value("status", "") != "read") {
      out << "counters waived (" << e.value("id", "") << "): " << c.value("reason", "") << "\n";
      continue;
    }
    for (const auto& f : e.value("findings", nlohmann::json::array()))
      if (f.value("name", "").find(".counters.disagreement.") != std::string::npos)
        out << f.value("name", "") << ": " << f.value("method", "") << "\n";
  }
  for (const auto& [reason, ids] : waived) {
    out << "waived (" << reason << "):";
    for (const auto& id : ids) out << " " << id;
    out << "\n";
  }
  for (const auto& e : result.at("experiments")) {
    const auto& c = e.value("clocks", nlohmann::json::object());
    if (c.value("sm_clock_drift_flagged", false) || c.value("throttled", false))
      out << "warning: " << e.value("id", "") << ": SM clock drift "
          << c.value("sm_clock_drift_percent", 0.0)
          << "% or throttling during the run (see clocks)\n";
  }
  return out.str();
}

}  // namespace gpuprobe::report
