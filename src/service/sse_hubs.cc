#include "service/sse_hubs.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <optional>
#include <thread>
#include <unordered_map>

#include "core/mutex.h"
#include "builds/metrics.h"

namespace trtwatch::service {

// The builds layer's names this file uses.
using builds::EventSubscriber;
using builds::RecordWatcher;

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {
constexpr uint64_t kRecordChannel = 0;
}  // namespace

// One I/O thread, its event loop and its sessions.
class SseHubs::Hub {
 public:
  struct Joining {
    asio::ip::tcp::socket::native_handle_type fd;
    tcp protocol;
    SseStreamSpec spec;
  };
  // What the manager's thread sends; carried out on the hub's thread in this order.
  struct Command {
    enum class Kind { kEvent, kEnd, kJoin, kStop };
    Kind kind = Kind::kEvent;
    uint64_t channel = kRecordChannel;
    FramedEvent item;                    // kEvent
    std::optional<Joining> joining;  // kJoin
  };

  explicit Hub(SseHubs& owner) : owner_(owner), work_(asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}
  ~Hub() { Join(); }

  // Any thread. One post per batch: the hub drains everything queued by then.
  void Enqueue(Command command) {
    std::vector<Command> one;
    one.push_back(std::move(command));
    EnqueueAll(std::move(one));
  }
  // Commands drained together: one delivery (SseQueue).
  void EnqueueAll(std::vector<Command> commands) {
    bool post = false;
    {
      MutexLock lock(&mu_);
      for (Command& c : commands) pending_.push_back(std::move(c));
      post = !drain_posted_;
      drain_posted_ = true;
    }
    if (post) asio::post(io_, [this] { Drain(); });
  }

  void Join() {
    if (!thread_.joinable()) return;
    work_.reset();
    io_.stop();
    thread_.join();
  }

 private:
  // Live events are gathered per channel and handed to each session once per batch
  // (OnEvents), before anything else that concerns their channel (a join, the end, a
  // stop), so each session still sees its channel's commands in order.
  void Drain() {
    {
      MutexLock lock(&mu_);
      draining_.swap(pending_);
      drain_posted_ = false;
    }
    ++deliveries_;  // what the manager handed over since the last drain: one delivery (SseQueue)
    for (Command& c : draining_) {
      if (c.kind == Command::Kind::kEvent) {
        if (channels_.contains(c.channel)) Gathered(c.channel).push_back(&c.item);
        continue;
      }
      Deliver(c.kind == Command::Kind::kStop ? kRecordChannel : c.channel);
      Carry(c);
    }
    for (auto& [channel, items] : gathered_) {
      if (!items.empty()) Deliver(channel);
    }
    // Channels whose build ended (or whose last session left) keep no list.
    std::erase_if(gathered_, [this](const auto& g) { return !channels_.contains(g.first); });
    draining_.clear();  // keeps its capacity for the next batch
  }

  std::vector<const FramedEvent*>& Gathered(uint64_t channel) {
    for (auto& [ch, items] : gathered_) {
      if (ch == channel) return items;
    }
    return gathered_.emplace_back(channel, std::vector<const FramedEvent*>()).second;
  }

  // The events gathered for `channel` so far, to each of its sessions, in one call each.
  void Deliver(uint64_t channel) {
    std::vector<const FramedEvent*>& items = Gathered(channel);
    if (items.empty()) return;
    if (auto it = channels_.find(channel); it != channels_.end()) {
      const auto now = std::chrono::steady_clock::now();  // once per batch, not per session
      for (SseSession* s : it->second) s->OnEvents(items, now, deliveries_);
    }
    items.clear();
  }

  void Carry(Command& c) {
    switch (c.kind) {
      case Command::Kind::kEvent:
        break;
      case Command::Kind::kEnd:
        if (auto it = channels_.find(c.channel); it != channels_.end()) {
          const std::vector<SseSession*> ended = std::move(it->second);
          channels_.erase(it);
          for (SseSession* s : ended) s->OnEnd();
        }
        break;
      case Command::Kind::kJoin:
        Open(c.channel, std::move(*c.joining));
        break;
      case Command::Kind::kStop:
        if (auto it = channels_.find(kRecordChannel); it != channels_.end()) {
          for (SseSession* s : it->second) s->Stop();
        }
        break;
    }
  }

