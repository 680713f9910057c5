#include "cli/option_axes.hpp"

#include <string>

#include "core/error.hpp"

namespace gpuprobe::cli {
namespace {

// The widest ranges any experiment accepts: bandwidth.stride takes element strides 1..64 and
// bandwidth.offset start offsets 0..64 elements (smem.bank_conflicts narrows strides to 1..32).
constexpr int kMaxStride = 64;
constexpr int kMaxOffset = 64;

std::vector<std::string> as_texts(const std::vector<int>& values) {
  std::vector<std::string> texts;
  for (int v : values) texts.push_back(std::to_string(v));
  return texts;
}

}  // namespace

const std::vector<OptionAlias>& option_aliases() {
  static const std::vector<OptionAlias> aliases = {
      {"--strides", {"stride_elements", "stride_words"}},
      {"--offsets", {"offset_elements", "diagnostic_offset_elements"}},
      {"--word-sizes", {"width_bytes", "word_bytes"}},
      {"--carveouts", {"carveout_percent"}},
      {"--array-size", {"array_bytes"}},
  };
  return aliases;
}

void check_family_options(const FamilyOptions& f) {
  for (int s : f.strides)
    if (s < 1 || s > kMaxStride)
      throw UsageError("--strides: stride " + std::to_string(s) + " is not allowed; use 1.." +
                       std::to_string(kMaxStride) + " elements");
  for (int off : f.offsets)
    if (off < 0 || off > kMaxOffset)
      throw UsageError("--offsets: offset " + std::to_string(off) + " is not allowed; use 0.." +
                       std::to_string(kMaxOffset) + " elements");
  for (int w : f.word_sizes)
    if (w != 4 && w != 8 && w != 16)
      throw UsageError("--word-sizes: " + std::to_string(w) + " B is not allowed; use 4, 8 or 16");
  for (int c : f.carveouts)
    if (c < -1 || c > 100)
      throw UsageError("--carveouts: " + std::to_string(c) +
                       " is not allowed; use -1 (driver default) or 0..100 percent shared memory");
}

std::vector<AxisOverride> family_overrides(const Registry& registry, const FamilyOptions& f) {
  const auto values_of = [&](const std::string& option) -> std::vector<std::string> {
    if (option == "--strides") return as_texts(f.strides);
    if (option == "--offsets") return as_texts(f.offsets);
    if (option == "--word-sizes") return as_texts(f.word_sizes);
    if (option == "--carveouts") return as_texts(f.carveouts);
    if (option == "--array-size" && f.array_bytes > 0) return {std::to_string(f.array_bytes)};
    return {};
  };
  std::vector<AxisOverride> out;
  for (const auto& alias : option_aliases()) {
    const auto values = values_of(alias.option);
    if (values.empty()) continue;
    for (const auto& e : registry.all())
      for (const auto& axis : e->typed_axes())
        for (const auto& name : alias.axes)
          if (axis.overridable && axis.name == name)
            out.push_back({e->id(), axis.name, values, alias.option});
  }
  return out;
}

}  // namespace gpuprobe::cli
