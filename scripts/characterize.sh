#!/usr/bin/env bash
# Builds gpuprobe (installing what the build needs) and characterizes GPU 0.
# Extra arguments go to gpuprobe, e.g. --out results/mygpu or --device model:h200.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
gp_install_deps
gp_build
exec ./build/gpuprobe characterize "$@"
