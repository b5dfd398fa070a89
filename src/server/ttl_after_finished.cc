#include "server/ttl_after_finished.h"

#include <algorithm>
#include <chrono>
#include <iostream>

#include "control/job_deadlines.h"
#include "server/object_store.h"

namespace muster::server {
namespace {

constexpr const char* kJobs = "jobs.batch";

double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

void TtlTracker::Apply(const control::Change& change) {
  if (change.resource != kJobs) return;
  const std::string id = change.namespace_ + "/" + change.name;
  auto expiry = change.type == control::ChangeType::kDeleted ? std::nullopt
                                                             : control::TtlExpiry(change.object);
  if (!expiry) {
    targets_.erase(id);
    return;
  }
  const nlohmann::json meta = change.object.value("metadata", nlohmann::json::object());
  targets_[id] = Target{{kJobs, change.namespace_, change.name}, meta.value("uid", ""), *expiry};
}

std::vector<TtlTracker::Target> TtlTracker::TakeDue(Time now) {
  std::vector<Target> due;
  for (auto it = targets_.begin(); it != targets_.end();) {
    if (it->second.expiry <= now) {
      due.push_back(std::move(it->second));
      it = targets_.erase(it);
    } else {
      ++it;
    }
  }
  return due;
}

std::optional<Time> TtlTracker::Next() const {
  std::optional<Time> next;
  for (const auto& [id, t] : targets_) {
    if (!next || t.expiry < *next) next = t.expiry;
  }
  return next;
}

void TtlAfterFinishedController::Execute(ObjectStore& store,
                                         const std::vector<TtlTracker::Target>& due) {
  for (const TtlTracker::Target& t : due) {
    auto deleted =
        store.Delete(t.key, std::nullopt, t.uid.empty() ? std::nullopt : std::optional(t.uid));
    // Gone already, or re-created under the same name: not ours.
    if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound &&
        deleted.status().code() != StatusCode::kConflict) {
      std::cerr << "muster serve: ttl-after-finished: deleting job " << t.key.namespace_ << "/"
                << t.key.name << ": " << deleted.status().message() << std::endl;
    }
  }
}

Status TtlAfterFinishedController::Start(ServeContext& context) {
  store_ = &context.store;
  // Subscribe before listing: a change between the two is applied again, harmlessly.
  subscription_ = store_->hub().Subscribe([this](const WatchHub::ChangePtr& change) {
    if (change->resource != kJobs) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (changes_.empty()) cv_.notify_one();
    changes_.push_back(change);
  });
  auto list = store_->List(kJobs, "");
  if (list.ok()) {
    for (const nlohmann::json& object : list->items) {
      const nlohmann::json meta = object.value("metadata", nlohmann::json::object());
      control::Change c;
      c.resource = kJobs;
      c.namespace_ = meta.value("namespace", "");
      c.name = meta.value("name", "");
      c.object = object;
      tracker_.Apply(c);
    }
  }
  thread_ = std::thread([this] { Loop(); });
  return Status();
}

void TtlAfterFinishedController::Loop() {
  while (true) {
    std::deque<WatchHub::ChangePtr> changes;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Wall-clock instants: wake at the earliest expiry (at least every minute, so
      // a clock step is noticed), or at a change.
      const double wait =
          std::clamp(tracker_.Next().value_or(WallNow() + 60) - WallNow(), 0.0, 60.0);
      cv_.wait_for(lock, std::chrono::duration<double>(wait),
                   [&] { return stopping_ || !changes_.empty(); });
      if (stopping_) return;
      changes.swap(changes_);
    }
    for (const auto& change : changes) tracker_.Apply(*change);
    Execute(*store_, tracker_.TakeDue(WallNow()));
  }
}

void TtlAfterFinishedController::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  if (subscription_ != 0 && store_ != nullptr) store_->hub().Unsubscribe(subscription_);
  subscription_ = 0;
}

}  // namespace muster::server
