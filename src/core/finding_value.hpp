#pragma once
// What a finding's value is: a number, a yes/no, a category with its label, or a bit mask. The
// JSON keeps the numeric `value` for old readers; every writer (terminal, FINDINGS.md, CSV,
// HTML, compare, fleet) shows the typed form, and compare and fleet judge a category or a mask
// as same or different, never by a percent.
//
// The kind of a finding comes from its key (FindingKey below) where one is declared, else from
// its unit ("bool", "mask", "class"), so results written before the typed form existed read the
// same way as new ones.
#include <cstddef>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace gpuprobe {

/// The result.json format this build writes. 2 added each finding's typed form (`typed`);
/// readers take 1 and 2 alike (a version-1 finding's kind comes from its key or unit).
inline constexpr int kResultSchemaVersion = 2;
/// The oldest result.json format this build reads.
inline constexpr int kOldestResultSchemaVersion = 1;

enum class ValueKind { kNumber, kBool, kCategory, kMask };
std::string to_string(ValueKind k);

/// One value of a category: the code stored in `value`, the machine label (as in the finding's
/// method text and extra fields) and the words a reader sees.
struct CategoryLabel {
  int code;
  const char* label;
  const char* text;
};

/// A finding's name with its unit and kind (and, for a category, its labels). `name` may hold
/// one `*` standing for one dotted component (e.g. "cache.*.replacement").
struct FindingKey {
  const char* name;
  const char* unit;
  ValueKind kind;
  const CategoryLabel* labels = nullptr;
  std::size_t label_count = 0;
  /// The name, for the APIs that take one (a map key, a message).
  operator std::string() const { return name; }
};

namespace finding_key {
inline constexpr CategoryLabel kReplacementLabels[] = {
    {0, "lru", "LRU"},
    {1, "fifo", "FIFO"},
    {2, "tree_plru", "tree-PLRU"},
    {3, "random", "random"},
    {4, "none", "none of the tested classes"},
    {-1, "random_or_tree_plru", "random or tree-PLRU (tied)"},
};
inline constexpr CategoryLabel kDataVictimLabels[] = {
    {0, "global_lru", "oldest line of the cache"},
    {1, "own_set", "oldest line of the set"},
    {2, "random", "random line"},
    {3, "random_set", "random set's oldest line"},
    {4, "none", "none of the tested classes"},
    {5, "set_cycle", "sets in turn, oldest line first"},
};
/// cache.l1.ways / cache.l2.ways: the replacement class of the level.
inline constexpr FindingKey kReplacement{"cache.*.replacement", "class", ValueKind::kCategory,
                                         kReplacementLabels, std::size(kReplacementLabels)};
/// cache.l1.ways: which line a fill evicts from the L1's data array.
inline constexpr FindingKey kDataVictim{"cache.*.data_victim", "class", ValueKind::kCategory,
                                        kDataVictimLabels, std::size(kDataVictimLabels)};
/// cache.l2.far_hit: whether the near partition keeps a copy of a far line.
inline constexpr FindingKey kReplication{"l2.replication", "bool", ValueKind::kBool};
/// cache.l2.partition: the address bits whose parity chooses the partition.
inline constexpr FindingKey kHashMask{"l2.partition.hash_mask", "mask", ValueKind::kMask};
}  // namespace finding_key

/// The declared key of a finding name, or nullptr.
const FindingKey* find_key(const std::string& name);

/// A finding's value as its kind says: `text` is what every writer prints ("LRU", "yes",
/// "0xab000", or the number with its unit), `label` the machine form of a category ("lru").
struct TypedValue {
  ValueKind kind = ValueKind::kNumber;
  std::string text;   ///< the value as shown, without the unit for numbers
  std::string unit;   ///< the unit as shown ("MiB" for bytes of that size); empty when not a number
  std::string label;  ///< category: machine label; mask: hex; bool: "true"/"false"
  bool is_number() const { return kind == ValueKind::kNumber; }
};

/// The typed form of a finding (its JSON object: name, value, unit and extra fields).
TypedValue typed_value(const nlohmann::json& finding);

/// {"kind": ..., "text": ...[, "label": ...]}: the form written beside `value` in result.json.
nlohmann::json typed_json(const TypedValue& v);

/// A number rounded to what its standard error supports (two significant digits of the error,
/// trailing zeros kept as digits the error supports: 55.0810 +- 0.002; scientific where fixed
/// digits would be too many); four significant digits without trailing zeros when there is no
/// error (or one below the value's float precision): 454.9, 0.003927, 4.819e+11.
std::string format_number(double value, double standard_error = 0);

/// A number with its unit as people read it: bytes in B/KiB/MiB/GiB, seconds in s/ms/us.
/// Returns {text, unit}.
std::pair<std::string, std::string> format_quantity(double value, const std::string& unit,
                                                    double standard_error = 0);

/// The whole value as one string: "LRU", "yes", "0xab000", "454.9 cycles", "26.12 MiB".
std::string display_text(const nlohmann::json& finding);

}  // namespace gpuprobe
