#pragma once
// The finding names read by more than their producer: later experiments (FindingBoard), the
// memory-hierarchy table, device/model_export, the report and tools/readme_results.py. C++
// readers use these constants, so a renamed constant breaks the build, and
// tests/unit/test_finding_names.cpp fails when a producer no longer emits one of them or a
// reader (the Python tools too) names a finding no experiment produces. No includes.

namespace gpuprobe::finding {

// latency.sweep
inline constexpr const char* kDramLatency = "dram.latency";
inline constexpr const char* kL1Capacity = "l1.capacity";
inline constexpr const char* kL1HitLatency = "l1.hit_latency";
inline constexpr const char* kL2Capacity = "l2.capacity";
inline constexpr const char* kL2HitLatency = "l2.hit_latency";
inline constexpr const char* kL2MixedLatency = "l2.mixed_latency";
inline constexpr const char* kL2NearCapacity = "l2.near_capacity";

// latency.shared
inline constexpr const char* kSharedLatency = "shared.latency";

// latency.carveout
inline constexpr const char* kL1CapacityCarveout100 = "l1.capacity.carveout_100";
inline constexpr const char* kL1CapacityMaxL1 = "l1.capacity.max_l1";

// cache.l2.partition
inline constexpr const char* kL2PartitionFarLatency = "l2.partition.far_latency";
inline constexpr const char* kL2PartitionHashMask = "l2.partition.hash_mask";
inline constexpr const char* kL2PartitionNearLatency = "l2.partition.near_latency";
inline constexpr const char* kL2PartitionSmGroupSizes = "l2.partition.sm_group_sizes";

// cache.l2.far_hit
inline constexpr const char* kL2FarHitLatency = "l2.far_hit_latency";
inline constexpr const char* kL2MixtureMissLatency = "l2.mixture.miss_latency";
inline constexpr const char* kL2MixturePageSpread = "l2.mixture.page_spread";
inline constexpr const char* kL2MixtureAllocationSpread = "l2.mixture.allocation_spread";
inline constexpr const char* kL2MixturePlacementUnit = "l2.mixture.placement_unit";
inline constexpr const char* kDramLatencyNearHome = "dram.latency_near_home";
inline constexpr const char* kDramLatencyFarHome = "dram.latency_far_home";

// cache.fetch_granularity
inline constexpr const char* kCacheL1FetchGranularity = "cache.l1.fetch_granularity";
inline constexpr const char* kCacheL2FillGranularity = "cache.l2.fill_granularity";

// cache.l1.ways
inline constexpr const char* kCacheL1Ways = "cache.l1.ways";
inline constexpr const char* kCacheL1Sets = "cache.l1.sets";
inline constexpr const char* kCacheL1LineSize = "cache.l1.line_size";
inline constexpr const char* kCacheL1Replacement = "cache.l1.replacement";
inline constexpr const char* kCacheL1TagSets = "cache.l1.tag_sets";
inline constexpr const char* kCacheL1TagCapacity = "cache.l1.tag_capacity";
inline constexpr const char* kCacheL1DataVictim = "cache.l1.data_victim";

// cache.l2.ways
inline constexpr const char* kCacheL2LineSize = "cache.l2.line_size";
inline constexpr const char* kCacheL2SetIndexBits = "cache.l2.set_index_bits";

// latency.tlb
inline constexpr const char* kTlbLevels = "tlb.levels";
inline constexpr const char* kTlbPageSize = "tlb.page_size";
inline constexpr const char* kTlbL1Entries = "tlb.l1.entries";
inline constexpr const char* kTlbL1MissPenalty = "tlb.l1.miss_penalty";
inline constexpr const char* kTlbL1Reach = "tlb.l1.reach";

// smem.bank_conflicts
inline constexpr const char* kSmemBankModelAgreement = "smem.bank_model_agreement";

// smem.bandwidth
inline constexpr const char* kSmemBandwidth = "smem.bandwidth";

// compute.latency
inline constexpr const char* kComputeFfmaLatency = "compute.ffma.latency";

// compute.throughput
inline constexpr const char* kComputeFfmaThroughput = "compute.ffma.throughput";

// bandwidth.read
inline constexpr const char* kDramReadBandwidth = "dram.read_bandwidth";

// bandwidth.write
inline constexpr const char* kDramWriteBandwidth = "dram.write_bandwidth";
inline constexpr const char* kDramWriteBandwidthCudamemsetReference =
    "dram.write_bandwidth.cudamemset_reference";

// bandwidth.copy
inline constexpr const char* kDramCopyBandwidth = "dram.copy_bandwidth";
inline constexpr const char* kDramCopyBandwidthCudamemcpyReference =
    "dram.copy_bandwidth.cudamemcpy_reference";
inline constexpr const char* kDramCopyBandwidthWidth16b = "dram.copy_bandwidth.width_16b";
inline constexpr const char* kDramCopyBandwidthWidth4b = "dram.copy_bandwidth.width_4b";
inline constexpr const char* kDramCopyBandwidthWidth8b = "dram.copy_bandwidth.width_8b";

// bandwidth.layout
inline constexpr const char* kDramLayoutAosBandwidth = "dram.layout_aos_bandwidth";
inline constexpr const char* kDramLayoutSoaBandwidth = "dram.layout_soa_bandwidth";

// bandwidth.transpose
inline constexpr const char* kTransposeCopyBandwidth = "transpose.copy_bandwidth";
inline constexpr const char* kTransposeNaiveBandwidth = "transpose.naive_bandwidth";
inline constexpr const char* kTransposeTiledBandwidth = "transpose.tiled_bandwidth";
inline constexpr const char* kTransposeTiledPaddedBandwidth = "transpose.tiled_padded_bandwidth";

// bandwidth.sweep
inline constexpr const char* kDramReadBandwidthSweep = "dram.read_bandwidth_sweep";
inline constexpr const char* kL1ReadBandwidth = "l1.read_bandwidth";
inline constexpr const char* kL2ReadBandwidth = "l2.read_bandwidth";

// bandwidth.hierarchy
inline constexpr const char* kHierarchyL1ReadBandwidth = "hierarchy.l1.read_bandwidth";
inline constexpr const char* kHierarchyL2ReadBandwidth = "hierarchy.l2.read_bandwidth";

// ordering.litmus
inline constexpr const char* kOrderingLitmusRelaxedNoFenceStaleReads =
    "ordering.litmus.relaxed_no_fence.stale_reads";
inline constexpr const char* kOrderingLitmusReleaseAcquireStaleReads =
    "ordering.litmus.release_acquire.stale_reads";

// hopper.wgmma.throughput
inline constexpr const char* kHopperWgmmaBf16Tflops = "hopper.wgmma.bf16.tflops";

// hopper.tma.bandwidth
inline constexpr const char* kHopperTmaLoadBandwidth = "hopper.tma.load_bandwidth";
inline constexpr const char* kL2TmaBulkReadBandwidth = "l2.tma_bulk_read_bandwidth";

// hopper.dsmem
inline constexpr const char* kHopperDsmemLatency = "hopper.dsmem.latency";

// hopper.pipeline
inline constexpr const char* kHopperPipeline128x256x64BestPipelineTflops =
    "hopper.pipeline.128x256x64.best_pipeline_tflops";
inline constexpr const char* kHopperPipeline128x256x64WgmmaOnlyTflops =
    "hopper.pipeline.128x256x64.wgmma_only_tflops";
inline constexpr const char* kL2TmaReadBandwidth = "l2.tma_read_bandwidth";

/// A shared finding and the experiment that produces it.
struct Produced {
  const char* name;
  const char* experiment;
};

/// Every constant above with its producer.
inline constexpr Produced kShared[] = {
    {kDramLatency, "latency.sweep"},
    {kL1Capacity, "latency.sweep"},
    {kL1HitLatency, "latency.sweep"},
    {kL2Capacity, "latency.sweep"},
    {kL2MixedLatency, "latency.sweep"},
    {kL2HitLatency, "latency.sweep"},
    {kL2NearCapacity, "latency.sweep"},
    {kSharedLatency, "latency.shared"},
    {kL1CapacityCarveout100, "latency.carveout"},
    {kL1CapacityMaxL1, "latency.carveout"},
    {kL2PartitionFarLatency, "cache.l2.partition"},
    {kL2PartitionHashMask, "cache.l2.partition"},
    {kL2PartitionNearLatency, "cache.l2.partition"},
    {kL2PartitionSmGroupSizes, "cache.l2.partition"},
    {kL2FarHitLatency, "cache.l2.far_hit"},
    {kL2MixtureMissLatency, "cache.l2.mixture"},
    {kL2MixturePageSpread, "cache.l2.mixture"},
    {kL2MixtureAllocationSpread, "cache.l2.mixture"},
    {kL2MixturePlacementUnit, "cache.l2.mixture"},
    {kDramLatencyNearHome, "cache.l2.far_hit"},
    {kDramLatencyFarHome, "cache.l2.far_hit"},
    {kCacheL1FetchGranularity, "cache.fetch_granularity"},
    {kCacheL2FillGranularity, "cache.fetch_granularity"},
    {kCacheL1Ways, "cache.l1.ways"},
    {kCacheL1Sets, "cache.l1.ways"},
    {kCacheL1LineSize, "cache.l1.ways"},
    {kCacheL2LineSize, "cache.l2.ways"},
    {kCacheL2SetIndexBits, "cache.l2.ways"},
    {kCacheL1TagSets, "cache.l1.ways"},
    {kCacheL1TagCapacity, "cache.l1.ways"},
    {kCacheL1DataVictim, "cache.l1.ways"},
    {kCacheL1Replacement, "cache.l1.ways"},
    {kTlbLevels, "latency.tlb"},
    {kTlbPageSize, "latency.tlb"},
    {kTlbL1Entries, "latency.tlb"},
    {kTlbL1MissPenalty, "latency.tlb"},
    {kTlbL1Reach, "latency.tlb"},
    {kSmemBankModelAgreement, "smem.bank_conflicts"},
    {kSmemBandwidth, "smem.bandwidth"},
    {kComputeFfmaLatency, "compute.latency"},
    {kComputeFfmaThroughput, "compute.throughput"},
    {kDramReadBandwidth, "bandwidth.read"},
    {kDramWriteBandwidth, "bandwidth.write"},
    {kDramWriteBandwidthCudamemsetReference, "bandwidth.write"},
    {kDramCopyBandwidth, "bandwidth.copy"},
    {kDramCopyBandwidthCudamemcpyReference, "bandwidth.copy"},
    {kDramCopyBandwidthWidth16b, "bandwidth.copy"},
    {kDramCopyBandwidthWidth4b, "bandwidth.copy"},
    {kDramCopyBandwidthWidth8b, "bandwidth.copy"},
    {kDramLayoutAosBandwidth, "bandwidth.layout"},
    {kDramLayoutSoaBandwidth, "bandwidth.layout"},
    {kTransposeCopyBandwidth, "bandwidth.transpose"},
    {kTransposeNaiveBandwidth, "bandwidth.transpose"},
    {kTransposeTiledBandwidth, "bandwidth.transpose"},
    {kTransposeTiledPaddedBandwidth, "bandwidth.transpose"},
    {kDramReadBandwidthSweep, "bandwidth.sweep"},
    {kL1ReadBandwidth, "bandwidth.sweep"},
    {kL2ReadBandwidth, "bandwidth.sweep"},
    {kHierarchyL1ReadBandwidth, "bandwidth.hierarchy"},
    {kHierarchyL2ReadBandwidth, "bandwidth.hierarchy"},
    {kOrderingLitmusRelaxedNoFenceStaleReads, "ordering.litmus"},
    {kOrderingLitmusReleaseAcquireStaleReads, "ordering.litmus"},
    {kHopperWgmmaBf16Tflops, "hopper.wgmma.throughput"},
    {kHopperTmaLoadBandwidth, "hopper.tma.bandwidth"},
    {kL2TmaBulkReadBandwidth, "hopper.tma.bandwidth"},
    {kHopperDsmemLatency, "hopper.dsmem"},
    {kHopperPipeline128x256x64BestPipelineTflops, "hopper.pipeline"},
    {kHopperPipeline128x256x64WgmmaOnlyTflops, "hopper.pipeline"},
    {kL2TmaReadBandwidth, "hopper.pipeline"},
};

}  // namespace gpuprobe::finding
