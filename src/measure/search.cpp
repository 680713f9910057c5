#include "measure/search.hpp"

#include "core/confidence.hpp"
#include "core/error.hpp"

namespace gpuprobe::measure {

std::string to_string(RowStatus s) {
  switch (s) {
    case RowStatus::kPassed:
      return "passed";
    case RowStatus::kError:
      return "error";
    case RowStatus::kSkipped:
      return "skipped";
  }
  return "?";
}

Outcome run_guarded(const std::function<Measured()>& measure) {
  Outcome o;
  try {
    o.measured = measure();
  } catch (const SkipRow& e) {
    o = {RowStatus::kSkipped, e.what(), {}};
  } catch (const VerificationError& e) {
    o = {RowStatus::kError, e.what(), {}};
  } catch (const CudaError& e) {
    // A sticky error leaves the context unusable: nothing after it could be measured.
    if (e.sticky()) throw;
    o = {RowStatus::kError, e.what(), {}};
  }
  return o;
}

nlohmann::json to_json(const Confirmation& c) {
  nlohmann::json j = {{"winner_row", c.winner},
                      {"search_value", c.search_value},
                      {"status", to_string(c.outcome.status)}};
  if (c.ok()) {
    j["value"] = c.outcome.measured.value;
    j["samples"] = c.outcome.measured.samples;
    j.update(c.outcome.measured.detail);
  } else {
    j["reason"] = c.outcome.reason;
  }
  return j;
}

nlohmann::json summarize_statuses(const std::vector<std::pair<RowStatus, std::string>>& statuses) {
  std::size_t passed = 0, error = 0, skipped = 0;
  nlohmann::json errors = nlohmann::json::array(), skips = nlohmann::json::array();
  for (const auto& [s, text] : statuses) {
    if (s == RowStatus::kPassed) ++passed;
    if (s == RowStatus::kError) {
      ++error;
      errors.push_back(text);
    }
    if (s == RowStatus::kSkipped) {
      ++skipped;
      skips.push_back(text);
    }
  }
  return {{"rows", statuses.size()}, {"passed", passed}, {"error", error},
          {"skipped", skipped},      {"errors", errors}, {"skipped_reasons", skips}};
}

double confirmed_confidence(const Confirmation& c) {
  if (!c.ok()) return 0.0;
  return confidence::precision(c.outcome.measured.samples, c.outcome.measured.value);
}

}  // namespace gpuprobe::measure
