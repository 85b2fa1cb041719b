# Finds TensorRT (TensorRT_ROOT, or the standard include/lib paths) and defines:
#   trtwatch_tensorrt_options  option parsing and validation, and the build key's recipe
#                              of a TensorRT build (always; no TensorRT)
#   trtwatch_tensorrt          the backend: the real one when TensorRT is found, else
#                              the stand-in that explains how to get TensorRT
#   TRTWATCH_HAVE_TENSORRT     whether the real backend is built
#   TRTWATCH_TENSORRT_BACKEND_SOURCES  the TensorRT-including sources (tests reuse them)

add_library(trtwatch_tensorrt_options STATIC src/backends/tensorrt/build_options.cc src/keys/tensorrt_key.cc)
target_include_directories(trtwatch_tensorrt_options PUBLIC src)
target_link_libraries(trtwatch_tensorrt_options PUBLIC trtwatch_lib PRIVATE trtwatch_flags)  # platform/file_access.h

set(TRTWATCH_TENSORRT_BACKEND_SOURCES
  ${CMAKE_SOURCE_DIR}/src/backends/tensorrt/builder_config.cc
  ${CMAKE_SOURCE_DIR}/src/backends/tensorrt/logger_adapter.cc
  ${CMAKE_SOURCE_DIR}/src/backends/tensorrt/progress_adapter.cc
  ${CMAKE_SOURCE_DIR}/src/backends/tensorrt/tensorrt_backend.cc
  ${CMAKE_SOURCE_DIR}/src/backends/tensorrt/tensorrt_timing_cache.cc
  ${CMAKE_SOURCE_DIR}/src/backends/tensorrt/timing_cache_merge.cc
  ${CMAKE_SOURCE_DIR}/src/backends/tensorrt/tensorrt_library.cc)

set(trt_hints)
if(TensorRT_ROOT)
  set(trt_hints HINTS ${TensorRT_ROOT})
endif()
find_path(TensorRT_INCLUDE_DIR NvInfer.h ${trt_hints} PATH_SUFFIXES include include/x86_64-linux-gnu include/aarch64-linux-gnu)
find_path(TensorRT_ONNX_PARSER_INCLUDE_DIR NvOnnxParser.h ${trt_hints} PATH_SUFFIXES include include/x86_64-linux-gnu include/aarch64-linux-gnu)
# Only the headers are needed to build: libnvinfer, libnvonnxparser and
# libnvinfer_plugin are loaded at run time (src/backends/tensorrt/tensorrt_library.h),
# so the binary starts where TensorRT is not installed. The library is looked up
# for the configure message only.
find_library(TensorRT_nvinfer_LIBRARY NAMES nvinfer ${trt_hints} PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu lib/aarch64-linux-gnu)
# TensorRT's headers include cuda_runtime_api.h.
find_path(TensorRT_CUDA_INCLUDE_DIR cuda_runtime_api.h HINTS $ENV{CUDA_HOME} $ENV{CUDA_PATH} /usr/local/cuda
  PATH_SUFFIXES include targets/x86_64-linux/include targets/sbsa-linux/include)

set(TRTWATCH_HAVE_TENSORRT OFF)
set(trt_missing)
foreach(var TensorRT_INCLUDE_DIR TensorRT_ONNX_PARSER_INCLUDE_DIR TensorRT_CUDA_INCLUDE_DIR)
  if(NOT ${var})
    list(APPEND trt_missing ${var})
  endif()
endforeach()

if(NOT trt_missing)
  set(TensorRT_VERSION "")
  if(EXISTS ${TensorRT_INCLUDE_DIR}/NvInferVersion.h)
    file(STRINGS ${TensorRT_INCLUDE_DIR}/NvInferVersion.h version_lines REGEX "#define (NV_TENSORRT|TRT)_(MAJOR|MINOR|PATCH)(_ENTERPRISE)? +[0-9]+")
    foreach(part MAJOR MINOR PATCH)
      string(REGEX MATCH "_${part}(_ENTERPRISE)? +([0-9]+)" m "${version_lines}")
      list(APPEND TensorRT_VERSION ${CMAKE_MATCH_2})
    endforeach()
    list(JOIN TensorRT_VERSION "." TensorRT_VERSION)
  endif()
  if(TensorRT_VERSION MATCHES "^[0-8]\\.")
    message(STATUS "TensorRT backend: not built (TensorRT ${TensorRT_VERSION} at ${TensorRT_INCLUDE_DIR} is older than 9.0, which added the progress monitor)")
  else()
    set(TRTWATCH_HAVE_TENSORRT ON)
  endif()
else()
  list(JOIN trt_missing ", " trt_missing_text)
  message(STATUS "TensorRT backend: not built (not found: ${trt_missing_text}; set TensorRT_ROOT to a TensorRT 9/10/11 install, see docs/tensorrt.md)")
endif()

if(TRTWATCH_HAVE_TENSORRT)
  get_filename_component(trt_root "${TensorRT_INCLUDE_DIR}" DIRECTORY)
  if(TensorRT_nvinfer_LIBRARY)
    set(trt_lib_note "${TensorRT_nvinfer_LIBRARY}, loaded at run time")
  else()
    set(trt_lib_note "libraries not found here: loaded at run time where installed")
  endif()
  message(STATUS "TensorRT backend: built (TensorRT ${TensorRT_VERSION}: ${TensorRT_INCLUDE_DIR}; ${trt_lib_note})")
  add_library(trtwatch_tensorrt STATIC ${TRTWATCH_TENSORRT_BACKEND_SOURCES})
  target_include_directories(trtwatch_tensorrt SYSTEM PUBLIC ${TensorRT_INCLUDE_DIR} ${TensorRT_ONNX_PARSER_INCLUDE_DIR}
    ${TensorRT_CUDA_INCLUDE_DIR})
  target_compile_definitions(trtwatch_tensorrt PRIVATE TRTWATCH_TENSORRT_ROOT="${trt_root}")
  target_link_libraries(trtwatch_tensorrt PUBLIC trtwatch_lib trtwatch_tensorrt_options
    PRIVATE trtwatch_flags)
else()
  add_library(trtwatch_tensorrt STATIC src/backends/tensorrt/unavailable.cc)
  target_link_libraries(trtwatch_tensorrt PUBLIC trtwatch_lib trtwatch_tensorrt_options PRIVATE trtwatch_flags)
endif()
