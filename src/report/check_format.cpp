// The renderings of a check report (report/check.hpp): text, Prometheus, JUnit.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/finding_value.hpp"
#include "report/check.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;

std::string join(const json& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n.get<std::string>();
  return s;
}

/// A label value with \, " and newline escaped (exposition format 0.0.4).
std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string sample_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::string xml(const std::string& v) {
  std::string out;
  for (char c : v) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

std::string spreads_text(const json& j) {
  if (j.value("kind", "") != "number")
    return j.value("same_as_baseline", false) ? "same" : "different";
  const auto& s = j["deviation_spreads"];
  char buf[48];
  if (s.is_number())
    std::snprintf(buf, sizeof(buf), "%+.1f", s.get<double>());
  else
    std::snprintf(buf, sizeof(buf), "%s", "inf");
  return buf;
}

std::string percent_text(const json& j) {
  if (j.value("kind", "") != "number" || !j["deviation_percent"].is_number()) return "-";
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%+.2f %%", j["deviation_percent"].get<double>());
  return buf;
}

}  // namespace

std::string check_text(const json& c) {
  std::ostringstream out;
  out << c.value("verdict", "") << "\n";
  const auto& b = c["baseline"];
  const auto& r = c["result"];
  out << "result: " << r.value("gpu_name", "") << " " << r.value("gpu_uuid", "")
      << (r.value("host", "").empty() ? "" : " on " + r.value("host", "")) << "\n";
  out << "baseline: " << b.value("name", "") << " (" << b.value("gpu_model", "") << ", "
      << b.value("cards", 0) << " cards, " << b.value("runs", 0) << " runs)\n";
  for (const auto& d : c.value("samples_version_differences", json::array()))
    out << "note: experiment " << d.value("experiment", "") << " wrote samples_version "
        << d["result"].dump() << ", the baseline rests on " << d["baseline"].dump()
        << ": its findings may not be comparable\n";
  for (const auto& j : c["findings"])
    if (j.value("out_of_family", false)) {
      out << "  out of family: " << j.value("name", "") << " " << j.value("text", "")
          << " (baseline " << j.value("baseline_text", "");
      if (j.value("kind", "") == "number")
        out << ", " << percent_text(j) << ", " << spreads_text(j) << " spreads";
      else
        out << ", " << j.value("baseline_agree", 0) << " of " << j.value("baseline_cards", 0)
            << " cards; different";
      out << "): " << j.value("hint", "") << "\n";
    }
  char line[512];
  std::snprintf(line, sizeof(line), "\n%-52s %18s %18s %10s %8s  %s\n", "finding", "value",
                "baseline", "deviation", "spreads", "status");
  out << line;
  for (const auto& j : c["findings"]) {
    std::snprintf(line, sizeof(line), "%-52s %18s %18s %10s %8s  %s\n", j.value("name", "").c_str(),
                  j.value("text", "").c_str(), j.value("baseline_text", "").c_str(),
                  percent_text(j).c_str(), spreads_text(j).c_str(),
                  j.value("out_of_family", false) ? "OUT OF FAMILY"
                  : j.value("uncertain", false)   ? "uncertain (confidence < 0.5)"
                                                  : "in family");
    out << line;
  }
  const auto& s = c["summary"];
  out << "\n"
      << s.value("shared", 0) << " findings judged, " << s.value("out_of_family", 0)
      << " out of family\n";
  if (s.value("only_in_result", 0) > 0)
    out << s.value("only_in_result", 0)
        << " only in the result (not judged): " << join(c["only_in_result"]) << "\n";
  if (s.value("only_in_baseline", 0) > 0)
    out << s.value("only_in_baseline", 0)
        << " only in the baseline (not measured): " << join(c["only_in_baseline"]) << "\n";
  out << "rule: " << c.value("rule", "") << "\n";
  return out.str();
}

