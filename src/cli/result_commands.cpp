#include "cli/result_commands.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <vector>

#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/json_input.hpp"
#include "core/noise.hpp"
#include "device/model_export.hpp"
#include "report/writer.hpp"

namespace gpuprobe::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string first_line(std::string s) {
  const auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

/// Runs `f` on content loaded from `file`; anything but a UsageError it throws was caused by
/// the file's content (the shape check cannot foresee every reader), so it becomes one.
template <typename F>
auto from_file(const std::string& file, F&& f) {
  try {
    return f();
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(file + ": cannot use this result (" + first_line(e.what()) + ")");
  }
}

std::string describe(const json& r) {
  const auto& d = r.at("device");
  std::string sha = r.at("tool").at("git_sha").get<std::string>().substr(0, 12);
  return d.at("name").get<std::string>() + " " + d.value("uuid", std::string("")) + ", git " +
         sha + ", " + r.value("started_utc", std::string(""));
}

struct Row {
  std::string name, unit;
  double value = 0, confidence = 0;
};

std::vector<Row> findings_of(const json& r) {
  std::vector<Row> v;
  for (const auto& e : r.at("experiments"))
    for (const auto& f : e.value("findings", json::array()))
      v.push_back({f.at("name").get<std::string>(), f.at("unit").get<std::string>(),
                   f.at("value").get<double>(), f.at("confidence").get<double>()});
  return v;
}

void write_or_fail(const std::string& path, const std::string& text) {
  try {
    report::write_file_atomically(path, text);
  } catch (const std::exception& e) {
    throw UsageError("cannot write '" + path + "' (" + first_line(e.what()) + ")");
  }
}

}  // namespace

std::string compare_table(const json& a, const json& b) {
  std::ostringstream out;
  out << "A: " << describe(a) << "\nB: " << describe(b) << "\n";
  out << "noise: each difference against both runs' stated spread (the standard error their "
         "confidence implies); beyond noise when separation >= "
      << noise::kBeyondSeparation << "\n\n";
  char line[320];
  std::snprintf(line, sizeof(line), "%-52s %12s %12s %-6s %9s %8s  %s\n", "finding", "A", "B",
                "unit", "B vs A", "z", "judgement");
  out << line;
  const auto fa = findings_of(a), fb = findings_of(b);
  std::map<std::string, Row> in_b;
  for (const auto& r : fb) in_b[r.name] = r;
  auto print = [&](const std::string& name, const std::string& va, const std::string& vb,
                   const std::string& unit, const std::string& change, const std::string& z,
                   const std::string& verdict) {
    std::snprintf(line, sizeof(line), "%-52s %12s %12s %-6s %9s %8s  %s\n", name.c_str(),
                  va.c_str(), vb.c_str(), unit.c_str(), change.c_str(), z.c_str(),
                  verdict.c_str());
    out << line;
  };
  for (const auto& ra : fa) {
    const auto ha = noise::human(ra.value, ra.unit);
    auto it = in_b.find(ra.name);
    if (it == in_b.end()) {
      print(ra.name, ha.first, "-", ha.second, "", "", "only in A");
      continue;
    }
    const Row& rb = it->second;
    if (rb.unit != ra.unit) {
      print(ra.name, ha.first + " " + ha.second, noise::human(rb.value, rb.unit).first, rb.unit,
            "", "", "units differ");
      in_b.erase(it);
      continue;
    }
    // Both values in A's display unit, so the two columns read alike.
    const std::string vb_text = noise::human_as(rb.value, rb.unit, ha.second);
    char change[32] = "";
    if (ra.value != 0)
      std::snprintf(change, sizeof(change), "%+.2f%%",
                    (rb.value - ra.value) / std::fabs(ra.value) * 100);
    const auto j = noise::judge(ra.value, ra.confidence, rb.value, rb.confidence);
    char z[32];
    std::snprintf(z, sizeof(z), std::isinf(j.z) ? "inf" : "%.2f", j.z);
    print(ra.name, ha.first, vb_text, ha.second, change, z,
          j.beyond ? "beyond noise" : "within noise");
    in_b.erase(it);
  }
  for (const auto& rb : fb) {
    if (!in_b.count(rb.name)) continue;
    const auto hb = noise::human(rb.value, rb.unit);
    print(rb.name, "-", hb.first, hb.second, "", "", "only in B");
  }
  return out.str();
}

int analyze_command(const std::string& path, std::ostream& out) {
  json recorded = json_input::load_result(path);
  auto& experiments = recorded["experiments"];
  for (std::size_t i = 0; i < experiments.size(); ++i) {
    auto& e = experiments[i];
    const std::string where = path + ": experiments[" + std::to_string(i) + "] (" +
                              e.at("id").get<std::string>() + ")";
    const auto r = from_file(where, [&] { return replay_analysis(e); });
    if (!r) continue;
    json findings = json::array();
    for (const auto& f : r->findings) findings.push_back(to_json(f));
    e["findings"] = findings;
    if (!e.contains("statistics") || !e["statistics"].is_object())
      e["statistics"] = json::object();
    e["statistics"].update(r->statistics);
    // The analysis finds failed checks too (rows failing verification): the experiment is an
    // error then, with its reason.
    if (r->status == Status::kError) {
      e["status"] = to_string(r->status);
      e["reason"] = r->reason;
    }
  }
  out << from_file(path, [&] { return report::summary_table(recorded); });
  return 0;
}

int compare_command(const std::string& path_a, const std::string& path_b, std::ostream& out) {
  const json a = json_input::load_result(path_a), b = json_input::load_result(path_b);
  out << from_file(path_a + " / " + path_b, [&] { return compare_table(a, b); });
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
    const std::string where = path + ": experiments[" + std::to_string(i) + "] (" +
                              e.at("id").get<std::string>() + ")";
    from_file(where, [&] { return replay_analysis(e); });
  }
  const std::string html = from_file(path, [&] {
    return report::html_report(recorded, fs::path(path).parent_path().string());
  });
  fs::create_directories(dir);
  const auto target = fs::path(dir) / "report.html";
  write_or_fail(target.string(), html);
  out << "report: " << target.string() << "\n";
  return 0;
}

int export_model_command(const std::string& path, const std::string& model_path,
                         const std::string& format, std::ostream& out) {
  const json recorded = json_input::load_result(path);
  const std::string model = from_file(path, [&] {
    const json m = device::model_from_result(recorded);
    return format == "accelsim" ? device::accelsim_config(m) : m.dump(2) + "\n";
  });
  if (model_path.empty()) {
    out << model;
    return 0;
  }
  if (fs::is_directory(model_path))
    throw UsageError("model file '" + model_path + "' is a directory; give a file name");
  write_or_fail(model_path, model);
  out << "model: " << model_path << " (use --device model:" << model_path << ")\n";
  return 0;
}

}  // namespace gpuprobe::cli
