# For a cross build (MinGW-w64): the header-only libraries trtwatch uses, taken from the
# build machine (Debian's nlohmann-json3-dev and libcli11-dev). Their CMake packages
# would put the host's whole /usr/include on the include path, where the host's C
# library headers would shadow the target's; so only their own folders are linked
# into the build tree and exposed, under the targets find_package would give.
set(host_include ${CMAKE_BINARY_DIR}/host-include)
foreach(dir nlohmann CLI)
  if(NOT EXISTS /usr/include/${dir})
    message(FATAL_ERROR "/usr/include/${dir} not found: install nlohmann-json3-dev and libcli11-dev (scripts/setup.sh --deps)")
  endif()
  file(MAKE_DIRECTORY ${host_include})
  file(CREATE_LINK /usr/include/${dir} ${host_include}/${dir} SYMBOLIC)
endforeach()
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
set_target_properties(nlohmann_json::nlohmann_json PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${host_include})
add_library(CLI11::CLI11 INTERFACE IMPORTED)
set_target_properties(CLI11::CLI11 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${host_include})
