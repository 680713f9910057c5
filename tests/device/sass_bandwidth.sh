#!/usr/bin/env bash
# GPU-machine test: disassembles the streaming bandwidth kernels and fails unless every float4
# (16 B per thread) kernel moves its data with 128-bit global accesses only:
#   stream_read_kernel<float4, ...>   every LDG is 128-bit (and there are >= unroll of them)
#   stream_write_kernel<float4, ...>  every STG is 128-bit (>= unroll)
#   stream_copy_kernel<float4, ...>   both
# and the kernels of bandwidth.sweep / bandwidth.hierarchy (l1_slices_kernel, l2_shared_kernel,
# l1_variant_kernel<...>, l2_variant_kernel<...>): every LDG is 128-bit (>= 4 of them); the
# ld.global.nc variants load with LDG ... .CONSTANT, the ld.global.L1::no_allocate ones with
# LDG ... .NA ...; the linear L1 variants address their unrolled loads with immediate offsets
# ([R.64+0x...]).
# A 128-bit access is an LDG/STG whose modifiers include ".128", e.g. LDG.E.128,
# LDG.E.128.CONSTANT, LDG.E.EF.128 or LDG.E.NA.LTC256B.128.CONSTANT (the operator and L2
# prefetch-hint modifiers vary with the cache operator); the spellings seen are printed.
# Usage: sass_bandwidth.sh <gpuprobe binary>
set -euo pipefail
bin="${1:?usage: sass_bandwidth.sh <gpuprobe binary>}"
source "$(dirname "$0")/lib/sass.sh"
sass_disassemble "$bin"

