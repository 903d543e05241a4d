# Points find_package(Halide) at the halide==21 wheel in the project's .venv (scripts/setup.sh
# installs it), or, in a `pip install .` build (scikit-build-core sets SKBUILD), at the one in
# pip's build environment, unless the caller already told CMake where Halide is.
if (NOT Halide_DIR AND NOT DEFINED ENV{Halide_DIR})
    set(_sd_python "${CMAKE_SOURCE_DIR}/.venv/bin/python")
    if (DEFINED SKBUILD AND DEFINED Python_EXECUTABLE)
        set(_sd_python "${Python_EXECUTABLE}")
    endif ()
    if (EXISTS "${_sd_python}")
        execute_process(
            COMMAND "${_sd_python}" -c "import halide; print(halide.install_dir())"
            OUTPUT_VARIABLE _sd_halide_root
            OUTPUT_STRIP_TRAILING_WHITESPACE
            RESULT_VARIABLE _sd_rc)
        if (_sd_rc EQUAL 0)
            # The wheel keeps its CMake packages under lib64/, which find_package does not search
            # on Debian; name the package folders directly.
            set(Halide_DIR "${_sd_halide_root}/lib64/cmake/Halide" CACHE PATH "Halide's CMake package")
            set(HalideHelpers_DIR "${_sd_halide_root}/lib64/cmake/HalideHelpers" CACHE PATH "Halide's CMake helpers")
            message(STATUS "Halide from ${_sd_python}: ${_sd_halide_root}")
            # Its Python bindings also tell this machine's features (SPACEDEPTH_HOST_TARGET_ONLY).
            set(SPACEDEPTH_HALIDE_PYTHON "${_sd_python}" CACHE INTERNAL "A Python with Halide's bindings")
        endif ()
    endif ()
endif ()
