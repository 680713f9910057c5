#pragma once
// The pure part of bandwidth.read / write / copy (host only, unit tested): which search row each
// finding reports, the variants table, and the findings from the confirmation passes.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/experiment.hpp"
#include "probes/bandwidth/stream_samples.hpp"

namespace gpuprobe::probes::bwhost {

/// For each finding name, the index of the search row it reports: `base` = the best passed row,
/// `base.single_pass` = the best row sweeping the array once (only when the best sweeps it more
/// often), `base.width_<w>b` = the best row of each width. Rows whose status is not "passed"
/// (or that are driver references) never count.
std::map<std::string, std::size_t> stream_winners(const std::vector<StreamRow>& rows,
                                                  const std::string& base);

/// The variants table (one row per search row, failed rows with their status and reason).
Curve stream_variants_curve(const std::vector<StreamRow>& rows, double peak);

/// Findings from samples {variants, references, confirmations} (StreamSamples, converted once):
/// each finding is its confirmation pass (value = the confirmation's median, confidence =
/// confidence::precision of its samples), the search's best beside it; a failed confirmation
/// emits no finding and makes the experiment an error with the reason. Records without
/// confirmations (written before them) report the search's best, saying so in the method.
void analyze_stream(ExperimentResult& r, const std::string& base,
                    const std::string& reference_suffix);

}  // namespace gpuprobe::probes::bwhost