# One line per float4 streaming kernel: kind unroll ldg ldg128 stg stg128 name
summary=$(awk '
  /Function : / {
    if (name != "") print kind, unroll, ldg + 0, ldg128 + 0, stg + 0, stg128 + 0, name
    name = ""; kind = ""; ldg = ldg128 = stg = stg128 = 0
    if (match($0, /stream_(read|write|copy)_kernelI6float4/)) {
      name = $3
      kind = ($0 ~ /stream_read_/) ? "read" : ($0 ~ /stream_write_/) ? "write" : "copy"
      # The unroll factor is the last template argument: ...ELi<U>EEEv...
      unroll = 0
      if (match(name, /Li[0-9]+EEEv/)) unroll = substr(name, RSTART + 2, RLENGTH - 6) + 0
    }
    next
  }
  name != "" {
    for (i = 1; i <= NF; i++) {
      if ($i ~ /^LDG(\.|$)/) { ldg++; if ($i ~ /\.128(\.|$)/) ldg128++; break }
      if ($i ~ /^STG(\.|$)/) { stg++; if ($i ~ /\.128(\.|$)/) stg128++; break }
    }
  }
  END { if (name != "") print kind, unroll, ldg + 0, ldg128 + 0, stg + 0, stg128 + 0, name }
' "$sass")

fail=0
declare -A count=([read]=0 [write]=0 [copy]=0)
declare -A failed=([read]=0 [write]=0 [copy]=0)
while read -r kind unroll ldg ldg128 stg stg128 name; do
  [[ -z "$kind" ]] && continue
  count[$kind]=$((count[$kind] + 1))
  bad=""
  if [[ "$kind" != "write" ]]; then
    [[ "$ldg" -ne "$ldg128" ]] && bad+=" $((ldg - ldg128)) LDG narrower than 128 bit;"
    [[ "$ldg128" -lt "$unroll" ]] && bad+=" $ldg128 LDG.128 < unroll $unroll;"
  fi
  if [[ "$kind" != "read" ]]; then
    [[ "$stg" -ne "$stg128" ]] && bad+=" $((stg - stg128)) STG narrower than 128 bit;"
    [[ "$stg128" -lt "$unroll" ]] && bad+=" $stg128 STG.128 < unroll $unroll;"
  fi
  if [[ -n "$bad" ]]; then
    echo "FAIL $kind float4 unroll $unroll ($name):$bad"
    failed[$kind]=$((failed[$kind] + 1))
    fail=1
  fi
done <<<"$summary"

for kind in read write copy; do
  if [[ "${count[$kind]}" -eq 0 ]]; then
    echo "FAIL no stream_${kind}_kernel<float4, ...> found in $bin"
    fail=1
  elif [[ "${failed[$kind]}" -ne 0 ]]; then
    echo "FAIL ${failed[$kind]} of ${count[$kind]} float4 $kind kernels use narrower accesses"
  else
    echo "ok   ${count[$kind]} float4 $kind kernels: 128-bit global accesses only"
  fi
done

# The spellings seen in the float4 kernels, for the record.
echo "spellings in the float4 streaming kernels:"
awk '
  /Function : / { on = ($0 ~ /stream_(read|write|copy)_kernelI6float4/); next }
  on { for (i = 1; i <= NF; i++) if ($i ~ /^(LDG|STG)(\.|$)/) { print "  " $i; break } }
' "$sass" | sort | uniq -c

# ---- bandwidth.sweep / bandwidth.hierarchy kernels (bandwidth_sweep_kernels.cu) ----------------
# One line per kernel: ldg ldg128 with_offset constant na name
bws=$(awk '
  function flush() {
    if (name != "") print ldg + 0, ldg128 + 0, off + 0, cst + 0, na + 0, name
  }
  /Function : / {
    flush()
    name = ""; ldg = ldg128 = off = cst = na = 0
    if ($0 ~ /(l1_slices|l2_shared|l1_variant|l2_variant)_kernel/) name = $3
    next
  }
  name != "" {
    for (i = 1; i <= NF; i++) {
      if ($i ~ /^LDG(\.|$)/) {
        ldg++
        if ($i ~ /\.128(\.|$)/) ldg128++
        if ($i ~ /\.CONSTANT(\.|$)/) cst++
        if ($i ~ /\.NA(\.|$)/) na++
        if ($0 ~ /\+0x[0-9a-f]+\]/) off++
        break
      }
    }
  }
  END { flush() }
' "$sass")
nbws=0
bws_failed=0
while read -r ldg ldg128 off cst na name; do
  [[ -z "$name" ]] && continue
  nbws=$((nbws + 1))
  bad=""
  [[ "$ldg" -ne "$ldg128" ]] && bad+=" $((ldg - ldg128)) LDG narrower than 128 bit;"
  [[ "$ldg128" -lt 4 ]] && bad+=" only $ldg128 LDG.128;"
  # Template arguments in the mangled name: Load 3 = ld.global.nc, 4 = ld.global.L1::no_allocate;
  # Lb1 after the Fold = linear addressing.
  if [[ "$name" =~ l2_variant_kernelILN[A-Za-z0-9_]*4LoadE3E ]]; then
    [[ "$cst" -ne "$ldg" ]] && bad+=" $((ldg - cst)) LDG of ld.global.nc without .CONSTANT;"
  fi
  if [[ "$name" =~ l2_variant_kernelILN[A-Za-z0-9_]*4LoadE4E ]]; then
    [[ "$na" -ne "$ldg" ]] && bad+=" $((ldg - na)) LDG of ld.global.L1::no_allocate without .NA;"
  fi
  if [[ "$name" =~ l1_variant_kernelILN[A-Za-z0-9_]*4FoldE[0-9]ELb1E ]]; then
    [[ "$off" -lt 1 ]] && bad+=" no LDG with an immediate offset (linear addressing);"
  fi
  if [[ -n "$bad" ]]; then
    echo "FAIL bandwidth sweep kernel $name:$bad"
    bws_failed=$((bws_failed + 1))
    fail=1
  fi
done <<<"$bws"
if [[ "$nbws" -lt 4 ]]; then
  echo "FAIL only $nbws bandwidth.sweep / hierarchy kernels found in $bin"
  fail=1
elif [[ "$bws_failed" -ne 0 ]]; then
  echo "FAIL $bws_failed of $nbws bandwidth.sweep / hierarchy kernels"
else
  echo "ok   $nbws bandwidth.sweep / hierarchy kernels: 128-bit loads with the intended operators"
fi
echo "spellings in the bandwidth.sweep / hierarchy kernels:"
awk '
  /Function : / { on = ($0 ~ /(l1_slices|l2_shared|l1_variant|l2_variant)_kernel/); next }
  on { for (i = 1; i <= NF; i++) if ($i ~ /^LDG(\.|$)/) { print "  " $i; break } }
' "$sass" | sort | uniq -c
exit $fail
