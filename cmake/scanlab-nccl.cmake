# scanlab::nccl: NCCL (nccl.h, libnccl.so.2) for scanlab::distributed. The CUDA toolkit
# here carries it; elsewhere set NCCL_ROOT (or CMAKE_PREFIX_PATH) to its prefix. Included by
# the build and by the installed package's config file; defines nothing if NCCL is absent
# (then scanlab::distributed is not built, or not usable from the package).
if(NOT TARGET scanlab::nccl)
  find_path(SCANLAB_NCCL_INCLUDE_DIR nccl.h
            HINTS $ENV{NCCL_ROOT}/include ${NCCL_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS})
  find_library(SCANLAB_NCCL_LIBRARY NAMES nccl libnccl.so.2
               HINTS $ENV{NCCL_ROOT}/lib ${NCCL_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR})
  mark_as_advanced(SCANLAB_NCCL_INCLUDE_DIR SCANLAB_NCCL_LIBRARY)
  if(SCANLAB_NCCL_INCLUDE_DIR AND SCANLAB_NCCL_LIBRARY)
    add_library(scanlab::nccl UNKNOWN IMPORTED GLOBAL)
    set_target_properties(scanlab::nccl PROPERTIES IMPORTED_LOCATION "${SCANLAB_NCCL_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${SCANLAB_NCCL_INCLUDE_DIR}")
  endif()
endif()
