// ModelDevice: the modelled GPU behind the Device interface (chains, chases, probe buffers,
// run_sequence) and make_model_device. Its configuration, cache simulator and built-in models
// are in model_config.cpp, model_cache_sim.cpp and model_presets.cpp.
#include "device/model_device.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>
#include <type_traits>
#include <utility>

#include "analysis/chain.hpp"
#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/line_select.hpp"
#include "core/text_input.hpp"
#include "core/units.hpp"
#include "device/model_export.hpp"
#include "device/model_sequence.hpp"

namespace gpuprobe::device {

namespace detail {
struct ModelLedger {
  std::uint64_t live_bytes = 0;
  std::uint64_t live_chains = 0;
};
}  // namespace detail

namespace {

using units::format_bytes;
using units::kKiB;
using units::kMiB;

using units::round_up;

}  // namespace

namespace detail {

class ModelChain final : public Chain {
 public:
  ModelChain(const ChainSpec& spec, std::vector<std::uint32_t> order, std::uint64_t base,
             std::shared_ptr<detail::ModelLedger> ledger)
      : spec_(spec),
        order_(std::move(order)),
        next_(analysis::successors(order_)),
        base_(base),
        ledger_(std::move(ledger)) {
    ledger_->live_bytes += spec_.working_set_bytes + spec_.offset_bytes;
    ++ledger_->live_chains;
  }
  ~ModelChain() override {
    ledger_->live_bytes -= spec_.working_set_bytes + spec_.offset_bytes;
    --ledger_->live_chains;
  }
  const ChainSpec& spec() const override { return spec_; }
  std::uint64_t nodes() const override { return order_.size(); }

  const std::vector<std::uint32_t>& order() const { return order_; }
  const std::vector<std::uint32_t>& next() const { return next_; }
  std::uint64_t base() const { return base_; }
  const detail::ModelLedger* ledger() const { return ledger_.get(); }

 private:
  ChainSpec spec_;
  std::vector<std::uint32_t> order_;
  std::vector<std::uint32_t> next_;
  std::uint64_t base_;
  std::shared_ptr<detail::ModelLedger> ledger_;
};

}  // namespace detail

using detail::ModelChain;

namespace {

class ModelProbeBuffer final : public ProbeBuffer {
 public:
  ModelProbeBuffer(std::uint64_t bytes, std::uint64_t base,
                   std::shared_ptr<detail::ModelLedger> ledger)
      : bytes_(bytes), base_(base), ledger_(std::move(ledger)) {
    ledger_->live_bytes += bytes_;
    ++ledger_->live_chains;
  }
  ~ModelProbeBuffer() override {
    ledger_->live_bytes -= bytes_;
    --ledger_->live_chains;
  }
  std::uint64_t bytes() const override { return bytes_; }
  std::uint64_t base() const { return base_; }
  const detail::ModelLedger* ledger() const { return ledger_.get(); }

