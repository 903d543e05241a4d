# Include roots by layer. The source folders stack as
#     contract  <  schedules  <  generators          (the kernels, built with Halide)
#     contract  <  runtime  <  tools  <  python        (the library and its front ends)
#                                tools  <  frameworks    (the PyTorch, JAX and TensorFlow libraries)
# and tests/ and bench/ above everything. A target of one layer gets two include roots:
# layers/<layer>, a folder of links to the source folders it may include, and
# layers/<layer>.generated, links to those folders' generated files (generated/<folder>: the
# kernel tables the build writes for the contract, the runtime's tuning tables). An include of a
# folder above the layer finds no file, so it fails to build; ctest `layers` checks each target's
# actual include directories against this table.
set(SPACEDEPTH_GENERATED_DIR "${PROJECT_BINARY_DIR}/generated")
set(SPACEDEPTH_LAYER_contract contract)
set(SPACEDEPTH_LAYER_schedules contract schedules)
set(SPACEDEPTH_LAYER_generators contract schedules generators)
set(SPACEDEPTH_LAYER_runtime contract runtime)
set(SPACEDEPTH_LAYER_tools contract runtime tools)
set(SPACEDEPTH_LAYER_python tools)
set(SPACEDEPTH_LAYER_frameworks tools frameworks)

# Gives `target` the include roots of `layer` (PUBLIC, PRIVATE or INTERFACE: `scope`).
function(spacedepth_layer target scope layer)
    if (NOT DEFINED SPACEDEPTH_LAYER_${layer})
        message(FATAL_ERROR "spacedepth_layer: unknown layer '${layer}'")
    endif ()
    set(src "${PROJECT_BINARY_DIR}/layers/${layer}")
    set(gen "${PROJECT_BINARY_DIR}/layers/${layer}.generated")
    file(MAKE_DIRECTORY "${src}" "${gen}")
    foreach (folder IN LISTS SPACEDEPTH_LAYER_${layer})
        file(MAKE_DIRECTORY "${SPACEDEPTH_GENERATED_DIR}/${folder}")
        if (NOT IS_SYMLINK "${src}/${folder}")
            file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${folder}" "${src}/${folder}" SYMBOLIC)
        endif ()
        if (NOT IS_SYMLINK "${gen}/${folder}")
            file(CREATE_LINK "${SPACEDEPTH_GENERATED_DIR}/${folder}" "${gen}/${folder}" SYMBOLIC)
        endif ()
    endforeach ()
    target_include_directories(${target} ${scope} "$<BUILD_INTERFACE:${src}>" "$<BUILD_INTERFACE:${gen}>")
    set_property(GLOBAL APPEND PROPERTY SPACEDEPTH_LAYERED_TARGETS "${target}:${layer}")
endfunction ()

# For ctest `layers`: one line per layered target, "target|its layer's folders|its include
# directories as the build resolves them" (the linked libraries' usage requirements included).
function(spacedepth_write_layer_table path)
    get_property(entries GLOBAL PROPERTY SPACEDEPTH_LAYERED_TARGETS)
    set(lines "")
    foreach (entry IN LISTS entries)
        string(REPLACE ":" ";" entry "${entry}")
        list(GET entry 0 target)
        list(GET entry 1 layer)
        string(JOIN "," folders ${SPACEDEPTH_LAYER_${layer}})
        string(APPEND lines "${target}|${folders}|$<JOIN:$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>,|>\n")
    endforeach ()
    file(GENERATE OUTPUT "${path}" CONTENT "${lines}")
endfunction ()
