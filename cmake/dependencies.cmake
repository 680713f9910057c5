# CLI11, nlohmann_json and (for the tests) GoogleTest: found with find_package where installed,
# fetched with FetchContent (a pinned release tarball, checked by its SHA-256) where not, so that
# gpuprobe builds without root and without a package manager.
#
#   GPUPROBE_FETCH_DEPS = AUTO  find each dependency first, fetch what is missing (default)
#                         ON    fetch every dependency (never look for installed ones)
#                         OFF   find only: a missing dependency is an error (no network used)
#   GPUPROBE_FIND_DEPS  = OFF   the same as GPUPROBE_FETCH_DEPS=ON: force the fetch path
#
# The fetch path needs no network when FETCHCONTENT_SOURCE_DIR_<NAME> points at a local source
# tree (the names are CLI11, NLOHMANN_JSON and GOOGLETEST); scripts/ci_fetch_path.sh does that.
# GPUPROBE_<NAME>_URL / GPUPROBE_<NAME>_SHA256 change a tarball (a mirror, a newer release).
include(FetchContent)

set(GPUPROBE_FETCH_DEPS AUTO CACHE STRING
    "Fetch dependencies with FetchContent: AUTO (find first, fetch what is missing), ON (always), OFF (never)")
set_property(CACHE GPUPROBE_FETCH_DEPS PROPERTY STRINGS AUTO ON OFF)
option(GPUPROBE_FIND_DEPS "Look for installed dependencies with find_package (OFF: fetch them all)" ON)

string(TOUPPER "${GPUPROBE_FETCH_DEPS}" _gp_fetch)
if(NOT _gp_fetch MATCHES "^(AUTO|ON|OFF|TRUE|FALSE|YES|NO|1|0)$")
  message(FATAL_ERROR "GPUPROBE_FETCH_DEPS is AUTO, ON or OFF (not \"${GPUPROBE_FETCH_DEPS}\")")
endif()
if(_gp_fetch STREQUAL "AUTO")
  set(_gp_find_first ${GPUPROBE_FIND_DEPS})
  set(_gp_may_fetch ON)
elseif(_gp_fetch)  # ON, TRUE, YES, 1
  set(_gp_find_first OFF)
  set(_gp_may_fetch ON)
else()             # OFF, FALSE, NO, 0
  if(NOT GPUPROBE_FIND_DEPS)
    message(FATAL_ERROR "GPUPROBE_FIND_DEPS=OFF and GPUPROBE_FETCH_DEPS=OFF leave no way to get "
                        "the dependencies: drop one of them")
  endif()
  set(_gp_find_first ON)
  set(_gp_may_fetch OFF)
endif()

# The pinned releases. The hashes are those of the tarballs at these URLs; they were not
# computed by this project's machines (which cannot reach GitHub), but each is the hash that
# independent package recipes pin for the same URL (CLI11 v2.4.2: Homebrew's cli11 formula and
# xmake's package; json 3.11.3's json.tar.xz: several FetchContent and build-script pins;
# googletest v1.15.2: Bazel http_archive declarations of the same tag archive). A mismatch on
# first fetch still means the pin is wrong, not the download: report it.
set(GPUPROBE_CLI11_URL "https://github.com/CLIUtils/CLI11/archive/refs/tags/v2.4.2.tar.gz"
    CACHE STRING "CLI11 release tarball fetched when CLI11 is not installed")
set(GPUPROBE_CLI11_SHA256 "f2d893a65c3b1324c50d4e682c0cdc021dd0477ae2c048544f39eed6654b699a"
    CACHE STRING "SHA-256 of GPUPROBE_CLI11_URL")
set(GPUPROBE_NLOHMANN_JSON_URL "https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz"
    CACHE STRING "nlohmann_json release tarball fetched when nlohmann_json is not installed")
set(GPUPROBE_NLOHMANN_JSON_SHA256 "d6c65aca6b1ed68e7a182f4757257b107ae403032760ed6ef121c9d55e81757d"
    CACHE STRING "SHA-256 of GPUPROBE_NLOHMANN_JSON_URL")
