# What `cmake --install` (and `make install PREFIX=...`) lays out:
#   bin/spacedepth                        the CLI
#   include/spacedepth/*.h                the public C and C++ headers, version.h
#   lib/libspacedepth.a                   the runtime (validation, view algebra, dispatch, APIs)
#   lib/libspacedepth_*.a                 the AOT CPU kernels, every configured target in each
#   lib/libspacedepth_halide_runtime.a    the Halide runtime the CPU kernels share
#   lib/cmake/SpaceDepth/                 SpaceDepthConfig.cmake, version file, exported targets
#   lib/pkgconfig/spacedepth.pc           for pkg-config users
#   share/doc/spacedepth/                 README.md, CHANGELOG.md
# and, only when asked for (cmake --install <build> --component cuda), the CUDA component:
# lib/libspacedepth_cuda.a, the CUDA kernels and lib/libspacedepth_halide_runtime_cuda.a,
# lib/cmake/SpaceDepth/SpaceDepthCudaTargets.cmake (find_package(SpaceDepth COMPONENTS cuda)) and
# lib/pkgconfig/spacedepth-cuda.pc. The OpenCL component stays in the build tree: only the tests
# reach its kernels.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_sd_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/SpaceDepth")

install(TARGETS spacedepth EXPORT SpaceDepthTargets ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
foreach (lib IN LISTS SPACEDEPTH_ARCHIVES_cpu)
    install(FILES "$<TARGET_FILE:${lib}>" DESTINATION "${CMAKE_INSTALL_LIBDIR}")
endforeach ()
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/spacedepth" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
install(FILES "${PROJECT_BINARY_DIR}/include/spacedepth/version.h" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/spacedepth")
if (SPACEDEPTH_BUILD_CLI)
    install(TARGETS spacedepth_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif ()

install(EXPORT SpaceDepthTargets NAMESPACE SpaceDepth:: DESTINATION "${_sd_cmake_dir}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/SpaceDepthConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/SpaceDepthConfig.cmake"
                              INSTALL_DESTINATION "${_sd_cmake_dir}")
# Semantic versioning with a 0 major: a minor release may break the API, so a request for 0.2
# accepts 0.2.x only (from 1.0 on, SameMajorVersion).
write_basic_package_version_file("${PROJECT_BINARY_DIR}/SpaceDepthConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/SpaceDepthConfig.cmake" "${PROJECT_BINARY_DIR}/SpaceDepthConfigVersion.cmake"
        DESTINATION "${_sd_cmake_dir}")

# pkg-config: the archives by path, in link order.
list(TRANSFORM SPACEDEPTH_ARCHIVE_FILES_cpu PREPEND "\${libdir}/" OUTPUT_VARIABLE _sd_pc_archives)
list(JOIN _sd_pc_archives " " SPACEDEPTH_PC_ARCHIVES)
list(JOIN SPACEDEPTH_TARGETS ", " SPACEDEPTH_TARGETS_PC)
set(SPACEDEPTH_PC_DL "")
if (CMAKE_DL_LIBS)
    set(SPACEDEPTH_PC_DL "-l${CMAKE_DL_LIBS}")
endif ()
configure_file("${PROJECT_SOURCE_DIR}/cmake/spacedepth.pc.in" "${PROJECT_BINARY_DIR}/spacedepth.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/spacedepth.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
install(FILES "${PROJECT_SOURCE_DIR}/README.md" "${PROJECT_SOURCE_DIR}/CHANGELOG.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}")

# The CUDA component, in an install component of its own name, left out of a plain install.
foreach (api IN ITEMS cuda)
    string(TOUPPER "${api}" _API)
    if (NOT SPACEDEPTH_${_API})
        continue ()
    endif ()
    set(_export "SpaceDepthCudaTargets")
    install(TARGETS spacedepth_${api} EXPORT ${_export} ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
            COMPONENT ${api} EXCLUDE_FROM_ALL)
    foreach (lib IN LISTS SPACEDEPTH_ARCHIVES_${api})
        install(FILES "$<TARGET_FILE:${lib}>" DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT ${api} EXCLUDE_FROM_ALL)
    endforeach ()
    install(EXPORT ${_export} NAMESPACE SpaceDepth:: DESTINATION "${_sd_cmake_dir}" COMPONENT ${api} EXCLUDE_FROM_ALL)
    set(SPACEDEPTH_PC_API ${api})
    list(TRANSFORM SPACEDEPTH_ARCHIVE_FILES_${api} PREPEND "\${libdir}/" OUTPUT_VARIABLE _sd_pc_archives)
    list(JOIN _sd_pc_archives " " SPACEDEPTH_PC_ARCHIVES)
    configure_file("${PROJECT_SOURCE_DIR}/cmake/spacedepth-gpu.pc.in" "${PROJECT_BINARY_DIR}/spacedepth-${api}.pc" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/spacedepth-${api}.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
            COMPONENT ${api} EXCLUDE_FROM_ALL)
endforeach ()
