# Helpers shared by the project's CMake files.

# attn_add_doc(<td file stem> <output stem> <tablegen flags...>)
# Generates docs/<output stem>.md in the build tree from TableGen and hangs it
# on the `attn-doc` target.
add_custom_target(attn-doc ALL)
function(attn_add_doc td_stem output_stem)
  set(LLVM_TARGET_DEFINITIONS ${td_stem}.td)
  tablegen(MLIR ${output_stem}.md ${ARGN})
  set(doc_file ${ATTN_BINARY_DIR}/docs/${output_stem}.md)
  add_custom_command(
    OUTPUT ${doc_file}
    COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_BINARY_DIR}/${output_stem}.md ${doc_file}
    DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/${output_stem}.md)
  add_custom_target(${output_stem}DocGen DEPENDS ${doc_file})
  add_dependencies(attn-doc ${output_stem}DocGen)
endfunction()

# attn_add_library(<name> <sources...> [DEPENDS targets...] [LINK_LIBS libs...])
# A static, position-independent library of the project. It links the shared
# libMLIR.so/libLLVM.so so that the plugin built from it loads into Debian's
# mlir-opt, and it is exported for find_package(AttnMLIR).
function(attn_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  add_library(AttnMLIR::${name} ALIAS ${name})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS} ${ATTN_MLIR_LIBS})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${ATTN_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${ATTN_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  # MLIR's exported targets carry no include directories: pass them on so
  # that a consumer of AttnMLIR::* compiles against the same LLVM/MLIR.
  target_include_directories(${name} SYSTEM PUBLIC
    ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  set_property(GLOBAL APPEND PROPERTY ATTN_EXPORTED_LIBS ${name})
endfunction()
