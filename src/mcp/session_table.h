// SessionTable: the MCP sessions of the Streamable HTTP endpoint, bounded without
// dropping one in use.
//
// A session that has had no request for `idle_timeout` expires (a request naming it
// then gets 404, so the client initializes again, as MCP 2025-11-25 Streamable HTTP
// says). When the table is full, a new session takes the place of the least recently
// used one that has no request in flight; when every session has one in flight, the
// new session is refused (the endpoint answers 503 with Retry-After). A session with a
// request in flight never expires and is never evicted. Expiry is checked lazily: when
// a session is looked up and when one is added.
//
// `S` tells whether a request is in flight with `bool busy() const`. Threading: not
// synchronised; the endpoint uses it from the service's event-loop thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <iterator>
#include <map>
#include <memory>
#include <string>

namespace trtwatch::mcp {

// How long an MCP session over HTTP may go without a request, and how many there are
// at most (documented in docs/mcp.md).
inline constexpr std::chrono::steady_clock::duration kSessionIdleTimeout = std::chrono::minutes(30);
inline constexpr size_t kMaxSessions = 256;

template <typename S>
class SessionTable {
 public:
  using Clock = std::chrono::steady_clock;

  SessionTable(size_t capacity, Clock::duration idle_timeout) : capacity_(capacity), idle_timeout_(idle_timeout) {}

  enum class AddOutcome { kAdded, kAllBusy };
  struct AddResult {
    AddOutcome outcome = AddOutcome::kAllBusy;
    S* session = nullptr;  // kAdded: the new session, owned by the table
  };

  // Adds `session` under `id`, making room first (see the header comment).
  AddResult Add(const std::string& id, std::unique_ptr<S> session, Clock::time_point now) {
    DropExpired(now);
    if (entries_.size() >= capacity_ && !EvictLeastRecentlyUsedIdle()) return {AddOutcome::kAllBusy, nullptr};
    S* raw = session.get();
    entries_[id] = Entry{std::move(session), now};
    return {AddOutcome::kAdded, raw};
  }

  // The session `id`, marked as used at `now`; null when unknown or expired.
  S* Use(const std::string& id, Clock::time_point now) {
    auto it = entries_.find(id);
    if (it == entries_.end()) return nullptr;
    if (Expired(it->second, now)) {
      entries_.erase(it);
      return nullptr;
    }
    it->second.last_used = now;
    return it->second.session.get();
  }

  // The session `id` if it is still in the table (its stream may outlive it), not marked as used.
  S* Peek(const std::string& id) {
    auto it = entries_.find(id);
    return it == entries_.end() ? nullptr : it->second.session.get();
  }

  bool Erase(const std::string& id) { return entries_.erase(id) > 0; }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::unique_ptr<S> session;
    Clock::time_point last_used;
  };

  bool Expired(const Entry& e, Clock::time_point now) const {
    return !e.session->busy() && now - e.last_used >= idle_timeout_;
  }

  void DropExpired(Clock::time_point now) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      it = Expired(it->second, now) ? entries_.erase(it) : std::next(it);
    }
  }

  // Linear in the table (bounded by the capacity): sessions are made rarely.
  bool EvictLeastRecentlyUsedIdle() {
    auto victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.session->busy()) continue;
      if (victim == entries_.end() || it->second.last_used < victim->second.last_used) victim = it;
    }
    if (victim == entries_.end()) return false;
    entries_.erase(victim);
    return true;
  }

  const size_t capacity_;
  const Clock::duration idle_timeout_;
  std::map<std::string, Entry> entries_;  // Mcp-Session-Id -> session
};

}  // namespace trtwatch::mcp
