// The cache-structure inferences on modelled hierarchies whose truth is known: a property test
// over random hierarchies (fixed seed) and targeted checks of each algorithm.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include "core/error.hpp"
#include "device/model_device.hpp"
#include "measure/cache_search.hpp"
#include "model_probe.hpp"

namespace gpuprobe {
namespace {

using device::ModelConfig;
using device::Replacement;
using measure::cache::Level;

using test::kGiB;
using test::kKiB;
using test::kMiB;
using test::probe_on;

std::uint64_t pow2_at_least(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

/// A random GF(2) set hash for 2^s sets: mask i holds bit line+i (so consecutive lines cover
/// every set) plus random higher bits below 2^22.
std::vector<std::uint64_t> random_set_hash(std::mt19937_64& rng, int line_bits, int s) {
  std::vector<std::uint64_t> m;
  for (int i = 0; i < s; ++i) {
    std::uint64_t mask = std::uint64_t{1} << (line_bits + i);
    for (int b = line_bits + s; b < 22; ++b)
      if (rng() % 4 == 0) mask |= std::uint64_t{1} << b;
    m.push_back(mask);
  }
  return m;
}

struct Drawn {
  ModelConfig config;
  std::uint64_t l1_bytes = 0, l2_partition_bytes = 0;
  int partitions = 1;
};

Drawn random_hierarchy(std::mt19937_64& rng, int index) {
  const auto pick = [&](std::initializer_list<std::uint32_t> v) {
    return *(v.begin() + static_cast<std::ptrdiff_t>(rng() % v.size()));
  };
  const auto uniform = [&](double a, double b) {
    return a + (b - a) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
  };
  const Replacement policies[] = {Replacement::kLru, Replacement::kFifo, Replacement::kTreePlru,
                                  Replacement::kRandom};
  const auto level = [&](std::uint32_t min_sets, std::uint32_t max_sets, device::CacheConfig& c) {
    c.line_bytes = pick({64, 128});
    c.policy = policies[rng() % 4];
    c.ways =
        c.policy == Replacement::kTreePlru ? pick({4, 8, 16}) : pick({4, 5, 6, 8, 12, 16, 20, 24});
    std::uint64_t sets;
    if (rng() % 2) {  // modulo over a set count that is usually not a power of two
      sets = min_sets + rng() % (max_sets - min_sets + 1);
    } else {
      int s = 0;
      while ((2u << s) <= max_sets) ++s;
      s = std::max(3, s - static_cast<int>(rng() % 2));
      sets = std::uint64_t{1} << s;
      c.set_hash_masks = random_set_hash(rng, __builtin_ctz(c.line_bytes), s);
    }
    c.sector_bytes = rng() % 2 ? 32 : 0;
    c.capacity_bytes = sets * c.ways * c.line_bytes;
  };
  Drawn d;
  ModelConfig& c = d.config;
  c.name = "random-" + std::to_string(index);
  c.cc_major = 9;
  c.sm_count = 4;
  c.global_mem_bytes = 64 * kGiB;
  level(12, 48, c.l1);
  c.l1_shared_unified_bytes = c.l1.capacity_bytes;
  c.default_shared_carveout_bytes = 0;
  c.shared_per_sm_bytes = 0;
  d.l1_bytes = c.l1.capacity_bytes;
  c.l1.capacity_bytes = 0;
  d.partitions = 1 + static_cast<int>(rng() % 2);
  do {
    c.l2 = {};
    level(128, 384, c.l2);
  } while (c.l2.capacity_bytes < d.l1_bytes);
  d.l2_partition_bytes = c.l2.capacity_bytes;
  c.l2.capacity_bytes *= static_cast<std::uint64_t>(d.partitions);
  c.l2_partitions = d.partitions;
  c.l1.hit_latency_cycles = uniform(20, 40);
  const double near = uniform(150, 300);
  c.l2.hit_latency_cycles = near;
  c.l2_far_hit_latency_cycles = near * uniform(1.3, 1.8);
  c.dram_latency_cycles = c.l2_far_hit_latency_cycles * uniform(1.4, 2.0);
  if (d.partitions == 2) {
    c.l2_partitioned = true;
    c.l2_near = c.l2;
    c.l2_near.capacity_bytes = d.l2_partition_bytes;
    std::uint64_t mask = 0;
    const int lb = __builtin_ctz(c.l2.line_bytes);
    while (mask == 0)
      for (int b = lb; b < 20; ++b)
        if (rng() % 3 == 0) mask |= std::uint64_t{1} << b;
    c.l2_partition_masks = {mask};
    c.l2_replication = rng() % 2;
  }
  // TLB: the first level reaches at least the 16 MiB the cache and partition probes use; the
  // second holds at most an eighth of one L2 partition's lines (where the first level allows), so
  // that the TLB walk's lines stay in the L2 (both fully associative, LRU).
  const std::uint64_t page = std::uint64_t{256} * kKiB << (rng() % 4);
  const std::uint64_t e1 = std::max<std::uint64_t>(16 * kMiB / page, 8 + rng() % 24);
  const std::uint64_t l2_lines = d.l2_partition_bytes / c.l2.line_bytes;
  const std::uint64_t e2 =
      std::clamp<std::uint64_t>(e1 * (2 + rng() % 7), 2 * e1, std::max(2 * e1, l2_lines / 8));
  c.tlb = {{e1, page, 0, uniform(15, 40)}, {e2, page, 0, uniform(40, 100)}};
  c.noise_relative_sigma = 0.003;
  c.seed = 1000 + static_cast<std::uint64_t>(index);
  return d;
}

struct Recovered {
  bool l1_line = false, l1_ways = false, l1_capacity = false, l1_policy = false;
  bool l2_line = false, l2_ways = false, l2_capacity = false, l2_policy = false;
  bool partitions = false, tlb = false;
  bool l1_set_index = true;  ///< checked where the L1 is hashed
  std::string why;
  bool all() const {
    return l1_line && l1_ways && l1_capacity && l1_policy && l2_line && l2_ways && l2_capacity &&
           l2_policy && partitions && tlb && l1_set_index;
  }
};

/// The truth the set-index inference should find for a GF(2) hash: the bits (line..span) whose
/// column is not zero, and the pairs of them whose columns are equal.
struct HashColumns {
  std::vector<int> bits;
  std::vector<std::pair<int, int>> equal_pairs;
};
HashColumns hash_columns(const std::vector<std::uint64_t>& masks, std::uint32_t line_bytes,
                         std::uint64_t span) {
  const auto column = [&](int b) {
    std::uint64_t c = 0;
    for (std::size_t i = 0; i < masks.size(); ++i)
      if ((masks[i] >> b) & 1) c |= std::uint64_t{1} << i;
    return c;
  };
  HashColumns h;
  for (int b = __builtin_ctzll(line_bytes); (std::uint64_t{1} << b) < span; ++b)
    if (column(b) != 0) h.bits.push_back(b);
  for (std::size_t i = 0; i < h.bits.size(); ++i)
    for (std::size_t k = i + 1; k < h.bits.size(); ++k)
      if (column(h.bits[i]) == column(h.bits[k])) h.equal_pairs.emplace_back(h.bits[i], h.bits[k]);
  return h;
}

Recovered recover(const Drawn& d, std::uint64_t seed) {
  using namespace analysis::cache;
  using namespace measure::cache;
  device::ModelDevice dev(d.config);
  const auto& c = d.config;
  const std::uint64_t page = c.tlb[0].page_bytes;
  // The walk stops at the first power of two above the last level: its lines stay in the L2.
  const std::uint64_t max_pages = pow2_at_least(c.tlb[1].entries + 1);
  auto buf = dev.alloc_probe_buffer(std::max<std::uint64_t>(max_pages * 2 * kMiB, 16 * kMiB));
  Recovered r;
  const auto policy_ok = [](const std::string& found, Replacement truth) {
    return found == device::to_string(truth);
  };
  {
    Probe p = probe_on(dev, *buf, 4 * kMiB, seed);
    const auto cal = calibrate(p, Level::kL1);
    const auto set = find_conflict_set(p, Level::kL1, cal, 4096);
    const auto line = infer_line_size(p, Level::kL1, cal, set);
    const auto cap = infer_capacity(p, Level::kL1, cal, line.line_bytes, 4 * kMiB);
    const auto pol = infer_policy(p, Level::kL1, cal, set);
    r.l1_line = line.line_bytes == c.l1.line_bytes;
    r.l1_ways = set.ways == c.l1.ways;
    r.l1_capacity = std::fabs(static_cast<double>(cap.bytes) - static_cast<double>(d.l1_bytes)) <=
                    0.02 * static_cast<double>(d.l1_bytes);
    r.l1_policy = policy_ok(pol.label(), c.l1.policy);
    if (!c.l1.set_hash_masks.empty()) {
      // A hashed L1: the bits that move a line and the pairs that cancel are exactly the
      // hash's non-zero and equal columns (a modulo's set count comes from the capacity).
      const auto si = infer_set_index(p, Level::kL1, cal, set, line.line_bytes, cap.bytes);
      const auto truth = hash_columns(c.l1.set_hash_masks, line.line_bytes, 4 * kMiB);
      r.l1_set_index = si.bits == truth.bits && si.equal_pairs == truth.equal_pairs;
      r.why += " set bits " + std::to_string(si.bits.size()) + "/" +
               std::to_string(truth.bits.size()) + " pairs " +
               std::to_string(si.equal_pairs.size()) + "/" +
               std::to_string(truth.equal_pairs.size());
    }
    r.why += " l1: line " + std::to_string(line.line_bytes) + "/" +
             std::to_string(c.l1.line_bytes) + " ways " + std::to_string(set.ways) + "/" +
             std::to_string(c.l1.ways) + " cap " + std::to_string(cap.bytes) + "/" +
             std::to_string(d.l1_bytes) + " policy " + pol.label() + "/" +
             device::to_string(c.l1.policy);
  }
  {
    Probe p = probe_on(dev, *buf, 16 * kMiB, seed + 1);
    const auto cal = calibrate(p, Level::kL2);
    const auto set = find_conflict_set(p, Level::kL2, cal, 32768);
    const auto line = infer_line_size(p, Level::kL2, cal, set);
    const auto pol = infer_policy(p, Level::kL2, cal, set);
    r.l2_line = line.line_bytes == c.l2.line_bytes;
    r.l2_ways = set.ways == c.l2.ways;
    r.l2_policy = policy_ok(pol.label(), c.l2.policy);
    // What one SM can keep: one partition's worth when every line it reads lands near it.
    if (d.partitions == 2 && !c.l2_replication) {
      r.l2_capacity = true;  // depends on how the home hash meets the set index; not asserted
    } else {
      const auto cap = infer_capacity(p, Level::kL2, cal, line.line_bytes, 4 * kMiB);
      const double truth = static_cast<double>(d.l2_partition_bytes);
      r.l2_capacity = std::fabs(static_cast<double>(cap.bytes) - truth) <= 0.02 * truth;
      r.why += " l2cap " + std::to_string(cap.bytes) + "/" + std::to_string(d.l2_partition_bytes);
    }
    r.why += " l2: line " + std::to_string(line.line_bytes) + "/" +
             std::to_string(c.l2.line_bytes) + " ways " + std::to_string(set.ways) + "/" +
             std::to_string(c.l2.ways) + " policy " + pol.label() + "/" +
             device::to_string(c.l2.policy);
  }
  {
    Probe p = probe_on(dev, *buf, 4 * kMiB, seed + 2);
    const auto part = infer_partitions(p, c.sm_count, c.l2.line_bytes);
    if (d.partitions == 1) {
      r.partitions = !part.two_partitions;
      if (part.two_partitions) r.why += " part: two classes in one partition";
    } else {
      r.partitions = part.two_partitions && part.hash_found &&
                     part.hash_mask == c.l2_partition_masks[0] &&
                     std::fabs(part.far_cycles - c.l2_far_hit_latency_cycles) <=
                         0.01 * c.l2_far_hit_latency_cycles &&
                     part.replication.has_value() && *part.replication == c.l2_replication;
      char buf2[200];
      std::snprintf(buf2, sizeof buf2, " part: mask %llx/%llx far %.1f/%.1f rep %d/%d",
                    static_cast<unsigned long long>(part.hash_mask),
                    static_cast<unsigned long long>(c.l2_partition_masks[0]), part.far_cycles,
                    c.l2_far_hit_latency_cycles, part.replication.value_or(-1) ? 1 : 0,
                    c.l2_replication ? 1 : 0);
      r.why += buf2;
    }
  }
  {
    Probe p = probe_on(dev, *buf, buf->bytes(), seed + 3);
    const auto tlb = infer_tlb(p, 2 * kMiB, max_pages);
    r.tlb = tlb.levels.size() == 2 && tlb.levels[0].entries == c.tlb[0].entries &&
            tlb.levels[1].entries == c.tlb[1].entries && tlb.page_bytes == page &&
            std::fabs(tlb.levels[0].miss_penalty_cycles - c.tlb[0].miss_penalty_cycles) <=
                0.1 * c.tlb[0].miss_penalty_cycles;
    r.why += " tlb: levels " + std::to_string(tlb.levels.size());
    for (const auto& l : tlb.levels)
      r.why += " " + std::to_string(l.entries) + "(" + std::to_string(l.miss_penalty_cycles) + ")";
    r.why += " truth pen " + std::to_string(c.tlb[0].miss_penalty_cycles);
    if (std::getenv("GP_DEBUG")) r.why += " curve " + tlb.curve.dump() + tlb.page_curve.dump();
    r.why += " (" + std::to_string(c.tlb[0].entries) + " " + std::to_string(c.tlb[1].entries) +
             ") page " + std::to_string(tlb.page_bytes) + "/" + std::to_string(page);
  }
  return r;
}

/// A tiny modelled GPU whose unified storage is all L1: 32 sets x 4 ways of 128-B lines, set
/// index by `masks` (GF(2) hash; empty: modulo), replacement `policy`.
/// The masks of a 2^n-set XOR index over bits 7 .. 7 + n - 1, with each fold (bit, rows) adding
/// `bit` to those rows' masks (its column is their sum).
std::vector<std::uint64_t> folded_masks(
    int n, const std::vector<std::pair<int, std::vector<int>>>& folds) {
  std::vector<std::uint64_t> masks;
  for (int i = 0; i < n; ++i) masks.push_back(std::uint64_t{1} << (7 + i));
  for (const auto& [bit, rows] : folds)
    for (int row : rows) masks[static_cast<std::size_t>(row)] |= std::uint64_t{1} << bit;
  return masks;
}

ModelConfig l1_only_model(Replacement policy, std::vector<std::uint64_t> masks) {
  ModelConfig c = device::builtin_model_config("tiny");
  c.l1.line_bytes = 128;
  c.l1.ways = 4;
  c.l1.policy = policy;
  c.l1.set_hash_masks = std::move(masks);
  c.l1_shared_unified_bytes = 32 * 4 * 128;
  c.default_shared_carveout_bytes = 0;
  c.shared_per_sm_bytes = 0;
  c.l1.capacity_bytes = 0;
  return c;
}

/// What the targeted L1 inferences start from: a probe over 4 MiB of `buf`, the calibration and
/// a minimal conflict set (expected to be found).
struct L1Start {
  measure::cache::Probe probe;
  analysis::cache::Calibration cal;
  analysis::cache::ConflictSet set;
};
L1Start l1_start(device::ModelDevice& dev, ProbeBuffer& buf, std::uint64_t seed,
                 std::uint64_t contiguous = 0) {
  using namespace analysis::cache;
  using namespace measure::cache;
  L1Start st;
  st.probe = probe_on(dev, buf, 4 * kMiB, seed);
  st.probe.contiguous_bytes = contiguous;
  st.cal = calibrate(st.probe, Level::kL1);
  st.set = find_conflict_set(st.probe, Level::kL1, st.cal, 4096);
  EXPECT_TRUE(st.set.found);
  return st;
}

// Bits at or above the device's page move a line to another physical frame: the inference
// records that they change the set but neither pairs them nor judges the kind on them. The
// hash has bits 7..11 (one per set-index bit) and bits 17 and 18 in every mask (equal
// columns): with every bit physical the pair (17, 18) cancels; with 32 KiB pages it is never
// tested, and 17 and 18 are page bits.
TEST(CacheInference, SetIndexTestsPairsOnlyBelowThePage) {
  using namespace analysis::cache;
  using namespace measure::cache;
  std::vector<std::uint64_t> masks;
  for (int i = 0; i < 5; ++i)
    masks.push_back((std::uint64_t{1} << (7 + i)) | (std::uint64_t{3} << 17));
  device::ModelDevice dev(l1_only_model(Replacement::kLru, masks));
  auto buf = dev.alloc_probe_buffer(4 * kMiB);
  const auto run = [&](std::uint64_t contiguous) {
    auto st = l1_start(dev, *buf, 5, contiguous);
    return infer_set_index(st.probe, Level::kL1, st.cal, st.set, 128, 32 * 4 * 128);
  };
  const auto flat = run(0);
  EXPECT_EQ(flat.bits, (std::vector<int>{7, 8, 9, 10, 11, 17, 18}));
  EXPECT_EQ(flat.equal_pairs, (std::vector<std::pair<int, int>>{{17, 18}}));
  EXPECT_EQ(flat.first_page_bit, -1);
  EXPECT_TRUE(flat.page_bits.empty());
  EXPECT_EQ(flat.kind, analysis::cache::SetIndexKind::kXorHash);
  const auto paged = run(32 * kKiB);
  EXPECT_EQ(paged.bits, flat.bits);
  EXPECT_EQ(paged.first_page_bit, 15);
  EXPECT_EQ(paged.page_bits, (std::vector<int>{17, 18}));
  EXPECT_TRUE(paged.equal_pairs.empty());
  for (const auto& t : paged.pair_tests)
    for (const auto& b : t.at("flip_bits")) EXPECT_LT(b.get<int>(), 15);
  EXPECT_EQ(paged.pair_tests.size(), 10u);  // the 5 physical bits, pairwise
  for (const auto& t : paged.tests)
    EXPECT_EQ(t.at("within_page").get<bool>(), t.at("flip_bits")[0].get<int>() < 15);
}

// Every physical bit moves the line and the capacity gives a set count that is not a power of
// two: a modulo, unless a pair of bits that moves the line by fewer lines than there are sets
// keeps it (no modulo can), as bits 10 and 13 do on the H200's L2. Bits 12 and 13 share a
// column in the first hash and not in the second; bits 7..14 are physical (32 KiB pages).
TEST(CacheInference, AnEqualPairBelowTheSetSpanRulesOutAModulo) {
  using namespace analysis::cache;
  using namespace measure::cache;
  const auto kind = [](bool shared_column, std::uint64_t contiguous = 32 * kKiB) {
    // Columns: bit 7 + i is e_i; bit 12 is e0 + e1, bit 13 the same or e0 + e2, bit 14
    // e1 + e2 + e3.
    const auto masks =
        folded_masks(5, {{12, {0, 1}},
                         {13, shared_column ? std::vector<int>{0, 1} : std::vector<int>{0, 2}},
                         {14, {1, 2, 3}}});
    device::ModelDevice dev(l1_only_model(Replacement::kLru, masks));
    auto buf = dev.alloc_probe_buffer(4 * kMiB);
    auto st = l1_start(dev, *buf, 9, contiguous);
    // 100 sets of 4 x 128 B: 12800 B, more than bits 12 and 13 move a line (12288 B).
    return infer_set_index(st.probe, Level::kL1, st.cal, st.set, 128, 100 * 4 * 128);
  };
  const auto hashed = kind(true);
  EXPECT_EQ(hashed.equal_pairs, (std::vector<std::pair<int, int>>{{12, 13}}));
  EXPECT_TRUE(hashed.modulo_refuted);
  EXPECT_EQ(hashed.kind, analysis::cache::SetIndexKind::kXorHash);
  EXPECT_EQ(hashed.modulo_refuted_by, "equal_pair");
  // No pair cancels in the second hash; with 32 KiB pages no two members share a page, so
  // nothing refutes a modulo over the 100 sets the capacity implies.
  const auto plain = kind(false);
  EXPECT_TRUE(plain.equal_pairs.empty());
  EXPECT_EQ(plain.member_distance_gcd_lines, 0u);
  EXPECT_FALSE(plain.modulo_refuted);
  EXPECT_EQ(plain.kind, analysis::cache::SetIndexKind::kModuloNonPowerOfTwo);
  // Where every address is physical, the members' own distances (no multiple of 100 lines:
  // the hash has 32 sets) refute it.
  const auto whole = kind(false, 0);
  EXPECT_TRUE(whole.modulo_refuted);
  EXPECT_EQ(whole.modulo_refuted_by, "member_distance");
  EXPECT_NE(whole.member_distance_gcd_lines % 100, 0u);
  EXPECT_EQ(whole.kind, analysis::cache::SetIndexKind::kXorHash);
}

// A true modulo over a set count that is no power of two (the model's plain index over 100
// sets): every member of a conflict set is a multiple of 100 lines from the others, nothing
// refutes the modulo, and the kind says so.
TEST(CacheInference, AModuloOverHundredSetsKeepsItsKind) {
  using namespace analysis::cache;
  using namespace measure::cache;
  ModelConfig c = l1_only_model(Replacement::kLru, {});
  c.l1_shared_unified_bytes = 100 * 4 * 128;
  device::ModelDevice dev(c);
  auto buf = dev.alloc_probe_buffer(4 * kMiB);
  auto st = l1_start(dev, *buf, 9, 32 * kKiB);
  const auto r = infer_set_index(st.probe, Level::kL1, st.cal, st.set, 128, 100 * 4 * 128);
  EXPECT_FALSE(r.modulo_refuted);
  EXPECT_EQ(r.modulo_refuted_by, "");
  EXPECT_NE(r.member_distance_gcd_lines, 0u);
  EXPECT_EQ(r.member_distance_gcd_lines % 100, 0u);
  EXPECT_EQ(r.kind, analysis::cache::SetIndexKind::kModuloNonPowerOfTwo);
  EXPECT_EQ(r.sets, 100u);
}

// The set index and the data victim have one JSON form: written and read back they are the same
// record, categories by name; a category the form does not name is refused with one line.
TEST(CacheInference, SetIndexAndDataVictimRecordsRoundTrip) {
  using analysis::cache::DataVictimResult;
  using analysis::cache::SetIndexKind;
  using analysis::cache::SetIndexResult;
  using analysis::cache::VictimClass;
  SetIndexResult si;
  si.bits = {7, 8, 12};
  si.equal_pairs = {{7, 12}};
  si.kind = SetIndexKind::kXorHash;
  si.sets = 64;
  si.lowest_bit_tested = 7;
  si.highest_bit_tested = 20;
  si.first_page_bit = 16;
  si.page_bits = {17};
  si.modulo_refuted = true;
  si.modulo_refuted_by = "equal_pair";
  si.member_distance_gcd_lines = 3;
  si.tests = nlohmann::json::array({{{"flip_bits", {7}}, {"same_set", false}}});
  const nlohmann::json sj = si;
  EXPECT_EQ(sj.size(), 13u);
  EXPECT_EQ(sj.at("kind"), "xor_hash");
  EXPECT_EQ(sj.at("equal_pairs"), nlohmann::json::parse("[[7, 12]]"));
  EXPECT_EQ(nlohmann::json(sj.get<SetIndexResult>()), sj);
  DataVictimResult dv;
  dv.measured = true;
  dv.victim = VictimClass::kRandomSet;
  dv.lines_held = 300;
  dv.bin_probed = {24, 24, 24, 24};
  dv.bin_evicted = {1, 2, 3, 4};
  dv.misfit_z = {{"random_set", 0.5}, {"global_lru", 9.0}};
  const nlohmann::json dj = dv;
  EXPECT_EQ(dj.size(), 17u);
  EXPECT_EQ(dj.at("victim"), "random_set");
  EXPECT_EQ(nlohmann::json(dj.get<DataVictimResult>()), dj);
  EXPECT_EQ(nlohmann::json(DataVictimResult{}).at("victim"), "");
  auto bad = sj;
  bad["kind"] = "modulo";
  EXPECT_THROW(bad.get<SetIndexResult>(), UsageError);
  auto bad_victim = dj;
  bad_victim["victim"] = "lru";
  EXPECT_THROW(bad_victim.get<DataVictimResult>(), UsageError);
}

// The distances that judge a modulo are taken only within one page: lines of different pages
// are apart by their frames' distance, which user code cannot see.
TEST(CacheInference, MemberDistancesAreTakenWithinAPage) {
  using analysis::cache::in_page_distance_gcd;
  const std::uint64_t page = 2 * kMiB;
  // In-page offsets 0, 432 x 128 and 864 x 128 (gcd 432 lines); a fourth line in the next
  // page, 1 line past its start, would make the gcd 1 if it were compared.
  const std::vector<std::uint64_t> lines{0, 432 * 128, 864 * 128, page + 128};
  EXPECT_EQ(in_page_distance_gcd(lines, 128, page), 432u);
  EXPECT_EQ(in_page_distance_gcd(lines, 128, 0), 1u);
  EXPECT_EQ(in_page_distance_gcd({0, page + 128}, 128, page), 0u);
}

// A cycle over a conflict set's ways + 1 lines misses every access under LRU and FIFO, and
// under tree-PLRU once settled (each line leaves just before its turn); it keeps a large share
// under random victims: the policy sequences cannot see that difference where the victim is
// the same.
TEST(CacheInference, CyclicRetentionTellsThrashingFromKeeping) {
  using namespace analysis::cache;
  using namespace measure::cache;
  const auto retention = [](Replacement policy) {
    device::ModelDevice dev(l1_only_model(policy, {}));
    auto buf = dev.alloc_probe_buffer(4 * kMiB);
    auto st = l1_start(dev, *buf, 3);
    return cyclic_retention(st.probe, Level::kL1, st.cal, st.set);
  };
  for (auto pol : {Replacement::kLru, Replacement::kFifo, Replacement::kTreePlru}) {
    const auto r = retention(pol);
    ASSERT_TRUE(r.measured);
    EXPECT_EQ(r.lines, 5u);
    // The model's own class keeps exactly what the reference simulation predicts: nothing for
    // LRU and FIFO, a hit of the first rounds for tree-PLRU before it settles into thrashing.
    EXPECT_DOUBLE_EQ(r.retention, r.predicted.at(device::to_string(pol)).get<double>())
        << device::to_string(pol);
    EXPECT_LT(r.retention, 0.05);
    EXPECT_EQ(r.predicted.at("lru").get<double>(), 0.0);
    EXPECT_EQ(r.predicted.at("fifo").get<double>(), 0.0);
    EXPECT_EQ(r.round_retention.size(), 7u);
  }
  const auto random = retention(Replacement::kRandom);
  EXPECT_GT(random.retention, 0.3);  // about 0.6 in the long run for 4 ways and 5 lines
}

// Lines of other sets between a cycle's accesses change nothing for a policy confined to the
// set: LRU and FIFO still keep none, random victims still keep some. The fillers are members
// with one set-index bit flipped: in the model's 32-set modulo only bits 7..11 index, and no
// filler may share the cycle's set.
TEST(CacheInference, InterleavedCyclicRetentionUsesOtherSetsOnly) {
  using namespace analysis::cache;
  using namespace measure::cache;
  const auto run = [](Replacement policy) {
    device::ModelDevice dev(l1_only_model(policy, {}));
    auto buf = dev.alloc_probe_buffer(4 * kMiB);
    auto st = l1_start(dev, *buf, 3);
    const auto idx = infer_set_index(st.probe, Level::kL1, st.cal, st.set, 128, 32 * 4 * 128);
    EXPECT_EQ(idx.bits, (std::vector<int>{7, 8, 9, 10, 11}));
    const auto fillers = out_of_set_lines(st.set, idx.bits, idx.first_page_bit, 4 * kMiB);
    EXPECT_EQ(fillers.size(), st.set.lines.size() * 5);
    const std::uint64_t set = st.set.lines.front() / 128 % 32;
    for (auto f : fillers) EXPECT_NE(f / 128 % 32, set);
    return cyclic_retention(st.probe, Level::kL1, st.cal, st.set, 2, 8, fillers, 16);
  };
  for (auto pol : {Replacement::kLru, Replacement::kFifo}) {
    const auto r = run(pol);
    ASSERT_TRUE(r.measured);
    EXPECT_EQ(r.fillers_per_access, 16u);
    EXPECT_EQ(r.retention, 0.0) << device::to_string(pol);
  }
  const auto random = run(Replacement::kRandom);
  ASSERT_TRUE(random.measured);
  EXPECT_GT(random.retention, 0.3);
  // A flip at or above the page is not taken (its frame is unknown).
  ConflictSet one;
  one.found = true;
  one.lines = {0};
  EXPECT_EQ(out_of_set_lines(one, {7, 21}, 21, 4 * kMiB), (std::vector<std::uint64_t>{128}));
}

// The XOR hash's columns, bit by bit: a 32-set L1 whose index takes bits 7..11 and folds bits
// 12, 14 and 16 into them (bit 13 and 15 are not in the index). The recovered masks must put
// any two addresses in one set exactly when the model's masks do.
TEST(CacheInference, HashColumnsRecoverAFoldedIndex) {
  using namespace analysis::cache;
  using namespace measure::cache;
  const auto masks = folded_masks(5, {{12, {0, 2}}, {14, {1, 4}}, {16, {4}}});
  device::ModelDevice dev(l1_only_model(Replacement::kLru, masks));
  auto buf = dev.alloc_probe_buffer(4 * kMiB);
  auto st = l1_start(dev, *buf, 5, 128 * kKiB);  // bits 7..16 physical
  const auto idx = infer_set_index(st.probe, Level::kL1, st.cal, st.set, 128, 32 * 4 * 128);
  const auto hc = infer_hash_columns(st.probe, Level::kL1, st.cal, st.set, idx.bits,
                                     idx.lowest_bit_tested, idx.first_page_bit);
  ASSERT_TRUE(hc.found) << hc.note;
  EXPECT_EQ(hc.rank, 5);
  EXPECT_EQ(hc.independent_bits, (std::vector<int>{7, 8, 9, 10, 11}));
  EXPECT_EQ(hc.highest_bit_searched, 16);
  EXPECT_EQ(hc.dependent.size(), 3u);  // bits 12, 14, 16
  EXPECT_EQ(hc.verified, 3u);
  const auto set_of = [](const std::vector<std::uint64_t>& m, std::uint64_t a) {
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
      s |= static_cast<std::uint64_t>(__builtin_parityll(a & m[i])) << i;
    return s;
  };
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t a = (rng() % (128 * kKiB)) & ~std::uint64_t{127};
    const std::uint64_t b = (rng() % (128 * kKiB)) & ~std::uint64_t{127};
    EXPECT_EQ(set_of(masks, a) == set_of(masks, b), set_of(hc.masks, a) == set_of(hc.masks, b));
  }
  // With a rank cap below the index's, the search stops and says so.
  const auto capped = infer_hash_columns(st.probe, Level::kL1, st.cal, st.set, idx.bits,
                                         idx.lowest_bit_tested, idx.first_page_bit, 3);
  EXPECT_FALSE(capped.note.empty());
  EXPECT_EQ(capped.rank, 3);
}

// A decoupled L1: tags for 32 sets x 4 ways, lines for only 96. Lines 0..95 fill it (three per
// set, no set is full), line 0 is read again, then line 96 (set 0, which has a free tag) needs
// room: global_lru frees line 1 (now the oldest), own_set line 32 (set 0's oldest).
TEST(CacheInference, DecoupledL1EvictsByItsDataVictim) {
  const auto probe = [](device::DataVictim v) {
    ModelConfig c = l1_only_model(Replacement::kLru, {});
    c.l1_shared_unified_bytes = 96 * 128;  // 96 lines held
    c.l1_tag_bytes = 32 * 4 * 128;         // 128 tags
    c.l1_data_victim = v;
    device::ModelDevice dev(c);
    auto buf = dev.alloc_probe_buffer(4 * kMiB);
    AccessSequence s;
    s.op = device::LoadOp::kCa;
    s.sm = 0;
    for (int i = 0; i < 96; ++i) s.sequence.push_back(static_cast<std::uint64_t>(i) * 128);
    s.sequence.push_back(0);
    s.sequence.push_back(96 * 128);
    s.timed_from = static_cast<std::uint32_t>(s.sequence.size());
    s.sequence.push_back(1 * 128);
    s.sequence.push_back(32 * 128);
    s.sequence.push_back(0);
    return dev.run_sequence(*buf, s).cycles;
  };
  const double hit = l1_only_model(Replacement::kLru, {}).l1.hit_latency_cycles;
  const auto g = probe(device::DataVictim::kGlobalLru);
  EXPECT_GT(g[0], hit);  // line 1 left
  EXPECT_EQ(g[2], hit);  // line 0, read again, stayed
  const auto o = probe(device::DataVictim::kOwnSet);
  EXPECT_EQ(o[0], hit);  // line 1 stayed
  EXPECT_GT(o[1], hit);  // line 32 left
  EXPECT_EQ(o[2], hit);
  // A coupled model of the same tags keeps all 97 lines (the tags hold 128).
  ModelConfig full = l1_only_model(Replacement::kLru, {});
  full.l1_shared_unified_bytes = 32 * 4 * 128;
  device::ModelDevice fdev(full);
  auto fbuf = fdev.alloc_probe_buffer(4 * kMiB);
  AccessSequence fs;
  fs.op = device::LoadOp::kCa;
  for (int i = 0; i < 97; ++i) fs.sequence.push_back(static_cast<std::uint64_t>(i) * 128);
  fs.timed_from = static_cast<std::uint32_t>(fs.sequence.size());
  fs.sequence.push_back(1 * 128);
  EXPECT_EQ(fdev.run_sequence(*fbuf, fs).cycles[0], hit);
  // At a carve-out that leaves no lines the decoupled L1 is no L1: a line read twice misses
  // twice (its tags alone hold nothing).
  {
    ModelConfig c = l1_only_model(Replacement::kLru, {});
    c.l1_shared_unified_bytes = 96 * 128;
    c.shared_per_sm_bytes = 96 * 128;
    c.l1_tag_bytes = 32 * 4 * 128;
    device::ModelDevice dev(c);
    auto buf = dev.alloc_probe_buffer(4 * kMiB);
    AccessSequence s;
    s.op = device::LoadOp::kCa;
    s.carveout_percent = 100;
    s.sequence = {0, 0};
    const auto t = dev.run_sequence(*buf, s);
    EXPECT_GT(t.cycles[1], hit);
  }
  // Fewer tags than lines is no decoupled cache.
  ModelConfig bad = l1_only_model(Replacement::kLru, {});
  bad.l1_tag_bytes = 16 * 128;
  EXPECT_THROW(device::ModelDevice{bad}, UsageError);
}

// The data victim of a decoupled L1 (tags: 64 sets x 4 ways under a folded XOR hash; lines:
// 160) is recovered for each modelled rule: the lines held, then which probes left. A random
// set and a cycle over the sets both take each set's oldest line, scattered over the ages; the
// second fill (one new line per set) tells them apart by how many sets lose none or two.
TEST(CacheInference, DataVictimOfADecoupledL1IsRecovered) {
  using namespace analysis::cache;
  using namespace measure::cache;
  const auto masks = folded_masks(6, {{13, {0, 2}}, {14, {1, 3, 5}}});
  // Ten probe seeds (other sampled lines) per rule: the rule is named, within kMisfitZ, and
  // every other rule refuted beyond it, in at least 9 of 10.
  for (auto [victim, name] : {std::pair{device::DataVictim::kGlobalLru, "global_lru"},
                              std::pair{device::DataVictim::kOwnSet, "own_set"},
                              std::pair{device::DataVictim::kRandom, "random"},
                              std::pair{device::DataVictim::kRandomSet, "random_set"},
                              std::pair{device::DataVictim::kSetCycle, "set_cycle"}}) {
    int recovered = 0;
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      ModelConfig c = l1_only_model(Replacement::kLru, masks);
      c.l1_shared_unified_bytes = 160 * 128;
      c.l1_tag_bytes = 64 * 4 * 128;
      c.l1_data_victim = victim;
      c.seed = seed;
      device::ModelDevice dev(c);
      auto buf = dev.alloc_probe_buffer(4 * kMiB);
      auto probe = probe_on(dev, *buf, 4 * kMiB, 7 + seed);
      const auto cal = calibrate(probe, Level::kL1);
      const auto r = infer_data_victim(probe, Level::kL1, cal, 128, masks, 256);
      ASSERT_TRUE(r.measured) << r.note;
      EXPECT_EQ(r.lines_held, 160u) << name;
      EXPECT_EQ(r.filled_cycle, 224u) << name;  // one new line per set
      recovered += analysis::cache::to_string(r.victim) == name &&
                   r.misfit_z.at(name) <= kMisfitZ && r.rejected_z > kMisfitZ;
    }
    EXPECT_GE(recovered, 9) << name;
    std::printf("data victim %s: recovered in %d of 10 seeds\n", name, recovered);
  }
  // Tags that name no more lines than are held: nothing to measure, and it says so.
  ModelConfig full = l1_only_model(Replacement::kLru, masks);
  full.l1_shared_unified_bytes = 64 * 4 * 128;
  device::ModelDevice fdev(full);
  auto fbuf = fdev.alloc_probe_buffer(4 * kMiB);
  auto fprobe = probe_on(fdev, *fbuf, 4 * kMiB, 7);
  const auto fr =
      infer_data_victim(fprobe, Level::kL1, calibrate(fprobe, Level::kL1), 128, masks, 256);
  EXPECT_FALSE(fr.measured);
  EXPECT_FALSE(fr.note.empty());
}

// A lopsided hash (4 sets of 64 ways, each 64 consecutive lines one set): a set gets more new
// lines than it had old ones, so an own-set victim can be a new line. Its age rank is still the
// rank in its set (a review found it read past the ranks of the old lines).
TEST(CacheInference, DataVictimRanksNewLinesToo) {
  using namespace analysis::cache;
  using namespace measure::cache;
  const std::vector<std::uint64_t> masks{std::uint64_t{1} << 13, std::uint64_t{1} << 14};
  ModelConfig c = l1_only_model(Replacement::kLru, masks);
  c.l1.ways = 64;
  c.l1_shared_unified_bytes = 192 * 128;
  c.l1_tag_bytes = 4 * 64 * 128;
  c.l1_data_victim = device::DataVictim::kOwnSet;
  device::ModelDevice dev(c);
  auto buf = dev.alloc_probe_buffer(4 * kMiB);
  auto probe = probe_on(dev, *buf, 4 * kMiB, 7);
  const auto r =
      infer_data_victim(probe, Level::kL1, calibrate(probe, Level::kL1), 128, masks, 256);
  ASSERT_TRUE(r.measured) << r.note;
  EXPECT_EQ(r.lines_held, 192u);
  for (const auto& e : r.evidence) {
    const auto line = e.at("line").get<std::uint64_t>();
    // Lines 64s .. 64s+63 are set s's first 64; line L is the (L / 256)-th of its set's lines
    // after them in each later block of 256.
    EXPECT_EQ(e.at("rank_in_set").get<std::uint64_t>(), (line % 256) % 64 + 64 * (line / 256))
        << line;
  }
}

// Lines of the first tags' worth (at most `ways` per tag set) conflict only through the
// store that holds them: a decoupled L1 whose 160 lines are stored without sets gives a minimal
// conflict set of 161; a coupled L1 of the same tags gives none (they all fit).
TEST(CacheInference, StoredLinesConflictOnlyInADecoupledL1) {
  using namespace analysis::cache;
  using namespace measure::cache;
  const auto data_set = [](std::uint64_t held) {
    ModelConfig c = l1_only_model(Replacement::kLru, {});
    c.l1_shared_unified_bytes = held * 128;
    c.l1_tag_bytes = 64 * 4 * 128;
    if (held == 256) c.l1_tag_bytes = 0;
    device::ModelDevice dev(c);
    auto buf = dev.alloc_probe_buffer(4 * kMiB);
    auto probe = probe_on(dev, *buf, 4 * kMiB, 11);
    const auto cal = calibrate(probe, Level::kL1);
    probe.buffer_bytes = 64 * 4 * 128;  // the first tags' worth of lines
    return find_conflict_set(probe, Level::kL1, cal, 4096, 128);
  };
  const auto decoupled = data_set(160);
  ASSERT_TRUE(decoupled.found) << decoupled.note;
  EXPECT_EQ(decoupled.ways, 160u);
  EXPECT_TRUE(decoupled.minimal_verified);
  const auto coupled = data_set(256);
  EXPECT_FALSE(coupled.found);
}

TEST(CacheInference, RecoversRandomModelledHierarchies) {
  std::mt19937_64 rng(20261201);
  const int kHierarchies =
      std::getenv("GP_HIERARCHIES") ? std::atoi(std::getenv("GP_HIERARCHIES")) : 200;
  int ok = 0;
  int fails[11] = {};
  for (int i = 0; i < kHierarchies; ++i) {
    const Drawn d = random_hierarchy(rng, i);
    if (std::getenv("GP_ONLY") && std::atoi(std::getenv("GP_ONLY")) != i) continue;
    const Recovered r = recover(d, 77 + static_cast<std::uint64_t>(i));
    ok += r.all() ? 1 : 0;
    const bool parts[] = {r.l1_line,    r.l1_ways, r.l1_capacity, r.l1_policy,
                          r.l2_line,    r.l2_ways, r.l2_capacity, r.l2_policy,
                          r.partitions, r.tlb,     r.l1_set_index};
    for (int k = 0; k < 11; ++k) fails[k] += parts[k] ? 0 : 1;
    if (!r.all()) std::printf("hierarchy %d not recovered:%s\n", i, r.why.c_str());
  }
  std::printf(
      "recovered %d of %d; misses: l1 line %d ways %d cap %d policy %d, l2 line %d ways "
      "%d cap %d policy %d, partitions %d, tlb %d, l1 set index %d\n",
      ok, kHierarchies, fails[0], fails[1], fails[2], fails[3], fails[4], fails[5], fails[6],
      fails[7], fails[8], fails[9], fails[10]);
  EXPECT_GE(ok, kHierarchies * 95 / 100);
}

}  // namespace
}  // namespace gpuprobe
