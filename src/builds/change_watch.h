// ChangeWatch: a store's change feed (builds/stores/change_feed.h) on the event loop:
// the feed's socket is watched by Asio (no thread of its own), and what arrives is
// handed to `on_changes`. When the session is lost (a server restart, the network) it
// is opened again every second until it is back; `on_resumed` then runs, since what
// was sent meanwhile is lost and must be read from the store.
//
// The socket belongs to the feed (libpq closes it): the watch never closes it, and
// releases it before the feed drops its session.
//
// Threading: the event loop's thread only (the manager's); the feed outlives the watch.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "builds/stores/change_feed.h"

namespace trtwatch::builds {

class ChangeWatch {
 public:
  using OnChanges = std::function<void(const std::vector<StoreChange>&)>;
  ChangeWatch(boost::asio::io_context& io, ChangeFeed& feed, OnChanges on_changes, std::function<void()> on_resumed);
  ~ChangeWatch();
  ChangeWatch(const ChangeWatch&) = delete;
  ChangeWatch& operator=(const ChangeWatch&) = delete;

  // Opens the feed's session and starts watching it.
  void Start();

 private:
  void Open();
  void Wait();
  void Lost();
  void ReleaseSocket();

  boost::asio::io_context& io_;
  ChangeFeed& feed_;
  const OnChanges on_changes_;
  const std::function<void()> on_resumed_;
  std::unique_ptr<boost::asio::posix::stream_descriptor> socket_;  // the feed's; released, never closed
  boost::asio::steady_timer retry_;
  // False once the watch is gone: a completion already queued then touches nothing.
  const std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace trtwatch::builds
