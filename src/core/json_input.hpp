#pragma once
// Reading JSON that came from outside the program (result.json, model files): every field is
// read through a typed accessor that knows its JSON path, so a file of the wrong shape fails
// with one line naming the field ("result.json: experiments[3].findings[0].value: expected a
// number, got a string"), never with an exception from deep inside the JSON library.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace gpuprobe::json_input {

/// Nesting deeper than this is refused before parsing (the library's destructor and dump are
/// recursive; a hostile file could exhaust the stack).
inline constexpr int kMaxDepth = 256;

/// "a number", "a string", "an object", ... for messages.
std::string type_name(const nlohmann::json& j);

/// Reads and parses `path`, gzipped or not (core/gzip.hpp: by its magic bytes, inflated to at
/// most files::kMaxInputBytes). Throws UsageError (one line) when it is missing, a directory,
/// unreadable, corrupt gzip, not JSON, or nested deeper than kMaxDepth.
nlohmann::json load_file(const std::string& path, const std::string& what);

/// A node of a loaded document and where it is; every accessor throws UsageError
/// "<file>: <path>: expected ..., got ..." when the node is not what is asked for.
class Reader {
 public:
  Reader(const nlohmann::json& node, std::string file, std::string path = "")
      : node_(&node), file_(std::move(file)), path_(std::move(path)) {}

  /// A required member of an object.
  Reader at(const std::string& key) const;
  /// An optional member of an object (nullopt when absent).
  std::optional<Reader> find(const std::string& key) const;
  /// An element of an array.
  Reader at(std::size_t index) const;

  const nlohmann::json& object() const;
  const nlohmann::json& array() const;
  std::size_t size() const { return array().size(); }
  double number() const;  ///< a finite number
  std::int64_t integer() const;
  std::uint64_t unsigned_integer() const;
  std::string string() const;
  bool boolean() const;

  const nlohmann::json& json() const { return *node_; }
  const std::string& path() const { return path_; }
  /// Throws UsageError "<file>: <path>: <what>".
  [[noreturn]] void fail(const std::string& what) const;

 private:
  [[noreturn]] void expected(const std::string& what) const;
  const nlohmann::json* node_;
  std::string file_, path_;
};

/// Checks every field gpuprobe's readers of a result (analyze, compare, report, export-model,
/// the summary table) use: schema_version 1, tool, device, experiments with their findings.
/// Throws UsageError naming the first field of the wrong shape. `file` is used in messages.
void check_result_shape(const nlohmann::json& result, const std::string& file);

/// load_file + check_result_shape.
nlohmann::json load_result(const std::string& path);

}  // namespace gpuprobe::json_input
