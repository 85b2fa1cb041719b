#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/record_writer.h"

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>

#include "builds/event_subscriber.h"
#include "builds/stores/record_store.h"
#include "protocol/sse_frame.h"

namespace trtwatch::builds {

namespace {
constexpr std::chrono::seconds kRetryInterval{1};  // unsaved records are written again this often
}  // namespace

std::string StorageError(const std::string& what, const std::string& why, bool database) {
  return "the service could not store " + what + " (" + why + "); " +
         (database ? "check that the database is up and reachable (--store)"
                   : "free space in --data-dir or fix the disk");
}

RecordWriter::RecordWriter(boost::asio::io_context& io, RecordStore& store) : io_(io), store_(store) {}

std::string RecordWriter::StoreError(const std::string& what, const std::string& why) const {
  return StorageError(what, why, store_.changes() != nullptr);
}

PutOutcome RecordWriter::Put(const std::string& id, const std::string& status, std::string doc, int64_t generation) {
  unsaved_.erase(id);
  const Result<bool> put = store_.PutFenced(id, status, doc, generation);
  if (put.ok() && !*put) return PutOutcome::kRefused;  // never announced: it is not the build's record
  Announce(doc);
  if (put.ok()) return PutOutcome::kStored;
  error_ = StoreError("record " + id, put.error());
  std::fprintf(stderr, "trtwatch serve: %s\n", error_.c_str());
  unsaved_[id] = {status, std::move(doc), generation};
  ScheduleRetry();
  return PutOutcome::kKept;
}

std::optional<std::string> RecordWriter::Unsaved(const std::string& id) const {
  if (auto it = unsaved_.find(id); it != unsaved_.end()) return it->second.doc;
  return std::nullopt;
}

bool RecordWriter::RetryUnsaved() {
  for (auto it = unsaved_.begin(); it != unsaved_.end();) {
    const Result<bool> put = store_.PutFenced(it->first, it->second.status, it->second.doc, it->second.generation);
    if (!put.ok()) {
      error_ = StoreError("record " + it->first, put.error());
      return false;
    }
    if (!*put) {
      std::fprintf(stderr, "trtwatch serve: the record of %s was not stored: its lease is another replica's now\n",
                   it->first.c_str());
    }
    it = unsaved_.erase(it);
  }
  if (!error_.empty()) {
    // A failed event write leaves nothing to retry; a probe write says whether the
    // store takes writes again.
    if (Status probe = store_.Probe(); !probe.ok()) {
      error_ = StoreError("a test write", probe.error());
      return false;
    }
    error_.clear();
  }
  return true;
}

void RecordWriter::Failed(const std::string& error) {
  error_ = error;
  ScheduleRetry();
}

void RecordWriter::Announce(const std::string& doc) {
  if (watchers_.empty()) return;
  FramedEvent item;
  item.seq = ++writes_;
  item.frame = std::make_shared<const std::string>(SseFrame(item.seq, "record", doc));
  for (RecordWatcher* w : std::vector<RecordWatcher*>(watchers_)) w->OnRecord(item);
}

void RecordWriter::ScheduleRetry() {
  if (!retry_timer_) retry_timer_ = std::make_unique<boost::asio::steady_timer>(io_);
  retry_timer_->expires_after(kRetryInterval);
  retry_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !RetryUnsaved()) ScheduleRetry();
  });
}

}  // namespace trtwatch::builds
