// Clang thread-safety annotations (-Wthread-safety), for trtwatch and for code that
// implements its interfaces (a Sink with state shared between threads, say). They
// expand to nothing on other compilers, so headers that use them stay portable.
#pragma once

#if defined(__clang__)
#define TRTWATCH_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TRTWATCH_THREAD_ANNOTATION(x)
#endif

#define TRTWATCH_CAPABILITY(x) TRTWATCH_THREAD_ANNOTATION(capability(x))
#define TRTWATCH_SCOPED_CAPABILITY TRTWATCH_THREAD_ANNOTATION(scoped_lockable)
#define TRTWATCH_GUARDED_BY(x) TRTWATCH_THREAD_ANNOTATION(guarded_by(x))
#define TRTWATCH_PT_GUARDED_BY(x) TRTWATCH_THREAD_ANNOTATION(pt_guarded_by(x))
#define TRTWATCH_REQUIRES(...) TRTWATCH_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define TRTWATCH_ACQUIRE(...) TRTWATCH_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define TRTWATCH_RELEASE(...) TRTWATCH_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRTWATCH_EXCLUDES(...) TRTWATCH_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define TRTWATCH_NO_THREAD_SAFETY_ANALYSIS TRTWATCH_THREAD_ANNOTATION(no_thread_safety_analysis)
