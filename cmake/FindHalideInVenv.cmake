# Points find_package(Halide) at the halide==21 wheel in the project's .venv (scripts/setup.sh
# installs it), or, in a `pip install .` build (scikit-build-core sets SKBUILD), at the one in
# pip's build environment, unless the caller already told CMake where Halide is.

# pip builds each `pip install .` in a new temporary environment, so Halide's and nanobind's
# paths differ every time, and with them every compile and link command of the generators and
# the module: ninja rebuilt the whole build (121-142 s, 2-core AMD EPYC). In such a build
# (SKBUILD), spacedepth_stable_copy() copies a build-time package into the build directory once
# per version and returns that copy, so a second install's commands are the same as the first's.
function(spacedepth_stable_copy package_dir name version out_var)
    if (NOT DEFINED SKBUILD)
        set(${out_var} "${package_dir}" PARENT_SCOPE)
        return ()
    endif ()
    set(_copy "${CMAKE_BINARY_DIR}/_build_deps/${name}-${version}")
    if (NOT EXISTS "${_copy}/.complete")
        file(REMOVE_RECURSE "${_copy}")
        file(COPY "${package_dir}/" DESTINATION "${_copy}" PATTERN "__pycache__" EXCLUDE)
        file(TOUCH "${_copy}/.complete")
        message(STATUS "${name} ${version} copied into ${_copy}, a path that stays the same across pip builds")
    endif ()
    set(${out_var} "${_copy}" PARENT_SCOPE)
endfunction ()

if (NOT Halide_DIR AND NOT DEFINED ENV{Halide_DIR})
    set(_sd_python "${CMAKE_SOURCE_DIR}/.venv/bin/python")
    if (DEFINED SKBUILD AND DEFINED Python_EXECUTABLE)
        set(_sd_python "${Python_EXECUTABLE}")
    endif ()
    if (EXISTS "${_sd_python}")
        execute_process(
            COMMAND "${_sd_python}" -c "import halide; print(halide.install_dir())"
            OUTPUT_VARIABLE _sd_halide_found
            OUTPUT_STRIP_TRAILING_WHITESPACE
            RESULT_VARIABLE _sd_rc)
        if (_sd_rc EQUAL 0)
            execute_process(COMMAND "${_sd_python}" -c "import importlib.metadata as m; print(m.version('halide'))"
                            OUTPUT_VARIABLE _sd_halide_version OUTPUT_STRIP_TRAILING_WHITESPACE)
            spacedepth_stable_copy("${_sd_halide_found}" halide "${_sd_halide_version}" _sd_halide_root)
            # The wheel keeps its CMake packages under lib64/, which find_package does not search
            # on Debian; name the package folders directly.
            set(Halide_DIR "${_sd_halide_root}/lib64/cmake/Halide" CACHE PATH "Halide's CMake package")
            set(HalideHelpers_DIR "${_sd_halide_root}/lib64/cmake/HalideHelpers" CACHE PATH "Halide's CMake helpers")
            message(STATUS "Halide from ${_sd_python}: ${_sd_halide_root}")
        endif ()
    endif ()
endif ()
