#pragma once
// Is this card normal? One result judged against a baseline of its GPU model
// (report/baseline.hpp), finding by finding, with a verdict line that names what is off and
// what to look at first. Renders the judgement as text, JSON, Prometheus text exposition (for
// node-exporter's textfile collector) and JUnit XML. Pure: no device, no files.
#include <nlohmann/json.hpp>
#include <string>

namespace gpuprobe::report {

/// A number is out of family when |value - median| > kFamilyLimit x the combined spread
/// sqrt(card_spread^2 + own^2), where own = max(the finding's own spread (finding_spread), the
/// baseline's run-to-run spread), and it also lies more than kFamilyLimit x own outside the span
/// of the baseline's per-card medians [card_min, card_max].
inline constexpr double kFamilyLimit = 3.0;
/// A finding whose own confidence is below this is uncertain: shown, never out of family.
inline constexpr double kUncertainConfidence = 0.5;

/// The check report ("kind": "gpuprobe.check"): every finding the result and baseline share,
/// in or out of family, those on one side only, samples_version differences, and the verdict.
/// `baseline_name` is what the user named (or the shipped file's). Throws UsageError when the
/// two share no finding.
nlohmann::json check_result(const nlohmann::json& result, const nlohmann::json& baseline,
                            const std::string& baseline_name);

/// The verdict line, then one line per out-of-family finding, then a table of the rest.
std::string check_text(const nlohmann::json& check);
/// Prometheus text exposition format 0.0.4 (gauges; labels gpu_uuid, host, gpu_model, name).
std::string check_prometheus(const nlohmann::json& check);
/// JUnit XML: one testsuite, one testcase per shared finding, a failure per out-of-family one.
std::string check_junit(const nlohmann::json& check);

/// How much slower the slowest finding of a check is, in combined spreads (positive = slower:
/// lower for a bandwidth or throughput, higher for a latency); 0 when nothing is slower.
double slowness_in_spreads(const nlohmann::json& check);

}  // namespace gpuprobe::report
