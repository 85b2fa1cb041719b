#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/change_watch.h"

#include <chrono>
#include <string>

namespace trtwatch::builds {

namespace asio = boost::asio;

namespace {
constexpr std::chrono::seconds kListenRetry{1};  // a lost session is opened again this often
}  // namespace

ChangeWatch::ChangeWatch(asio::io_context& io, ChangeFeed& feed, OnChanges on_changes,
                         std::function<void()> on_resumed)
    : io_(io), feed_(feed), on_changes_(std::move(on_changes)), on_resumed_(std::move(on_resumed)), retry_(io) {}

ChangeWatch::~ChangeWatch() {
  *alive_ = false;
  ReleaseSocket();
}

void ChangeWatch::Start() { Open(); }

void ChangeWatch::ReleaseSocket() {
  if (!socket_) return;
  boost::system::error_code ignored;
  socket_->cancel(ignored);
  socket_->release();  // the feed's: libpq closes it
  socket_.reset();
}

void ChangeWatch::Open() {
  std::string error;
  const int fd = feed_.Listen(&error);
  if (fd < 0) {
    retry_.expires_after(kListenRetry);
    retry_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
      if (!ec && *alive) Open();
    });
    return;
  }
  socket_ = std::make_unique<asio::posix::stream_descriptor>(io_, fd);
  on_resumed_();
  Wait();
}

void ChangeWatch::Wait() {
  auto on_readable = [this, alive = alive_](const boost::system::error_code& ec) {
    if (!*alive || ec == asio::error::operation_aborted) return;  // released: the watch may be gone
    std::vector<StoreChange> changes;
    if (ec || !feed_.Drain(&changes)) return Lost();
    if (!changes.empty()) on_changes_(changes);
    Wait();
  };
  socket_->async_wait(asio::posix::stream_descriptor::wait_read, std::move(on_readable));
}

void ChangeWatch::Lost() {
  ReleaseSocket();
  feed_.Close();
  retry_.expires_after(kListenRetry);
  retry_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (!ec && *alive) Open();
  });
}

}  // namespace trtwatch::builds
