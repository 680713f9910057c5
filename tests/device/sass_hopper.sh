#!/usr/bin/env bash
# GPU-machine test: disassembles the ordering and Hopper probe kernels (sm_90a) and fails unless
#   - every wgmma_kernel instance holds HGMMA (the wgmma.mma_async reached the tensor cores),
#     at least 4 in the 4-per-group instances;
#   - the fence_kernel instances for gpu and sys scope (fence.acq_rel / fence.sc) hold a MEMBAR,
#     and the no-fence baseline holds none. The cta-scope instances are printed only: a
#     CTA-scope fence may legitimately compile to no MEMBAR at all.
#   - all of these inside the timed region (between the first and last clock read, clock64 or
#     %globaltimer), not merely somewhere in the kernel; and every atomic_latency_kernel and
#     atomic_throughput_kernel instance holds its ATOM / RED inside its timed region.
# It also prints the memory opcodes of the atomic and litmus kernels, for the record.
set -euo pipefail
bin="${1:?usage: sass_hopper.sh <gpuprobe binary>}"
source "$(dirname "$0")/lib/sass.sh"
sass_disassemble "$bin"
fail=0

# ---- wgmma ----
n_wgmma=0
for f in $(functions 'wgmma_kernel'); do
  n_wgmma=$((n_wgmma + 1))
  ops=$(body_of "$f" | opcodes)
  n=$(grep -cE '^HGMMA' <<<"$ops" || true)
  want=1
  [[ "$f" =~ Li4EEEv ]] && want=4
  if [[ "$n" -lt "$want" ]]; then
    echo "FAIL $f: $n HGMMA (want >= $want); opcodes: $(sort <<<"$ops" | uniq -c | sort -rn | head -6 | tr '\n' ' ')"
    fail=1
  else
    echo "ok   $f: $n x $(grep -E '^HGMMA' <<<"$ops" | sort -u | tr '\n' ' ')"
  fi
done
if [[ "$n_wgmma" -lt 8 ]]; then echo "FAIL: $n_wgmma wgmma_kernel instances (want 8)"; fail=1; fi
# Inside the timed region: the 4-per-group instances need 4 there, the others 1.
for f in $(functions 'wgmma_kernel'); do
  want=1
  [[ "$f" =~ Li4EEEv ]] && want=4
  need_timed "^${f}\$" 'HGMMA' 'HGMMA' "$want"
done

# ---- fences: FenceKind 0 none, 1 acq_rel.cta, 2 acq_rel.gpu, 3 acq_rel.sys, 4 sc.cta, 5 sc.gpu, 6 sc.sys
names=(none acq_rel.cta acq_rel.gpu acq_rel.sys sc.cta sc.gpu sc.sys)
n_fence=0
for f in $(functions 'fence_kernel'); do
  kind=$(sed -nE 's/.*FenceKindE([0-9]+)E.*/\1/p' <<<"$f")
  [[ -z "$kind" ]] && continue
  n_fence=$((n_fence + 1))
  ops=$(body_of "$f" | opcodes)
  membar=$(grep -E '^(MEMBAR|FENCE)' <<<"$ops" | sort | uniq -c | tr '\n' ' ' || true)
  n=$(grep -cE '^MEMBAR' <<<"$ops" || true)
  case "$kind" in
    0) if [[ "$n" -ne 0 ]]; then echo "FAIL fence none: $n MEMBAR in the baseline"; fail=1
       else echo "ok   fence none: no MEMBAR"; fi ;;
    1|4) echo "info fence ${names[$kind]}: ${membar:-no MEMBAR/FENCE} ($(grep -cE '^STG' <<<"$ops" || true) STG)" ;;
    *) if [[ "$n" -lt 1 ]]; then
         echo "FAIL fence ${names[$kind]}: no MEMBAR; opcodes: $(sort <<<"$ops" | uniq -c | sort -rn | head -8 | tr '\n' ' ')"
         fail=1
       else echo "ok   fence ${names[$kind]}: $membar"; fi
       need_timed "^${f}\$" 'MEMBAR' "MEMBAR (fence ${names[$kind]})" ;;
  esac
done
if [[ "$n_fence" -lt 7 ]]; then echo "FAIL: $n_fence fence_kernel instances (want 7)"; fail=1; fi

# ---- atomics: the ATOM / RED inside the timed region of every instance
need_timed 'atomic_latency_kernel' 'ATOM|RED' 'atomic'
need_timed 'atomic_throughput_kernel' 'ATOM|RED' 'atomic'
# acq_rel / seq_cst (AtomicOrder 1, 2) at device or system scope (AtomicScope 1, 2): the
# ordering's MEMBAR inside the timed region too (the H200 shows MEMBAR.ALL / MEMBAR.SC .GPU /
# .SYS there). An instance whose template arguments cannot be read is reported, not judged.
for f in $(functions 'atomic_(latency|throughput)_kernel'); do
  scope=$(sed -nE 's/.*AtomicScopeE([0-9])E.*/\1/p' <<<"$f")
  order=$(sed -nE 's/.*AtomicOrderE([0-9])E.*/\1/p' <<<"$f")
  if [[ -z "$scope" || -z "$order" ]]; then
    echo "info $f: scope / order not read from the name"
  elif [[ "$scope" -ge 1 && "$order" -ge 1 ]]; then
    need_timed "^${f}\$" 'MEMBAR' "MEMBAR (scope $scope, order $order)"
  fi
done

# ---- for the record: atomics and litmus
for f in $(functions 'atomic_(latency|throughput)_kernel|litmus_kernel'); do
  ops=$(body_of "$f" | opcodes | grep -E '^(ATOM|RED|MEMBAR|FENCE|LDG|STG|LD\.|ST\.|CCTL|POPC|VOTE|MATCH|SHFL|UFLO|FLO)' | sort | uniq -c | tr -s ' ' | tr '\n' ' ' || true)
  echo "info $(c++filt <<<"$f" 2>/dev/null | sed -E 's/gpuprobe::probes::ordering:://g; s/\(anonymous namespace\):://g' | cut -c1-110): $ops"
done
exit $fail
