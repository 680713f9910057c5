#!/usr/bin/env bash
# GPU-machine test: disassembles the compute and shared-memory probe kernels (sm_90a) and fails
# unless
#   - fma_kernel<FfmaOp|Hfma2Op|ImadOp|DfmaOp, K> (K = 1, 8, 16) holds at least 512 of its op
#     (FFMA, HFMA2 or HFMA2.MMA, plain IMAD, DFMA): the ~512-step unrolled loop body was
#     neither folded nor shortened; and a backward branch (the loop) is present;
#   - smem_chase_kernel<u32|uint2|uint4, 4> holds at least 16 shared loads of its width
#     (LDS 32-bit, LDS.64, LDS.128) and none of another width (the volatile loads kept their
#     width although only the first word feeds the chain).
set -euo pipefail
bin="${1:?usage: sass_compute.sh <gpuprobe binary>}"
source "$(dirname "$0")/lib/sass.sh"
sass_disassemble "$bin"
fail=0

check_fma() {  # $1 = op struct, $2 = K, $3 = regex of the wanted opcodes, $4 = label
  local body ops n branches
  body=$(body_matching "fma_kernelI.*${1}ELi${2}EE")
  if [[ -z "$body" ]]; then
    echo "FAIL $4 x$2: kernel not found"; fail=1; return
  fi
  ops=$(opcodes <<<"$body")
  n=$(grep -cE "^($3)$" <<<"$ops" || true)
  branches=$(grep -cE "^BRA" <<<"$ops" || true)
  if [[ "$n" -lt 512 || "$branches" -lt 1 ]]; then
    echo "FAIL $4 x$2: $n instructions matching $3 (want >= 512), $branches branches; top opcodes:"
    sort <<<"$ops" | uniq -c | sort -rn | head -8
    fail=1
  else
    echo "ok   $4 x$2: $n x $3"
  fi
}

for k in 1 8 16; do
  check_fma FfmaOp "$k" "FFMA" ffma
  check_fma Hfma2Op "$k" "HFMA2|HFMA2\.MMA" hfma2
  check_fma ImadOp "$k" "IMAD" imad
  check_fma DfmaOp "$k" "DFMA" dfma
done

check_lds() {  # $1 = mangled word type, $2 = wanted width suffix ("" for 32-bit), $3 = label
  local body loads want other
  body=$(body_matching "smem_chase_kernelI${1}Li4EE")
  if [[ -z "$body" ]]; then
    echo "FAIL smem chase $3: kernel not found"; fail=1; return
  fi
  loads=$(opcodes <<<"$body" | grep -E "^LDS" || true)
  if [[ -z "$2" ]]; then
    want=$(grep -cvE "\.(64|128)$" <<<"$loads" || true)
    other=$(grep -cE "\.(64|128)$" <<<"$loads" || true)
  else
    want=$(grep -cE "\.$2$" <<<"$loads" || true)
    other=$(grep -cvE "\.$2$" <<<"$loads" || true)
  fi
  if [[ "$want" -lt 16 || "$other" -ne 0 ]]; then
    echo "FAIL smem chase $3: $want wanted loads, $other others: $(sort <<<"$loads" | uniq -c | tr '\n' ' ')"
    fail=1
  else
    echo "ok   smem chase $3: $want x $(sort -u <<<"$loads" | tr '\n' ' ')"
  fi
}
check_lds "j" "" "4 B"
check_lds "5uint2" "64" "8 B"
check_lds "5uint4" "128" "16 B"
exit $fail
