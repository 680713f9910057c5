#include "core/l2_residency.hpp"

#include "core/error.hpp"
#include "core/text_input.hpp"

using gpuprobe::text_input::quoted;

namespace gpuprobe {

std::string to_string(AccessProperty p) {
  switch (p) {
    case AccessProperty::kNormal:
      return "normal";
    case AccessProperty::kStreaming:
      return "streaming";
    case AccessProperty::kPersisting:
      return "persisting";
  }
  return "normal";
}

std::string to_string(EvictionHint h) {
  switch (h) {
    case EvictionHint::kNone:
      return "none";
    case EvictionHint::kEvictFirst:
      return "evict_first";
    case EvictionHint::kEvictNormal:
      return "evict_normal";
    case EvictionHint::kEvictLast:
      return "evict_last";
    case EvictionHint::kEvictUnchanged:
      return "evict_unchanged";
  }
  return "none";
}

AccessProperty parse_access_property(const std::string& text) {
  for (auto p : {AccessProperty::kNormal, AccessProperty::kStreaming, AccessProperty::kPersisting})
    if (to_string(p) == text) return p;
  throw UsageError("access property " + quoted(text) + "; allowed: normal, streaming, persisting");
}

EvictionHint parse_eviction_hint(const std::string& text) {
  for (auto h : {EvictionHint::kNone, EvictionHint::kEvictFirst, EvictionHint::kEvictNormal,
                 EvictionHint::kEvictLast, EvictionHint::kEvictUnchanged})
    if (to_string(h) == text) return h;
  throw UsageError("eviction hint " + quoted(text) +
                   "; allowed: none, evict_first, evict_normal, evict_last, evict_unchanged");
}

void check_bulk_loads(std::uint64_t buffer_bytes, const BulkLoads& l,
                      const PersistingLimits& limits) {
  const auto range = [&] {
    return "bulk loads over [" + std::to_string(l.offset) + ", +" + std::to_string(l.bytes) + ")";
  };
  if (l.bytes == 0 || l.offset % 16 != 0 || l.bytes % 16 != 0 || l.offset > buffer_bytes ||
      l.bytes > buffer_bytes - l.offset)
    throw UsageError(range() + " of a " + std::to_string(buffer_bytes) +
                     "-B buffer; allowed: a non-empty range inside it, offset and length "
                     "multiples of 16 B");
  if (l.windowed) {
    const auto& w = l.window;
    if (w.bytes == 0 || w.offset < l.offset || w.offset > l.offset + l.bytes ||
        w.bytes > l.offset + l.bytes - w.offset)
      throw UsageError(range() + ": the access-policy window must be a non-empty part of it");
    if (w.bytes > limits.max_window_bytes)
      throw UsageError("access-policy window of " + std::to_string(w.bytes) +
                       " B; allowed: at most accessPolicyMaxWindowSize (" +
                       std::to_string(limits.max_window_bytes) + " B)");
    if (!(w.hit_ratio >= 0.0 && w.hit_ratio <= 1.0))
      throw UsageError("access-policy window hitRatio " + std::to_string(w.hit_ratio) +
                       "; allowed: 0 .. 1");
    if (w.miss == AccessProperty::kPersisting)
      throw UsageError("access-policy window missProp persisting; allowed: normal, streaming");
  }
  if (l.hint != EvictionHint::kNone && !(l.hint_fraction > 0.0 && l.hint_fraction <= 1.0))
    throw UsageError("eviction-priority fraction " + std::to_string(l.hint_fraction) +
                     "; allowed: above 0, at most 1");
  if (!(l.select_share > 0.0 && l.select_share <= 1.0))
    throw UsageError("scattered placement share " + std::to_string(l.select_share) +
                     "; allowed: above 0, at most 1");
  if (l.select_share < 1.0 && (l.offset % 128 != 0 || l.bytes % 128 != 0))
    throw UsageError(range() +
                     ": a scattered placement selects whole lines; allowed: offset "
                     "and length multiples of 128 B");
}

void check_line_range(std::uint64_t buffer_bytes, std::uint64_t offset, std::uint64_t bytes,
                      const char* what) {
  if (bytes == 0 || offset % 128 != 0 || bytes % 128 != 0 || offset > buffer_bytes ||
      bytes > buffer_bytes - offset)
    throw UsageError(std::string(what) + " over [" + std::to_string(offset) + ", +" +
                     std::to_string(bytes) + ") of a " + std::to_string(buffer_bytes) +
                     "-B buffer; allowed: a non-empty range inside it, offset and length "
                     "multiples of 128 B");
}

L2Residency* as_l2_residency(device::Device& device) { return dynamic_cast<L2Residency*>(&device); }

}  // namespace gpuprobe
