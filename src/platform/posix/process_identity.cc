#include "platform/process_identity.h"

#include <unistd.h>

namespace trtwatch {

ProcessIdentity ThisProcess() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return {host, static_cast<long>(::getpid())};
}

}  // namespace trtwatch
