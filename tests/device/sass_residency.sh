#!/usr/bin/env bash
# SASS test of the bulk loads that place a region under an L2 eviction priority
# (src/device/residency_kernels.cu), runnable without a GPU (cuobjdump only). For every hint
# (none, evict_first, evict_normal, evict_last, evict_unchanged) the kernel must exist and every
# global load in it be LDG.E.128.STRONG.GPU (ld.global.cg.v2.u64: the L2 only, never the L1).
# On sm_90 the eviction priority is not in the opcode: it travels in the load's memory
# descriptor (desc[URx]), built from a constant that createpolicy compiles to. So the hinted
# kernels must load through a descriptor, and the immediates of the four hinted kernels must
# differ from one another: were a hint dropped by the compiler, two kernels would be the same.
set -euo pipefail
bin="${1:?usage: sass_residency.sh <gpuprobe binary>}"
source "$(dirname "$0")/lib/sass.sh"
sass_disassemble "$bin"
fail=0
names=(none evict_first evict_normal evict_last evict_unchanged)
declare -A signature
for n in 0 1 2 3 4; do
  body=$(body_matching "bulk_loads_kernelILN[0-9A-Za-z_]*EvictionHintE${n}E")
  if [[ -z "$body" ]]; then
    echo "FAIL ${names[$n]}: bulk loads kernel not found"; fail=1; continue
  fi
  n_all=$(grep -cE 'LDG(\.[A-Z0-9_]+)* ' <<<"$body" || true)
  n_cg=$(grep -cE 'LDG\.E\.128\.STRONG\.GPU ' <<<"$body" || true)
  if [[ "$n_all" -eq 0 || "$n_all" -ne "$n_cg" ]]; then
    echo "FAIL ${names[$n]}: want every global load LDG.E.128.STRONG.GPU, got" \
      "$(grep -oE 'LDG(\.[A-Z0-9_]+)* ' <<<"$body" | sort | uniq -c | tr -s ' \n' ' ')"
    fail=1; continue
  fi
  if [[ $n -gt 0 ]] && ! grep -E 'LDG\.E\.128\.STRONG\.GPU[^;]*desc\[' <<<"$body" >/dev/null; then
    echo "FAIL ${names[$n]}: the hinted loads carry no memory descriptor"; fail=1; continue
  fi
  # The immediates of the instructions (comments with the encodings stripped).
  signature[$n]=$(sed -E 's#/\*[^*]*\*/##g' <<<"$body" | grep -oE '0x[0-9a-f]+' | sort -u | tr '\n' ' ')
  echo "ok   ${names[$n]}: $n_cg loads LDG.E.128.STRONG.GPU"
done
for a in 1 2 3 4; do
  for b in 0 1 2 3 4; do
    [[ $b -lt $a ]] || continue
    if [[ -n "${signature[$a]:-}" && "${signature[$a]}" == "${signature[$b]:-}" ]]; then
      echo "FAIL ${names[$a]} and ${names[$b]} compile to the same constants: a hint was lost"
      fail=1
    fi
  done
done
exit $fail
