#include "server/ttl_after_finished.h"

#include <iostream>

#include "control/job_deadlines.h"
#include "server/object_store.h"

namespace muster::server {
namespace {

constexpr const char* kJobs = "jobs.batch";

}  // namespace

void TtlTracker::Apply(const control::Change& change) {
  if (change.resource != kJobs) return;
  const std::string id = change.namespace_ + "/" + change.name;
  auto expiry = change.type == control::ChangeType::kDeleted ? std::nullopt
                                                             : control::TtlExpiry(change.Object());
  if (!expiry) {
    targets_.erase(id);
    return;
  }
  const nlohmann::json meta = change.Object().value("metadata", nlohmann::json::object());
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
  StoreChangeLoop::Hooks hooks;
  hooks.wants = [](const control::Change& change) { return change.resource == kJobs; };
  hooks.run = [this](StoreChangeLoop::Changes& changes) {
    for (const auto& change : changes) tracker_.Apply(*change);
    Execute(*store_, tracker_.TakeDue(StoreChangeLoop::WallNow()));
  };
  // Wall-clock instants: wake at the earliest expiry.
  hooks.next_wake = [this]() -> std::optional<StoreChangeLoop::Clock::time_point> {
    return StoreChangeLoop::WakeForWallDeadline(tracker_.Next());
  };
  loop_.Subscribe(store_->hub(), std::move(hooks));
  StoreChangeLoop::ForEachStored(*store_, kJobs,
                                 [this](const control::Change& c) { tracker_.Apply(c); });
  loop_.Start();
  return Status();
}

void TtlAfterFinishedController::Stop() { loop_.Stop(); }

}  // namespace muster::server
