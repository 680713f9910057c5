#!/usr/bin/env bash
# tests/check_includes.py fails on what it forbids: on a copy of src/ with planted violations
# (an analysis/ header that reaches the device seam through a core header, an analysis/ file
# that includes a CUDA header, an analysis/ function that takes a std::function callback, a
# family that includes another) it exits 1 naming each, and on
# the tree as it is it exits 0. Usage: check_includes_bites.sh <repo>
set -euo pipefail
repo=$(realpath "$1")
check=$repo/tests/check_includes.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$check" "$repo/src"
cp -r "$repo/src" "$tmp/src"
sed -i '1i #include "core/experiment.hpp"' "$tmp/src/analysis/levels.hpp"
sed -i '1i #include <cuda_runtime.h>' "$tmp/src/analysis/bank_model.cpp"
sed -i '1i #include "core/sequence.hpp"' "$tmp/src/analysis/placement.hpp"
printf '#include <functional>\nvoid sweep(const std::function<double(double)>& measure);\n' \
    >> "$tmp/src/analysis/chain.hpp"
sed -i '1i #include "probes/latency/latency.hpp"' "$tmp/src/probes/cache/l2_mixture.cpp"
set +e
python3 "$check" "$tmp/src" > "$tmp/out.txt"
rc=$?
set -e
[[ $rc == 1 ]] || { echo "expected exit 1, got $rc"; cat "$tmp/out.txt"; exit 1; }
for want in \
    'analysis/levels.hpp reaches a device through analysis/levels.hpp -> core/experiment.hpp -> core/device.hpp (the device seam)' \
    'analysis/bank_model.cpp reaches a device through analysis/bank_model.cpp (<cuda_runtime.h>)' \
    'analysis/placement.hpp reaches a device through analysis/placement.hpp -> core/sequence.hpp (the device seam)' \
    'analysis/chain.hpp takes a callback (std::function): a search that drives a measurement belongs in measure/' \
    'probes/cache/l2_mixture.cpp includes probes/latency/latency.hpp: family cache uses family latency'; do
  grep -qxF "$want" "$tmp/out.txt" || { echo "missing: $want"; cat "$tmp/out.txt"; exit 1; }
done
