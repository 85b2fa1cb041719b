#include "platform/file_sender.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "platform/process_limits.h"
#include "support/temp_dir_test.h"

namespace trtwatch {
namespace {

using SendOutcome = FileSender::Sent::Outcome;

class FileSenderTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    ::fcntl(fds_[0], F_SETFL, ::fcntl(fds_[0], F_GETFL) | O_NONBLOCK);  // as the service's sockets
  }
  void TearDown() override {
    for (int fd : fds_) ::close(fd);
    TempDirTest::TearDown();
  }
  std::string File(const std::string& bytes) {
    const std::string path = dir_ + "/engine";
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string Received(size_t n) {
    std::string got(n, '\0');
    size_t at = 0;
    while (at < n) {
      const ssize_t r = ::read(fds_[1], got.data() + at, n - at);
      if (r <= 0) break;
      at += static_cast<size_t>(r);
    }
    got.resize(at);
    return got;
  }
  int fds_[2] = {-1, -1};  // [0]: the service's end, [1]: the client's
};

TEST_F(FileSenderTest, SendsTheFileFromTheOffsetInPieces) {
  std::string bytes;
  for (int i = 0; i < 5000; ++i) bytes += std::to_string(i) + ",";
  FileSenderOpening opened = FileSender::Open(File(bytes), 100);
  ASSERT_TRUE(opened.sender) << opened.error;
  std::string got;
  for (size_t left = bytes.size() - 100; left > 0;) {
    const FileSender::Sent sent = opened.sender->SendTo(fds_[0], std::min<size_t>(left, 1000));
    ASSERT_EQ(sent.outcome, SendOutcome::kSent) << sent.error;
    got += Received(sent.bytes);
    left -= sent.bytes;
  }
  EXPECT_EQ(got, bytes.substr(100));  // every byte once, in order (a Range request's bytes)
  EXPECT_EQ(opened.sender->SendTo(fds_[0], 10).outcome, SendOutcome::kEndOfFile);  // the file ends here
}

TEST_F(FileSenderTest, AFullSocketSaysWouldBlockAndSendsOnOnceDrained) {
  const std::string bytes(8 << 20, 'e');
  FileSenderOpening opened = FileSender::Open(File(bytes), 0);
  ASSERT_TRUE(opened.sender) << opened.error;
  size_t sent_total = 0;
  FileSender::Sent sent;
  while ((sent = opened.sender->SendTo(fds_[0], bytes.size() - sent_total)).outcome == SendOutcome::kSent) {
    sent_total += sent.bytes;
  }
  ASSERT_EQ(sent.outcome, SendOutcome::kWouldBlock) << sent.error;  // the client reads nothing: its buffer is full
  ASSERT_LT(sent_total, bytes.size());
  EXPECT_EQ(Received(sent_total), bytes.substr(0, sent_total));
  EXPECT_EQ(opened.sender->SendTo(fds_[0], bytes.size() - sent_total).outcome, SendOutcome::kSent);
}

TEST_F(FileSenderTest, AClientThatLeftIsAFailureNotASignal) {
  IgnoreBrokenPipe();  // as the service does at start: the error comes back as EPIPE
  FileSenderOpening opened = FileSender::Open(File("engine bytes"), 0);
  ASSERT_TRUE(opened.sender) << opened.error;
  ::close(fds_[1]);
  fds_[1] = -1;
  const FileSender::Sent sent = opened.sender->SendTo(fds_[0], 12);
  EXPECT_EQ(sent.outcome, SendOutcome::kFailed);
  EXPECT_FALSE(sent.error.empty());
}

TEST_F(FileSenderTest, AMissingFileIsNamed) {
  const FileSenderOpening opened = FileSender::Open(dir_ + "/gone.engine", 0);
  EXPECT_FALSE(opened.sender);
  EXPECT_NE(opened.error.find("gone.engine"), std::string::npos) << opened.error;
}

}  // namespace
}  // namespace trtwatch
