#include "server/garbage_collector.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <optional>
#include <vector>

#include "control/json_fields.h"
#include "control/process_heap.h"
#include "control/resource_types.h"
#include "server/object_store.h"

namespace muster::server {
namespace {

using nlohmann::json;

void Log(const std::string& line) {
  std::cerr << "muster serve: garbage collector: " << line << std::endl;
}

// Changes the target in place: Conflict when the name now holds another object.
Status EditTarget(ObjectStore& store, const OwnerGraph::Target& target,
                  const std::function<void(json&)>& edit) {
  return store
      .Mutate(
          target.key,
          [&](const json& current) -> Result<json> {
            if (!target.uid.empty() &&
                control::StringField(control::ObjectField(current, "metadata"), "uid") !=
                    target.uid)
              return Status(StatusCode::kConflict, "re-created");
            json next = current;
            edit(next);
            return next;
          },
          WriteScope::kAll)
      .status();
}

}  // namespace

void GarbageCollector::Execute(ObjectStore& store, const OwnerGraph::Work& work) {
  for (const auto& [target, owner_uid] : work.orphan) {
    auto done = store.Mutate(
        target.key,
        [&, uid = owner_uid](const json& current) -> Result<json> {
          json next = current;
          control::RemoveOwnerReference(next, uid);
          return next;
        },
        WriteScope::kAll);
    if (!done.ok() && done.status().code() != StatusCode::kNotFound)
      Log("orphaning " + target.key.name + ": " + done.status().message());
  }
  auto uid_of = [](const OwnerGraph::Target& target) {
    return target.uid.empty() ? std::nullopt : std::optional(target.uid);
  };
  // Gone already, or re-created under the same name (uid precondition): not ours.
  auto log_failure = [](const char* what, const OwnerGraph::Target& target, const Status& s) {
    if (s.ok() || s.code() == StatusCode::kNotFound || s.code() == StatusCode::kConflict) return;
    Log(std::string(what) + " " + target.key.resource + " " + target.key.namespace_ + "/" +
        target.key.name + ": " + s.message());
  };
  // Marked with "foregroundDeletion" first, so the delete holds it for its own dependents.
  for (const OwnerGraph::Target& target : work.collect_foreground) {
    log_failure("marking", target, EditTarget(store, target, [](json& object) {
                  control::AddFinalizer(object, kForegroundFinalizer);
                }));
  }
  // kConflict on the resourceVersion: changed since the decision (orphaned, say);
  // its own change is judged next.
  for (const auto* targets : {&work.collect, &work.collect_foreground}) {
    for (const OwnerGraph::Target& target : *targets) {
      log_failure("deleting", target, store.Delete(target.key, target.rv, uid_of(target)).status());
    }
  }
  for (const OwnerGraph::Target& target : work.release) {
    log_failure("finishing the deletion of", target, EditTarget(store, target, [](json& object) {
                  control::RemoveFinalizer(object, kForegroundFinalizer);
                }));
  }
}

int64_t GarbageCollector::TrimThreshold(const EventRetention& events) {
  if (events.max_events <= 0) return INT64_MAX;
  return events.max_events + std::max<int64_t>(1, events.max_events / 10);
}

Result<int64_t> GarbageCollector::TrimEvents(ObjectStore& store, EventTimes& events,
                                             const EventRetention& retention, double now) {
  const std::vector<control::ObjectKey> doomed = events.ToDelete(now, retention);
  // In batches: one fsync per batch instead of one per event, and the store's write
  // lock is never held for long.
  constexpr size_t kPerBatch = 256;
  for (size_t begin = 0; begin < doomed.size(); begin += kPerBatch) {
    const size_t end = std::min(doomed.size(), begin + kPerBatch);
    Status s = store.Batch([&] {
      // NotFound: deleted meanwhile.
      for (size_t i = begin; i < end; ++i) store.Delete(doomed[i]).ok();
    });
    if (!s.ok()) return s;
    for (size_t i = begin; i < end; ++i) events.Erase(doomed[i].namespace_, doomed[i].name);
  }
  return static_cast<int64_t>(events.size());
}

Status GarbageCollector::Start(ServeContext& context) {
  store_ = &context.store;
  StoreChangeLoop::Hooks hooks;
  hooks.run = [this](StoreChangeLoop::Changes& changes) { Run(changes); };
  hooks.next_wake = [this] { return NextWake(); };
  loop_.Subscribe(store_->hub(), std::move(hooks));
  for (const control::ResourceType& type : control::ResourceTypes()) {
    auto list = store_->List(type.StoreKey(), "");
    if (!list.ok()) continue;
    for (const json& object : list->items) {
      const json meta = object.value("metadata", json::object());
      graph_.Load({type.StoreKey(), meta.value("namespace", ""), meta.value("name", "")}, object);
      if (type.StoreKey() == "events") event_times_.Put(object);
    }
  }
  OwnerGraph::Work garbage = graph_.Sweep();
  if (!garbage.collect.empty())
    Log(std::to_string(garbage.collect.size()) + " objects whose owners are gone");
  Execute(*store_, garbage);
  trim_threshold_ = TrimThreshold(events_);
  next_expiry_ = next_trim_ = StoreChangeLoop::Clock::now();
  loop_.Start();
  return Status();
}

std::optional<StoreChangeLoop::Clock::time_point> GarbageCollector::NextWake() const {
  const bool over = static_cast<int64_t>(event_times_.size()) >= trim_threshold_;
  return over ? std::min(next_expiry_, next_trim_) : next_expiry_;
}

void GarbageCollector::Run(StoreChangeLoop::Changes& changes) {
  using Clock = StoreChangeLoop::Clock;
  for (const auto& change : changes) {
    Execute(*store_, graph_.Apply(*change));
    event_times_.Apply(*change);
  }
  const auto now = Clock::now();
  const bool minute_up = now >= next_expiry_;
  const bool trim_due =
      static_cast<int64_t>(event_times_.size()) >= trim_threshold_ && now >= next_trim_;
  if (!minute_up && !trim_due) return;
  const double wall_now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (auto left = TrimEvents(*store_, event_times_, events_, wall_now); !left.ok())
    Log("deleting events: " + left.status().message());
  next_trim_ = Clock::now() + std::chrono::seconds(1);
  if (!minute_up) return;
  next_expiry_ = Clock::now() + std::chrono::minutes(1);
  // Deleted objects, large LIST and watch bodies and this pass free a lot at once,
  // and the allocator keeps what is freed (glibc in its per-thread arenas, jemalloc
  // for its decay time): give it back, so the server's memory follows what it holds
  // (10 minutes of churn: see docs/performance.md).
  control::ReleaseFreeHeap();
}

void GarbageCollector::Stop() { loop_.Stop(); }

}  // namespace muster::server
