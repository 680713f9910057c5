#include "cli/compare_command.hpp"

#include <filesystem>

#include "cli/from_file.hpp"
#include "core/error.hpp"
#include "core/json_input.hpp"
#include "report/compare.hpp"
#include "report/writer.hpp"

namespace gpuprobe::cli {
namespace {

namespace fs = std::filesystem;

std::string formatted(const report::Comparison& c, const CompareOptions& o) {
  if (o.format == "md") return report::compare_markdown(c, o.changed_only);
  if (o.format == "csv") return report::compare_csv(c, o.changed_only);
  if (o.format == "json") return report::compare_json(c, o.changed_only).dump(2) + "\n";
  if (o.format == "text") return report::compare_text(c, o.changed_only);
  throw UsageError("--format '" + o.format + "' is not known; allowed: text, md, csv, json");
}

}  // namespace

int compare_command(const std::string& path_a, const std::string& path_b,
                    const CompareOptions& options, std::ostream& out) {
  const auto a = json_input::load_result(path_a), b = json_input::load_result(path_b);
  if (!options.out_dir.empty()) report::check_writable(options.out_dir);
  const std::string both = path_a + " / " + path_b;
  // Everything is made before anything is written or printed: a result it cannot read leaves
  // nothing behind.
  const auto c = from_file(both, [&] { return report::compare(a, b); });
  const std::string text = from_file(both, [&] { return formatted(c, options); });
  std::string html;
  if (!options.out_dir.empty())
    html = from_file(both, [&] {
      return report::compare_html(c, a, fs::path(path_a).parent_path().string(), b,
                                  fs::path(path_b).parent_path().string(), options.changed_only);
    });
  if (options.out_dir.empty()) {
    out << text;
    return 0;
  }
  const auto target = fs::path(options.out_dir) / "compare.html";
  try {
    fs::create_directories(options.out_dir);
    report::write_file_atomically(target, html);
  } catch (const std::exception& e) {
    throw UsageError("cannot write '" + target.string() + "' (" + first_line(e.what()) + ")");
  }
  out << text;
  if (options.format == "text") out << "compare: " << target.string() << "\n";
  return 0;
}

}  // namespace gpuprobe::cli
