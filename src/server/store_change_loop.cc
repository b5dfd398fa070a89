#include "server/store_change_loop.h"

#include <utility>

namespace muster::server {

void StoreChangeLoop::Subscribe(WatchHub& hub, Hooks hooks) {
  hooks_ = std::move(hooks);
  hub_ = &hub;
  subscription_ = hub.Subscribe([this](const WatchHub::ChangePtr& change) {
    if (hooks_.wants && !hooks_.wants(*change)) return;
    std::lock_guard<std::mutex> lock(mu_);
    // The first change of a burst wakes the thread, which takes the whole queue: one
    // notify per change woke it for nothing.
    if (changes_.empty()) cv_.notify_one();
    changes_.push_back(change);
  });
}

void StoreChangeLoop::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void StoreChangeLoop::Loop() {
  Changes changes;
  while (true) {
    hooks_.run(changes);
    changes.clear();
    const std::optional<Clock::time_point> wake =
        hooks_.next_wake ? hooks_.next_wake() : std::nullopt;
    std::unique_lock<std::mutex> lock(mu_);
    auto woken = [this] { return stopping_ || !changes_.empty(); };
    if (wake) {
      cv_.wait_until(lock, *wake, woken);
    } else {
      cv_.wait(lock, woken);
    }
    if (stopping_) return;
    if (!changes_.empty() && hooks_.coalesce > Clock::duration::zero()) {
      cv_.wait_for(lock, hooks_.coalesce, [this] { return stopping_; });
      if (stopping_) return;
    }
    changes.swap(changes_);
  }
}

void StoreChangeLoop::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  if (subscription_ != 0 && hub_ != nullptr) hub_->Unsubscribe(subscription_);
  subscription_ = 0;
}

}  // namespace muster::server
