#include "service/sse.h"

#include <algorithm>
#include <charconv>

namespace trtwatch::service {

std::string SseFrame(uint64_t seq, std::string_view type, std::string_view data) {
  std::string frame;
  frame.reserve(data.size() + type.size() + 40);
  frame += "id: ";
  frame += std::to_string(seq);
  frame += "\nevent: ";
  frame += type;
  frame += '\n';
  // Each line of the payload is its own data field; clients join them with '\n'.
  size_t start = 0;
  while (true) {
    const size_t end = data.find('\n', start);
    frame += "data: ";
    frame += data.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    frame += '\n';
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  frame += '\n';
  return frame;
}

std::string SseRetry(int milliseconds) { return "retry: " + std::to_string(milliseconds) + "\n\n"; }

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

SseQueue::PushResult SseQueue::Push(SseItem item) {
  PushResult result = PushResult::kQueued;
  if (item.step && items_.size() >= coalesce_at_) {
    auto same = std::find_if(items_.begin(), items_.end(),
                             [&](const SseItem& q) { return q.step && q.phase_id == item.phase_id; });
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

std::optional<SseItem> SseQueue::Pop() {
  if (items_.empty()) return std::nullopt;
  SseItem item = std::move(items_.front());
  items_.pop_front();
  return item;
}

}  // namespace trtwatch::service
