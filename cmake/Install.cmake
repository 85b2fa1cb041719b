# What `cmake --install` puts under the prefix, and the Debian package (cpack -G DEB):
#   bin/trtwatch
#   include/trtwatch/*.h
#   lib/libtrtwatch.a
#   lib/cmake/trtwatch/trtwatch{Config,ConfigVersion,Targets}.cmake  -> trtwatch::trtwatch
#   lib/pkgconfig/trtwatch.pc
include(CMakePackageConfigHelpers)

set_target_properties(trtwatch_headers PROPERTIES EXPORT_NAME headers)
install(TARGETS trtwatch_lib trtwatch_headers EXPORT trtwatchTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/trtwatch DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS trtwatch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/trtwatch)
install(EXPORT trtwatchTargets NAMESPACE trtwatch:: DESTINATION ${config_dir})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/trtwatchConfig.cmake.in
  ${CMAKE_BINARY_DIR}/trtwatchConfig.cmake INSTALL_DESTINATION ${config_dir})
# 0.x: a new minor version may change the API, so only the same minor is compatible.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/trtwatchConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/trtwatchConfig.cmake ${CMAKE_BINARY_DIR}/trtwatchConfigVersion.cmake
  DESTINATION ${config_dir})

# pkg-config reads the prefix from the file; cpack installs under /usr.
configure_file(${CMAKE_SOURCE_DIR}/cmake/trtwatch.pc.in ${CMAKE_BINARY_DIR}/trtwatch.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/trtwatch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME trtwatch)
set(CPACK_PACKAGE_VENDOR "trtwatch")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Live progress, clean cancellation and timing for TensorRT engine builds")
set(CPACK_PACKAGE_CONTACT "trtwatch developers <trtwatch@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # trtwatch_<version>_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)   # libsqlite3-0, libstdc++6, ... from the binary
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
