#include "service/http_transfer.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/read.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "builds/artifacts/artifact_store.h"
#include "platform/file_sender.h"
#include "service/http_request.h"
#include "service/http_wire.h"

namespace trtwatch::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
using asio::use_awaitable;

namespace {

constexpr size_t kUploadChunk = 256 * 1024;  // an upload's bytes in memory at a time
constexpr size_t kSendFileMax = 8u << 20;    // bytes one sendfile call may send (the socket takes less)

awaitable<bool> SendError(ApiContext& api, beast::tcp_stream& stream, int status, const std::string& message,
                          bool keep_alive) {
  co_return co_await Send(stream, ToResponse(ErrorAnswer(status, message)), keep_alive, false, api.metrics);
}

// An upload the service could not store. The client learns what happened and what to do,
// never the server's paths; the service's log gets the details (`detail` names them).
// A full disk is 507 Insufficient Storage (RFC 4918 §11.5), anything else 500.
awaitable<bool> SendStoreFailure(ApiContext& api, beast::tcp_stream& stream, const UploadTarget& target,
                                 bool out_of_space, const std::string& detail, bool keep_alive) {
  std::fprintf(stderr, "trtwatch serve: the upload of %s for model \"%s\" failed: %s\n", target.file.c_str(),
               target.model.c_str(), detail.c_str());
  const std::string what = "the service could not store " + target.file + " of model \"" + target.model + "\"";
  if (out_of_space) {
    co_return co_await SendError(api, stream, 507,
                                 what + ": its disk is full (nothing was stored); free space on the volume of the "
                                        "service's --artifact-dir, or remove models no longer needed (DELETE /models/"
                                        "NAME), then send it again",
                                 keep_alive);
  }
  co_return co_await SendError(api, stream, 500,
                               what + " (a file system error on the server: its log says which; nothing was "
                                      "stored); send it again, or ask the service's operator",
                               keep_alive);
}

// Reads the rest of an upload's body into `upload`; false once an answer was sent or
// the client went away (the connection closes).
awaitable<bool> ReadUploadBody(ApiContext& api, beast::tcp_stream& stream, beast::flat_buffer& buffer,
                               http::request_parser<http::buffer_body>& parser, const UploadTarget& target,
                               builds::Upload& upload) {
  std::vector<char> chunk(kUploadChunk);
  boost::system::error_code ec;
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    stream.expires_after(kIdleTimeout);
    co_await http::async_read_some(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
    if (ec == http::error::need_buffer) ec = {};
    const size_t received = chunk.size() - parser.get().body().size;
    if (received > 0) {
      if (const Status written = upload.Write(std::string_view(chunk.data(), received)); !written.ok()) {
        co_await SendStoreFailure(api, stream, target, upload.out_of_space(), written.error(), false);
        co_return false;  // the upload's temporary file goes with it
      }
    }
    if (ClientWentAway(ec)) co_return false;
    if (ec) {
      co_await Send(stream, ToResponse(BodyReadError(ec, api.options.max_upload_size, api.options)), false, false,
                    api.metrics);
      co_return false;
    }
  }
  co_return true;
}

// Waits until `socket` takes bytes again, or kWriteTimeout (then: timed_out).
awaitable<boost::system::error_code> WaitWritable(tcp::socket& socket) {
  struct Wait {
    bool over = false;  // the socket's wait ended: the deadline may not touch it
    bool expired = false;
  };
  auto wait = std::make_shared<Wait>();  // the deadline's handler may run after this frame is gone
  asio::steady_timer deadline(socket.get_executor(), kWriteTimeout);
  deadline.async_wait([&socket, wait](const boost::system::error_code& e) {
    if (e || wait->over) return;
    wait->expired = true;
    socket.cancel();
  });
  boost::system::error_code ec;
  co_await socket.async_wait(tcp::socket::wait_write, asio::redirect_error(use_awaitable, ec));
  wait->over = true;
  deadline.cancel();
  co_return wait->expired ? boost::system::error_code(asio::error::timed_out) : ec;
}

// `length` bytes of `file`, sent by the kernel, waiting for the socket whenever its
// buffer is full: a client that takes nothing for kWriteTimeout is gone.
awaitable<bool> SendFileRange(beast::tcp_stream& stream, FileSender& file, uint64_t length) {
  tcp::socket& socket = stream.socket();
  boost::system::error_code ec;
  socket.native_non_blocking(true, ec);
  while (length > 0 && !ec) {
    const FileSender::Sent sent =
        file.SendTo(socket.native_handle(), static_cast<size_t>(std::min<uint64_t>(length, kSendFileMax)));
    switch (sent.outcome) {
      case FileSender::Sent::Outcome::kSent:
        length -= sent.bytes;
        break;
      case FileSender::Sent::Outcome::kWouldBlock:
        ec = co_await WaitWritable(socket);
        break;
      case FileSender::Sent::Outcome::kEndOfFile:  // the file shrank: the length sent cannot be kept
      case FileSender::Sent::Outcome::kFailed:     // the client went away
        co_return false;
    }
  }
  co_return !ec;
}

}  // namespace

