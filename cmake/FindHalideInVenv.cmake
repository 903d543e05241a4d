# Points find_package(Halide) at the halide==21 wheel in the project's .venv (scripts/setup.sh
# installs it), or, in a `pip install .` build (scikit-build-core sets SKBUILD), at the one in
# pip's build environment, unless the caller already told CMake where Halide is.
# pip builds in a fresh temporary environment each time, so the packages the build requires
# (Halide, nanobind) sit at a new path on every `pip install .`: the generator relinked against
# the "new" libHalide.so and every kernel was generated again (a second install took as long as
# the first). In a scikit-build-core build, such a package is copied once into the build
# directory, keyed by its version, and the build uses the copy: an unchanged tree then reuses its
# kernels. Sets out_var to the copy of src_dir.
function(spacedepth_stable_copy src_dir name version out_var)
    set(copy "${CMAKE_BINARY_DIR}/requires/${name}-${version}")
    if (NOT EXISTS "${copy}/.complete")
        file(REMOVE_RECURSE "${copy}")
        file(COPY "${src_dir}/" DESTINATION "${copy}")
        file(TOUCH "${copy}/.complete")
        message(STATUS "${name} ${version} copied from the build environment into ${copy}")
    endif ()
    set(${out_var} "${copy}" PARENT_SCOPE)
endfunction ()

if (DEFINED SKBUILD AND DEFINED Python_EXECUTABLE)
    execute_process(
        COMMAND "${Python_EXECUTABLE}" -c "import halide, importlib.metadata as m; print(halide.install_dir()); print(m.version('halide'))"
        OUTPUT_VARIABLE _sd_halide OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _sd_rc)
    if (_sd_rc EQUAL 0)
        string(REPLACE "\n" ";" _sd_halide "${_sd_halide}")
        list(GET _sd_halide 0 _sd_halide_root)
        list(GET _sd_halide 1 _sd_halide_version)
        spacedepth_stable_copy("${_sd_halide_root}" halide "${_sd_halide_version}" _sd_halide_root)
        set(Halide_DIR "${_sd_halide_root}/lib64/cmake/Halide" CACHE PATH "Halide's CMake package" FORCE)
        set(HalideHelpers_DIR "${_sd_halide_root}/lib64/cmake/HalideHelpers" CACHE PATH "Halide's CMake helpers" FORCE)
        message(STATUS "Halide ${_sd_halide_version}: ${_sd_halide_root}")
    endif ()
endif ()
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
