// The Win32 platform layer (src/platform/win32), run under Wine in CI: atomic replace
// with MoveFileExW and UTF-8 paths, path checks, library names and LoadLibraryW,
// the console checks on redirected handles, and console control events.
#include <gtest/gtest.h>
#include <windows.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "platform/atomic_file.h"
#include "platform/file_access.h"
#include "platform/nvml.h"
#include "platform/process_limits.h"
#include "platform/shared_library.h"
#include "platform/signal_watch.h"
#include "platform/terminal.h"
#include "runner/output_mode.h"

namespace trtwatch {
namespace {

namespace fs = std::filesystem;

// A fresh folder under %TEMP%, removed afterwards.
class Win32TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trtwatch-test-" + std::to_string(GetCurrentProcessId()) + "-" +
                                        std::to_string(GetTickCount64()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // The UTF-8 path trtwatch's interfaces take.
  std::string Utf8(const fs::path& p) const {
    const std::u8string s = p.u8string();
    return std::string(s.begin(), s.end());
  }
  std::vector<std::wstring> Entries() const {
    std::vector<std::wstring> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().wstring());
    return names;
  }
  static std::string Read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

using AtomicFileWin32Test = Win32TempDir;

TEST_F(AtomicFileWin32Test, ReplacesAnExistingFileAndLeavesNoTemporary) {
  const fs::path target = dir_ / "model.engine";
  std::string error;
  ASSERT_TRUE(WriteFileAtomically(Utf8(target), "old engine", &error)) << error;
  EXPECT_EQ(Read(target), "old engine");
  // MoveFileEx without MOVEFILE_REPLACE_EXISTING fails here: the target exists.
  ASSERT_TRUE(WriteFileAtomically(Utf8(target), std::string("new\r\nengine\n\0bytes", 18), &error)) << error;
  EXPECT_EQ(Read(target), std::string("new\r\nengine\n\0bytes", 18));  // binary: no newline translation
  EXPECT_EQ(Entries(), std::vector<std::wstring>{L"model.engine"});
}

TEST_F(AtomicFileWin32Test, UncommittedFileLeavesTheTargetUntouched) {
  const fs::path target = dir_ / "model.engine";
  std::string error;
  ASSERT_TRUE(WriteFileAtomically(Utf8(target), "complete", &error)) << error;
  {
    std::unique_ptr<AtomicFile> file = AtomicFile::Create(Utf8(target), &error);
    ASSERT_NE(file, nullptr) << error;
    ASSERT_TRUE(file->Write("partial", 7, &error)) << error;
    EXPECT_EQ(Entries().size(), 2u);  // the target and the temporary
  }  // a cancelled build: never committed
  EXPECT_EQ(Read(target), "complete");
  EXPECT_EQ(Entries(), std::vector<std::wstring>{L"model.engine"});
}

TEST_F(AtomicFileWin32Test, NonAsciiPathsAreUtf8) {
  const fs::path target = dir_ / L"\u043c\u043e\u0434\u0435\u043b\u044c-\u00fc.engine";  // модель-ü.engine
  std::string error;
  ASSERT_TRUE(WriteFileAtomically(Utf8(target), "engine", &error)) << error;
  EXPECT_TRUE(fs::exists(target));
  std::string data;
  ASSERT_TRUE(ReadWholeFile(Utf8(target), &data, &error)) << error;
  EXPECT_EQ(data, "engine");
  EXPECT_EQ(InspectPath(Utf8(target)).kind, PathKind::kFile);
}

TEST_F(AtomicFileWin32Test, FoldersAndMissingFoldersAreExplained) {
  std::string error;
  EXPECT_EQ(AtomicFile::Create(Utf8(dir_), &error), nullptr);
  EXPECT_NE(error.find("is a folder"), std::string::npos) << error;
  const std::string missing = Utf8(dir_ / "no-such-folder" / "model.engine");
  EXPECT_EQ(AtomicFile::Create(missing, &error), nullptr);
  EXPECT_NE(error.find("create the folder first"), std::string::npos) << error;
  int err = 0;
  std::string data;
  EXPECT_FALSE(ReadWholeFile(missing, &data, &error, &err));
  EXPECT_EQ(err, ENOENT);
}

TEST_F(AtomicFileWin32Test, BackslashPathsKeepTheTemporaryInTheTargetsFolder) {
  std::string target = Utf8(dir_ / "sub");
  fs::create_directories(dir_ / "sub");
  target += "\\model.engine";
  std::string error;
  std::unique_ptr<AtomicFile> file = AtomicFile::Create(target, &error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(file->temp_path().rfind(Utf8(dir_ / "sub") + "\\.model.engine.trtwatch-", 0), 0u) << file->temp_path();
  ASSERT_TRUE(file->Write("x", 1, &error) && file->Commit(&error)) << error;
  EXPECT_EQ(Read(dir_ / "sub" / "model.engine"), "x");
}

using FileAccessWin32Test = Win32TempDir;

TEST_F(FileAccessWin32Test, KindsAndAccess) {
  const fs::path file = dir_ / "model.onnx";
  std::ofstream(file) << "onnx";
  EXPECT_EQ(InspectPath(Utf8(file)).kind, PathKind::kFile);
  EXPECT_EQ(InspectPath(Utf8(dir_)).kind, PathKind::kFolder);
  const PathStatus missing = InspectPath(Utf8(dir_ / "missing.onnx"));
  EXPECT_EQ(missing.kind, PathKind::kMissing);
  EXPECT_TRUE(missing.not_found);
  EXPECT_FALSE(missing.error.empty());
  std::string error;
  EXPECT_TRUE(CanAccess(Utf8(file), Access::kRead, &error)) << error;
  EXPECT_TRUE(CanAccess(Utf8(dir_), Access::kWrite, &error)) << error;
  EXPECT_FALSE(CanAccess(Utf8(dir_ / "missing"), Access::kWrite, &error));
  EXPECT_FALSE(error.empty());
}

TEST(ProcessLimitsWin32Test, TheStreamLimitIsRaisedAndReported) {
  const int before = _getmaxstdio();
  const int64_t limit = RaiseOpenFileLimit();
  EXPECT_EQ(limit, _getmaxstdio());
  EXPECT_GE(limit, before);
  EXPECT_GE(limit, 2048);
  EXPECT_EQ(RaiseOpenFileLimit(), limit);
  IgnoreBrokenPipe();  // nothing to do on Windows, and nothing breaks
}

TEST(SharedLibraryWin32Test, NamesFollowNvidiasWindowsFiles) {
  EXPECT_EQ(TensorRtLibraryName("nvinfer", 10), "nvinfer_10.dll");
  EXPECT_EQ(TensorRtLibraryName("nvonnxparser", 11), "nvonnxparser_11.dll");
  EXPECT_EQ(TensorRtLibraryName("nvinfer", 0), "nvinfer.dll");
  EXPECT_STREQ(kNvmlLibrary, "nvml.dll");
}

TEST(SharedLibraryWin32Test, LoadsBySearchAndReportsWhatIsMissing) {
  std::string error;
  std::unique_ptr<SharedLibrary> kernel = SharedLibrary::Open("kernel32.dll", &error);
  ASSERT_NE(kernel, nullptr) << error;
  EXPECT_NE(kernel->Symbol("GetTickCount64"), nullptr);
  EXPECT_EQ(kernel->Symbol("NoSuchFunctionInKernel32"), nullptr);
  std::string path = kernel->Path();
  for (char& c : path) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_NE(path.find("kernel32.dll"), std::string::npos) << path;

  EXPECT_EQ(SharedLibrary::Open("trtwatch-no-such-library.dll", &error), nullptr);
  EXPECT_NE(error.find("trtwatch-no-such-library.dll"), std::string::npos) << error;
}

TEST(NvmlWin32Test, MissingNvmlIsReportedNotFatal) {
  const NvmlReport report = QueryNvml("trtwatch-no-such-nvml.dll");
  EXPECT_FALSE(report.loaded);
  EXPECT_NE(report.error.find("trtwatch-no-such-nvml.dll"), std::string::npos) << report.error;
}

TEST(TerminalWin32Test, RedirectedHandlesAreNotTerminals) {
  // ctest captures the output: a pipe, never a console with escape sequences.
  EXPECT_FALSE(IsTerminal(1));
  const TerminalSize size = QueryTerminalSize(1);
  EXPECT_GT(size.columns, 0);
  EXPECT_TRUE(IsForeground(1));
  // Nothing to restore, twice: harmless.
  { ConsoleSetup setup(/*escape_sequences=*/true); }
  RestoreConsole();
  RestoreConsole();
}

TEST(TerminalWin32Test, WriteAllWritesEveryByteToAFile) {
  const fs::path file = fs::temp_directory_path() / ("trtwatch-writeall-" + std::to_string(GetCurrentProcessId()));
  FILE* f = _wfopen(file.c_str(), L"wb");
  ASSERT_NE(f, nullptr);
  const std::string text(200000, 'x');
  EXPECT_TRUE(WriteAll(_fileno(f), text.data(), text.size()));
  std::fclose(f);
  EXPECT_EQ(fs::file_size(file), text.size());
  fs::remove(file);
}

bool UnderWine() {
  const HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  return ntdll != nullptr && GetProcAddress(ntdll, "wine_get_version") != nullptr;
}

// Console control events: Ctrl+C and Ctrl+Break arrive as kInterrupt on the watch's
// thread. GenerateConsoleCtrlEvent needs a console: one is made if there is none.
TEST(SignalWatchWin32Test, CtrlCAndCtrlBreakInterrupt) {
  if (GetConsoleWindow() == nullptr && !AllocConsole() && GetLastError() != ERROR_ACCESS_DENIED) {
    GTEST_SKIP() << "no console to send control events to (AllocConsole failed: " << GetLastError() << ")";
  }
  std::mutex mu;
  std::vector<ProcessSignal> seen;
  std::atomic<int> count{0};
  std::atomic<DWORD> thread_id{0};
  {
    SignalWatch watch(
        [&](ProcessSignal s) {
          std::lock_guard<std::mutex> lock(mu);
          seen.push_back(s);
          thread_id = GetCurrentThreadId();
          ++count;
        },
        /*watch_terminal_signals=*/true);
    for (DWORD event : {CTRL_C_EVENT, CTRL_BREAK_EVENT}) {
      const int before = count.load();
      if (!GenerateConsoleCtrlEvent(event, 0)) {
        const DWORD err = GetLastError();
        // Wine without a display gives a console that cannot deliver control events
        // (error 12); Windows always can. Say so rather than pretend.
        if (UnderWine()) GTEST_SKIP() << "Wine's headless console cannot send control events (error " << err << ")";
        FAIL() << "GenerateConsoleCtrlEvent failed: error " << err;
      }
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (count.load() == before && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(seen, (std::vector<ProcessSignal>{ProcessSignal::kInterrupt, ProcessSignal::kInterrupt}));
  EXPECT_NE(thread_id.load(), GetCurrentThreadId());
  EXPECT_STREQ(SignalName(ProcessSignal::kInterrupt), "Ctrl+C");
}

}  // namespace
}  // namespace trtwatch

namespace trtwatch {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// tests/unit/output_mode_test.cc holds the rules; these are where Windows differs.
TEST(OutputModeWin32Test, AConsoleIsSmartWithoutTermAndTakesUtf8) {
  std::string error;
  OutputFlags flags;
  std::optional<OutputMode> mode = ResolveOutputMode(flags, Env({}), /*stderr_is_terminal=*/true, &error);
  ASSERT_TRUE(mode) << error;
  EXPECT_EQ(mode->progress, ProgressMode::kTty);
  EXPECT_TRUE(mode->color);
  EXPECT_TRUE(mode->unicode);
  mode = ResolveOutputMode(flags, Env({{"TERM", "dumb"}}), true, &error);
  ASSERT_TRUE(mode) << error;
  EXPECT_EQ(mode->progress, ProgressMode::kPlain);
  mode = ResolveOutputMode(flags, Env({{"CI", "true"}}), true, &error);
  ASSERT_TRUE(mode) << error;
  EXPECT_EQ(mode->progress, ProgressMode::kPlain);
  EXPECT_FALSE(mode->unicode);  // plain output stays ASCII unless the locale says otherwise
  mode = ResolveOutputMode(flags, Env({}), /*stderr_is_terminal=*/false, &error);
  ASSERT_TRUE(mode) << error;
  EXPECT_EQ(mode->progress, ProgressMode::kPlain);
}

}  // namespace
}  // namespace trtwatch
