// What HttpEndpoint (mcp/http_endpoint.h) keeps per MCP session and per POST waiting
// for its answer: shared by the endpoint, which owns the sessions, and its Beast side
// (mcp/http_beast.cc), which writes the answers.
//
// Threading: the service's event-loop thread only.
#pragma once

#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "mcp/session.h"

namespace trtwatch::mcp {

// One POST's answer, waiting to be written.
struct HttpChannel {
  explicit HttpChannel(const boost::asio::any_io_executor& executor) : wake(executor) {}
  boost::asio::steady_timer wake;
  std::deque<std::string> messages;  // serialised, not yet written
  bool done = false;                 // the response is among them
};

// One MCP session and the POSTs waiting for its answers.
struct HttpSession {
  ~HttpSession() {
    session.reset();  // sends nothing more
    for (auto& [key, channel] : channels) {  // their streams end
      channel->done = true;
      channel->wake.cancel();
    }
  }
  bool busy() const { return !channels.empty(); }  // a request in flight: never evicted
  std::unique_ptr<Session> session;
  std::string user;  // who initialized it (Caller::name): only they may use it
  std::map<std::string, HttpChannel*> channels;  // IdKey(request id) -> the POST waiting for it
};

}  // namespace trtwatch::mcp
