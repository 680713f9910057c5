#!/usr/bin/env bash
# Builds gpuprobe and its tests (installing what they need) and runs every test that needs no
# GPU. On a machine with a GPU, add --gpu to run the GPU-labelled tests as well.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
gp_install_deps test
gp_build test
if [[ "${1:-}" == --gpu ]]; then
  ctest --test-dir build --output-on-failure -j 2
else
  ctest --test-dir build --output-on-failure -LE gpu -j 2
fi
