#!/usr/bin/env bash
# GPU-machine test: disassembles the chase kernels and fails unless each load operator
# compiled to the intended SASS load (sm_90, CUDA 13.0, as observed on the H200):
#   default -> LDG.E.64   ca -> LDG.E.64.STRONG.SM   cg -> LDG.E.64.STRONG.GPU
#   cv -> LDG.E.64.STRONG.SYS   nc -> LDG.E.64.CONSTANT   shared chase -> LDS
# and the timer reads bracket the chase (two SR_CLOCKLO reads per chase kernel). The sampled
# chase (cache.l2.mixture) loads with the same operators and reads the clock around its timed
# load (at least three reads: the pass's start and the two around each load).
set -euo pipefail
bin="${1:?usage: sass_check.sh <gpuprobe binary>}"
source "$(dirname "$0")/lib/sass.sh"
sass_disassemble "$bin"
fail=0
check_kernel() {  # $1 = enum value, $2 = name, $3 = expected load
  local body
  body=$(body_matching "12chase_kernelILNS0_6LoadOpE${1}E")
  local loads expected other clocks
  loads=$(grep -oE "LDG[A-Z0-9.]*" <<<"$body" | sort | uniq -c || true)
  expected=$(grep -cE "LDG$3 " <<<"$(grep -oE "LDG[A-Z0-9.]* " <<<"$body")" || true)
  other=$(grep -oE "LDG[A-Z0-9.]* " <<<"$body" | grep -vcE "^LDG$3 $" || true)
  clocks=$(grep -c "SR_CLOCKLO" <<<"$body" || true)
  if [[ "$expected" -lt 16 || "$other" -ne 0 || "$clocks" -ne 2 ]]; then
    echo "FAIL $2: want only LDG$3 (>=16), got: $(tr '\n' ' ' <<<"$loads"); clock reads: $clocks"
    fail=1
  else
    echo "ok   $2: $expected x LDG$3, $clocks clock reads"
  fi
}
check_kernel 0 default ".E.64"
check_kernel 1 ca ".E.64.STRONG.SM"
check_kernel 2 cg ".E.64.STRONG.GPU"
check_kernel 3 cv ".E.64.STRONG.SYS"
check_kernel 4 nc ".E.64.CONSTANT"
check_sampled() {  # $1 = enum value, $2 = name, $3 = expected load
  local body expected other clocks
  body=$(body_matching "20sampled_chase_kernelILNS0_6LoadOpE${1}E")
  expected=$(grep -oE "LDG[A-Z0-9.]* " <<<"$body" | grep -cE "^LDG$3 $" || true)
  other=$(grep -oE "LDG[A-Z0-9.]* " <<<"$body" | grep -vcE "^LDG$3 $" || true)
  clocks=$(grep -c "SR_CLOCKLO" <<<"$body" || true)
  if [[ "$expected" -lt 2 || "$other" -ne 0 || "$clocks" -lt 3 ]]; then
    echo "FAIL sampled $2: want only LDG$3 (>=2) and >=3 clock reads, got $expected / $other other / $clocks"
    fail=1
  else
    echo "ok   sampled $2: $expected x LDG$3, $clocks clock reads"
  fi
}
check_sampled 0 default ".E.64"
check_sampled 1 ca ".E.64.STRONG.SM"
check_sampled 2 cg ".E.64.STRONG.GPU"
check_sampled 3 cv ".E.64.STRONG.SYS"
check_sampled 4 nc ".E.64.CONSTANT"
# Each timed load of the sampled chase stands alone between two clock reads: no stretch of the
# cg kernel between consecutive clock reads holds more than one load, and some hold one.
segments=$(body_matching "20sampled_chase_kernelILNS0_6LoadOpE2E" | awk -v re="$clock_read_re" '
  $0 ~ re { if (seen) print n; seen = 1; n = 0; next }
  /LDG/ { n++ }')
if [[ -z "$segments" ]] || grep -qvE "^[01]$" <<<"$segments" || ! grep -qx 1 <<<"$segments"; then
  echo "FAIL sampled cg: loads between consecutive clock reads: $(tr '\n' ' ' <<<"$segments")"
  fail=1
else
  echo "ok   sampled cg: one load at most between consecutive clock reads"
fi
shared=$(body_matching "shared_chase_kernel")
if [[ $(grep -cE "LDS " <<<"$shared" || true) -lt 8 ]]; then
  echo "FAIL shared chase: fewer than 8 LDS"; fail=1
else
  echo "ok   shared chase: LDS present"
fi
exit $fail
