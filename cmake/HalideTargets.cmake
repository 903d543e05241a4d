# Halide target strings as users write them. Halide does not imply x86 features from one another,
# and with Halide 21 both `x86-64-linux-avx512` and `...-avx512-avx2-avx-fma-f16c-sse41` abort
# the generator in LLVM's instruction selection (a 128-bit rotate, VROTLI v4i32, needs AVX512VL,
# which Halide's plain avx512 - AVX-512F/CD, Knights Landing - does not enable).
# spacedepth_complete_x86_features() therefore reads plain avx512 as avx512_skylake (F, CD, VL,
# BW, DQ: every AVX-512 CPU since Skylake-SP) and adds the features each one implies, so
# -DSPACEDEPTH_TARGETS=x86-64-linux-avx512 builds and means what users expect.
function(spacedepth_complete_x86_features out_var)
    set(result "")
    foreach (target IN LISTS ARGN)
        if (target MATCHES "^(x86-64|host)")
            string(REPLACE "-" ";" parts "${target}")
            set(implied "")
            if ("avx512" IN_LIST parts AND NOT target MATCHES "-avx512_")
                list(APPEND implied avx512_skylake)
            endif ()
            if (target MATCHES "-avx512_(cannonlake|zen4|zen5|sapphirerapids)")
                list(APPEND implied avx512_skylake)
            endif ()
            if (target MATCHES "-avx512")
                list(APPEND implied avx512 avx2 avx fma f16c sse41)
            elseif (target MATCHES "-avx2")
                list(APPEND implied avx fma f16c sse41)
            elseif (target MATCHES "-(avx|fma|f16c)(-|$)")
                list(APPEND implied avx sse41)
            endif ()
            foreach (feature IN LISTS implied)
                if (NOT feature IN_LIST parts)
                    string(APPEND target "-${feature}")
                endif ()
            endforeach ()
        endif ()
        list(APPEND result "${target}")
    endforeach ()
    set(${out_var} "${result}" PARENT_SCOPE)
endfunction ()

# A GPU target named in SPACEDEPTH_TARGETS (host-cuda-cuda_capability_86, x86-64-linux-opencl)
# becomes the GPU kernels' target (SPACEDEPTH_CUDA_TARGET / SPACEDEPTH_OPENCL_TARGET, which turn
# those kernels on); the rest stay the CPU kernels' targets, the default ones if none is left.
# `host` is resolved to this machine's x86-64 triple, as the CPU side of a GPU target.
function(spacedepth_split_gpu_targets cpu_var default_cpu_targets)
    set(cpu "")
    foreach (target IN LISTS ${cpu_var})
        string(REGEX REPLACE "^host" "x86-64-linux" resolved "${target}")
        if (target MATCHES "-cuda(-|$)")
            set(SPACEDEPTH_CUDA_TARGET "${resolved}" PARENT_SCOPE)
            set(SPACEDEPTH_CUDA ON PARENT_SCOPE)
        elseif (target MATCHES "-opencl(-|$)")
            set(SPACEDEPTH_OPENCL_TARGET "${resolved}" PARENT_SCOPE)
            set(SPACEDEPTH_OPENCL ON PARENT_SCOPE)
        else ()
            list(APPEND cpu "${target}")
        endif ()
    endforeach ()
    if (NOT cpu)
        set(cpu "${default_cpu_targets}")
    endif ()
    set(${cpu_var} "${cpu}" PARENT_SCOPE)
endfunction ()

# Keeps, of the targets in the list `var`, the first one this machine can run, as the kernels'
# multi-target wrappers pick at run time: the CPU probe the runtime uses (runtime/cpu_probe.cpp,
# CPUID bits and XCR0), compiled here on its own and run, never Halide's get_host_target(), which
# takes AVX-512 from the model number of some AMD CPUs whose VM masks it. For builds that only
# run here (make demo): one target's kernels instead of every rung's.
# SPACEDEPTH_CPU_PROBE_LAUNCHER runs the probe through a launcher, for example
# "qemu-x86_64;-cpu;EPYC-Milan,family=25,model=97": the answer of an emulated CPU (ctest
# emulated_demo_build).
set(SPACEDEPTH_CPU_PROBE_LAUNCHER "" CACHE STRING "Command (a list) the configure's CPU probe runs under, for SPACEDEPTH_HOST_TARGET_ONLY")
function(spacedepth_keep_host_target var)
    set(probe "${PROJECT_BINARY_DIR}/CMakeFiles/spacedepth_cpu_probe")
    try_compile(compiled
                SOURCES "${PROJECT_SOURCE_DIR}/runtime/cpu_probe.cpp" "${PROJECT_SOURCE_DIR}/tools/cpu_probe_main.cpp"
                CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${PROJECT_SOURCE_DIR}"
                CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                COPY_FILE "${probe}"
                OUTPUT_VARIABLE log)
    if (NOT compiled)
        message(FATAL_ERROR "SPACEDEPTH_HOST_TARGET_ONLY: the CPU probe (tools/cpu_probe_main.cpp) did not compile:\n${log}")
    endif ()
    list(JOIN ${var} "," targets)
    execute_process(COMMAND ${SPACEDEPTH_CPU_PROBE_LAUNCHER} "${probe}" "${targets}"
                    OUTPUT_VARIABLE answer ERROR_VARIABLE error OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    string(REGEX MATCH "features: ([^\n]*)" _ "${answer}")
    set(features "${CMAKE_MATCH_1}")
    string(REGEX MATCH "cpu: ([^\n]*)" _ "${answer}")
    set(cpu "${CMAKE_MATCH_1}")
    string(REGEX MATCH "target: ([^\n]*)" _ "${answer}")
    set(kept "${CMAKE_MATCH_1}")
    if (NOT rc EQUAL 0 OR NOT kept)
        message(FATAL_ERROR "SPACEDEPTH_HOST_TARGET_ONLY: the CPU probe ${SPACEDEPTH_CPU_PROBE_LAUNCHER} ${probe} failed (${rc}): ${answer}${error}")
    endif ()
    if (kept STREQUAL "none")
        message(FATAL_ERROR "SPACEDEPTH_HOST_TARGET_ONLY: this CPU (${cpu}; features: ${features}) runs none of the targets ${${var}}: add one it runs, such as x86-64-linux, to SPACEDEPTH_TARGETS")
    endif ()
    message(STATUS "kernels: this machine's target only, ${kept} (CPU probe: ${cpu}; features: ${features})")
    set(${var} "${kept}" PARENT_SCOPE)
endfunction ()
