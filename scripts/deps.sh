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
  gp_have_header zlib.h || need+=(zlib1g-dev)  # gzipped input (result.json.gz), linked statically
  if [[ "${1:-}" == test ]]; then
    gp_have_header gtest/gtest.h || need+=(libgtest-dev)
    command -v python3 >/dev/null 2>&1 || need+=(python3)  # the CLI battery and tools tests
    command -v git >/dev/null 2>&1 || need+=(git)          # the build-time git SHA test
    command -v valgrind >/dev/null 2>&1 || need+=(valgrind) # memcheck over the fuzz corpus
  fi
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

gp_install_mpi() {  # only for the -DGPUPROBE_MPI=ON build (mpirun -n N gpuprobe fleet)
  if command -v mpicxx >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; then return 0; fi
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "gpuprobe: error: the MPI build needs Open MPI (libopenmpi-dev, openmpi-bin); install it by hand" >&2
    exit 2
  fi
  echo "gpuprobe: installing libopenmpi-dev openmpi-bin with apt-get" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libopenmpi-dev openmpi-bin >/dev/null
}

gp_build_mpi() {  # a second build directory, so that the default build stays MPI-free
  local extra=()
  [[ -n "${GPUPROBE_DEPS_PREFIX:-}" ]] && extra+=("-DCMAKE_PREFIX_PATH=$GPUPROBE_DEPS_PREFIX")
  cmake -S . -B build-mpi -DCMAKE_BUILD_TYPE=Release -DGPUPROBE_BUILD_TESTS=OFF -DGPUPROBE_MPI=ON \
    "${extra[@]}" >/dev/null
  cmake --build build-mpi -j "$(nproc)" --target gpuprobe
}

gp_install_ajv() {  # prints the path of an ajv (ajv-cli + ajv-formats from npm, in build/ci-npm)
  local prefix=build/ci-npm
  if [[ ! -x $prefix/node_modules/.bin/ajv ]]; then
    if ! command -v npm >/dev/null 2>&1; then
      local sudo=""
      [[ $(id -u) -ne 0 ]] && sudo="sudo"
      echo "gpuprobe: installing nodejs npm with apt-get (for the JSON Schema validator)" >&2
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >/dev/null
    fi
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --silent ajv-cli@5 ajv-formats@3 >&2
  fi
  echo "$prefix/node_modules/.bin/ajv"
}

gp_validate_schemas() {  # $1 = the built gpuprobe; validates results and model presets
  local gp=$1 ajv tmp
  ajv=$(gp_install_ajv)
  tmp=$(mktemp -d)
  local opts=(--spec=draft7 --strict=false -c "$(cd "$(dirname "$ajv")/../ajv-formats" && pwd)")
  local results=(results/*/result.json)
  if [[ -e ${results[0]} ]]; then
    for f in "${results[@]}"; do "$ajv" validate "${opts[@]}" -s schemas/result.schema.json -d "$f"; done
  fi
  local experiments=(results/*/experiments/*.json)
  if [[ -e ${experiments[0]} ]]; then
    # ajv-cli expands the quoted glob itself (one -d for all files)
    "$ajv" validate "${opts[@]}" -s schemas/experiment.schema.json -r schemas/result.schema.json \
      -d "results/*/experiments/*.json"
  fi
  # Every built-in model preset, as the model file --device model:<file> would read.
  local presets
  # The preset names as gpuprobe itself lists them (its answer to an unknown model).
  presets=$("$gp" --device model:none info 2>&1 | sed -n 's/.*available: //p' | tr -d ' ' | tr ',' ' ' || true)
  [[ -n $presets ]] || { echo "gpuprobe: error: gpuprobe listed no model presets" >&2; return 1; }
  for m in $presets; do
    "$gp" --device "model:$m" info |
      node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.stringify(JSON.parse(s).environment.model)))' \
      > "$tmp/$m.json"
    "$ajv" validate "${opts[@]}" -s schemas/model.schema.json -d "$tmp/$m.json"
  done
  rm -rf "$tmp"
}
