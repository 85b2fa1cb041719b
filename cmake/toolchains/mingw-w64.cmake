# Cross-builds trtwatch.exe and libtrtwatch.a for 64-bit Windows from Debian with
# MinGW-w64 (package g++-mingw-w64-x86-64-posix: the POSIX thread model, which
# std::thread and std::mutex need). Use the `mingw` preset, or
#   cmake -B build-mingw -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mingw-w64.cmake
# The tests run under Wine (wine64) through ctest: docs/windows.md.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(triple x86_64-w64-mingw32)

set(CMAKE_C_COMPILER ${triple}-gcc-posix)
set(CMAKE_CXX_COMPILER ${triple}-g++-posix)
set(CMAKE_RC_COMPILER ${triple}-windres)

set(CMAKE_FIND_ROOT_PATH /usr/${triple})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The C++ and winpthread run-time libraries go into the executables, so that
# trtwatch.exe runs from any folder without MinGW's DLLs beside it.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

# ctest runs the Windows test programs through Wine.
find_program(TRTWATCH_WINE NAMES wine64 wine PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
if(TRTWATCH_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TRTWATCH_WINE})
endif()
