// Short names for the public TRTWATCH_ thread-safety annotations, inside trtwatch's
// own sources only (this header is not installed).
#pragma once

#include <trtwatch/annotations.h>

#define CAPABILITY(x) TRTWATCH_CAPABILITY(x)
#define SCOPED_CAPABILITY TRTWATCH_SCOPED_CAPABILITY
#define GUARDED_BY(x) TRTWATCH_GUARDED_BY(x)
#define PT_GUARDED_BY(x) TRTWATCH_PT_GUARDED_BY(x)
#define REQUIRES(...) TRTWATCH_REQUIRES(__VA_ARGS__)
#define ACQUIRE(...) TRTWATCH_ACQUIRE(__VA_ARGS__)
#define RELEASE(...) TRTWATCH_RELEASE(__VA_ARGS__)
#define EXCLUDES(...) TRTWATCH_EXCLUDES(__VA_ARGS__)
#define NO_THREAD_SAFETY_ANALYSIS TRTWATCH_NO_THREAD_SAFETY_ANALYSIS
