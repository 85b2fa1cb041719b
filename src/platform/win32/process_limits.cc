#include "platform/process_limits.h"

#include <cstdio>

namespace trtwatch {

int64_t RaiseOpenFileLimit() {
  // Sockets and files opened through the Windows API are handles, which have no
  // per-process limit to raise. The C runtime's stream table does: raise it to the
  // largest size the runtime accepts (8192 for the UCRT, 2048 for older MSVCRT).
  if (_getmaxstdio() < 8192 && _setmaxstdio(8192) == -1 && _getmaxstdio() < 2048) _setmaxstdio(2048);
  const int limit = _getmaxstdio();
  return limit > 0 ? limit : 1024;
}

void IgnoreBrokenPipe() {}  // no SIGPIPE: a write to a closed pipe or socket fails with an error

}  // namespace trtwatch
