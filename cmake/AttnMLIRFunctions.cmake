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

# attn_add_library(<name> <sources...> [NO_LLVM] [DEPENDS targets...]
#                  [LINK_LIBS libs...])
# A static, position-independent library of the project. It links the shared
# libMLIR.so/libLLVM.so so that the plugin built from it loads into Debian's
# mlir-opt, and it is exported for find_package(AttnMLIR). A NO_LLVM library
# uses at most LLVM's header-only ADT and links neither: the tools that run on
# a GPU machine without LLVM (attn-launch) are built from those.
function(attn_add_library name)
  cmake_parse_arguments(ARG "NO_LLVM" "" "DEPENDS;LINK_LIBS" ${ARGN})
  set(llvm_libs ${ATTN_MLIR_LIBS})
  if(ARG_NO_LLVM)
    set(llvm_libs)
  endif()
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  add_library(AttnMLIR::${name} ALIAS ${name})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS} ${llvm_libs})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${ATTN_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${ATTN_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  # MLIR's exported targets carry no include directories: pass them on so
  # that a consumer of AttnMLIR::* compiles against the same LLVM/MLIR.
  target_include_directories(${name} SYSTEM PUBLIC
    ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  if(ARG_NO_LLVM)
    # LLVM's headers otherwise reference a symbol of libLLVM to check that
    # the ABI-breaking-checks setting matches.
    target_compile_definitions(${name} PRIVATE
      LLVM_DISABLE_ABI_BREAKING_CHECKS_ENFORCING=1)
  endif()
  set_property(GLOBAL APPEND PROPERTY ATTN_EXPORTED_LIBS ${name})
endfunction()
