// Event streams: GET /builds/{id}/events (a build's events, replayed from the log
// and then live, Last-Event-ID resuming) and GET /builds/changes (every record
// written from now on). Here the request is checked and the stream set up; the
// connection then hands its socket to the SSE hubs (service/sse_hubs.h), which
// write the stream on their own threads.
//
// Threading: the service's event-loop thread.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string_view>

#include "service/api_answer.h"
#include "service/api_context.h"

namespace trtwatch::service {

class SseHubs;
struct SseStreamSpec;

// Called with no suspension since the subscription, so that the hub's live events
// start exactly after the replayed ones.
using BuildStreamHandOver = std::function<void(size_t hub, SseStreamSpec spec)>;
using RecordStreamHandOver = std::function<void(size_t hub)>;

// GET /builds/{id}/events: nullopt once handed over, else the answer to send before
// closing (a refusal, or 204 when the build is over and the client has every event).
// `last_event_id`: the Last-Event-ID header, nullopt when absent.
[[nodiscard]] std::optional<ApiAnswer> StartBuildEvents(ApiContext& api, SseHubs& hubs, const ApiRequest& req,
                                                        std::optional<std::string_view> last_event_id,
                                                        const BuildStreamHandOver& hand_over);

// GET /builds/changes: no replay; a client reads GET /builds first, then applies the
// changes, and does the same on reconnecting.
[[nodiscard]] std::optional<ApiAnswer> StartRecordChanges(ApiContext& api, SseHubs& hubs,
                                                          const RecordStreamHandOver& hand_over);

// HEAD on an event stream: the headers a GET would start with, no events.
[[nodiscard]] ApiAnswer EventStreamHead(ApiContext& api, const Route& route);

}  // namespace trtwatch::service
