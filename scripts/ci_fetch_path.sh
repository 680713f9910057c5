#!/usr/bin/env bash
# CI: the build path of a machine without root (GPUPROBE_FIND_DEPS=OFF: every dependency comes
# through FetchContent), offline. FETCHCONTENT_SOURCE_DIR_<NAME> points each FetchContent
# dependency at a local source tree instead of its release tarball:
#   CLI11, NLOHMANN_JSON  a two-line CMake project around the headers Debian installed
#                         (libcli11-dev, nlohmann-json3-dev) in place, so that gpuprobe compiles
#                         with exactly the flags of build/ and ccache serves the second build
#   GOOGLETEST            Debian's full GoogleTest source tree (/usr/src/googletest)
# Configures build-fetch/, checks that no find_package answered, builds the gpuprobe target and
# runs it on a modelled GPU. A misspelt FetchContent name would make CMake try to download (and
# fail: CI has no GitHub); a find_package answer would show in the configure log.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
gp_find_nvcc

dir=build-fetch
src=$dir/local-sources

gp_header_dir() {  # $1 = header path; prints the include dir that has it
  local d
  for d in /usr/include /usr/local/include; do
    [[ -e $d/$1 ]] && { echo "$d"; return 0; }
  done
  echo "gpuprobe: error: $1 not found (install libcli11-dev and nlohmann-json3-dev)" >&2
  return 1
}

gp_header_project() {  # $1 = directory, $2 = project/target name, $3 = namespace, $4 = include dir
  mkdir -p "$1"
  cat > "$1/CMakeLists.txt" <<EOF
# Written by scripts/ci_fetch_path.sh: the installed headers as the FetchContent source of $2.
cmake_minimum_required(VERSION 3.24)
project($2 LANGUAGES CXX)
add_library($2 INTERFACE)
add_library($3::$2 ALIAS $2)
target_include_directories($2 INTERFACE "$4")
EOF
}

gp_header_project "$src/cli11" CLI11 CLI11 "$(gp_header_dir CLI/CLI.hpp)"
gp_header_project "$src/nlohmann_json" nlohmann_json nlohmann_json "$(gp_header_dir nlohmann/json.hpp)"
gtest_src=/usr/src/googletest
if [[ ! -f $gtest_src/CMakeLists.txt ]]; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "gpuprobe: installing googletest (the GoogleTest sources) with apt-get" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq googletest >/dev/null
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The same build type and options as build/ (scripts/deps.sh gp_build), so the compile commands
# of gpuprobe's own sources are the same and ccache answers them.
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DGPUPROBE_BUILD_TESTS=ON \
  -DGPUPROBE_FETCH_DEPS=AUTO -DGPUPROBE_FIND_DEPS=OFF \
  -DFETCHCONTENT_SOURCE_DIR_CLI11="$PWD/$src/cli11" \
  -DFETCHCONTENT_SOURCE_DIR_NLOHMANN_JSON="$PWD/$src/nlohmann_json" \
  -DFETCHCONTENT_SOURCE_DIR_GOOGLETEST="$gtest_src" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
for name in CLI11 nlohmann_json googletest; do
  if ! grep -q "gpuprobe: $name from FetchContent (local source" "$log"; then
    cat "$log" >&2
    echo "gpuprobe: error: $name did not come through FetchContent in $dir" >&2
    exit 1
  fi
done

# Same compile commands as build/ (when CI built it first): otherwise ccache misses and this
# step costs a full build. A difference is reported, not fatal.
if [[ -f build/compile_commands.json ]] && command -v python3 >/dev/null 2>&1; then
  python3 - build/compile_commands.json "$dir/compile_commands.json" <<'EOF' || true
import json, os, sys
def commands(path):
    root = os.path.dirname(os.path.abspath(path))
    return {e["file"]: e["command"].replace(root, "<build>") for e in json.load(open(path))
            if "/_deps/" not in e["file"] and "/googletest/" not in e["file"]
            and "/tests/" not in e["file"]}  # the tests see GoogleTest's include dirs
a, b = commands(sys.argv[1]), commands(sys.argv[2])
differ = [f for f in a if f in b and a[f] != b[f]]
if differ:
    print(f"gpuprobe: warning: {len(differ)} compile commands differ between build/ and the fetch "
          f"build (ccache will miss them), e.g. {differ[0]}:\n  {a[differ[0]]}\n  {b[differ[0]]}",
          file=sys.stderr)
EOF
fi

cmake --build "$dir" -j "$(nproc)" --target gpuprobe
"$dir/gpuprobe" --device model:tiny info >/dev/null
echo "gpuprobe: the fetch path (GPUPROBE_FIND_DEPS=OFF) builds and runs"
