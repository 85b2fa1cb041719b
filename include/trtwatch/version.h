// trtwatch's version, for compile-time checks in code that uses the library.
// CMake reads the project version from this file, so it is the only place it is written.
#pragma once

#define TRTWATCH_VERSION_MAJOR 0
#define TRTWATCH_VERSION_MINOR 2
#define TRTWATCH_VERSION_PATCH 0

#define TRTWATCH_VERSION_STRINGIFY_(x) #x
#define TRTWATCH_VERSION_STRINGIFY(x) TRTWATCH_VERSION_STRINGIFY_(x)
// "MAJOR.MINOR.PATCH"
#define TRTWATCH_VERSION_STRING                                                   \
  TRTWATCH_VERSION_STRINGIFY(TRTWATCH_VERSION_MAJOR)                              \
  "." TRTWATCH_VERSION_STRINGIFY(TRTWATCH_VERSION_MINOR) "." TRTWATCH_VERSION_STRINGIFY( \
      TRTWATCH_VERSION_PATCH)

// One number that orders versions: 1.2.3 -> 10203.
#define TRTWATCH_VERSION_NUMBER \
  (TRTWATCH_VERSION_MAJOR * 10000 + TRTWATCH_VERSION_MINOR * 100 + TRTWATCH_VERSION_PATCH)
