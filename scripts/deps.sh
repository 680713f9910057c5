#!/usr/bin/env bash
# Finds or installs what gpuprobe's build needs. Sourced by characterize.sh and test.sh.
set -euo pipefail

gp_find_nvcc() {
  if command -v nvcc >/dev/null 2>&1; then return 0; fi
  for d in /usr/local/cuda/bin /usr/local/cuda-13.0/bin /opt/cuda/bin; do
    if [[ -x "$d/nvcc" ]]; then export PATH="$d:$PATH"; return 0; fi
  done
  echo "gpuprobe: error: nvcc (the CUDA toolkit, 12.8 or newer) was not found; install it and put it on PATH" >&2
  exit 2
}

gp_have_header() {  # $1 = header path under an include dir
  for d in /usr/include /usr/local/include ${GPUPROBE_DEPS_PREFIX:+$GPUPROBE_DEPS_PREFIX/include}; do
    [[ -e "$d/$1" ]] && return 0
  done
  return 1
}

gp_install_deps() {  # $1 = "test" to include GoogleTest
  local need=()
  command -v cmake >/dev/null 2>&1 || need+=(cmake)
  command -v g++ >/dev/null 2>&1 || need+=(g++)
  gp_have_header CLI/CLI.hpp || need+=(libcli11-dev)
  gp_have_header nlohmann/json.hpp || need+=(nlohmann-json3-dev)
  if [[ "${1:-}" == test ]]; then gp_have_header gtest/gtest.h || need+=(libgtest-dev); fi
  # The report's browser test (tests/browser) renders it in headless Chromium.
  if [[ "${1:-}" == test ]]; then command -v chromium >/dev/null 2>&1 || need+=(chromium); fi
  if ((${#need[@]})); then
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    if ! command -v apt-get >/dev/null 2>&1; then
      echo "gpuprobe: error: missing ${need[*]} and no apt-get to install them; install them by hand" >&2
      exit 2
    fi
    echo "gpuprobe: installing ${need[*]} with apt-get" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  gp_find_nvcc
}

gp_build() {  # $1 = "test" to build the tests too
  local tests=OFF
  [[ "${1:-}" == test ]] && tests=ON
  local extra=()
  [[ -n "${GPUPROBE_DEPS_PREFIX:-}" ]] && extra+=("-DCMAKE_PREFIX_PATH=$GPUPROBE_DEPS_PREFIX")
  cmake --preset release -DGPUPROBE_BUILD_TESTS=$tests "${extra[@]}" >/dev/null
  cmake --build --preset release -j "$(nproc)"
}
