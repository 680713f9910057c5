#pragma once
// The finding names read by more than their producer: later experiments (FindingBoard), the
// memory-hierarchy table, device/model_export, the report and tools/readme_results.py. C++
// readers use these constants, so a renamed constant breaks the build, and
// tests/unit/test_finding_names.cpp fails when a producer no longer emits one of them or a
// reader (the Python tools too) names a finding no experiment produces. Each name is a
// FindingKey with its unit and kind (core/finding_value.hpp): FindingBoard::get takes only keys,
// and the test also fails when a producer's finding differs from its key's unit or kind.
#include <iterator>

#include "core/finding_value.hpp"

namespace gpuprobe::finding {

// latency.sweep
inline constexpr FindingKey kDramLatency{"dram.latency", "cycles", ValueKind::kNumber};
inline constexpr FindingKey kL1Capacity{"l1.capacity", "bytes", ValueKind::kNumber};
inline constexpr FindingKey kL1HitLatency{"l1.hit_latency", "cycles", ValueKind::kNumber};
inline constexpr FindingKey kL2Capacity{"l2.capacity", "bytes", ValueKind::kNumber};
inline constexpr FindingKey kL2HitLatency{"l2.hit_latency", "cycles", ValueKind::kNumber};
inline constexpr FindingKey kL2MixedLatency{"l2.mixed_latency", "cycles", ValueKind::kNumber};
inline constexpr FindingKey kL2NearCapacity{"l2.near_capacity", "bytes", ValueKind::kNumber};

// latency.shared
inline constexpr FindingKey kSharedLatency{"shared.latency", "cycles", ValueKind::kNumber};

// latency.carveout
inline constexpr FindingKey kL1CapacityCarveout100{"l1.capacity.carveout_100", "bytes",
                                                   ValueKind::kNumber};
inline constexpr FindingKey kL1CapacityMaxL1{"l1.capacity.max_l1", "bytes", ValueKind::kNumber};

// cache.l2.partition
inline constexpr FindingKey kL2PartitionFarLatency{"l2.partition.far_latency", "cycles",
                                                   ValueKind::kNumber};
inline constexpr FindingKey kL2PartitionHashMask{"l2.partition.hash_mask", "mask",
                                                 ValueKind::kMask};
inline constexpr FindingKey kL2PartitionNearLatency{"l2.partition.near_latency", "cycles",
                                                    ValueKind::kNumber};
inline constexpr FindingKey kL2PartitionSmGroupSizes{"l2.partition.sm_group_sizes", "SMs",
                                                     ValueKind::kNumber};

// cache.l2.far_hit
inline constexpr FindingKey kL2ReplicaCapacity{"l2.replica_capacity", "bytes", ValueKind::kNumber};
inline constexpr FindingKey kL2FarHitLatency{"l2.far_hit_latency", "cycles", ValueKind::kNumber};
inline constexpr FindingKey kL2MixtureMissLatency{"l2.mixture.miss_latency", "cycles",
                                                  ValueKind::kNumber};
inline constexpr FindingKey kL2MixturePageSpread{"l2.mixture.page_spread", "fraction",
                                                 ValueKind::kNumber};
inline constexpr FindingKey kL2MixtureAllocationSpread{"l2.mixture.allocation_spread", "%",
                                                       ValueKind::kNumber};
inline constexpr FindingKey kL2MixturePlacementUnit{"l2.mixture.placement_unit", "bytes",
                                                    ValueKind::kNumber};
inline constexpr FindingKey kDramLatencyNearHome{"dram.latency_near_home", "cycles",
                                                 ValueKind::kNumber};
inline constexpr FindingKey kDramLatencyFarHome{"dram.latency_far_home", "cycles",
                                                ValueKind::kNumber};

// cache.fetch_granularity
inline constexpr FindingKey kCacheL1FetchGranularity{"cache.l1.fetch_granularity", "bytes",
                                                     ValueKind::kNumber};
inline constexpr FindingKey kCacheL2FillGranularity{"cache.l2.fill_granularity", "bytes",
                                                    ValueKind::kNumber};

// cache.l1.ways
inline constexpr FindingKey kCacheL1Ways{"cache.l1.ways", "ways", ValueKind::kNumber};
inline constexpr FindingKey kCacheL1Sets{"cache.l1.sets", "sets", ValueKind::kNumber};
inline constexpr FindingKey kCacheL1LineSize{"cache.l1.line_size", "bytes", ValueKind::kNumber};
inline constexpr FindingKey kCacheL1Replacement{
    "cache.l1.replacement", "class", ValueKind::kCategory, finding_key::kReplacementLabels,
    std::size(finding_key::kReplacementLabels)};
inline constexpr FindingKey kCacheL1TagSets{"cache.l1.tag_sets", "sets", ValueKind::kNumber};
inline constexpr FindingKey kCacheL1TagCapacity{"cache.l1.tag_capacity", "bytes",
                                                ValueKind::kNumber};
inline constexpr FindingKey kCacheL1DataVictim{"cache.l1.data_victim", "class",
                                               ValueKind::kCategory, finding_key::kDataVictimLabels,
                                               std::size(finding_key::kDataVictimLabels)};

// cache.l2.ways
inline constexpr FindingKey kCacheL2LineSize{"cache.l2.line_size", "bytes", ValueKind::kNumber};
inline constexpr FindingKey kCacheL2SetIndexBits{"cache.l2.set_index_bits", "bits",
                                                 ValueKind::kNumber};
inline constexpr FindingKey kCacheL2Ways{"cache.l2.ways", "ways", ValueKind::kNumber};

// cache.l2.persisting
namespace labels {
inline constexpr CategoryLabel kPersistingRule[] = {
    {0, "bytes", "a share of the set-aside's bytes"},
    {1, "ways_floor", "whole ways of every set (set-aside rounded down to ways)"},
    {2, "ways_round", "whole ways of every set (set-aside rounded to ways)"},
    {3, "none", "nothing beyond what plain loads keep"},
    {-1, "undecided", "undecided between the rules"},
};
inline constexpr CategoryLabel kSetAsideBeyondMax[] = {
    {0, "refused", "refused"},
    {1, "clamped", "clamped to the maximum"},
    {2, "accepted", "accepted as asked"},
};
}  // namespace labels
inline constexpr FindingKey kL2PersistingMaxSetAside{"l2.persisting.max_set_aside", "bytes",
                                                     ValueKind::kNumber};
inline constexpr FindingKey kL2PersistingMaxWindow{"l2.persisting.max_window", "bytes",
                                                   ValueKind::kNumber};
inline constexpr FindingKey kL2PersistingCapacity{"l2.persisting.capacity", "bytes",
                                                  ValueKind::kNumber};
inline constexpr FindingKey kL2PersistingRule{"l2.persisting.rule", "class", ValueKind::kCategory,
                                              labels::kPersistingRule,
                                              std::size(labels::kPersistingRule)};
inline constexpr FindingKey kL2PersistingBeyondMax{"l2.persisting.set_aside_beyond_max", "class",
                                                   ValueKind::kCategory, labels::kSetAsideBeyondMax,
                                                   std::size(labels::kSetAsideBeyondMax)};

// cache.l2.eviction_priority
inline constexpr FindingKey kL2EvictLastProtects{"l2.evict_last.protects", "bool",
                                                 ValueKind::kBool};
inline constexpr FindingKey kL2EvictFirstGoesFirst{"l2.evict_first.goes_first", "bool",
                                                   ValueKind::kBool};
inline constexpr FindingKey kL2EvictLastMaxShare{"l2.evict_last.max_share", "fraction",
                                                 ValueKind::kNumber};
inline constexpr FindingKey kL2DiscardDropsDirty{"l2.discard.drops_dirty", "bool",
                                                 ValueKind::kBool};
namespace labels {
inline constexpr CategoryLabel kL2EvictLastCapRule[] = {
    {0, "per_set", "per set: the set-aside's ways of every set"},
    {1, "byte_budget", "a byte budget over the whole L2"},
    {2, "neither", "neither rule fits"},
    {-1, "undecided", "undecided (the placements cannot tell)"},
};
}  // namespace labels
inline constexpr FindingKey kL2EvictLastCapRule{"l2.evict_last.cap_rule", "class",
                                                ValueKind::kCategory, labels::kL2EvictLastCapRule,
                                                std::size(labels::kL2EvictLastCapRule)};
inline constexpr FindingKey kL2PersistingCapRule{"l2.persisting.cap_rule", "class",
                                                 ValueKind::kCategory, labels::kL2EvictLastCapRule,
                                                 std::size(labels::kL2EvictLastCapRule)};

// gpuprobe replay --runs (model.replay): the replay judged against the GPU's runs
namespace labels {
inline constexpr CategoryLabel kReplayFairVerdict[] = {
    {0, "pass", "passes against the runs"},
    {1, "fail", "fails against the runs"},
    {-1, "undecided", "undecided (too few runs)"},
};
}  // namespace labels
inline constexpr FindingKey kReplayFairPointsWithin{"replay.fair.points_within", "fraction",
                                                    ValueKind::kNumber};
inline constexpr FindingKey kReplayFairPlateausWithin{"replay.fair.plateaus_within", "fraction",
                                                      ValueKind::kNumber};
inline constexpr FindingKey kReplayFairL1KneeError{"replay.fair.l1_knee_error", "%",
                                                   ValueKind::kNumber};
inline constexpr FindingKey kReplayFairVerdict{"replay.fair.verdict", "class", ValueKind::kCategory,
                                               labels::kReplayFairVerdict,
                                               std::size(labels::kReplayFairVerdict)};

// latency.tlb
inline constexpr FindingKey kTlbLevels{"tlb.levels", "levels", ValueKind::kNumber};
inline constexpr FindingKey kTlbPageSize{"tlb.page_size", "bytes", ValueKind::kNumber};
inline constexpr FindingKey kTlbL1Entries{"tlb.l1.entries", "entries", ValueKind::kNumber};
inline constexpr FindingKey kTlbL1MissPenalty{"tlb.l1.miss_penalty", "cycles", ValueKind::kNumber};
inline constexpr FindingKey kTlbL1Reach{"tlb.l1.reach", "bytes", ValueKind::kNumber};

// smem.bank_conflicts
inline constexpr FindingKey kSmemBankModelAgreement{"smem.bank_model_agreement", "fraction",
                                                    ValueKind::kNumber};

// smem.bandwidth
inline constexpr FindingKey kSmemBandwidth{"smem.bandwidth", "B/clk/SM", ValueKind::kNumber};

// compute.latency
inline constexpr FindingKey kComputeFfmaLatency{"compute.ffma.latency", "cycles",
                                                ValueKind::kNumber};

// compute.throughput
inline constexpr FindingKey kComputeFfmaThroughput{"compute.ffma.throughput", "FMA/clk/SM",
                                                   ValueKind::kNumber};

// bandwidth.read
inline constexpr FindingKey kDramReadBandwidth{"dram.read_bandwidth", "GB/s", ValueKind::kNumber};

// bandwidth.write
inline constexpr FindingKey kDramWriteBandwidth{"dram.write_bandwidth", "GB/s", ValueKind::kNumber};
inline constexpr FindingKey kDramWriteBandwidthCudamemsetReference{
    "dram.write_bandwidth.cudamemset_reference", "GB/s", ValueKind::kNumber};

// bandwidth.copy
inline constexpr FindingKey kDramCopyBandwidth{"dram.copy_bandwidth", "GB/s", ValueKind::kNumber};
inline constexpr FindingKey kDramCopyBandwidthCudamemcpyReference{
    "dram.copy_bandwidth.cudamemcpy_reference", "GB/s", ValueKind::kNumber};
inline constexpr FindingKey kDramCopyBandwidthWidth16b{"dram.copy_bandwidth.width_16b", "GB/s",
                                                       ValueKind::kNumber};
inline constexpr FindingKey kDramCopyBandwidthWidth4b{"dram.copy_bandwidth.width_4b", "GB/s",
                                                      ValueKind::kNumber};
inline constexpr FindingKey kDramCopyBandwidthWidth8b{"dram.copy_bandwidth.width_8b", "GB/s",
                                                      ValueKind::kNumber};

// bandwidth.layout
inline constexpr FindingKey kDramLayoutAosBandwidth{"dram.layout_aos_bandwidth", "GB/s",
                                                    ValueKind::kNumber};
inline constexpr FindingKey kDramLayoutSoaBandwidth{"dram.layout_soa_bandwidth", "GB/s",
                                                    ValueKind::kNumber};

// bandwidth.transpose
inline constexpr FindingKey kTransposeCopyBandwidth{"transpose.copy_bandwidth", "GB/s",
                                                    ValueKind::kNumber};
inline constexpr FindingKey kTransposeNaiveBandwidth{"transpose.naive_bandwidth", "GB/s",
                                                     ValueKind::kNumber};
inline constexpr FindingKey kTransposeTiledBandwidth{"transpose.tiled_bandwidth", "GB/s",
                                                     ValueKind::kNumber};
inline constexpr FindingKey kTransposeTiledPaddedBandwidth{"transpose.tiled_padded_bandwidth",
                                                           "GB/s", ValueKind::kNumber};

// bandwidth.sweep
inline constexpr FindingKey kDramReadBandwidthSweep{"dram.read_bandwidth_sweep", "GB/s",
                                                    ValueKind::kNumber};
inline constexpr FindingKey kL1ReadBandwidth{"l1.read_bandwidth", "B/clk/SM", ValueKind::kNumber};
inline constexpr FindingKey kL2ReadBandwidth{"l2.read_bandwidth", "GB/s", ValueKind::kNumber};

// bandwidth.hierarchy
inline constexpr FindingKey kHierarchyL1ReadBandwidth{"hierarchy.l1.read_bandwidth", "B/clk/SM",
                                                      ValueKind::kNumber};
inline constexpr FindingKey kHierarchyL2ReadBandwidth{"hierarchy.l2.read_bandwidth", "GB/s",
                                                      ValueKind::kNumber};

// ordering.litmus
inline constexpr FindingKey kOrderingLitmusRelaxedNoFenceStaleReads{
    "ordering.litmus.relaxed_no_fence.stale_reads", "reads", ValueKind::kNumber};
inline constexpr FindingKey kOrderingLitmusReleaseAcquireStaleReads{
    "ordering.litmus.release_acquire.stale_reads", "reads", ValueKind::kNumber};

// hopper.wgmma.throughput
inline constexpr FindingKey kHopperWgmmaBf16Tflops{"hopper.wgmma.bf16.tflops", "TFLOP/s",
                                                   ValueKind::kNumber};

// hopper.tma.bandwidth
inline constexpr FindingKey kHopperTmaLoadBandwidth{"hopper.tma.load_bandwidth", "GB/s",
                                                    ValueKind::kNumber};
inline constexpr FindingKey kL2TmaBulkReadBandwidth{"l2.tma_bulk_read_bandwidth", "GB/s",
                                                    ValueKind::kNumber};

// hopper.dsmem
inline constexpr FindingKey kHopperDsmemLatency{"hopper.dsmem.latency", "cycles",
                                                ValueKind::kNumber};

// hopper.pipeline
inline constexpr FindingKey kHopperPipeline128x256x64BestPipelineTflops{
    "hopper.pipeline.128x256x64.best_pipeline_tflops", "TFLOP/s", ValueKind::kNumber};
inline constexpr FindingKey kHopperPipeline128x256x64WgmmaOnlyTflops{
    "hopper.pipeline.128x256x64.wgmma_only_tflops", "TFLOP/s", ValueKind::kNumber};
inline constexpr FindingKey kL2TmaReadBandwidth{"l2.tma_read_bandwidth", "GB/s",
                                                ValueKind::kNumber};

/// Every key above, for the test that holds producers to their keys' units and kinds.
inline constexpr const FindingKey* kKeys[] = {
    &kDramLatency,
    &kL1Capacity,
    &kL1HitLatency,
    &kL2Capacity,
    &kL2HitLatency,
    &kL2MixedLatency,
    &kL2NearCapacity,
    &kSharedLatency,
    &kL1CapacityCarveout100,
    &kL1CapacityMaxL1,
    &kL2PartitionFarLatency,
    &kL2PartitionHashMask,
    &kL2PartitionNearLatency,
    &kL2PartitionSmGroupSizes,
    &kL2ReplicaCapacity,
    &kL2FarHitLatency,
    &kL2MixtureMissLatency,
    &kL2MixturePageSpread,
    &kL2MixtureAllocationSpread,
    &kL2MixturePlacementUnit,
    &kDramLatencyNearHome,
    &kDramLatencyFarHome,
    &kCacheL1FetchGranularity,
    &kCacheL2FillGranularity,
    &kCacheL1Ways,
    &kCacheL1Sets,
    &kCacheL1LineSize,
    &kCacheL1Replacement,
    &kCacheL1TagSets,
    &kCacheL1TagCapacity,
    &kCacheL1DataVictim,
    &kCacheL2LineSize,
    &kCacheL2SetIndexBits,
    &kCacheL2Ways,
    &kL2PersistingMaxSetAside,
    &kL2PersistingMaxWindow,
    &kL2PersistingCapacity,
    &kL2PersistingRule,
    &kL2PersistingBeyondMax,
    &kL2EvictLastProtects,
    &kL2EvictFirstGoesFirst,
    &kL2EvictLastMaxShare,
    &kL2DiscardDropsDirty,
    &kL2EvictLastCapRule,
    &kL2PersistingCapRule,
    &kReplayFairPointsWithin,
    &kReplayFairPlateausWithin,
    &kReplayFairL1KneeError,
    &kReplayFairVerdict,
    &kTlbLevels,
    &kTlbPageSize,
    &kTlbL1Entries,
    &kTlbL1MissPenalty,
    &kTlbL1Reach,
    &kSmemBankModelAgreement,
    &kSmemBandwidth,
    &kComputeFfmaLatency,
    &kComputeFfmaThroughput,
    &kDramReadBandwidth,
    &kDramWriteBandwidth,
    &kDramWriteBandwidthCudamemsetReference,
    &kDramCopyBandwidth,
    &kDramCopyBandwidthCudamemcpyReference,
    &kDramCopyBandwidthWidth16b,
    &kDramCopyBandwidthWidth4b,
    &kDramCopyBandwidthWidth8b,
    &kDramLayoutAosBandwidth,
    &kDramLayoutSoaBandwidth,
    &kTransposeCopyBandwidth,
    &kTransposeNaiveBandwidth,
    &kTransposeTiledBandwidth,
    &kTransposeTiledPaddedBandwidth,
    &kDramReadBandwidthSweep,
    &kL1ReadBandwidth,
    &kL2ReadBandwidth,
    &kHierarchyL1ReadBandwidth,
    &kHierarchyL2ReadBandwidth,
    &kOrderingLitmusRelaxedNoFenceStaleReads,
    &kOrderingLitmusReleaseAcquireStaleReads,
    &kHopperWgmmaBf16Tflops,
    &kHopperTmaLoadBandwidth,
    &kL2TmaBulkReadBandwidth,
    &kHopperDsmemLatency,
    &kHopperPipeline128x256x64BestPipelineTflops,
    &kHopperPipeline128x256x64WgmmaOnlyTflops,
    &kL2TmaReadBandwidth,
};

/// A shared finding and the experiment that produces it.
struct Produced {
  const char* name;
  const char* experiment;
};

/// Every constant above with its producer.
inline constexpr Produced kShared[] = {
    {kDramLatency.name, "latency.sweep"},
    {kL1Capacity.name, "latency.sweep"},
    {kL1HitLatency.name, "latency.sweep"},
    {kL2Capacity.name, "latency.sweep"},
    {kL2MixedLatency.name, "latency.sweep"},
    {kL2HitLatency.name, "latency.sweep"},
    {kL2NearCapacity.name, "latency.sweep"},
    {kSharedLatency.name, "latency.shared"},
    {kL1CapacityCarveout100.name, "latency.carveout"},
    {kL1CapacityMaxL1.name, "latency.carveout"},
    {kL2PartitionFarLatency.name, "cache.l2.partition"},
    {kL2PartitionHashMask.name, "cache.l2.partition"},
    {kL2PartitionNearLatency.name, "cache.l2.partition"},
    {kL2PartitionSmGroupSizes.name, "cache.l2.partition"},
    {kL2FarHitLatency.name, "cache.l2.far_hit"},
    {kL2ReplicaCapacity.name, "cache.l2.far_hit"},
    {kL2MixtureMissLatency.name, "cache.l2.mixture"},
    {kL2MixturePageSpread.name, "cache.l2.mixture"},
    {kL2MixtureAllocationSpread.name, "cache.l2.mixture"},
    {kL2MixturePlacementUnit.name, "cache.l2.mixture"},
    {kDramLatencyNearHome.name, "cache.l2.far_hit"},
    {kDramLatencyFarHome.name, "cache.l2.far_hit"},
    {kCacheL1FetchGranularity.name, "cache.fetch_granularity"},
    {kCacheL2FillGranularity.name, "cache.fetch_granularity"},
    {kCacheL1Ways.name, "cache.l1.ways"},
    {kCacheL1Sets.name, "cache.l1.ways"},
    {kCacheL1LineSize.name, "cache.l1.ways"},
    {kCacheL2LineSize.name, "cache.l2.ways"},
    {kCacheL2SetIndexBits.name, "cache.l2.ways"},
    {kCacheL2Ways.name, "cache.l2.ways"},
    {kL2PersistingMaxSetAside.name, "cache.l2.persisting"},
    {kL2PersistingCapacity.name, "cache.l2.persisting"},
    {kL2PersistingRule.name, "cache.l2.persisting"},
    {kL2PersistingBeyondMax.name, "cache.l2.persisting"},
    {kL2EvictLastProtects.name, "cache.l2.eviction_priority"},
    {kL2EvictFirstGoesFirst.name, "cache.l2.eviction_priority"},
    {kL2EvictLastMaxShare.name, "cache.l2.eviction_priority"},
    {kCacheL1TagSets.name, "cache.l1.ways"},
    {kCacheL1TagCapacity.name, "cache.l1.ways"},
    {kCacheL1DataVictim.name, "cache.l1.ways"},
    {kCacheL1Replacement.name, "cache.l1.ways"},
    {kTlbLevels.name, "latency.tlb"},
    {kTlbPageSize.name, "latency.tlb"},
    {kTlbL1Entries.name, "latency.tlb"},
    {kTlbL1MissPenalty.name, "latency.tlb"},
    {kTlbL1Reach.name, "latency.tlb"},
    {kSmemBankModelAgreement.name, "smem.bank_conflicts"},
    {kSmemBandwidth.name, "smem.bandwidth"},
    {kComputeFfmaLatency.name, "compute.latency"},
    {kComputeFfmaThroughput.name, "compute.throughput"},
    {kDramReadBandwidth.name, "bandwidth.read"},
    {kDramWriteBandwidth.name, "bandwidth.write"},
    {kDramWriteBandwidthCudamemsetReference.name, "bandwidth.write"},
    {kDramCopyBandwidth.name, "bandwidth.copy"},
    {kDramCopyBandwidthCudamemcpyReference.name, "bandwidth.copy"},
    {kDramCopyBandwidthWidth16b.name, "bandwidth.copy"},
    {kDramCopyBandwidthWidth4b.name, "bandwidth.copy"},
    {kDramCopyBandwidthWidth8b.name, "bandwidth.copy"},
    {kDramLayoutAosBandwidth.name, "bandwidth.layout"},
    {kDramLayoutSoaBandwidth.name, "bandwidth.layout"},
    {kTransposeCopyBandwidth.name, "bandwidth.transpose"},
    {kTransposeNaiveBandwidth.name, "bandwidth.transpose"},
    {kTransposeTiledBandwidth.name, "bandwidth.transpose"},
    {kTransposeTiledPaddedBandwidth.name, "bandwidth.transpose"},
    {kDramReadBandwidthSweep.name, "bandwidth.sweep"},
    {kL1ReadBandwidth.name, "bandwidth.sweep"},
    {kL2ReadBandwidth.name, "bandwidth.sweep"},
    {kHierarchyL1ReadBandwidth.name, "bandwidth.hierarchy"},
    {kHierarchyL2ReadBandwidth.name, "bandwidth.hierarchy"},
    {kOrderingLitmusRelaxedNoFenceStaleReads.name, "ordering.litmus"},
    {kOrderingLitmusReleaseAcquireStaleReads.name, "ordering.litmus"},
    {kHopperWgmmaBf16Tflops.name, "hopper.wgmma.throughput"},
    {kHopperTmaLoadBandwidth.name, "hopper.tma.bandwidth"},
    {kL2TmaBulkReadBandwidth.name, "hopper.tma.bandwidth"},
    {kHopperDsmemLatency.name, "hopper.dsmem"},
    {kHopperPipeline128x256x64BestPipelineTflops.name, "hopper.pipeline"},
    {kHopperPipeline128x256x64WgmmaOnlyTflops.name, "hopper.pipeline"},
    {kL2TmaReadBandwidth.name, "hopper.pipeline"},
};

}  // namespace gpuprobe::finding