  void Open(uint64_t channel, Joining joining) {
    tcp::socket socket(io_);
    boost::system::error_code ec;
    socket.assign(joining.protocol, joining.fd, ec);  // fails only for a socket already open
    auto session =
        std::make_unique<SseSession>(std::move(socket), std::move(joining.spec), owner_.limits_, owner_, owner_.metrics_);
    const bool follows = session->spec().live || session->spec().kind == SseStreamSpec::Kind::kRecordChanges;
    if (follows) channels_[channel].push_back(session.get());
    if (session->spec().kind == SseStreamSpec::Kind::kRecordChanges && owner_.stopping()) session->Stop();
    asio::co_spawn(io_, Run(std::move(session), follows ? channel : kNoChannel), asio::detached);
  }

  asio::awaitable<void> Run(std::unique_ptr<SseSession> session, uint64_t channel) {
    co_await session->Run();
    if (auto it = channels_.find(channel); it != channels_.end()) {
      std::erase(it->second, session.get());
      if (it->second.empty() && channel != kRecordChannel) channels_.erase(it);
    }
    owner_.clients_.fetch_sub(1, std::memory_order_relaxed);
    owner_.metrics_.SseClientClosed();
  }

  static constexpr uint64_t kNoChannel = UINT64_MAX;

  SseHubs& owner_;
  asio::io_context io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  Mutex mu_;
  std::vector<Command> pending_ GUARDED_BY(mu_);
  bool drain_posted_ GUARDED_BY(mu_) = false;
  // The hub's thread only: what is being drained, and each channel's sessions.
  std::vector<Command> draining_;
  uint64_t deliveries_ = 0;  // drains so far: each one delivery to the sessions (SseQueue)
  std::unordered_map<uint64_t, std::vector<SseSession*>> channels_;
  // The hub's thread only too: live events of the batch being drained, per channel (a
  // few channels: a short list whose vectors keep their capacity), as pointers into
  // draining_.
  std::vector<std::pair<uint64_t, std::vector<const FramedEvent*>>> gathered_;
  std::thread thread_;  // last: it starts running io_ once everything above exists
};

// The manager's subscriber for one build (or the record changes) on one hub.
class SseHubs::Relay final : public EventSubscriber, public RecordWatcher {
 public:
  Relay(SseHubs& owner, size_t hub, uint64_t channel, std::string id)
      : owner_(owner), hub_(hub), channel_(channel), id_(std::move(id)) {}

  void OnEvent(const FramedEvent& item) override {
    last_seq_ = item.seq;
    Send(Hub::Command{Hub::Command::Kind::kEvent, channel_, item, std::nullopt});
  }
  void OnEvents(const std::vector<FramedEvent>& items) override {
    if (items.empty()) return;
    last_seq_ = items.back().seq;
    std::vector<Hub::Command> commands;
    commands.reserve(items.size());
    for (const FramedEvent& item : items) {
      commands.push_back(Hub::Command{Hub::Command::Kind::kEvent, channel_, item, std::nullopt});
    }
    owner_.hubs_[hub_]->EnqueueAll(std::move(commands));
  }
  void OnEnd() override {
    ended_ = true;
    Send(Hub::Command{Hub::Command::Kind::kEnd, channel_, {}, std::nullopt});
    owner_.Forget(hub_, id_);
  }
  void OnRecord(const FramedEvent& item) override { OnEvent(item); }

  uint64_t channel() const { return channel_; }
  uint64_t last_seq() const { return last_seq_; }
  void set_last_seq(uint64_t seq) { last_seq_ = seq; }
  bool ended() const { return ended_; }

 private:
  void Send(Hub::Command command) { owner_.hubs_[hub_]->Enqueue(std::move(command)); }

