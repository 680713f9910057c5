#include "core/json_input.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/finding_value.hpp"
#include "core/gzip.hpp"
#include "core/text_input.hpp"

namespace gpuprobe::json_input {

using nlohmann::json;

std::string type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    default:
      return "a binary value";
  }
}

namespace {

/// The deepest nesting of arrays and objects in JSON text (strings skipped).
int nesting_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

std::string first_line(std::string s) {
  const auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

}  // namespace

json load_file(const std::string& path, const std::string& what) {
  if (path.empty()) throw UsageError("the " + what + " path is empty");
  // A regular file of bounded size only: a FIFO would block, /dev/zero would never end.
  std::string s = files::read_input(path, what);
  // A gzipped file (result.json.gz) reads as what it holds, bounded as any input.
  if (gzip::is_gzip(s)) s = gzip::inflate(s, files::kMaxInputBytes, path);
  if (nesting_depth(s) > kMaxDepth)
    throw UsageError(text_input::quoted(path) + " nests arrays or objects deeper than " +
                     std::to_string(kMaxDepth) + " levels; it is not a " + what);
  try {
    return json::parse(s);
  } catch (const json::exception& e) {
    throw UsageError(text_input::quoted(path) + " is not valid JSON (" + first_line(e.what()) +
                     ")");
  }
}

void Reader::fail(const std::string& what) const {
  throw UsageError(file_ + ": " + (path_.empty() ? std::string("(top level)") : path_) + ": " +
                   what);
}

void Reader::expected(const std::string& what) const {
  fail("expected " + what + ", got " + type_name(*node_));
}

Reader Reader::at(const std::string& key) const {
  const auto& o = object();
  const auto it = o.find(key);
  const std::string p = path_.empty() ? key : path_ + "." + key;
  if (it == o.end()) Reader(*node_, file_, p).fail("missing");
  return Reader(*it, file_, p);
}

std::optional<Reader> Reader::find(const std::string& key) const {
  const auto& o = object();
  const auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  return Reader(*it, file_, path_.empty() ? key : path_ + "." + key);
}

Reader Reader::at(std::size_t index) const {
  const auto& a = array();
  const std::string p = path_ + "[" + std::to_string(index) + "]";
  if (index >= a.size()) Reader(*node_, file_, p).fail("missing");
  return Reader(a[index], file_, p);
}

const json& Reader::object() const {
  if (!node_->is_object()) expected("an object");
  return *node_;
}

const json& Reader::array() const {
  if (!node_->is_array()) expected("an array");
  return *node_;
}

double Reader::number() const {
  if (!node_->is_number()) expected("a number");
  const double v = node_->get<double>();
  if (!std::isfinite(v)) fail("expected a finite number");
  return v;
}

std::int64_t Reader::integer() const {
  if (node_->is_number_unsigned()) {
    if (node_->get<std::uint64_t>() >
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail("integer out of range");
    return node_->get<std::int64_t>();
  }
  if (node_->is_number_integer()) return node_->get<std::int64_t>();
  if (node_->is_number_float()) {
    const double v = node_->get<double>();
    // Written as 128.0 by some tools: accepted when it is a whole number in range.
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15)
      return static_cast<std::int64_t>(v);
    fail("expected an integer, got " + node_->dump());
  }
  expected("an integer");
}

std::uint64_t Reader::unsigned_integer() const {
  if (node_->is_number_unsigned()) return node_->get<std::uint64_t>();
  const std::int64_t v = integer();
  if (v < 0) fail("expected a non-negative integer, got " + std::to_string(v));
  return static_cast<std::uint64_t>(v);
}

std::string Reader::string() const {
  if (!node_->is_string()) expected("a string");
  return node_->get<std::string>();
}

bool Reader::boolean() const {
  if (!node_->is_boolean()) expected("a boolean");
  return node_->get<bool>();
}

namespace {

void optional_number(const Reader& r, const char* key) {
  if (auto x = r.find(key)) x->number();
}
void optional_string(const Reader& r, const char* key) {
  if (auto x = r.find(key)) x->string();
}
void optional_object(const Reader& r, const char* key) {
  if (auto x = r.find(key)) x->object();
}

void check_compute_capability(const Reader& r) {
  const std::string cc = r.string();
  const auto dot = cc.find('.');
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 3 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (dot == std::string::npos || !digits(cc.substr(0, dot)) || !digits(cc.substr(dot + 1)))
    r.fail("expected a compute capability like \"9.0\", got " + text_input::quoted(cc));
}

void check_finding(const Reader& f) {
  f.object();
  f.at("name").string();
  f.at("value").number();
  f.at("unit").string();
  const double c = f.at("confidence").number();
  if (c < 0 || c > 1) f.at("confidence").fail("expected a confidence in [0, 1]");
  f.at("method").string();
  optional_number(f, "value_ns");
  optional_string(f, "load");
}

/// A curve's columns (strings) and rows (arrays of numbers, strings, booleans or nulls, as long
/// as columns), when it carries them: the report draws them.
void check_curve_table(const Reader& c) {
  std::size_t width = 0;
  if (auto columns = c.find("columns")) {
    width = columns->size();
    for (std::size_t k = 0; k < width; ++k) columns->at(k).string();
  }
  auto rows = c.find("rows");
  if (!rows) return;
  if (!c.find("columns")) c.at("columns");  // rows without their columns: "missing"
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const auto row = rows->at(i);
    if (row.size() != width)
      row.fail("expected a row of " + std::to_string(width) + " cells (one per column), got " +
               std::to_string(row.size()));
    for (std::size_t k = 0; k < width; ++k) {
      const auto& v = row.at(k).json();
      if (v.is_object() || v.is_array())
        row.at(k).fail("expected a number, string, boolean or null, got " + type_name(v));
    }
  }
}

void check_experiment(const Reader& e) {
  e.object();
  e.at("id").string();
  const std::string status = e.at("status").string();
  if (status != "passed" && status != "waived" && status != "error")
    e.at("status").fail("expected passed, waived or error, got " + text_input::quoted(status));
  optional_string(e, "reason");
  optional_number(e, "wall_s");
  for (const char* key : {"protocol", "parameters", "samples", "statistics"})
    optional_object(e, key);
  if (status == "passed") {
    // replay_analysis and the report read these of every passed experiment.
    e.at("parameters").object();
    e.at("samples").object();
  }
  if (auto version = e.find("samples_version"))
    if (version->integer() < 1) version->fail("expected a samples version of 1 or more");
  if (auto findings = e.find("findings")) {
    for (std::size_t i = 0; i < findings->size(); ++i) check_finding(findings->at(i));
  } else if (status == "passed") {
    e.at("findings");
  }
  if (auto curves = e.find("curves"))
    for (std::size_t i = 0; i < curves->size(); ++i) {
      const auto c = curves->at(i);
      c.at("name").string();
      if (auto file = c.find("file")) file->string();
      check_curve_table(c);
    }
  if (auto clocks = e.find("clocks")) {
    clocks->object();
    optional_number(*clocks, "sm_clock_drift_percent");
    for (const char* key : {"sm_clock_drift_flagged", "throttled"})
      if (auto b = clocks->find(key)) b->boolean();
    optional_object(*clocks, "during");
  }
}

}  // namespace

