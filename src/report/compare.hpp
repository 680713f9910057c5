#pragma once
// Two results set side by side: what changed, judged against what each run stated about itself.
//
// A number's difference is judged by its z, |B - A| over the two runs' combined standard error
// (noise.hpp: each run's standard error is the one its confidence states at +-2 %; a finding
// measured as replicates in both runs is judged by Welch's t on the replicates' own standard
// errors, read as a z). The difference is beyond noise when z, as shown with two decimals,
// reaches noise::beyond_z() shown the same way (3.29, separation 0.9): the judgement column
// always agrees with the z column. A category, a yes/no or a mask is never given a percent or a
// z: it is the same or different.
//
// Rows come sorted by significance: beyond noise (largest z first), differing categories, unit
// changes, findings only in A or only in B, within noise (largest z first), equal categories.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/finding_value.hpp"

namespace gpuprobe::report {

enum class Verdict { kBeyond, kDifferent, kUnitsDiffer, kOnlyInA, kOnlyInB, kWithin, kSame };
/// "beyond noise", "different", "units differ", "only in A", "only in B", "within noise", "same".
std::string to_string(Verdict v);

struct CompareRow {
  std::string name;
  ValueKind kind = ValueKind::kNumber;
  nlohmann::json a, b;         ///< the two findings (null where a result lacks it)
  std::string a_text, b_text;  ///< each value as shown, with its unit ("-" where absent)
  std::string change;          ///< numbers in both: "+1.2%" (empty when A is 0); else empty
  double change_percent = 0;   ///< meaningful where `change` is not empty
  std::string z;               ///< numbers in both: "3.41" or "inf"; else empty
  double z_value = 0;
  Verdict verdict = Verdict::kSame;
  /// Beyond noise or a different category: what --changed keeps.
  bool changed() const { return verdict == Verdict::kBeyond || verdict == Verdict::kDifferent; }
};

struct Comparison {
  std::string a_label, b_label;         ///< "NVIDIA H200 GPU-..., git 4e3f3fa75c98, <started>"
  std::vector<std::string> warnings;    ///< different builds, GPU models or drivers
  std::vector<CompareRow> rows;         ///< sorted by significance (see the header comment)
  std::size_t numbers = 0, beyond = 0;  ///< numbers in both (same unit), moved of them
  std::size_t categories = 0, different = 0;  ///< categories/yes-no/masks in both, differing
  std::size_t only_a = 0, only_b = 0, units_differ = 0;
};

/// The shown threshold of z (3.29).
std::string beyond_z_text();
/// The rule in words: "beyond noise = |B - A| of at least 3.29 combined standard errors ...".
std::string threshold_rule();

/// The comparison of two loaded results (checked by json_input::load_result).
Comparison compare(const nlohmann::json& a, const nlohmann::json& b);

/// "37 of 282 findings moved beyond noise; 2 of 5 categories differ; 5 only in A, 1 only in B".
std::string count_line(const Comparison& c);

/// The rows a listing shows: all, or with `changed_only` those beyond noise or different.
std::vector<const CompareRow*> shown_rows(const Comparison& c, bool changed_only);

/// Warnings, the count line, the rule, A and B, then an aligned table.
std::string compare_text(const Comparison& c, bool changed_only);
/// The same as markdown: warnings in bold, then a table.
std::string compare_markdown(const Comparison& c, bool changed_only);
/// A header line (finding,kind,a,b,change_percent,z,judgement) and one line per row.
std::string compare_csv(const Comparison& c, bool changed_only);
/// {"a", "b", "warnings", "threshold", "counts", "rows": [{name, kind, a, b, change_percent, z,
/// judgement}]}, each side's value in its typed form.
nlohmann::json compare_json(const Comparison& c, bool changed_only);

/// The self-contained compare.html: counts, warnings, the table and, for every curve both
/// results hold, the two runs drawn on one chart. `dir_a` / `dir_b`: where each result's curve
/// CSV files lie (the result's directory).
std::string compare_html(const Comparison& c, const nlohmann::json& a, const std::string& dir_a,
                         const nlohmann::json& b, const std::string& dir_b, bool changed_only);

}  // namespace gpuprobe::report