  SseHubs& owner_;
  const size_t hub_;
  const uint64_t channel_;
  const std::string id_;
  uint64_t last_seq_ = 0;  // the last event relayed: where a session joining now starts
  bool ended_ = false;
};

SseHubs::SseHubs(asio::io_context& manager_io, BuildManager& manager, Metrics& metrics, int threads,
                 const SseLimits& limits)
    : manager_io_(manager_io), manager_(manager), metrics_(metrics), limits_(limits) {
  const size_t n = static_cast<size_t>(std::max(threads, 1));
  for (size_t i = 0; i < n; ++i) hubs_.push_back(std::make_unique<Hub>(*this));
  relays_.resize(n);
  record_relays_.resize(n);
}

SseHubs::~SseHubs() {
  Join();
  for (size_t hub = 0; hub < hubs_.size(); ++hub) {
    if (record_relays_[hub]) manager_.UnwatchRecords(record_relays_[hub].get());
    for (auto& [id, relay] : relays_[hub]) {
      if (!relay->ended()) manager_.Unsubscribe(id, relay.get());
    }
  }
}

size_t SseHubs::Pick() {
  const size_t hub = next_hub_;
  next_hub_ = (next_hub_ + 1) % hubs_.size();
  return hub;
}

BuildManager::Subscription SseHubs::Subscribe(size_t hub, const std::string& id) {
  auto& relays = relays_[hub];
  if (auto it = relays.find(id); it != relays.end() && !it->second->ended()) {
    return BuildManager::Subscription{true, true, it->second->last_seq()};
  }
  auto relay = std::make_unique<Relay>(*this, hub, next_channel_++, id);
  const BuildManager::Subscription s = manager_.Subscribe(id, relay.get());
  if (s.live) {
    relay->set_last_seq(s.last_seq);
    relays[id] = std::move(relay);
  }
  return s;
}

void SseHubs::Forget(size_t hub, const std::string& id) {
  // Later, not from inside the manager's call to the relay.
  asio::post(manager_io_, [this, hub, id] {
    auto& relays = relays_[hub];
    if (auto it = relays.find(id); it != relays.end() && it->second->ended()) relays.erase(it);
  });
}

void SseHubs::StartBuildStream(size_t hub, tcp::socket socket, SseStreamSpec spec) {
  spec.kind = SseStreamSpec::Kind::kBuildEvents;
  uint64_t channel = kRecordChannel;
  if (spec.live) channel = relays_[hub].at(spec.build_id)->channel();
  Start(hub, channel, std::move(socket), std::move(spec));
}

void SseHubs::StartRecordStream(size_t hub, tcp::socket socket) {
  if (!record_relays_[hub]) {
    record_relays_[hub] = std::make_unique<Relay>(*this, hub, kRecordChannel, std::string());
    manager_.WatchRecords(record_relays_[hub].get());
  }
  SseStreamSpec spec;
  spec.kind = SseStreamSpec::Kind::kRecordChanges;
  spec.live = true;
  Start(hub, kRecordChannel, std::move(socket), std::move(spec));
}

void SseHubs::Start(size_t hub, uint64_t channel, tcp::socket socket, SseStreamSpec spec) {
  boost::system::error_code ec;
  const tcp protocol = socket.local_endpoint(ec).protocol();
  if (ec) return;  // the client is gone already
  const tcp::socket::native_handle_type fd = socket.release(ec);
  if (ec) return;
  clients_.fetch_add(1, std::memory_order_relaxed);
  metrics_.SseClientOpened();
  metrics_.Request(200);
  hubs_[hub]->Enqueue(Hub::Command{Hub::Command::Kind::kJoin, channel, {}, Hub::Joining{fd, protocol, std::move(spec)}});
}

void SseHubs::SetStopping() {
  stopping_.store(true, std::memory_order_relaxed);
  for (auto& hub : hubs_) hub->Enqueue(Hub::Command{Hub::Command::Kind::kStop, kRecordChannel, {}, std::nullopt});
}

void SseHubs::Join() {
  for (auto& hub : hubs_) hub->Join();
}

void SseHubs::ReadPage(const std::string& id, uint64_t after, uint64_t up_to, SsePage* page,
                       asio::any_io_executor reply_on, std::function<void()> done) {
  asio::post(manager_io_, [this, id, after, up_to, page, reply_on, done = std::move(done)]() mutable {
    page->ok = manager_.ReplayPage(id, after, up_to, &page->items, &page->last_read, &page->error);
    asio::post(reply_on, std::move(done));
  });
}

void SseHubs::CancelAbandoned(const std::string& id) {
  asio::post(manager_io_, [this, id] {
    manager_.CancelFor(id, "api", "the client following the build with cancel_on_disconnect went away");
  });
}

}  // namespace trtwatch::service
