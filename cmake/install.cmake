# Install rules: the library, the public headers and the weft::weft package that
# find_package(weft 0.1 CONFIG REQUIRED) loads. Every installed path is relative to the prefix.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(WEFT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/weft)

install(TARGETS weft EXPORT weftTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})  # the include path of the installed target
# weft/distributed.hpp belongs to weft_distributed, which is not installed yet (docs/design/0028).
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/weft DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  PATTERN distributed.hpp EXCLUDE)
install(EXPORT weftTargets NAMESPACE weft:: DESTINATION ${WEFT_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/weftConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/weftConfig.cmake
  INSTALL_DESTINATION ${WEFT_INSTALL_CMAKEDIR})
# Before 1.0 a minor version may break the API, so 0.1 accepts 0.1.x only.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/weftConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/weftConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/weftConfigVersion.cmake
  DESTINATION ${WEFT_INSTALL_CMAKEDIR})
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/weft)
