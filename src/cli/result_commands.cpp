#include "cli/result_commands.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/from_file.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/files.hpp"
#include "core/json_input.hpp"
#include "core/text_input.hpp"
#include "device/model_export.hpp"
#include "report/output_dir.hpp"
#include "report/summary.hpp"
#include "report/writer.hpp"

namespace gpuprobe::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

void write_or_fail(const std::string& path, const std::string& text) {
  try {
    report::write_file_atomically(path, text);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError("cannot write " + text_input::quoted(path) + " (" + first_line(e.what()) +
                     ")");
  }
}

}  // namespace

int analyze_command(const std::string& path, const std::string& format, std::ostream& out) {
  json recorded = json_input::load_result(path);
  auto& experiments = recorded["experiments"];
  for (std::size_t i = 0; i < experiments.size(); ++i) {
    auto& e = experiments[i];
    const std::string where =
        path + ": experiments[" + std::to_string(i) + "] (" + e.at("id").get<std::string>() + ")";
    const auto r = from_file(where, [&] { return replay_analysis(e); });
    if (!r) continue;
    json findings = json::array();
    for (const auto& f : r->findings) findings.push_back(to_json(f));
    e["findings"] = findings;
    // The curves the analysis draws are re-derived with the findings (a curve of the same name
    // replaced, inline); the curves the run measured stay as recorded.
    if (!r->curves.empty()) {
      json curves = e.contains("curves") && e["curves"].is_array() ? e["curves"] : json::array();
      const json analysed = to_json(*r);
      for (const auto& fresh : analysed.at("curves")) {
        const auto same = std::find_if(curves.begin(), curves.end(), [&](const json& c) {
          return c.is_object() && c.value("name", "") == fresh.at("name");
        });
        if (same != curves.end())
          *same = fresh;
        else
          curves.push_back(fresh);
      }
      e["curves"] = curves;
    }
    if (!e.contains("statistics") || !e["statistics"].is_object()) e["statistics"] = json::object();
    e["statistics"].update(r->statistics);
    // The analysis finds failed checks too (rows failing verification): the experiment is an
    // error then, with its reason.
    if (r->status == Status::kError) {
      e["status"] = to_string(r->status);
      e["reason"] = r->reason;
    }
  }
  if (format == "json") {
    out << recorded.dump(1) << "\n";
    return 0;
  }
  out << from_file(path, [&] { return report::summary_table(recorded); });
  return 0;
}

int summary_command(const std::string& path, bool verbose, std::ostream& out) {
  const json recorded = json_input::load_result(path);
  // Both texts are made before anything is printed: a file they cannot read prints nothing.
  const std::string card =
      from_file(path, [&] { return report::summary_text(report::summary_card(recorded)); });
  const std::string table =
      verbose ? from_file(path, [&] { return report::summary_table(recorded); }) : std::string();
  out << card;
  if (verbose) out << "\n" << table;
  return 0;
}

int report_command(const std::string& path, std::string dir, std::ostream& out) {
  const json recorded = json_input::load_result(path);
  if (dir.empty()) dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  report::check_writable(dir);
  // The samples the page draws are checked by the analysis that reads them (a wrong-typed field
  // is the file's fault, one line, exit 2), and the page is made before anything is created, so
  // a result it cannot draw leaves nothing.
  const auto& experiments = recorded.at("experiments");
  for (std::size_t i = 0; i < experiments.size(); ++i) {
    const auto& e = experiments[i];
    const std::string where =
        path + ": experiments[" + std::to_string(i) + "] (" + e.at("id").get<std::string>() + ")";
    from_file(where, [&] { return replay_analysis(e); });
  }
  report::ReportCounts counts;
  const std::string html = from_file(path, [&] {
    return report::html_report(recorded, fs::path(path).parent_path().string(), &counts);
  });
  const report::OutputLock lock(dir);  // creates dir; no other run writes it meanwhile
  const std::string findings = from_file(path, [&] { return report::findings_markdown(recorded); });
  const auto target = fs::path(dir) / "report.html";
  write_or_fail(target.string(), html);
  write_or_fail((fs::path(dir) / "FINDINGS.md").string(), findings);
  out << "report: " << target.string() << " (" << counts.charts << " charts)\n";
  // A curve the page could not draw is said there and here, never a silent gap.
  if (!counts.missing_curves.empty()) {
    std::cerr << "warning: " << counts.missing_curves.size()
              << " curves not found (no rows in result.json and no CSV beside it):";
    for (const auto& c : counts.missing_curves) std::cerr << " " << c;
    std::cerr << "\n";
  }
  return 0;
}

int export_model_command(const std::string& path, const std::string& model_path,
                         const std::string& format, std::ostream& out) {
  const json recorded = json_input::load_result(path);
  // Never the input itself (also through a link), a link, a device node, a FIFO or a socket.
  if (!model_path.empty()) files::check_output_target(model_path);
  const std::string model = from_file(path, [&] {
    const json m = device::model_from_result(recorded);
    return format == "accelsim" ? device::accelsim_config(m) : m.dump(2) + "\n";
  });
  if (model_path.empty()) {
    out << model;
    return 0;
  }
  write_or_fail(model_path, model);
  out << "model: " << model_path << " (use --device model:" << model_path << ")\n";
  return 0;
}

}  // namespace gpuprobe::cli
