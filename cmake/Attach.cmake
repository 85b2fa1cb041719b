# The attach libraries (docs/attach.md): trtwatch's own libnvinfer.so.N, one per
# TensorRT major version, in attach/ beside the trtwatch executable, where `trtwatch
# run` puts them first on COMMAND's library path. Each forwards TensorRT's exported
# entry points to the real library and hooks the builder; they are compiled against
# the project's own ABI declarations (src/attach/abi/nvinfer_abi.h). Only the entry
# points (and the attach mark) are exported; the core inside is the library's own.
set(TRTWATCH_ATTACH_MAJORS 10 11)
set(TRTWATCH_ATTACH_DIR ${CMAKE_BINARY_DIR}/attach)
foreach(major ${TRTWATCH_ATTACH_MAJORS})
  set(attach trtwatch_attach${major})
  add_library(${attach} SHARED
    src/attach/builder_hook.cc
    src/attach/entry_points.cc
    src/attach/real_library.cc
    src/attach/watched_build.cc
    src/platform/posix/attach_channel.cc
    src/platform/posix/library_location.cc
    src/platform/posix/shared_library.cc
    $<TARGET_OBJECTS:trtwatch_core>
    $<TARGET_OBJECTS:trtwatch_protocol>)
  set_target_properties(${attach} PROPERTIES OUTPUT_NAME nvinfer PREFIX lib SUFFIX .so.${major} NO_SONAME ON
    LIBRARY_OUTPUT_DIRECTORY ${TRTWATCH_ATTACH_DIR} CXX_VISIBILITY_PRESET hidden UNITY_BUILD OFF)
  target_compile_definitions(${attach} PRIVATE TRTWATCH_ATTACH_MAJOR=${major})
  target_include_directories(${attach} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(${attach} PRIVATE trtwatch_headers Threads::Threads nlohmann_json::nlohmann_json
    ${CMAKE_DL_LIBS} trtwatch_flags)
  target_link_options(${attach} PRIVATE -Wl,-soname,libnvinfer.so.${major}
    -Wl,--version-script=${CMAKE_SOURCE_DIR}/src/attach/exports.map -Wl,-Bsymbolic)
  if(NOT (TRTWATCH_SANITIZE AND CMAKE_CXX_COMPILER_ID MATCHES "Clang"))
    # clang's sanitizer runtimes are in the instrumented program, not in a library of
    # their own: an instrumented library leaves their symbols to it.
    target_link_options(${attach} PRIVATE -Wl,--no-undefined)
  endif()
  set_property(TARGET ${attach} APPEND PROPERTY LINK_DEPENDS ${CMAKE_SOURCE_DIR}/src/attach/exports.map)
endforeach()
add_custom_target(trtwatch_attach ALL DEPENDS trtwatch_attach10 trtwatch_attach11)