void check_result_shape(const json& result, const std::string& file) {
  const Reader r(result, file);
  r.object();
  const auto version = r.at("schema_version");
  if (version.integer() < kOldestResultSchemaVersion || version.integer() > kResultSchemaVersion)
    version.fail("expected " + std::to_string(kOldestResultSchemaVersion) + " to " +
                 std::to_string(kResultSchemaVersion) +
                 " (the result formats this gpuprobe reads), got " + version.json().dump());
  const auto tool = r.at("tool");
  tool.object();
  tool.at("git_sha").string();
  optional_string(tool, "version");
  optional_string(r, "started_utc");
  optional_string(r, "command");
  optional_number(r, "wall_s");
  if (auto complete = r.find("complete")) complete->boolean();
  const auto device = r.at("device");
  device.object();
  device.at("name").string();
  check_compute_capability(device.at("compute_capability"));
  if (auto sm = device.find("sm_count"))
    if (sm->integer() < 0 || sm->integer() > 1000000) sm->fail("expected an SM count");
  optional_string(device, "uuid");
  for (const char* key : {"sm_clock_max_mhz", "mem_clock_max_mhz"}) optional_number(device, key);
  for (const char* key : {"mem_bus_width_bits", "global_memory_bytes", "l2_bytes"})
    if (auto x = device.find(key)) x->unsigned_integer();
  const auto experiments = r.at("experiments");
  for (std::size_t i = 0; i < experiments.size(); ++i) check_experiment(experiments.at(i));
}

json load_result(const std::string& path) {
  json result = load_file(path, "result.json written by gpuprobe");
  check_result_shape(result, path);
  return result;
}

}  // namespace gpuprobe::json_input
