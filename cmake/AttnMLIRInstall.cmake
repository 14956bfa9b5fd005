# Installs headers, libraries, tools, the plugin and a CMake package, so that
# another MLIR-based compiler can find_package(AttnMLIR) and link the dialect
# and passes (targets AttnMLIR::AttnDialect, AttnMLIR::AttnTransforms, ...).
include(CMakePackageConfigHelpers)

get_property(attn_libs GLOBAL PROPERTY ATTN_EXPORTED_LIBS)
install(TARGETS ${attn_libs} EXPORT AttnMLIRTargets
  ARCHIVE DESTINATION lib
  LIBRARY DESTINATION lib
  INCLUDES DESTINATION include)
install(DIRECTORY include/attn include/attn-c DESTINATION include
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${ATTN_BINARY_DIR}/include/attn DESTINATION include
  FILES_MATCHING PATTERN "*.inc")

set(ATTN_CMAKE_DIR lib/cmake/AttnMLIR)
install(EXPORT AttnMLIRTargets NAMESPACE AttnMLIR:: DESTINATION ${ATTN_CMAKE_DIR})
configure_package_config_file(cmake/AttnMLIRConfig.cmake.in
  ${ATTN_BINARY_DIR}/AttnMLIRConfig.cmake
  INSTALL_DESTINATION ${ATTN_CMAKE_DIR})
write_basic_package_version_file(${ATTN_BINARY_DIR}/AttnMLIRConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${ATTN_BINARY_DIR}/AttnMLIRConfig.cmake
  ${ATTN_BINARY_DIR}/AttnMLIRConfigVersion.cmake
  DESTINATION ${ATTN_CMAKE_DIR})