 private:
  std::uint64_t bytes_, base_;
  std::shared_ptr<detail::ModelLedger> ledger_;
};

}  // namespace

namespace {

/// The buffer as this device made it; UsageError "<what>: ..." for any other.
const ModelProbeBuffer& own_buffer(ProbeBuffer& buffer, const detail::ModelLedger* ledger,
                                   const char* what) {
  auto* b = dynamic_cast<ModelProbeBuffer*>(&buffer);
  if (b == nullptr || b->ledger() != ledger)
    throw UsageError(std::string(what) + ": the probe buffer was not made by this model device");
  return *b;
}

/// A dirty line reaches memory: memory holds its mark (0: the buffer's own values again).
void write_back(std::map<std::uint64_t, std::uint64_t>& memory, std::uint64_t line,
                std::uint64_t mark) {
  if (mark == 0)
    memory.erase(line);
  else
    memory[line] = mark;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ModelDevice

namespace {
ModelConfig checked(ModelConfig config) {
  validate(config);
  return config;
}
CacheConfig with_capacity(CacheConfig c, std::uint64_t capacity) {
  c.capacity_bytes = capacity;
  return c;
}
}  // namespace

ModelDevice::ModelDevice(ModelConfig config)
    : config_(checked(std::move(config))),
      ledger_(std::make_shared<detail::ModelLedger>()),
      l1_(with_capacity(config_.l1, l1_capacity_bytes(config_, -1))),
      l2_near_(config_.l2_partitioned ? config_.l2_near : CacheConfig{}),
      l2_(config_.l2),
      l1_capacity_(l1_capacity_bytes(config_, -1)),
      rng_(config_.seed) {
  info_.kind = "model";
  info_.name = "model:" + config_.name;
  info_.ordinal = 0;
  info_.cc_major = config_.cc_major;
  info_.cc_minor = config_.cc_minor;
  info_.sm_count = config_.sm_count;
  info_.l2_bytes = config_.l2.capacity_bytes;
  info_.global_mem_bytes = config_.global_mem_bytes;
  info_.shared_per_sm_bytes = config_.shared_per_sm_bytes;
  // As on real GPUs, one block may opt in to all of an SM's shared memory but 1 KiB.
  info_.shared_per_block_optin_bytes =
      config_.shared_per_sm_bytes > kKiB ? config_.shared_per_sm_bytes - kKiB : 0;
  info_.l1_shared_unified_bytes = config_.l1_shared_unified_bytes;
  info_.sm_clock_max_mhz = config_.sm_clock_mhz;
  info_.mem_clock_max_mhz = config_.mem_clock_mhz;
  info_.mem_bus_width_bits = config_.mem_bus_width_bits;
  info_.uuid = "MODEL-" + config_.name;
  info_.extra = {{"modelled", true},
                 {"l1_default_capacity_bytes", l1_capacity_},
                 {"l2_partitioned", config_.l2_partitioned},
                 {"note", "simulated cache hierarchy; parameters are a model, not measurements"}};
}

ModelDevice::~ModelDevice() = default;

std::unique_ptr<ProbeBuffer> ModelDevice::alloc_probe_buffer(std::uint64_t bytes) {
  if (bytes == 0) throw UsageError("probe buffer must be > 0 bytes");
  if (bytes > free_memory())
    throw UsageError("probe buffer of " + format_bytes(bytes) +
                     " does not fit in free device memory (" + format_bytes(free_memory()) + ")");
  if (ledger_->live_chains == 0) next_base_ = 0;
  const std::uint64_t base = next_base_;
  next_base_ += round_up(bytes, 2 * kMiB);
  return std::make_unique<ModelProbeBuffer>(bytes, base, ledger_);
}

detail::SequenceModel& ModelDevice::structural(std::uint64_t capacity) {
  if (!seq_ || capacity != seq_->l1_capacity) {
    const bool keep = seq_ != nullptr;
    auto fresh = std::make_unique<detail::SequenceModel>(config_, capacity);
    if (keep) {  // only the L1 is reconfigured
      fresh->l2 = std::move(seq_->l2);
      fresh->tlb = std::move(seq_->tlb);
    }
    seq_ = std::move(fresh);
  }
  return *seq_;
}

SequenceTiming ModelDevice::run_sequence(ProbeBuffer& buffer, const AccessSequence& s) {
  const auto* b = &own_buffer(buffer, ledger_.get(), "run_sequence");
  if (s.timed_from > s.sequence.size())
    throw UsageError("run_sequence: timed_from " + std::to_string(s.timed_from) +
                     " exceeds the sequence length " + std::to_string(s.sequence.size()));
  if (s.sequence.size() + s.place.size() > max_sequence_length())
    throw UsageError("run_sequence: " + std::to_string(s.sequence.size() + s.place.size()) +
                     " accesses; at most " + std::to_string(max_sequence_length()));
  const auto check_sm = [&](int sm, const char* what) {
    if (sm < -1 || sm >= config_.sm_count)
      throw UsageError(std::string("run_sequence: ") + what + " " + std::to_string(sm) +
                       " is not an SM; allowed: -1 or 0.." + std::to_string(config_.sm_count - 1));
    return sm < 0 ? 0 : sm;
  };
  const int sm = check_sm(s.sm, "sm");
  const int place_sm = check_sm(s.place_sm, "place_sm");
  const auto check_offsets = [&](const std::vector<std::uint64_t>& v) {
    for (auto o : v)
      if (o % 8 != 0 || o + 8 > b->bytes())
        throw UsageError("run_sequence: offset " + std::to_string(o) +
                         " is unaligned or outside the " + std::to_string(b->bytes()) +
                         "-B buffer; allowed: multiples of 8 below the buffer size");
  };
  check_offsets(s.sequence);
  check_offsets(s.place);
  check_offsets(s.sweep);
  if (!s.sweep.empty()) {
    if (s.sweep.size() > max_sweep_length())
      throw UsageError("run_sequence: a sweep of " + std::to_string(s.sweep.size()) +
                       " lines; at most " + std::to_string(max_sweep_length()));
    if (s.sm < 0) throw UsageError("run_sequence: a sweep runs on the sequence's SM; give sm >= 0");
    if (s.sweep_rounds < 1 || s.sweep_rounds > 16)
      throw UsageError("run_sequence: sweep_rounds " + std::to_string(s.sweep_rounds) +
                       "; allowed 1..16");
  }
  structural(l1_capacity_bytes(config_, s.carveout_percent));
  if (s.flush_l2) seq_->flush_l2();
  const bool use_l1 = caches_in_l1(s.op);
  // Every kernel launch invalidates the L1 (seen on the H200): place and sequence are launches.
  if (!s.place.empty()) {
    seq_->invalidate_l1();
    for (auto o : s.place) seq_->access(b->base() + o, place_sm, use_l1);
  }
  // The sweep's threads load in parallel on the real GPU; the model takes them in list order,
  // one round after the other (the L1 is the sweep launch's own and is invalidated after it).
  for (int r = 0; r < (s.sweep.empty() ? 0 : s.sweep_rounds); ++r)
    for (auto o : s.sweep) seq_->access(b->base() + o, sm, false);
  seq_->invalidate_l1();
  SequenceTiming t;
  t.cycles.reserve(s.sequence.size() - s.timed_from);
  for (std::size_t i = 0; i < s.sequence.size(); ++i) {
    const double c = seq_->access(b->base() + s.sequence[i], sm, use_l1);
    if (i >= s.timed_from) t.cycles.push_back(c * noise_factor());
  }
  t.smid = sm;
  t.verified = true;
  return t;
}

PersistingLimits ModelDevice::persisting_limits() const {
  return {config_.persisting.max_set_aside_bytes, config_.persisting.max_window_bytes};
}

int ModelDevice::persisting_ways() const {
  const auto& l2 = config_.l2;
  if (set_aside_ == 0) return config_.persisting.evict_last_ways_unreserved;
  if (l2.capacity_bytes == 0 || l2.ways == 0) return 0;
  return static_cast<int>(static_cast<double>(l2.ways) * static_cast<double>(set_aside_) /
                          static_cast<double>(l2.capacity_bytes));
}

void ModelDevice::apply_persisting(detail::SequenceModel& seq) const {
  const int ways = persisting_ways();
  for (auto& p : seq.l2) {
    p.set_protected_ways(ways);
    p.set_protected_budget(config_.persisting.byte_budget
                               ? static_cast<std::uint64_t>(ways) * p.sets()
                               : SetCache::kPerSet);
  }
}

void ModelDevice::set_persisting_set_aside(std::uint64_t bytes) {
  set_aside_ = std::min(bytes, config_.persisting.max_set_aside_bytes);
  if (seq_) apply_persisting(*seq_);
}

void ModelDevice::reset_persisting_lines() {
  if (seq_)
    for (auto& p : seq_->l2) p.reset_protected();
}

void ModelDevice::flush_l2() {
  for (const auto& [line, mark] : dirty_marks_) write_back(memory_marks_, line, mark);
  dirty_marks_.clear();
  auto& seq = structural(seq_ ? seq_->l1_capacity : l1_capacity_bytes(config_, -1));
  seq.flush_l2();
  // Lines of a flush buffer far above every probe buffer (2^50 B), one range per partition.
  const std::uint64_t line = config_.l2.line_bytes ? config_.l2.line_bytes : 128;
  for (std::size_t p = 0; p < seq.l2.size(); ++p)
    seq.l2[p].fill_stale(((std::uint64_t{1} << 50) + (std::uint64_t{1} << 44) * p) / line);
}

void ModelDevice::load_bulk(ProbeBuffer& buffer, const BulkLoads& loads) {
  const auto* b = &own_buffer(buffer, ledger_.get(), "load_bulk");
  check_bulk_loads(b->bytes(), loads, persisting_limits());
  auto& seq = structural(seq_ ? seq_->l1_capacity : l1_capacity_bytes(config_, -1));
  apply_persisting(seq);
  using Mark = SetCache::Mark;
  const auto of_property = [](AccessProperty p) {
    return p == AccessProperty::kPersisting  ? Mark::kProtected
           : p == AccessProperty::kStreaming ? Mark::kFirst
                                             : Mark::kNormal;
  };
  const auto of_hint = [](EvictionHint h) {
    switch (h) {
      case EvictionHint::kEvictFirst:
        return Mark::kFirst;
      case EvictionHint::kEvictNormal:
        return Mark::kNormal;
      case EvictionHint::kEvictLast:
        return Mark::kProtected;
      default:
        return Mark::kKeep;
    }
  };
  // One access per line (its first sector): the sampled loads read a line's first word, and
  // a line's tag is what competes for a way.
  const std::uint64_t line = config_.l2.line_bytes ? config_.l2.line_bytes : 128;
  std::uint64_t n = 0;
  const std::uint64_t select = line_select::threshold_of(loads.select_share);
  for (std::uint64_t o = loads.offset / line * line; o < loads.offset + loads.bytes;
       o += line, ++n) {
    if (!line_select::selected(o / line_select::kLineBytes, loads.select_seed, select)) continue;
    // A hashed share of the lines takes the window's hit property (or the policy's primary
    // priority), the rest the miss property (or evict_unchanged).
    // splitmix64's finalizer: the choice is independent of the line's set (a plain
    // multiplicative hash is not, over the members of one hashed set).
    const double u = static_cast<double>(line_select::mix64(o / line) >> 11) * 0x1.0p-53;
    Mark m = Mark::kKeep;
    if (loads.windowed && o >= loads.window.offset && o < loads.window.offset + loads.window.bytes)
      m = of_property(u < loads.window.hit_ratio ? loads.window.hit : loads.window.miss);
    else if (loads.hint != EvictionHint::kNone && u < loads.hint_fraction)
      m = of_hint(loads.hint);
    const int sm = static_cast<int>(n % static_cast<std::uint64_t>(config_.sm_count));
    seq.place_l2(b->base() + o, sm, m);
  }
}

void ModelDevice::store_bulk(ProbeBuffer& buffer, std::uint64_t offset, std::uint64_t bytes,
                             std::uint64_t mark) {
  const auto& b = own_buffer(buffer, ledger_.get(), "store_bulk");
  check_line_range(b.bytes(), offset, bytes, "marked stores");
  for (std::uint64_t o = offset; o < offset + bytes; o += 128)
    dirty_marks_[(b.base() + o) / 128] = mark;
}

void ModelDevice::discard_bulk(ProbeBuffer& buffer, std::uint64_t offset, std::uint64_t bytes) {
  const auto& b = own_buffer(buffer, ledger_.get(), "discard_bulk");
  check_line_range(b.bytes(), offset, bytes, "discard.global.L2");
  for (std::uint64_t o = offset; o < offset + bytes; o += 128) {
    const auto it = dirty_marks_.find((b.base() + o) / 128);
    if (it == dirty_marks_.end()) continue;
    if (config_.persisting.discard_writes_back) write_back(memory_marks_, it->first, it->second);
    dirty_marks_.erase(it);
  }
}

WordCensus ModelDevice::census(ProbeBuffer& buffer, std::uint64_t offset, std::uint64_t bytes,
                               std::uint64_t mark) {
  const auto& b = own_buffer(buffer, ledger_.get(), "census");
  check_line_range(b.bytes(), offset, bytes, "census");
  WordCensus c;
  for (std::uint64_t o = offset; o < offset + bytes; o += 128) {
    const std::uint64_t line = (b.base() + o) / 128;
    const auto d = dirty_marks_.find(line);
    const auto m = memory_marks_.find(line);
    const std::uint64_t held = d != dirty_marks_.end()    ? d->second
                               : m != memory_marks_.end() ? m->second
                                                          : 0;
    (held == 0 ? c.own : held == mark ? c.marked : c.other) += 16;
  }
  return c;
}

std::uint64_t ModelDevice::free_memory() const {
  return config_.global_mem_bytes > ledger_->live_bytes
             ? config_.global_mem_bytes - ledger_->live_bytes
             : 0;
}

ClockReading ModelDevice::read_clocks() const {
  ClockReading c;
  c.valid = true;
  c.sm_mhz = config_.sm_clock_mhz;
  c.mem_mhz = config_.mem_clock_mhz;
  c.throttle_reasons = 0;
  c.time_utc = units::utc_now();
  return c;
}

TimerCalibration ModelDevice::calibrate_timer() {
  TimerCalibration t;
  t.clock64_overhead_cycles = 2;
  t.clock32_overhead_cycles = 1;
  return t;
}

void ModelDevice::reset_caches() {
  l1_.clear();
  l2_near_.clear();
  l2_.clear();
  if (seq_) seq_->flush_l2();
}

std::uint32_t ModelDevice::walk_structural(const std::vector<std::uint32_t>& next,
                                           std::uint64_t base, std::uint32_t stride,
                                           std::uint32_t node, bool use_l1, std::uint64_t steps,
                                           double* cycles, ModelChaseStats* stats) {
  // The chase runs on SM 0, like the GPU's (one block, placed by the scheduler on the first SM).
  for (std::uint64_t s = 0; s < steps; ++s) {
    detail::Served served;
    const double c =
        seq_->access(base + static_cast<std::uint64_t>(node) * stride, 0, use_l1, &served);
    if (cycles) *cycles += c;
    if (stats) {
      switch (served) {
        case detail::Served::kL1:
          ++stats->l1_hits;
          break;
        case detail::Served::kL2Near:
          ++stats->l2_hits;
          break;
        case detail::Served::kL2Far:
          ++stats->l2_far_hits;
          break;
        case detail::Served::kDram:
          ++stats->dram_loads;
          break;
      }
    }
    node = next[node];
  }
  return node;
}

std::unique_ptr<Chain> ModelDevice::make_chain(const ChainSpec& spec) {
  if (spec.node_stride_bytes == 0) throw UsageError("node stride must be > 0 bytes");
  if (spec.working_set_bytes < spec.node_stride_bytes)
    throw UsageError("working set " + std::to_string(spec.working_set_bytes) +
                     " B is smaller than one node (stride " +
                     std::to_string(spec.node_stride_bytes) + " B)");
  check_chain_offset(spec);
  const std::uint64_t free = free_memory();
  if (spec.offset_bytes > free || spec.working_set_bytes > free - spec.offset_bytes) {
    std::string ws = format_bytes(spec.working_set_bytes + spec.offset_bytes),
                fr = format_bytes(free);
    if (ws == fr) {
      ws = std::to_string(spec.working_set_bytes + spec.offset_bytes) + " B";
      fr = std::to_string(free) + " B";
    }
    throw UsageError((spec.offset_bytes ? "working set and offset " : "working set ") + ws + " do" +
                     (spec.offset_bytes ? "" : "es") + " not fit in free device memory (" + fr +
                     ")");
  }
  const std::uint64_t nodes = spec.working_set_bytes / spec.node_stride_bytes;
  if (nodes > std::numeric_limits<std::uint32_t>::max())
    throw UsageError("working set " + format_bytes(spec.working_set_bytes) + " has " +
                     std::to_string(nodes) + " nodes; at most 4294967295 are supported");
  // A fresh allocation: addresses restart at 0 when nothing else is live; line aligned (2 MiB).
  if (ledger_->live_chains == 0) next_base_ = 0;
  const std::uint64_t base = next_base_ + spec.offset_bytes;
  next_base_ += round_up(spec.offset_bytes + spec.working_set_bytes, 2 * kMiB);
  auto chain = std::make_unique<ModelChain>(
      spec, analysis::random_cycle_order(static_cast<std::uint32_t>(nodes), spec.seed), base,
      ledger_);
  reset_caches();
  return chain;
}

template <bool kL1, bool kPartitioned, bool kCount>
std::uint32_t ModelDevice::walk(const std::vector<std::uint32_t>& order,
                                const std::vector<std::uint32_t>& next, std::uint64_t base,
                                std::uint32_t stride, std::uint32_t node, std::uint64_t first_step,
                                std::uint64_t steps, ModelChaseStats& stats) {
  // The walk itself follows the successor table (node = next[node]), like the GPU's chase. The
  // visit order is only used to issue host prefetches a few steps ahead: the successor table and
  // the simulated caches' sets are far larger than the host's caches for big working sets, and
  // without the hints every step would wait for host memory. The hints change nothing simulated.
  constexpr std::uint64_t kAhead = 12;
  const std::uint32_t* succ = next.data();
  const std::uint32_t* ord = order.data();
  const std::uint64_t n = order.size();
  std::uint64_t ahead = (first_step + kAhead) % n;
  for (std::uint64_t s = 0; s < steps; ++s) {
    {
      const std::uint32_t future = ord[ahead];
      __builtin_prefetch(succ + future);
      const std::uint64_t future_address = base + static_cast<std::uint64_t>(future) * stride;
      if (kL1) l1_.prefetch(future_address);
      if (kPartitioned) l2_near_.prefetch(future_address);
      l2_.prefetch(future_address);
      if (++ahead == n) ahead = 0;
    }
    const std::uint64_t address = base + static_cast<std::uint64_t>(node) * stride;
    if (kL1 && l1_.access(address)) {
      if (kCount) ++stats.l1_hits;
    } else if (kPartitioned) {
      if (l2_near_.access(address)) {
        if (kCount) ++stats.l2_hits;
      } else if (l2_.access(address)) {
        if (kCount) ++stats.l2_far_hits;
      } else {
        if (kCount) ++stats.dram_loads;
      }
    } else {
      if (l2_.access(address)) {
        if (kCount) ++stats.l2_hits;
      } else {
        if (kCount) ++stats.dram_loads;
      }
    }
    node = succ[node];
  }
  return node;
}

double ModelDevice::noise_factor() {
  if (config_.noise_relative_sigma == 0) return 1.0;
  // Box-Muller on the raw 64-bit stream: identical on every standard library.
  const double u1 = (static_cast<double>(rng_() >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
  const double u2 = static_cast<double>(rng_() >> 11) * 0x1.0p-53;          // [0, 1)
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  const double f = 1.0 + config_.noise_relative_sigma * z;
  return f > 0.01 ? f : 0.01;
}

const ModelChain& ModelDevice::begin_chase(Chain& chain, const ChaseParams& params,
                                           const char* what) {
  auto* mc = dynamic_cast<ModelChain*>(&chain);
  if (mc == nullptr || mc->ledger() != ledger_.get())
    throw UsageError(std::string(what) + ": the chain was not made by this model device");
  if (params.timed_steps == 0) throw UsageError(std::string(what) + ": timed_steps must be > 0");
  const std::uint64_t capacity = l1_capacity_bytes(config_, params.carveout_percent);
  if (capacity != l1_capacity_) {  // a reconfigured L1 starts empty
    l1_ = CacheSim(with_capacity(config_.l1, capacity));
    l1_capacity_ = capacity;
  }
  // A kernel launch invalidates the L1 on real GPUs (seen on the H200): each chase is a launch.
  l1_.clear();
  if (config_.chase_structural) structural(capacity).invalidate_l1();
  return *mc;
}

double ModelDevice::fast_cost(const ModelChaseStats& st) const {
  const double l2_latency =
      config_.l2_partitioned ? config_.l2_near.hit_latency_cycles : config_.l2.hit_latency_cycles;
  return static_cast<double>(st.l1_hits) * config_.l1.hit_latency_cycles +
         static_cast<double>(st.l2_hits) * l2_latency +
         static_cast<double>(st.l2_far_hits) * config_.l2_far_hit_latency_cycles +
         static_cast<double>(st.dram_loads) * config_.dram_latency_cycles;
}

std::uint32_t ModelDevice::advance(const ModelChain& mc, bool use_l1, std::uint32_t node,
                                   std::uint64_t first, std::uint64_t steps, double* cycles,
                                   ModelChaseStats* stats) {
  const auto& next = mc.next();
  const std::uint64_t base = mc.base();
  const std::uint32_t stride = mc.spec().node_stride_bytes;
  if (config_.chase_structural)
    return walk_structural(next, base, stride, node, use_l1, steps, cycles, stats);
  const auto& order = mc.order();
  const bool part = config_.l2_partitioned;
  ModelChaseStats st;
  const auto run = [&](auto count) {
    constexpr bool kCount = decltype(count)::value;
    if (use_l1 && part)
      return walk<true, true, kCount>(order, next, base, stride, node, first, steps, st);
    if (use_l1) return walk<true, false, kCount>(order, next, base, stride, node, first, steps, st);
    if (part) return walk<false, true, kCount>(order, next, base, stride, node, first, steps, st);
    return walk<false, false, kCount>(order, next, base, stride, node, first, steps, st);
  };
  if (cycles == nullptr && stats == nullptr) return run(std::false_type{});
  node = run(std::true_type{});
  if (cycles) *cycles += fast_cost(st);
  if (stats) {
    stats->l1_hits += st.l1_hits;
    stats->l2_hits += st.l2_hits;
    stats->l2_far_hits += st.l2_far_hits;
    stats->dram_loads += st.dram_loads;
  }
  return node;
}

ChaseTiming ModelDevice::chase(Chain& chain, const ChaseParams& params) {
  const ModelChain& mc = begin_chase(chain, params, "chase");
  const bool use_l1 = caches_in_l1(params.op);
  const auto& order = mc.order();
  const std::uint64_t start = params.start_step % order.size();
  ModelChaseStats stats;
  double cycles = 0;
  std::uint32_t node =
      advance(mc, use_l1, order[start], start, params.warmup_steps, nullptr, nullptr);
  node =
      advance(mc, use_l1, node, start + params.warmup_steps, params.timed_steps, &cycles, &stats);
  last_stats_ = stats;
  last_final_node_ = node;

  const std::uint32_t expected =
      analysis::node_after(order, start + params.warmup_steps + params.timed_steps);
  if (node != expected)
    throw VerificationError("model chase ended on node " + std::to_string(node) +
                            ", expected node " + std::to_string(expected));

  ChaseTiming t;
  t.cycles_per_step = cycles / static_cast<double>(params.timed_steps) * noise_factor();
  t.total_cycles = t.cycles_per_step * static_cast<double>(params.timed_steps);
  t.smid = 0;
  t.verified = true;
  return t;
}

SampledChase ModelDevice::sampled_chase(Chain& chain, const ChaseParams& params,
                                        std::uint32_t every) {
  if (every == 0) throw UsageError("sampled chase: every must be > 0");
  // The warm-up as chase() runs it, then the timed steps one by one.
  const ModelChain& mc = begin_chase(chain, params, "sampled chase");
  const bool use_l1 = caches_in_l1(params.op);
  const auto& order = mc.order();
  const std::uint64_t start = params.start_step % order.size();
  const std::uint64_t first = start + params.warmup_steps;
  std::uint32_t node =
      advance(mc, use_l1, order[start], start, params.warmup_steps, nullptr, nullptr);
  SampledChase r;
  // Each sample: the sampled step on its own, then the steps up to the next sample in one walk.
  for (std::uint64_t i = 0; i < params.timed_steps; i += every) {
    r.nodes.push_back(node);
    double c = 0;
    node = advance(mc, use_l1, node, first + i, 1, &c, nullptr);
    r.cycles.push_back(static_cast<std::uint32_t>(std::lround(c)));
    const std::uint64_t rest = std::min<std::uint64_t>(every - 1, params.timed_steps - i - 1);
    node = advance(mc, use_l1, node, first + i + 1, rest, nullptr, nullptr);
  }
  const std::uint32_t expected = analysis::node_after(order, first + params.timed_steps);
  if (node != expected)
    throw VerificationError("model sampled chase ended on node " + std::to_string(node) +
                            ", expected node " + std::to_string(expected));
  r.smid = 0;
  r.verified = true;
  return r;
}

ChaseTiming ModelDevice::shared_chase(std::uint32_t bytes, std::uint32_t node_stride_bytes,
                                      std::uint64_t timed_steps) {
  if (node_stride_bytes == 0) throw UsageError("shared chase: node stride must be > 0 bytes");
  if (bytes < node_stride_bytes)
    throw UsageError("shared chase: " + std::to_string(bytes) +
                     " B is smaller than one node (stride " + std::to_string(node_stride_bytes) +
                     " B)");
  if (bytes > config_.shared_per_sm_bytes)
    throw UsageError("shared chase: " + format_bytes(bytes) +
                     " exceeds the shared memory per SM (" +
                     format_bytes(config_.shared_per_sm_bytes) + ")");
  if (timed_steps == 0) throw UsageError("shared chase: timed_steps must be > 0");
  ChaseTiming t;
  t.cycles_per_step = config_.shared_latency_cycles * noise_factor();
  t.total_cycles = t.cycles_per_step * static_cast<double>(timed_steps);
  t.smid = 0;
  t.verified = true;
  return t;
}

nlohmann::json ModelDevice::environment() const {
  return {{"device_kind", "model"},
          {"device_name", info_.name},
          {"note",
           "modelled GPU: a cache-hierarchy simulator; every parameter below is a model input "
           "(plausible, not a measurement)"},
          {"model", to_json(config_)},
          {"timer",
           {{"clock64_overhead_cycles", 2},
            {"clock32_overhead_cycles", 1},
            {"included_in_chase_timings", false}}},
          {"live_chains", ledger_->live_chains},
          {"free_memory_bytes", free_memory()},
          {"clocks", to_json(read_clocks())}};
}

std::unique_ptr<Device> make_model_device(const std::string& name) {
  // A path to a model file (e.g. written by `gpuprobe export-model`) instead of a built-in name.
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) {
    const nlohmann::json j = json_input::load_file(name, "model file");
    try {
      return std::make_unique<ModelDevice>(model_config_from_json(j));
    } catch (const nlohmann::json::exception& e) {
      // An optional field of the wrong type (read with a default) lands here: the file's fault.
      throw UsageError("model file " + text_input::quoted(name) + ": a field has the wrong type (" +
                       std::string(e.what()) + ")");
    }
  }
  return std::make_unique<ModelDevice>(builtin_model_config(name));
}

}  // namespace gpuprobe::device
