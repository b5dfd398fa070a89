#include "server/garbage_collector.h"

#include <iostream>

#include "control/resource_types.h"
#include "server/object_store.h"

namespace muster::server {
namespace {

using nlohmann::json;

void Log(const std::string& line) {
  std::cerr << "muster serve: garbage collector: " << line << std::endl;
}

}  // namespace

void GarbageCollector::Execute(ObjectStore& store, const OwnerGraph::Work& work) {
  for (const auto& [target, owner_uid] : work.orphan) {
    auto done = store.Mutate(
        target.key,
        [&, uid = owner_uid](const json& current) -> Result<json> {
          json next = current;
          json& refs = next["metadata"]["ownerReferences"];
          if (!refs.is_array()) return next;
          json kept = json::array();
          for (const json& ref : refs) {
            if (!(ref.is_object() && ref.value("uid", "") == uid)) kept.push_back(ref);
          }
          if (kept.empty()) {
            next["metadata"].erase("ownerReferences");
          } else {
            refs = std::move(kept);
          }
          return next;
        },
        WriteScope::kAll);
    if (!done.ok() && done.status().code() != StatusCode::kNotFound)
      Log("orphaning " + target.key.name + ": " + done.status().message());
  }
  for (const OwnerGraph::Target& target : work.collect) {
    auto deleted = store.Delete(target.key, std::nullopt,
                                target.uid.empty() ? std::nullopt : std::optional(target.uid));
    // Gone already, or re-created under the same name (uid precondition): not ours.
    if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound &&
        deleted.status().code() != StatusCode::kConflict)
      Log("deleting " + target.key.resource + " " + target.key.namespace_ + "/" + target.key.name +
          ": " + deleted.status().message());
  }
}

Status GarbageCollector::Start(ServeContext& context) {
  store_ = &context.store;
  // Subscribe before reading: a change between the two is applied again, harmlessly.
  subscription_ = store_->hub().Subscribe([this](const control::Change& change) {
    std::lock_guard<std::mutex> lock(mu_);
    changes_.push_back(change);
    cv_.notify_one();
  });
  for (const control::ResourceType& type : control::ResourceTypes()) {
    auto list = store_->List(type.StoreKey(), "");
    if (!list.ok()) continue;
    for (const json& object : list->items) {
      const json meta = object.value("metadata", json::object());
      graph_.Load({type.StoreKey(), meta.value("namespace", ""), meta.value("name", "")}, object);
    }
  }
  OwnerGraph::Work garbage = graph_.Sweep();
  if (!garbage.collect.empty())
    Log(std::to_string(garbage.collect.size()) + " objects whose owners are gone");
  Execute(*store_, garbage);
  thread_ = std::thread([this] { Loop(); });
  return Status();
}

void GarbageCollector::Loop() {
  while (true) {
    std::deque<control::Change> changes;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !changes_.empty(); });
      if (stopping_) return;
      changes.swap(changes_);
    }
    for (const control::Change& change : changes) Execute(*store_, graph_.Apply(change));
  }
}

void GarbageCollector::Stop() {
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
