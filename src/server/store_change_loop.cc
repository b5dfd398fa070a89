#include "server/store_change_loop.h"

#include <algorithm>
#include <utility>

namespace muster::server {

double StoreChangeLoop::WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

StoreChangeLoop::Clock::time_point StoreChangeLoop::WakeForWallDeadline(
    std::optional<double> deadline) {
  const double now = WallNow();
  const double wait = std::clamp(deadline.value_or(now + 60) - now, 0.0, 60.0);
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait));
}

void StoreChangeLoop::ForEachStored(const control::ObjectReader& store, const std::string& resource,
                                    const std::function<void(const control::Change&)>& apply) {
  auto list = store.List(resource, "");
  if (!list.ok()) return;
  for (const nlohmann::json& object : list->items) {
    const nlohmann::json meta = object.value("metadata", nlohmann::json::object());
    control::Change c;
    c.resource = resource;
    c.namespace_ = meta.value("namespace", "");
    c.name = meta.value("name", "");
    c.SetObject(object);
    apply(c);
  }
}

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
