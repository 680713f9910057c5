#!/usr/bin/env bash
# GPU-machine test: disassembles the TMA / distributed-shared-memory kernels (sm_90a) and fails
# unless
#   - tma_latency_kernel holds a bulk copy (UBLKCP...) and a tensor-map load (UTMALDG...);
#   - tma_load_bw_kernel holds a bulk copy (UBLKCP...);
#   - every tma_store_bw_kernel instance holds a bulk copy (UBLKCP..., shared -> global);
#   - the dsmem kernels hold generic LD (ld.shared::cluster: LD.E / LD.E.128 on the H200), not only LDS;
#   - every pipeline_kernel instance holds UTMALDG, a multicast UTMALDG and HGMMA.
# and, inside the timed region (between the kernel's first and last clock read, clock64 or
# %globaltimer), not merely somewhere in the kernel:
#   - tma_latency_kernel: the bulk copy (UBLKCP) and the tensor-map load (UTMALDG);
#   - warp_load_kernel: the global loads (LDG);
#   - dsmem_latency_kernel and dsmem_bandwidth_kernel: the ld.shared::cluster (generic LD).
# The opcode histogram of each kernel is printed, so a different spelling shows in the log.
set -euo pipefail
bin="${1:?usage: sass_tma.sh <gpuprobe binary>}"
source "$(dirname "$0")/lib/sass.sh"
sass_disassemble "$bin"
fail=0

need() {  # need <kernel regex> <opcode regex> <what>
  local found=0
  for f in $(functions "$1"); do
    found=1
    local ops n
    ops=$(body_of "$f" | opcodes)
    n=$(grep -cE "^($2)" <<<"$ops" || true)
    if [[ "$n" -lt 1 ]]; then
      echo "FAIL $f: no $3 ($2); opcodes: $(grep -E '^(U|SYNCS|LD|ST)' <<<"$ops" | sort | uniq -c | sort -rn | head -12 | tr -s ' ' | tr '\n' ' ')"
      fail=1
    else
      echo "ok   $f: $3: $(grep -E "^($2)" <<<"$ops" | sort | uniq -c | tr -s ' ' | tr '\n' ' ')"
    fi
  done
  if [[ "$found" -eq 0 ]]; then echo "FAIL: no function matches $1"; fail=1; fi
}

need 'tma_latency_kernel' 'UBLKCP' 'bulk copy'
need 'tma_latency_kernel' 'UTMALDG' 'tensor-map load'
need 'tma_load_bw_kernel' 'UBLKCP' 'bulk copy'
need 'tma_store_bw_kernel' 'UBLKCP' 'bulk copy'
need 'dsmem_(latency|bandwidth)_kernel' 'LD\.E|LD$' 'generic LD (ld.shared::cluster)'
# hopper.pipeline: tensor-map loads, the multicast form among them, and the tensor-core MMA.
need 'pipeline_kernelI' 'UTMALDG' 'tensor-map load'
need 'pipeline_kernelI' 'UTMALDG[A-Z0-9._]*MULTICAST' 'multicast tensor-map load'
need 'pipeline_kernelI' 'HGMMA' 'wgmma'
# Inside the timed region (tests/device/lib/sass.sh: need_timed).
need_timed 'tma_latency_kernel' 'UBLKCP' 'bulk copy'
need_timed 'tma_latency_kernel' 'UTMALDG' 'tensor-map load'
need_timed 'warp_load_kernel' 'LDG' 'global load'
need_timed 'dsmem_latency_kernel' 'LD\.E|LD$' 'ld.shared::cluster (generic LD)'
need_timed 'dsmem_bandwidth_kernel' 'LD\.E|LD$' 'ld.shared::cluster (generic LD)'
# For the record: the mbarrier / sync opcodes of the TMA kernels.
for f in $(functions 'tma_(latency|load_bw|store_bw)_kernel|warp_load_kernel'); do
  echo "info $(c++filt <<<"$f" 2>/dev/null | sed -E 's/gpuprobe::probes::tma:://g; s/\(anonymous namespace\):://g' | cut -c1-80): $(body_of "$f" | opcodes | grep -E '^(SYNCS|UBLK|UTMA|LDG|STS|LDS|FENCE|MEMBAR)' | sort | uniq -c | tr -s ' ' | tr '\n' ' ')"
done
exit $fail
