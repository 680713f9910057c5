# `cmake --install build --prefix DIR` and the packages (`cpack -G TGZ`, `cpack -G DEB` in build/):
#   bin/gpuprobe
#   share/doc/gpuprobe/README.md, share/doc/gpuprobe/docs/
#   share/gpuprobe/schemas/, share/gpuprobe/baselines/ (when the tree has baselines/)
# NVML and CUPTI are loaded at run time (dlopen) and the CUDA runtime is linked statically, so
# the packages depend on no NVIDIA package: without a driver, gpuprobe runs on modelled GPUs.
include(GNUInstallDirs)

install(TARGETS gpuprobe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY schemas DESTINATION ${CMAKE_INSTALL_DATADIR}/gpuprobe)
if(IS_DIRECTORY ${CMAKE_SOURCE_DIR}/baselines)
  install(DIRECTORY baselines DESTINATION ${CMAKE_INSTALL_DATADIR}/gpuprobe)
endif()

set(GPUPROBE_PACKAGE_MAINTAINER "gpuprobe maintainers <gpuprobe@invalid>" CACHE STRING
    "Maintainer written into the .deb (name <email>)")

set(CPACK_PACKAGE_NAME gpuprobe)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${GPUPROBE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Characterizes an NVIDIA GPU's memory hierarchy and execution units with microbenchmarks")
set(CPACK_PACKAGE_DESCRIPTION
    "gpuprobe runs microbenchmarks on an NVIDIA GPU (caches, TLBs, memory, links, execution units), \
fits what they measure and writes a result (JSON), a report (HTML) and a summary card. \
NVML and CUPTI are loaded at run time when present; without a GPU it runs on modelled GPUs.")
set(CPACK_GENERATOR "TGZ;DEB")
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_PACKAGE_FILE_NAME "gpuprobe-${PROJECT_VERSION}-${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${GPUPROBE_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# No NVIDIA package is required (see above). Only the C and C++ runtime libraries the binary
# links against are, computed by dpkg-shlibdeps where it is installed (dpkg-dev).
find_program(GPUPROBE_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(GPUPROBE_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()

include(CPack)
