// The property test of what a kernel can ask of the L2 and of the prefetcher: modelled GPUs
// drawn at random (L2 size and ways, the largest set-aside in whole and part ways, the ways
// evict_last takes without one, whether the cap is per set or a byte budget, whether a discard
// writes back, far-line replication, and a stride prefetcher on or off with its reach, distance
// and level) must each be recovered by cache.l2.persisting, cache.l2.eviction_priority and
// cache.prefetch. Breaking an inference (the cap rule's prediction, the capacity rule, the
// discard judge, the prefetch judge) makes draws fail and the test with them.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>

#include "core/experiment.hpp"
#include "core/finding_names.hpp"
#include "device/model_device.hpp"

namespace gpuprobe {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

struct Drawn {
  device::ModelConfig config;
  int ways = 16;
  int cap_ways = 0;  ///< whole ways of every set the largest set-aside names
  std::string describe;
};

Drawn draw(std::mt19937_64& rng, int i) {
  const auto pick = [&](auto... v) {
    const std::uint64_t values[] = {static_cast<std::uint64_t>(v)...};
    return values[rng() % sizeof...(v)];
  };
  Drawn d;
  auto& c = d.config;
  c = device::builtin_model_config("h200");
  c.seed = 300 + static_cast<std::uint64_t>(i);
  d.ways = static_cast<int>(pick(8, 16));
  const std::uint64_t l2 = pick(40, 60) * kMiB;
  c.l2.capacity_bytes = l2;
  c.l2.ways = static_cast<std::uint32_t>(d.ways);
  c.l2_near.capacity_bytes = l2 / 2;
  c.l2_near.ways = c.l2.ways;
  const std::uint64_t way = l2 / static_cast<std::uint64_t>(d.ways);
  // 3 .. ways - 3 whole ways, a part way more half the time (the model keeps whole ways).
  d.cap_ways = 3 + static_cast<int>(rng() % static_cast<std::uint64_t>(d.ways - 5));
  c.persisting.max_set_aside_bytes =
      static_cast<std::uint64_t>(d.cap_ways) * way + (rng() % 2 ? way / 2 : 0);
  c.persisting.max_window_bytes = 128 * kMiB;
  c.persisting.evict_last_ways_unreserved = static_cast<int>(rng() % 2);
  c.persisting.byte_budget = rng() % 2 == 1;
  c.persisting.discard_writes_back = rng() % 3 == 0;
  c.l2_replication = rng() % 2 == 1;
  const bool prefetch = rng() % 2 == 1;
  if (prefetch) {
    c.prefetcher.distance_lines = static_cast<int>(pick(1, 2, 4));
    c.prefetcher.into_l1 = rng() % 2 == 1;
    c.prefetcher.max_stride_bytes = pick(256, 1024, 4096, 16384);
  }
  d.describe = std::to_string(l2 / kMiB) + " MiB x " + std::to_string(d.ways) +
               " ways, set-aside " + std::to_string(c.persisting.max_set_aside_bytes) + " B (" +
               std::to_string(d.cap_ways) + " ways), " +
               (c.persisting.byte_budget ? "byte budget" : "per set") +
               (c.persisting.discard_writes_back ? ", discard writes back" : "") +
               (c.l2_replication ? ", replication" : "") +
               (prefetch ? ", prefetch " + std::to_string(c.prefetcher.distance_lines) + " x " +
                               std::to_string(c.prefetcher.max_stride_bytes) + " B" +
                               (c.prefetcher.into_l1 ? " into L1" : "")
                         : "");
  return d;
}

std::map<std::string, Finding> run_on(device::ModelDevice& dev, const std::string& id, int ways) {
  RunOptions options;
  if (id != "cache.prefetch") options.axis_overrides.push_back({id, "repeats", {"1"}});
  FindingBoard board;
  board.add(Finding{finding::kCacheL2Ways.name, static_cast<double>(ways), "ways", 1.0, "",
                    nlohmann::json::object()});
  Context ctx{dev, options, board};
  const auto* e = Registry::builtin().find(id);
  ExperimentResult r;
  std::map<std::string, Finding> found;
  if (!e) return found;
  e->validate(dev, options);
  e->run(ctx, r);
  e->analyze(r);
  if (r.status != Status::kPassed) return found;
  for (const auto& f : r.findings) found[f.name] = f;
  return found;
}

double value_of(const std::map<std::string, Finding>& f, const std::string& name) {
  const auto it = f.find(name);
  return it == f.end() ? -1.0 : it->second.value;
}

std::string label_of(const std::map<std::string, Finding>& f, const std::string& name) {
  const auto it = f.find(name);
  return it == f.end() ? "" : it->second.extra.value("label", "");
}

/// What of the drawn truth the three experiments missed ("" when nothing).
std::string misses(const Drawn& d) {
  const auto& c = d.config;
  std::string why;
  const auto miss = [&](bool ok, const std::string& what) {
    if (!ok) why += " " + what;
  };
  const std::string cap = c.persisting.byte_budget ? "byte_budget" : "per_set";
  const double held = static_cast<double>(d.cap_ways) / d.ways;
  {
    device::ModelDevice dev(c);
    const auto f = run_on(dev, "cache.l2.persisting", d.ways);
    miss(value_of(f, finding::kL2PersistingMaxSetAside.name) ==
             static_cast<double>(c.persisting.max_set_aside_bytes),
         "max_set_aside");
    const double capacity = value_of(f, finding::kL2PersistingCapacity.name);
    const double truth = held * static_cast<double>(c.l2.capacity_bytes);
    miss(capacity > 0.93 * truth && capacity < 1.07 * truth,
         "persisting capacity " + std::to_string(capacity) + " vs " + std::to_string(truth));
    miss(label_of(f, finding::kL2PersistingCapRule.name) == cap,
         "persisting cap rule " + label_of(f, finding::kL2PersistingCapRule.name));
  }
  {
    device::ModelDevice dev(c);
    const auto f = run_on(dev, "cache.l2.eviction_priority", d.ways);
    miss(value_of(f, finding::kL2EvictLastProtects.name) == 1.0, "evict_last protects");
    miss(value_of(f, finding::kL2EvictFirstGoesFirst.name) == 1.0, "evict_first goes first");
    const double share = value_of(f, finding::kL2EvictLastMaxShare.name);
    miss(std::abs(share - held) < 0.06,
         "evict_last max share " + std::to_string(share) + " vs " + std::to_string(held));
    miss(label_of(f, finding::kL2EvictLastCapRule.name) == cap,
         "evict_last cap rule " + label_of(f, finding::kL2EvictLastCapRule.name));
    miss(value_of(f, finding::kL2DiscardDropsDirty.name) ==
             (c.persisting.discard_writes_back ? 0.0 : 1.0),
         "discard");
  }
  {
    device::ModelDevice dev(c);
    const auto f = run_on(dev, "cache.prefetch", d.ways);
    const auto& pf = c.prefetcher;
    const bool on = pf.distance_lines > 0;
    const auto at = f.find(pf.into_l1 ? "prefetch.l2_to_l1" : "prefetch.dram_to_l2");
    if (at == f.end()) {
      why += " no prefetch finding";
    } else {
      miss(at->second.value == (on ? 1.0 : 0.0), "prefetch seen");
      if (on) {
        miss(at->second.extra.value("max_stride_bytes", std::uint64_t{0}) == pf.max_stride_bytes,
             "prefetch reach");
        // The probes lie 1, 2, 4 and 8 strides ahead: the farthest covered is the distance.
        miss(at->second.extra.value("max_distance_strides", 0) == pf.distance_lines,
             "prefetch distance");
      }
    }
  }
  return why;
}

TEST(ResidencyProperty, RecoversRandomModelledResidencyAndPrefetch) {
  std::mt19937_64 rng(20261206);
  const int draws =
      std::getenv("GP_RESIDENCY_DRAWS") ? std::atoi(std::getenv("GP_RESIDENCY_DRAWS")) : 12;
  int ok = 0;
  for (int i = 0; i < draws; ++i) {
    const Drawn d = draw(rng, i);
    const std::string why = misses(d);
    ok += why.empty();
    if (!why.empty())
      std::printf("draw %d (%s) not recovered:%s\n", i, d.describe.c_str(), why.c_str());
  }
  std::printf("recovered %d of %d modelled GPUs\n", ok, draws);
  EXPECT_EQ(ok, draws);
}

}  // namespace
}  // namespace gpuprobe
