#include "core/text_input.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/error.hpp"

namespace gpuprobe::text_input {

std::string escape_controls(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string quoted(const std::string& s) {
  constexpr std::size_t kLongest = 200;
  if (s.size() > kLongest) return "'" + escape_controls(s.substr(0, kLongest)) + "...'";
  return "'" + escape_controls(s) + "'";
}

namespace {

bool all_digits(const std::string& s, std::size_t from) {
  if (from >= s.size()) return false;
  for (std::size_t i = from; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

}  // namespace

std::vector<std::string> split_list(const std::string& text, const std::string& option) {
  if (text.empty()) throw UsageError(option + " is empty; give a comma-separated list");
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    items.push_back(
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (items.back().empty())
      throw UsageError(option + " " + quoted(text) +
                       " has an empty element; give values separated by single commas");
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

std::vector<int> parse_int_list(const std::string& text, const std::string& option, int lo,
                                int hi) {
  const bool any = lo == std::numeric_limits<int>::min() && hi == std::numeric_limits<int>::max();
  const std::string allowed = any ? std::string("; give integers separated by commas, e.g. 1,2,4")
                                  : "; give integers " + std::to_string(lo) + ".." +
                                        std::to_string(hi) + " separated by commas, e.g. " +
                                        std::to_string(lo) + "," + std::to_string(hi);
  if (text.empty()) throw UsageError(option + " is empty" + allowed);
  std::vector<int> values;
  for (const auto& item : split_list(text, option)) {
    if (!all_digits(item, item[0] == '-' ? 1 : 0) || item.size() > 11)
      throw UsageError(option + " " + quoted(text) + ": " + quoted(item) + " is not an integer" +
                       allowed);
    const long long v = std::stoll(item);
    if (v < lo || v > hi)
      throw UsageError(option + " " + quoted(text) + ": " + item + " is out of range" + allowed);
    values.push_back(static_cast<int>(v));
  }
  return values;
}

std::uint64_t parse_seed(const std::string& text, const std::string& option) {
  const std::string allowed =
      "; give a whole number 0.." + std::to_string(std::numeric_limits<std::uint64_t>::max());
  if (!all_digits(text, 0))
    throw UsageError(option + " " + quoted(text) + " is not a seed" + allowed);
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE || end != text.c_str() + text.size())
    throw UsageError(option + " " + quoted(text) + " is too large" + allowed);
  return static_cast<std::uint64_t>(v);
}

}  // namespace gpuprobe::text_input
