#include "service/sse.h"

#include <algorithm>
#include <charconv>

namespace trtwatch::service {

bool ParseLastEventId(std::string_view value, uint64_t* seq) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty()) {
    *seq = 0;
    return true;
  }
  // Digits only (from_chars alone would take a sign) and within the seq type's range.
  if (!std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size()) return false;
  *seq = n;
  return true;
}

SseQueue::PushResult SseQueue::Push(FramedEvent item, uint64_t delivery) {
  PushResult result = PushResult::kQueued;
  if (delivery == 0 || delivery != delivery_) {
    delivery_ = delivery;
    backlog_ = items_.size();
  }
  if (item.step && backlog_ >= coalesce_at_) {
    auto same = std::find_if(items_.begin(), items_.end(),
                             [&](const FramedEvent& q) { return q.step && q.phase_id == item.phase_id; });
    if (same != items_.end()) {
      items_.erase(same);
      ++coalesced_;
      result = PushResult::kCoalesced;
    }
  }
  if (items_.size() >= limit_) return PushResult::kOverflow;
  items_.push_back(std::move(item));
  return result;
}

std::optional<FramedEvent> SseQueue::Pop() {
  if (items_.empty()) return std::nullopt;
  FramedEvent item = std::move(items_.front());
  items_.pop_front();
  return item;
}

}  // namespace trtwatch::service
