#include "service/api_events.h"

#include <string>
#include <vector>

#include "service/http_request.h"
#include "service/sse_hubs.h"

namespace trtwatch::service {

namespace {

ApiAnswer NoSuchBuild(const std::string& id) {
  return ErrorAnswer(404, "no build \"" + id + "\"; list builds with GET /builds");
}

std::optional<ApiAnswer> TooManyStreams(ApiContext& api, SseHubs& hubs) {
  if (hubs.clients() < api.max_sse_clients) return std::nullopt;
  return RetryLater(429, "open event streams", api.max_sse_clients, "--max-sse-clients");
}

// The stream's query and Last-Event-ID: a refusal, or the spec's first fields.
std::optional<ApiAnswer> ReadStreamRequest(const ApiRequest& req, std::optional<std::string_view> last_event_id,
                                           SseStreamSpec* spec) {
  // ?cancel_on_disconnect=true: this stream owns the build; if it goes away before
  // the build ends (a CI job killed, a laptop closed), the build is cancelled.
  std::string bad_query;
  if (!ParseEventsQuery(req.target, &spec->cancel_on_disconnect, &bad_query)) return ErrorAnswer(400, bad_query);
  if (last_event_id && !ParseLastEventId(*last_event_id, &spec->after_seq)) {
    return ErrorAnswer(400,
                       "Last-Event-ID must be the decimal id (0 to 2^64-1, digits only) of an event this stream sent");
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiAnswer> StartBuildEvents(ApiContext& api, SseHubs& hubs, const ApiRequest& req,
                                          std::optional<std::string_view> last_event_id,
                                          const BuildStreamHandOver& hand_over) {
  const std::string id(req.route.id);
  if (!ValidBuildId(id)) return NoSuchBuild(id);
  SseStreamSpec spec;
  if (std::optional<ApiAnswer> refused = ReadStreamRequest(req, last_event_id, &spec)) return refused;
  if (std::optional<ApiAnswer> refused = TooManyStreams(api, hubs)) return refused;
  // Subscribed, the first page read and the stream handed over with no suspension in
  // between: the hub's live events start exactly after s.last_seq.
  const size_t hub = hubs.Pick();
  const builds::BuildManager::Subscription s = hubs.Subscribe(hub, id);
  if (!s.found) return NoSuchBuild(id);
  uint64_t last = spec.after_seq;
  if (!s.live && s.last_seq > 0 && last >= s.last_seq) {
    // A finished build, and the client has had its every event (or names one past them):
    // it gets the ending again (its build_finish, the log's last event), never nothing,
    // so that a reconnecting client learns that the build ended and how.
    last = s.last_seq - 1;
  }
  if (last > s.last_seq) {
    // Not an id this build has sent: following on would silently skip the events up to it.
    return ErrorAnswer(400, "Last-Event-ID " + std::to_string(last) + " is ahead of this build's last event (" +
                                std::to_string(s.last_seq) + "); reconnect without it to replay the log");
  }
  // Replay the log up to where the live feed starts, one bounded page at a time; the
  // first page is read before answering so that an unreadable log is a 500.
  std::vector<FramedEvent> page;
  uint64_t replayed = last;
  std::string error;
  if (replayed < s.last_seq && !api.manager.ReplayPage(id, replayed, s.last_seq, &page, &replayed, &error)) {
    return ErrorAnswer(500, error);
  }
  // A finished build with no event at all (none is: each ends with build_finish): 204
  // stops EventSource reconnecting.
  if (!s.live && s.last_seq == 0 && page.empty()) return ApiAnswer{204, {}, {}};
  spec.build_id = id;
  spec.replay_up_to = s.last_seq;
  spec.live = s.live;
  spec.first_page = std::move(page);
  spec.replayed = replayed;
  hand_over(hub, std::move(spec));
  return std::nullopt;
}

std::optional<ApiAnswer> StartRecordChanges(ApiContext& api, SseHubs& hubs, const RecordStreamHandOver& hand_over) {
  if (std::optional<ApiAnswer> refused = TooManyStreams(api, hubs)) return refused;
  hand_over(hubs.Pick());
  return std::nullopt;
}

ApiAnswer EventStreamHead(ApiContext& api, const Route& route) {
  if (route.endpoint == Endpoint::kBuildEvents) {
    const std::string id(route.id);
    if (!ValidBuildId(id) || api.manager.Get(id).outcome != builds::GetOutcome::kFound) return NoSuchBuild(id);
  }
  ApiAnswer answer;
  answer.Set("Content-Type", "text/event-stream; charset=utf-8");
  answer.Set("Cache-Control", "no-cache");
  return answer;
}

}  // namespace trtwatch::service
