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
