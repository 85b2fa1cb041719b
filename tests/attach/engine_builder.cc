// A program that builds TensorRT engines the ways real programs do, for `trtwatch run`'s
// tests (tests/e2e/test_attach.py). Built against the ABI test double
// (tests/tensorrt_abi_double) once per major version, twice: loading libnvinfer.so.N
// with dlopen + dlsym("createInferBuilder_INTERNAL") as trtexec does
// (TRTWATCH_LOAD_BY_DLOPEN), and linked to it.
//
// usage: engine_builder [--builds N] [--threads T] [--own-monitor] [--own-cancel-at S]
//                       [--fork] [--call serialized|engine]
// --fork: after its builds, the program forks a child that makes the same builds.
// Prints one line per build ("build K: built" / "build K: failed") and a summary line;
// exits 0 when every build gave an engine, 3 otherwise.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#ifdef TRTWATCH_LOAD_BY_DLOPEN
#include <dlfcn.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include "attach/abi/nvinfer_abi.h"
#include "attach/build_one.h"

namespace {

using namespace trtwatch_test;

struct Options {
  int builds = 1;
  int threads = 1;
  bool own_monitor = false;
  int own_cancel_at = -1;
  bool fork_child = false;
  std::string call = "serialized";
};

CreateBuilder LoadTensorRt() {
#ifdef TRTWATCH_LOAD_BY_DLOPEN
  const std::string name = "libnvinfer.so." + std::to_string(TRTWATCH_ATTACH_MAJOR);
  void* handle = dlopen(name.c_str(), RTLD_LAZY);
  if (handle == nullptr) {
    std::fprintf(stderr, "engine_builder: cannot load %s: %s\n", name.c_str(), dlerror());
    std::exit(4);
  }
  return reinterpret_cast<CreateBuilder>(dlsym(handle, "createInferBuilder_INTERNAL"));
#else
  return &createInferBuilder_INTERNAL;
#endif
}

Options Parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (arg == "--builds") options.builds = std::atoi(next().c_str());
    else if (arg == "--threads") options.threads = std::atoi(next().c_str());
    else if (arg == "--own-monitor") options.own_monitor = true;
    else if (arg == "--own-cancel-at") options.own_monitor = true, options.own_cancel_at = std::atoi(next().c_str());
    else if (arg == "--fork") options.fork_child = true;
    else if (arg == "--call") options.call = next();
  }
  return options;
}

int RunBuilds(const Options& options) {
  const CreateBuilder create = options.builds > 0 ? LoadTensorRt() : nullptr;
  CountingLogger logger;
  OwnMonitor own(options.own_cancel_at);
  std::atomic<int> next{0}, built{0};
  std::mutex print_mu;
  const auto worker = [&] {
    for (int k = next.fetch_add(1); k < options.builds; k = next.fetch_add(1)) {
      const bool ok = BuildOne(create, logger, options.own_monitor ? &own : nullptr, options.call);
      built += ok ? 1 : 0;
      std::lock_guard<std::mutex> lock(print_mu);
      std::printf("build %d: %s\n", k + 1, ok ? "built" : "failed");
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < options.threads; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  std::printf("built %d of %d; logger got %d messages; own monitor: %d starts, %d steps, %d finishes\n",
              built.load(), options.builds, logger.messages.load(), own.starts.load(), own.steps.load(),
              own.finishes.load());
  std::fflush(stdout);
  return built.load() == options.builds ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = Parse(argc, argv);
  const int own = RunBuilds(options);
  if (!options.fork_child) return own;
  // The child inherits a process that has built (and was watched) already.
  const pid_t child = fork();
  if (child == 0) std::_Exit(RunBuilds(options));
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
