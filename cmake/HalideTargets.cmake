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
