#!/usr/bin/env bash
# SASS test of the bulk loads that place a region under an L2 eviction priority
# (src/device/residency_kernels.cu), runnable without a GPU (cuobjdump only). For every hint
# (none, evict_first, evict_normal, evict_last, evict_unchanged) the kernel must exist and every
# global load in it be LDG.E.128.STRONG.GPU (ld.global.cg.v2.u64: the L2 only, never the L1).
# On sm_90 the eviction priority is not in the opcode: it travels in the load's memory
# descriptor (desc[URx]), built from a constant that createpolicy compiles to. So the hinted
# kernels must load through a descriptor, and the immediates of the four hinted kernels must
# differ from one another: were a hint dropped by the compiler, two kernels would be the same.
# The discard probe: the marked stores must be global stores (STG.E.128), the census global loads
# through the L2 only (LDG.E.128.STRONG.GPU), and the discard kernel must hold neither a load nor
# a store but an instruction of the cache-control family (CCTL on sm_80 .. sm_90): were the
# discard compiled away or turned into a store, the experiment would measure something else.
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
body=$(body_matching "store_marks_kernel")
n_st=$(grep -cE 'STG\.E\.128 ' <<<"$body" || true)
if [[ -z "$body" || "$n_st" -eq 0 ]]; then
  echo "FAIL store_marks: want STG.E.128, got $(opcodes <<<"$body" | grep -E '^ST' | sort -u | tr '\n' ' ')"; fail=1
else echo "ok   store_marks: $n_st STG.E.128"; fi
body=$(body_matching "census_kernel")
n_all=$(grep -cE 'LDG(\.[A-Z0-9_]+)* ' <<<"$body" || true)
n_cg=$(grep -cE 'LDG\.E\.128\.STRONG\.GPU ' <<<"$body" || true)
if [[ -z "$body" || "$n_all" -eq 0 || "$n_all" -ne "$n_cg" ]]; then
  echo "FAIL census: want every global load LDG.E.128.STRONG.GPU"; fail=1
else echo "ok   census: $n_cg loads LDG.E.128.STRONG.GPU"; fi
body=$(body_matching "discard_lines_kernel")
ops=$(opcodes <<<"$body" | sort -u | tr '\n' ' ')
if [[ -z "$body" ]]; then echo "FAIL discard: kernel not found"; fail=1
elif grep -qE '(^| )(LDG|STG)' <<<"$ops"; then echo "FAIL discard: holds a global load or store: $ops"; fail=1
elif ! grep -qE '(^| )CCTL' <<<"$ops"; then echo "FAIL discard: no cache-control instruction: $ops"; fail=1
else echo "ok   discard: $(opcodes <<<"$body" | grep -E '^CCTL' | sort -u | tr '\n' ' ')"; fi
exit $fail
