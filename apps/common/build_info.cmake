# Run at build time (cmake -P) by the scanlab_build_info target: writes OUTPUT, a
# translation unit naming the git commit the binaries were built from, and rewrites it
# only when that changes (so an unchanged commit rebuilds nothing).
#   -DSOURCE_DIR=<repository> -DTEMPLATE=<build_info.cpp.in> -DOUTPUT=<file>
#   -DSCANLAB_CUDA_ARCHITECTURES_BUILT=<list>
set(SCANLAB_GIT_COMMIT "unknown")
set(SCANLAB_GIT_DIRTY "false")
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse HEAD
                  OUTPUT_VARIABLE commit RESULT_VARIABLE status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(status EQUAL 0 AND commit MATCHES "^[0-9a-f]+$")
    set(SCANLAB_GIT_COMMIT "${commit}")
    # Tracked files changed since that commit (untracked ones do not count).
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes RESULT_VARIABLE status ERROR_QUIET)
    if(status EQUAL 0 AND NOT changes STREQUAL "")
      set(SCANLAB_GIT_DIRTY "true")
    endif()
  endif()
endif()
configure_file(${TEMPLATE} ${OUTPUT} @ONLY)
