#pragma once
// What gpuprobe prints for --help, for --version and when no subcommand is given.
#include <CLI/CLI.hpp>
#include <string>

namespace gpuprobe::cli {

/// The help of the deepest subcommand parsed (the program's when none), printed once, followed
/// for a subcommand by "global options:", the options given before or after the subcommand that
/// apply to it (e.g. --out for report and compare).
std::string help_text(const CLI::App& app);

/// "gpuprobe <version> (<git sha>)".
std::string version_text();

/// Every subcommand's name, comma-separated, in the order they were added ("info, list, ...").
std::string subcommand_names(const CLI::App& app);

}  // namespace gpuprobe::cli
