#pragma once
// What a kernel can ask of the L2 and the device seam that lets an experiment ask it: the
// persisting set-aside (cudaLimitPersistingL2CacheSize), a stream's access-policy window
// (cudaAccessPolicyWindow: hitRatio, hitProp, missProp) and a load's eviction priority
// (createpolicy + ld.global.L2::cache_hint). An experiment places a region of a probe buffer
// with bulk loads under one of these, streams other traffic, and then times a first pass over
// sampled lines of the region with the Sequencer (core/sequence.hpp) to see what stayed.
#include <cstdint>
#include <string>

#include "core/device.hpp"

namespace gpuprobe {

class ProbeBuffer;

/// cudaAccessProperty: what an access inside a window does to its line's priority.
enum class AccessProperty { kNormal, kStreaming, kPersisting };
/// The L2 eviction priority of a createpolicy.fractional cache policy (kNone: a plain load).
enum class EvictionHint { kNone, kEvictFirst, kEvictNormal, kEvictLast, kEvictUnchanged };

std::string to_string(AccessProperty p);
std::string to_string(EvictionHint h);
/// Parse the names to_string gives; throw UsageError naming the allowed values.
AccessProperty parse_access_property(const std::string& text);
EvictionHint parse_eviction_hint(const std::string& text);

/// The driver's limits for persisting accesses (cudaDeviceProp), in bytes.
struct PersistingLimits {
  std::uint64_t max_set_aside_bytes = 0;  ///< persistingL2CacheMaxSize (0: no set-aside)
  std::uint64_t max_window_bytes = 0;     ///< accessPolicyMaxWindowSize
};

/// A stream's access-policy window over [offset, offset + bytes) of the probe buffer.
struct AccessWindow {
  std::uint64_t offset = 0, bytes = 0;
  double hit_ratio = 1.0;
  AccessProperty hit = AccessProperty::kPersisting;
  AccessProperty miss = AccessProperty::kStreaming;
};

/// One bulk pass of loads (ld.global.cg, 16 B per thread, every byte of the range read once
/// and checked) over [offset, offset + bytes) of a probe buffer, by every SM.
struct BulkLoads {
  std::uint64_t offset = 0, bytes = 0;
  bool windowed = false;  ///< launch on a stream whose access-policy window is `window`
  AccessWindow window;
  EvictionHint hint = EvictionHint::kNone;  ///< createpolicy.fractional.<hint> on every load
  double hint_fraction = 1.0;               ///< the policy's fraction (0, 1]
  /// A scattered placement: only the 128-B lines core/line_select.hpp selects at this share
  /// (0, 1] and seed are loaded (1: every line). offset and bytes: multiples of 128 B then.
  double select_share = 1.0;
  std::uint64_t select_seed = 0;
};

/// What a range of a probe buffer holds, word by word: its own offset (what the buffer was made
/// with), its offset XOR a mark (what store_bulk wrote), or anything else.
struct WordCensus {
  std::uint64_t own = 0, marked = 0, other = 0;
  std::uint64_t words() const { return own + marked + other; }
};

/// Implemented by devices that can place lines under these controls (the CUDA device on
/// sm_80 and later, and the modelled GPU). Obtain it with as_l2_residency(device).
class L2Residency {
 public:
  virtual ~L2Residency() = default;
  virtual PersistingLimits persisting_limits() const = 0;
  /// Whether loads may carry createpolicy eviction priorities (sm_80 and later).
  virtual bool has_eviction_hints() const = 0;
  /// cudaLimitPersistingL2CacheSize: read, and set (what the driver kept is read back).
  virtual std::uint64_t persisting_set_aside() const = 0;
  virtual void set_persisting_set_aside(std::uint64_t bytes) = 0;
  /// cudaCtxResetPersistingL2Cache: every persisting line becomes normal.
  virtual void reset_persisting_lines() = 0;
  /// Evicts the whole L2 with plain traffic (persisting lines stay: reset them first).
  virtual void flush_l2() = 0;
  /// Throws UsageError for a range outside the buffer or a window larger than
  /// max_window_bytes; VerificationError when a loaded value is wrong.
  virtual void load_bulk(ProbeBuffer& buffer, const BulkLoads& loads) = 0;
  /// Stores (st.global, 16 B per thread) offset XOR `mark` to every word of [offset, offset +
  /// bytes): the lines become dirty in the L2. mark 0 puts the buffer's own values back.
  virtual void store_bulk(ProbeBuffer& buffer, std::uint64_t offset, std::uint64_t bytes,
                          std::uint64_t mark) = 0;
  /// discard.global.L2 of every 128-byte line of [offset, offset + bytes) (sm_80 and later).
  virtual void discard_bulk(ProbeBuffer& buffer, std::uint64_t offset, std::uint64_t bytes) = 0;
  /// Reads every word of the range once (ld.global.cg) and counts what it holds against `mark`.
  virtual WordCensus census(ProbeBuffer& buffer, std::uint64_t offset, std::uint64_t bytes,
                            std::uint64_t mark) = 0;
};

/// Throws UsageError (one line) for a range outside the buffer or empty, or an offset or length
/// not a multiple of 128 B (store_bulk, discard_bulk and census work on whole lines).
void check_line_range(std::uint64_t buffer_bytes, std::uint64_t offset, std::uint64_t bytes,
                      const char* what);

/// Throws UsageError (one line) for a range outside the buffer or empty, offset or length not a
/// multiple of 16 B, a window outside the range or larger than limits.max_window_bytes, a hit
/// ratio outside [0, 1], a miss property of persisting, or a hint fraction outside (0, 1].
void check_bulk_loads(std::uint64_t buffer_bytes, const BulkLoads& l,
                      const PersistingLimits& limits);

/// The device's L2 controls, or nullptr when it has none.
L2Residency* as_l2_residency(device::Device& device);

/// Sets the set-aside for its lifetime and, whatever happens, resets the persisting lines and
/// puts back the set-aside it found: nothing an experiment asked of the L2 outlives it.
class SetAsideGuard {
 public:
  explicit SetAsideGuard(L2Residency& l2) : l2_(l2), found_(l2.persisting_set_aside()) {}
  ~SetAsideGuard() {
    try {
      l2_.reset_persisting_lines();
      l2_.set_persisting_set_aside(found_);
    } catch (...) {
      // A destructor must not throw; the CUDA device also restores these at process exit.
    }
  }
  SetAsideGuard(const SetAsideGuard&) = delete;
  SetAsideGuard& operator=(const SetAsideGuard&) = delete;
  std::uint64_t found() const { return found_; }

 private:
  L2Residency& l2_;
  std::uint64_t found_;
};

}  // namespace gpuprobe
