// Clang thread-safety annotations (-Wthread-safety). No-ops on other compilers.
#pragma once

#if defined(__clang__)
#define TRTWATCH_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TRTWATCH_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) TRTWATCH_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY TRTWATCH_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) TRTWATCH_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) TRTWATCH_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) TRTWATCH_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) TRTWATCH_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) TRTWATCH_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define EXCLUDES(...) TRTWATCH_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS TRTWATCH_THREAD_ANNOTATION(no_thread_safety_analysis)
