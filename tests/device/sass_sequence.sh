#!/usr/bin/env bash
# SASS test of the cache-structure sequence kernel (src/device/sequence_kernels.cu), runnable
# without a GPU (cuobjdump only): for every load operator, the kernel's timed region (the
# instructions between two consecutive clock reads that hold a global load) holds exactly one
# global load, with the intended cache operator (sm_90, CUDA 13.0):
#   default -> LDG.E.64   ca -> LDG.E.64.STRONG.SM   cg -> LDG.E.64.STRONG.GPU
#   cv -> LDG.E.64.STRONG.SYS   nc -> LDG.E.64.CONSTANT
# and no other memory access (no shared-memory load or store, no atomic, no global store).
# Regions with more than one memory instruction (the chunk refill) are untimed and not counted.
set -euo pipefail
bin="${1:?usage: sass_sequence.sh <gpuprobe binary>}"
source "$(dirname "$0")/lib/sass.sh"
sass_disassemble "$bin"
fail=0
check_kernel() {  # $1 = enum value, $2 = name, $3 = expected load
  local body regions
  body=$(body_matching "sequence_kernelILNS0_6LoadOpE${1}E")
  if [[ -z "$body" ]]; then
    echo "FAIL $2: sequence kernel not found"; fail=1; return
  fi
  # One line per region between consecutive clock reads: its memory instructions.
  regions=$(awk '/SR_CLOCKLO/ { if (open) print "[" mem "]"; open = 1; mem = ""; next }
                 open && match($0, /(LDG|STG|LDS|STS|ATOMG|ATOMS|ATOM|RED|LD|ST)(\.[A-Z0-9_]+)* /) {
                   mem = mem substr($0, RSTART, RLENGTH) }' <<<"$body")
  local with_ldg
  # A region holding only one global load is a timed one; the chunk refill between two timed
  # loads (offsets loaded, cycles stored) holds stores too and is not timed.
  with_ldg=$(grep -E '^\[LDG[.A-Z0-9_]* \]$' <<<"$regions" || true)
  if [[ $(grep -c . <<<"$with_ldg") -ne 1 ]]; then
    echo "FAIL $2: want one timed region with a global load, got: $(tr '\n' ' ' <<<"$regions")"
    fail=1
  elif [[ "$with_ldg" != "[LDG$3 ]" ]]; then
    echo "FAIL $2: timed region holds $with_ldg, want [LDG$3 ]"
    fail=1
  else
    echo "ok   $2: timed region $with_ldg"
  fi
}
check_kernel 0 default ".E.64"
check_kernel 1 ca ".E.64.STRONG.SM"
check_kernel 2 cg ".E.64.STRONG.GPU"
check_kernel 3 cv ".E.64.STRONG.SYS"
check_kernel 4 nc ".E.64.CONSTANT"
# The eviction sweep (sweep_kernel) with .cg: every global load in it is LDG.E.64.STRONG.GPU
# (the offsets it reads and the lines it sweeps, four of each per claim, issued before use), so
# the sweep fills the L2 only and never the L1.
sweep=$(body_matching "sweep_kernelILNS0_6LoadOpE2E")
if [[ -z "$sweep" ]]; then
  echo "FAIL sweep cg: sweep kernel not found"; fail=1
else
  loads=$(grep -oE 'LDG(\.[A-Z0-9_]+)* ' <<<"$sweep" | sort | uniq -c | tr -s ' ')
  n_gpu=$(grep -cE 'LDG\.E\.64\.STRONG\.GPU ' <<<"$sweep" || true)
  n_all=$(grep -cE 'LDG(\.[A-Z0-9_]+)* ' <<<"$sweep" || true)
  if [[ "$n_all" -ne "$n_gpu" || "$n_gpu" -lt 8 ]]; then
    echo "FAIL sweep cg: want >= 8 loads, all LDG.E.64.STRONG.GPU; got:$loads"; fail=1
  else
    echo "ok   sweep cg: $n_gpu loads, all LDG.E.64.STRONG.GPU"
  fi
fi
exit $fail
