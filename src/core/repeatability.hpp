#pragma once
// Run-to-run repeatability (`gpuprobe repeat N`): every finding's N values from N back-to-back
// runs, their spread, and whether they move beyond what each run stated about itself. A finding
// whose value moves more than its own confidence allows is a defect of its method or of its
// confidence (issue 9, "Run to run").
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuprobe::repeatability {

/// The repeat table of N results (each a result.json as gpuprobe writes it, already shape
/// checked): {"runs": N, "findings": [{name, unit, values[], confidences[], median,
/// run_to_run_relative_spread, max_z, beyond_stated_spread, runs_with_finding}], "beyond": k}.
/// A finding moves beyond its stated spread when some pair of runs differs beyond both runs'
/// stated spreads (noise::judge); max_z is the largest pair's z.
nlohmann::json table(const std::vector<nlohmann::json>& results);

/// The table as aligned text, worst first.
std::string format(const nlohmann::json& table);

}  // namespace gpuprobe::repeatability
