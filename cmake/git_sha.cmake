# Run at build time (cmake -P), not at configure time: reads the git SHA of SOURCE_DIR and
# whether tracked files differ from it, and writes OUTPUT only when that changed, so a commit
# or an edit re-stamps the binary and an unchanged tree recompiles nothing.
#   cmake -DSOURCE_DIR=<repo> -DOUTPUT=<header> -P git_sha.cmake
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT sha)
  set(sha "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(dirty)
    set(sha "${sha}-dirty")
  endif()
endif()
set(text "// Generated at build time by cmake/git_sha.cmake.\n#define GPUPROBE_GIT_SHA \"${sha}\"\n")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
