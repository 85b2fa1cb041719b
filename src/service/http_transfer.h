// The bulk transfers: an upload's body streamed to the artifact store in bounded
// pieces (PUT /models/...), and a download's file sent by the kernel
// (platform/file_sender.h) while the socket takes it. What is uploaded or downloaded,
// and the answers around the bytes, are api_models.h's.
//
// Threading: the service's event-loop thread.
#pragma once

#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "service/api_context.h"
#include "service/api_models.h"

namespace trtwatch::service {

// PUT /models/{name}[/{file}] to `route`: the body, read in bounded pieces, goes to a
// temporary file in the model's folder, renamed into place once complete and its
// digest checked (builds/artifacts/artifact_store.h). The head is in `head_parser`.
// Returns whether the connection stays open. A stored upload is recorded in the audit
// trail as `caller`'s (ApiRequest::caller).
boost::asio::awaitable<bool> ReceiveUpload(
    ApiContext& api, boost::beast::tcp_stream& stream, boost::beast::flat_buffer& buffer,
    boost::beast::http::request_parser<boost::beast::http::string_body>& head_parser, const Route& route,
    const ExpectedDigest& expected, bool expects_continue, std::string caller);

// Answers a download as `plan` says: an answer, a 304's head, or a file's head and its
// bytes. Returns whether the connection stays open.
boost::asio::awaitable<bool> SendDownload(ApiContext& api, boost::beast::tcp_stream& stream, const DownloadPlan& plan,
                                          bool keep_alive, bool head_only);

}  // namespace trtwatch::service
