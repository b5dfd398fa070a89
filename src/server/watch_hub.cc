#include "server/watch_hub.h"

namespace muster::server {

void WatchHub::Reset(int64_t current_rv, std::vector<control::Change> history) {
  std::lock_guard<std::mutex> lock(mu_);
  history_.clear();
  for (auto& c : history) history_.push_back(std::make_shared<const control::Change>(std::move(c)));
  while (history_.size() > retention_) history_.pop_front();
  current_rv_ = current_rv;
  // Without history back to the start, only watches from the first retained
  // change's predecessor (or from now) are complete.
  oldest_servable_ = history_.empty() ? current_rv : history_.front()->resource_version - 1;
}

void WatchHub::Publish(control::Change change) {
  auto shared = std::make_shared<const control::Change>(std::move(change));
  {
    std::lock_guard<std::mutex> lock(mu_);
    current_rv_ = shared->resource_version;
    history_.push_back(shared);
    while (history_.size() > retention_) {
      oldest_servable_ = history_.front()->resource_version;
      history_.pop_front();
    }
  }
  cv_.notify_all();
  std::lock_guard<std::mutex> lock(subscribers_mu_);
  for (auto& [id, cb] : subscribers_) cb(shared);
}

Result<std::vector<WatchHub::ChangePtr>> WatchHub::Since(int64_t since, size_t max) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (since < oldest_servable_) {
    return FailedPrecondition("too old resource version: " + std::to_string(since) + " (" +
                              std::to_string(oldest_servable_) + ")");
  }
  std::vector<ChangePtr> out;
  // History is ascending; skip to the first newer change from the back, since
  // watchers are usually near the head.
  auto it = history_.end();
  while (it != history_.begin() && (*std::prev(it))->resource_version > since) --it;
  for (; it != history_.end() && out.size() < max; ++it) out.push_back(*it);
  return out;
}

bool WatchHub::WaitNewer(int64_t since, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return closed_ || current_rv_ > since; }) && !closed_;
}

int64_t WatchHub::current_rv() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_rv_;
}

void WatchHub::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool WatchHub::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

WatchHub::SubscriptionId WatchHub::Subscribe(Callback callback) {
  std::lock_guard<std::mutex> lock(subscribers_mu_);
  SubscriptionId id = next_id_++;
  subscribers_[id] = std::move(callback);
  return id;
}

void WatchHub::Unsubscribe(SubscriptionId id) {
  std::lock_guard<std::mutex> lock(subscribers_mu_);
  subscribers_.erase(id);
}

}  // namespace muster::server