awaitable<bool> ReceiveUpload(ApiContext& api, beast::tcp_stream& stream, beast::flat_buffer& buffer,
                              http::request_parser<http::string_body>& head_parser, const Route& route,
                              const ExpectedDigest& expected, bool expects_continue, std::string caller) {
  const bool keep_alive = head_parser.get().keep_alive() && !api.stopping;
  const UploadTarget target = UploadTargetOf(route);
  bool bad_name = false;
  std::string error;
  std::unique_ptr<builds::Upload> upload =
      api.artifacts.BeginUpload(target.model, target.file, caller, &bad_name, &error);
  if (!upload) {
    if (bad_name) {
      co_await SendError(api, stream, 400, error, false);
    } else {
      co_await SendStoreFailure(api, stream, target, false, error, false);
    }
    co_return false;
  }
  http::request_parser<http::buffer_body> parser(std::move(head_parser));
  parser.body_limit(api.options.max_upload_size);  // a chunked body is cut off there (RFC 9110 §15.5.14)
  if (!parser.is_done() && expects_continue) co_await SendContinue(stream);
  // Beast reads into `buffer` what its capacity allows, beyond 512 bytes only as it
  // grows: at its bounded size from the start, each read takes up to 32 KiB.
  buffer.reserve(buffer.max_size());
  if (!co_await ReadUploadBody(api, stream, buffer, parser, target, *upload)) co_return false;
  builds::StoredFile stored;
  switch (upload->Commit(expected.sha256, &stored, &error)) {
    case builds::Upload::Outcome::kDigestMismatch:
      co_return co_await SendError(api, stream, 400, error, keep_alive);
    case builds::Upload::Outcome::kNoSpace:
    case builds::Upload::Outcome::kFailed:
      co_return co_await SendStoreFailure(api, stream, target, upload->out_of_space(), error, keep_alive);
    case builds::Upload::Outcome::kStored:
      break;
  }
  co_return co_await Send(stream, ToResponse(UploadedAnswer(api, target, stored, caller)), keep_alive, false, api.metrics);
}

awaitable<bool> SendDownload(ApiContext& api, beast::tcp_stream& stream, const DownloadPlan& plan, bool keep_alive,
                             bool head_only) {
  switch (plan.kind) {
    case DownloadPlan::Kind::kAnswer:
      co_return co_await Send(stream, ToResponse(plan.answer), keep_alive, head_only, api.metrics);
    case DownloadPlan::Kind::kNotModified:  // RFC 9110 §13.1.2: 304 for GET and HEAD
      co_return co_await SendHeader(stream, ToHeadResponse(plan.answer), keep_alive, api.metrics) && keep_alive;
    case DownloadPlan::Kind::kFile:
      break;
  }
  HeadResponse res = ToHeadResponse(plan.answer);
  res.content_length(plan.length);
  FileSenderOpening file = FileSender::Open(plan.path, plan.first);
  if (!file.sender) {
    co_return co_await Send(stream, ToResponse(ErrorAnswer(404, plan.file_name + " cannot be read now")), keep_alive,
                            head_only, api.metrics);
  }
  if (!co_await SendHeader(stream, std::move(res), keep_alive, api.metrics)) co_return false;
  if (head_only) co_return keep_alive;
  co_return co_await SendFileRange(stream, *file.sender, plan.length) && keep_alive;
}

}  // namespace trtwatch::service
