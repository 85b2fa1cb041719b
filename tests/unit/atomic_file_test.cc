#include "platform/atomic_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "platform/file_pieces.h"
#include "support/temp_dir_test.h"

namespace trtwatch {
namespace {

class AtomicFileTest : public testing::TempDirTest {};

TEST_F(AtomicFileTest, WritesTheWholeFileAndLeavesNoTemporary) {
  std::string error;
  const std::string target = dir_ + "/model.engine";
  const std::string data(3 * 65536 + 17, 'x');
  ASSERT_TRUE(WriteFileAtomically(target, data, &error)) << error;
  EXPECT_EQ(Read(target), data);
  EXPECT_EQ(Entries(), std::vector<std::string>{"model.engine"});
}

TEST_F(AtomicFileTest, TargetKeepsItsOldContentUntilCommit) {
  const std::string target = dir_ + "/model.engine";
  std::string error;
  ASSERT_TRUE(WriteFileAtomically(target, "old", &error)) << error;
  auto file = AtomicFile::Create(target, &error);
  ASSERT_NE(file, nullptr) << error;
  ASSERT_TRUE(file->Write("new engine", 10, &error)) << error;
  EXPECT_EQ(Read(target), "old");
  EXPECT_EQ(file->temp_path().rfind(dir_ + "/.model.engine.trtwatch-", 0), 0u) << file->temp_path();
  ASSERT_TRUE(file->Commit(&error)) << error;
  EXPECT_EQ(Read(target), "new engine");
  EXPECT_EQ(Entries().size(), 1u);
}

// Two writers of one name at once (a model's first uploads on two replicas): the
// first commit stays, the second leaves nothing of its own behind.
TEST_F(AtomicFileTest, CommitIfAbsentKeepsTheFirstWritersFile) {
  const std::string target = dir_ + "/.owner";
  std::string error;
  auto first = AtomicFile::Create(target, &error);
  auto second = AtomicFile::Create(target, &error);
  ASSERT_TRUE(first && second) << error;
  ASSERT_TRUE(first->Write("bo\n", 3, &error) && second->Write("bea\n", 4, &error)) << error;
  EXPECT_TRUE(first->CommitIfAbsent());
  EXPECT_FALSE(second->CommitIfAbsent());
  EXPECT_EQ(Read(target), "bo\n");
  EXPECT_EQ(Entries(), std::vector<std::string>{".owner"});
}

TEST_F(AtomicFileTest, AbandonedFileRemovesItsTemporaryAndKeepsTheTarget) {
  const std::string target = dir_ + "/model.engine";
  std::string error;
  ASSERT_TRUE(WriteFileAtomically(target, "old", &error)) << error;
  {
    auto file = AtomicFile::Create(target, &error);
    ASSERT_NE(file, nullptr) << error;
    ASSERT_TRUE(file->Write("half an eng", 11, &error));
    EXPECT_EQ(Entries().size(), 2u);
  }  // cancelled build: never committed
  EXPECT_EQ(Read(target), "old");
  EXPECT_EQ(Entries(), std::vector<std::string>{"model.engine"});
}

TEST_F(AtomicFileTest, NewFileGetsUmaskPermissionsNotPrivateOnes) {
  const mode_t old_mask = ::umask(022);
  std::string error;
  const std::string target = dir_ + "/model.engine";
  ASSERT_TRUE(WriteFileAtomically(target, "x", &error)) << error;
  ::umask(old_mask);
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST_F(AtomicFileTest, MissingFolderIsNamedWithTheFix) {
  std::string error;
  EXPECT_FALSE(WriteFileAtomically(dir_ + "/no/such/model.engine", "x", &error));
  EXPECT_NE(error.find(dir_ + "/no/such"), std::string::npos) << error;
  EXPECT_NE(error.find("create the folder"), std::string::npos) << error;
}

TEST_F(AtomicFileTest, FolderAsTargetIsRefused) {
  std::string error;
  EXPECT_FALSE(WriteFileAtomically(dir_, "x", &error));
  EXPECT_NE(error.find("is a folder"), std::string::npos) << error;
  EXPECT_TRUE(Entries().empty());
}

TEST_F(AtomicFileTest, WriteFailureMidFileLeavesNothingBehind) {
  // A full disk, reproduced with a file size limit (EFBIG instead of ENOSPC: the
  // same path through the code) in a child process, so the limit stays there.
  const std::string target = dir_ + "/model.engine";
  std::string error;
  ASSERT_TRUE(WriteFileAtomically(target, "old", &error)) << error;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    std::string message;
    const bool ok = WriteFileAtomically(target, std::string(100000, 'e'), &message);
    const bool named = message.find("cannot write \"" + target + "\"") != std::string::npos;
    std::_Exit(!ok && named ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(Read(target), "old");
  EXPECT_EQ(Entries(), std::vector<std::string>{"model.engine"});
}

TEST_F(AtomicFileTest, CopyPiecesSaysAfterEachPieceWhatCanBeReadBack) {
  std::string source(2 * AtomicFile::kCopyPiece + 10, 's');
  for (size_t at = 0; at < source.size(); at += 4096) source[at] = static_cast<char>(at / 4096 % 251);
  std::string error;
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/source", source, &error)) << error;
  const std::unique_ptr<AtomicFile> file = AtomicFile::Create(dir_ + "/copy", &error);
  ASSERT_TRUE(file) << error;
  FileFollower placed(file->temp_path());
  ASSERT_TRUE(placed.error().empty()) << placed.error();
  std::vector<uint64_t> told;
  std::string read_back;
  const CopiedPieces copied = file->CopyPieces(dir_ + "/source", [&](uint64_t bytes) {
    told.push_back(bytes);
    EXPECT_TRUE(placed.ReadTo(bytes, [&](std::string_view piece) { read_back.append(piece); })) << placed.error();
  });
  ASSERT_TRUE(copied.ok) << copied.error;
  EXPECT_EQ(copied.bytes, source.size());
  EXPECT_EQ(told, (std::vector<uint64_t>{AtomicFile::kCopyPiece, 2 * AtomicFile::kCopyPiece, source.size()}));
  EXPECT_EQ(read_back, source);  // every byte, each piece as soon as it was said to be there
  EXPECT_FALSE(placed.ReadTo(source.size() + 1, [](std::string_view) {}));  // nothing past the end
  EXPECT_NE(placed.error().find("ended at " + std::to_string(source.size()) + " bytes"), std::string::npos)
      << placed.error();
  ASSERT_TRUE(file->Commit(&error)) << error;
  EXPECT_EQ(Read(dir_ + "/copy"), source);
}

TEST_F(AtomicFileTest, CopyPiecesOfAMissingSourceLeavesNothingBehind) {
  std::string error;
  const std::unique_ptr<AtomicFile> file = AtomicFile::Create(dir_ + "/copy", &error);
  ASSERT_TRUE(file) << error;
  const CopiedPieces copied = file->CopyPieces(dir_ + "/missing", nullptr);
  EXPECT_FALSE(copied.ok);
  EXPECT_NE(copied.error.find("cannot open \"" + dir_ + "/missing\" to copy it"), std::string::npos) << copied.error;
  EXPECT_TRUE(Entries().empty());
}

TEST_F(AtomicFileTest, ReadWholeFileReportsMissingFiles) {
  std::string data, error;
  int err = 0;
  EXPECT_FALSE(ReadWholeFile(dir_ + "/missing.cache", &data, &error, &err));
  EXPECT_EQ(err, ENOENT);
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/c", std::string("a\0b", 3), &error));
  ASSERT_TRUE(ReadWholeFile(dir_ + "/c", &data, &error)) << error;
  EXPECT_EQ(data, std::string("a\0b", 3));
}

}  // namespace
}  // namespace trtwatch
