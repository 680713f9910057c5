#pragma once
// From a run-time value to a compile-time template argument: kernels that differ only by an
// operator, a cache hint or an unroll factor are one template, and this picks the instance.
#include <type_traits>

namespace gpuprobe {

/// Calls f(std::integral_constant<decltype(V), V>{}) for the first V among kValues equal to
/// `value`; returns false (and calls nothing) when none is.
template <auto... kValues, class T, class F>
bool dispatch(T value, F&& f) {
  return ((value == kValues && (f(std::integral_constant<decltype(kValues), kValues>{}), true)) ||
          ...);
}

}  // namespace gpuprobe