std::string check_prometheus(const json& c) {
  const auto& r = c["result"];
  const std::string gpu = "gpu_uuid=\"" + label_value(r.value("gpu_uuid", "")) + "\",host=\"" +
                          label_value(r.value("host", "")) + "\",gpu_model=\"" +
                          label_value(c["baseline"].value("gpu_model", "")) + "\"";
  std::ostringstream out;
  auto header = [&](const char* name, const char* help) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " gauge\n";
  };
  header("gpuprobe_check_out_of_family",
         "1 when any finding of the GPU is out of family against the baseline");
  out << "gpuprobe_check_out_of_family{" << gpu << "} " << (c.value("out_of_family", false) ? 1 : 0)
      << "\n";
  header("gpuprobe_check_findings", "findings judged against the baseline");
  out << "gpuprobe_check_findings{" << gpu << "} " << c["summary"].value("shared", 0) << "\n";
  header("gpuprobe_check_findings_out_of_family", "findings out of family");
  out << "gpuprobe_check_findings_out_of_family{" << gpu << "} "
      << c["summary"].value("out_of_family", 0) << "\n";
  auto labels = [&](const json& j) {
    return "{" + gpu + ",name=\"" + label_value(j.value("name", "")) + "\",unit=\"" +
           label_value(j.value("unit", "")) + "\"}";
  };
  header("gpuprobe_finding_value", "the finding's value in its unit");
  for (const auto& j : c["findings"])
    out << "gpuprobe_finding_value" << labels(j) << " " << sample_value(j["value"].get<double>())
        << "\n";
  header("gpuprobe_finding_baseline_median",
         "the baseline's median (numbers) or most common value (categories)");
  for (const auto& j : c["findings"]) {
    const json& m = j.value("kind", "") == "number" ? j["baseline_median"] : j["baseline_value"];
    out << "gpuprobe_finding_baseline_median" << labels(j) << " " << sample_value(m.get<double>())
        << "\n";
  }
  header("gpuprobe_finding_deviation_spreads",
         "(value - baseline median) / combined spread, numbers only");
  for (const auto& j : c["findings"]) {
    if (j.value("kind", "") != "number") continue;
    const auto& s = j["deviation_spreads"];
    const double v =
        s.is_number() ? s.get<double>() : std::copysign(INFINITY, j["deviation"].get<double>());
    out << "gpuprobe_finding_deviation_spreads" << labels(j) << " " << sample_value(v) << "\n";
  }
  header("gpuprobe_finding_out_of_family", "1 when the finding is out of family");
  for (const auto& j : c["findings"])
    out << "gpuprobe_finding_out_of_family" << labels(j) << " "
        << (j.value("out_of_family", false) ? 1 : 0) << "\n";
  return out.str();
}

std::string check_junit(const json& c) {
  const auto& s = c["summary"];
  std::ostringstream out;
  const std::string suite = "gpuprobe.check " + c["result"].value("gpu_uuid", "");
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"gpuprobe check\" tests=\"" << s.value("shared", 0) << "\" failures=\""
      << s.value("out_of_family", 0) << "\">\n"
      << "  <testsuite name=\"" << xml(suite) << "\" tests=\"" << s.value("shared", 0)
      << "\" failures=\"" << s.value("out_of_family", 0) << "\" errors=\"0\" skipped=\"0\">\n";
  for (const auto& j : c["findings"]) {
    out << "    <testcase classname=\"gpuprobe." << xml(j.value("experiment", "")) << "\" name=\""
        << xml(j.value("name", "")) << "\">";
    const std::string detail = j.value("name", "") + " " + j.value("text", "") + " (baseline " +
                               j.value("baseline_text", "") + ", " + percent_text(j) + ", " +
                               spreads_text(j) +
                               (j.value("kind", "") == "number" ? " spreads" : "") + ")";
    if (j.value("out_of_family", false))
      out << "\n      <failure type=\"out_of_family\" message=\""
          << xml(detail + ": " + j.value("hint", "")) << "\">" << xml(detail) << "</failure>\n    ";
    out << "</testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

}  // namespace gpuprobe::report
