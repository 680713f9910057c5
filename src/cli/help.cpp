#include "cli/help.hpp"

#include <map>
#include <vector>

#include "build_info.hpp"

namespace gpuprobe::cli {
namespace {

/// A global option as one subcommand reads it: its name and what it means there (empty: the
/// option's own description).
struct Used {
  const char* option;
  const char* meaning;
};

/// The global options each subcommand reads; "*" stands for all of them (the commands that
/// measure). A subcommand not listed reads none.
const std::map<std::string, std::vector<Used>>& global_options_used() {
  static const std::map<std::string, std::vector<Used>> kUsed = {
      {"info", {{"--device", ""}}},
      {"list", {{"--device", "also mark the experiments waived on this GPU"}}},
      {"run", {{"*", ""}}},
      {"characterize", {{"*", ""}}},
      {"repeat", {{"*", ""}}},
      {"fleet", {{"*", ""}}},
      {"merge", {{"--out", "directory for fleet.json"}}},
      {"compare", {{"--out", "also write compare.html (both runs' curves on one chart) here"}}},
      {"report",
       {{"--out", "directory for report.html and FINDINGS.md (default: beside the result)"}}},
      {"replay",
       {{"--out",
         "directory for the replay's result and report (default: <result's dir>/replay)"}}},
      {"repeat-table", {{"--out", "also write repeat.json here"}}},
      {"summary", {{"--verbose", ""}}},
  };
  return kUsed;
}

/// CLI11's option line with the meaning the option has for one subcommand.
class MeaningFormatter : public CLI::Formatter {
 public:
  explicit MeaningFormatter(std::string meaning) : meaning_(std::move(meaning)) {}
  std::string make_option_desc(const CLI::Option* opt) const override {
    return meaning_.empty() ? opt->get_description() : meaning_;
  }

 private:
  std::string meaning_;
};

}  // namespace

std::string help_text(const CLI::App& app) {
  // App::help() already delegates to the parsed subcommand (and its parsed subcommand).
  std::string text = app.help();
  const CLI::App* sub = &app;
  while (!sub->get_subcommands().empty()) sub = sub->get_subcommands().front();
  if (sub == &app) return text;
  const auto it = global_options_used().find(sub->get_name());
  if (it == global_options_used().end()) return text;
  std::string lines;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_lnames().empty() || opt->get_group().empty() || opt->check_name("--help") ||
        opt->check_name("--help-all") || opt->check_name("--version"))
      continue;
    for (const Used& u : it->second)
      if (std::string(u.option) == "*" || opt->check_name(u.option))
        lines += MeaningFormatter(u.meaning).make_option(opt, false);
  }
  if (lines.empty()) return text;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text + "\n\nglobal options (before or after " + sub->get_name() + "):\n" + lines;
}

std::string version_text() {
  return std::string("gpuprobe ") + build::kVersion + " (" + build::kGitSha + ")";
}

std::string subcommand_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (!names.empty()) names += ", ";
    names += sub->get_name();
  }
  return names;
}

}  // namespace gpuprobe::cli