set(GPUPROBE_GOOGLETEST_URL "https://github.com/google/googletest/archive/refs/tags/v1.15.2.tar.gz"
    CACHE STRING "GoogleTest release tarball fetched when GoogleTest is not installed")
set(GPUPROBE_GOOGLETEST_SHA256 "7b42b4d6ed48810c5362c265a17faebe90dc2373c885e5216439d37927f02926"
    CACHE STRING "SHA-256 of GPUPROBE_GOOGLETEST_URL")

# gpuprobe_dependency(<fetch name> PACKAGE <find_package name> [FIND_ARGS ...])
# Defines <fetch name>'s targets either way; says which path it took.
function(gpuprobe_dependency name)
  cmake_parse_arguments(PARSE_ARGV 1 D "" "PACKAGE" "FIND_ARGS")
  string(TOUPPER "${name}" upper)
  if(_gp_find_first)
    if(_gp_may_fetch)
      find_package(${D_PACKAGE} ${D_FIND_ARGS} QUIET)
    else()
      find_package(${D_PACKAGE} ${D_FIND_ARGS} REQUIRED)
    endif()
    if(${D_PACKAGE}_FOUND)
      message(STATUS "gpuprobe: ${name} found (find_package ${D_PACKAGE})")
      return()
    endif()
  endif()
  set(extra)
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.25)
    # Their headers are system headers for gpuprobe, as an installed package's are (same flags).
    list(APPEND extra SYSTEM)
  endif()
  FetchContent_Declare(${name}
    URL "${GPUPROBE_${upper}_URL}"
    URL_HASH "SHA256=${GPUPROBE_${upper}_SHA256}"
    DOWNLOAD_EXTRACT_TIMESTAMP TRUE
    ${extra})
  FetchContent_MakeAvailable(${name})
  if(FETCHCONTENT_SOURCE_DIR_${upper})
    message(STATUS "gpuprobe: ${name} from FetchContent (local source ${FETCHCONTENT_SOURCE_DIR_${upper}})")
  else()
    message(STATUS "gpuprobe: ${name} from FetchContent (${GPUPROBE_${upper}_URL})")
  endif()
endfunction()

# The fetched projects build nothing but the libraries and install nothing with gpuprobe.
set(CLI11_BUILD_TESTS OFF CACHE INTERNAL "")
set(CLI11_BUILD_EXAMPLES OFF CACHE INTERNAL "")
set(CLI11_BUILD_DOCS OFF CACHE INTERNAL "")
set(CLI11_INSTALL OFF CACHE INTERNAL "")
set(CLI11_PRECOMPILED OFF CACHE INTERNAL "")
set(JSON_BuildTests OFF CACHE INTERNAL "")
set(JSON_Install OFF CACHE INTERNAL "")
set(INSTALL_GTEST OFF CACHE INTERNAL "")
set(BUILD_GMOCK OFF CACHE INTERNAL "")

gpuprobe_dependency(CLI11 PACKAGE CLI11 FIND_ARGS CONFIG)
gpuprobe_dependency(nlohmann_json PACKAGE nlohmann_json FIND_ARGS 3.10 CONFIG)
if(GPUPROBE_BUILD_TESTS)
  gpuprobe_dependency(googletest PACKAGE GTest)
endif()

foreach(_gp_target CLI11::CLI11 nlohmann_json::nlohmann_json)
  if(NOT TARGET ${_gp_target})
    message(FATAL_ERROR "gpuprobe: ${_gp_target} is not defined after finding or fetching it")
  endif()
endforeach()
if(GPUPROBE_BUILD_TESTS)
  foreach(_gp_target GTest::gtest GTest::gtest_main)
    if(NOT TARGET ${_gp_target})
      message(FATAL_ERROR "gpuprobe: ${_gp_target} is not defined after finding or fetching it")
    endif()
  endforeach()
endif()
