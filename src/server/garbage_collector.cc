#include "server/garbage_collector.h"

#include <malloc.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <optional>

#include "control/resource_types.h"
#include "server/object_store.h"

namespace muster::server {
namespace {

using nlohmann::json;

void Log(const std::string& line) {
  std::cerr << "muster serve: garbage collector: " << line << std::endl;
}

// "2026-11-25T02:21:58Z" or with a fraction ("...58.123456Z"): Unix seconds; nullopt
// for anything else.
std::optional<double> ParseRfc3339Utc(const json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::string text = value.get<std::string>();
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  double fraction = 0;
  size_t pos = static_cast<size_t>(consumed);
  if (pos < text.size() && text[pos] == '.') {
    size_t end = pos + 1;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    fraction = std::strtod(text.substr(pos, end - pos).c_str(), nullptr);
    pos = end;
  }
  if (pos + 1 != text.size() || text[pos] != 'Z') return std::nullopt;
  return static_cast<double>(timegm(&tm)) + fraction;
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

std::vector<control::ObjectKey> GarbageCollector::ExpiredEvents(const std::vector<json>& events,
                                                                double now, double ttl) {
  std::vector<control::ObjectKey> out;
  for (const json& event : events) {
    if (!event.is_object()) continue;
    const json meta = event.value("metadata", json::object());
    if (!meta.is_object()) continue;
    std::optional<double> last;
    auto consider = [&](const json& object, const char* key) {
      auto it = object.find(key);
      if (it == object.end()) return;
      if (auto t = ParseRfc3339Utc(*it); t && (!last || *t > *last)) last = t;
    };
    consider(event, "lastTimestamp");
    consider(event, "eventTime");
    consider(meta, "creationTimestamp");
    if (last && now - *last > ttl)
      out.push_back({"events", meta.value("namespace", ""), meta.value("name", "")});
  }
  return out;
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
  auto next_expiry = std::chrono::steady_clock::now();
  while (true) {
    std::deque<control::Change> changes;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_until(lock, next_expiry, [this] { return stopping_ || !changes_.empty(); });
      if (stopping_) return;
      changes.swap(changes_);
    }
    for (const control::Change& change : changes) Execute(*store_, graph_.Apply(change));
    if (std::chrono::steady_clock::now() >= next_expiry) {
      next_expiry = std::chrono::steady_clock::now() + std::chrono::minutes(1);
      auto events = store_->List("events", "");
      if (!events.ok()) continue;
      const double now =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      for (const control::ObjectKey& key : ExpiredEvents(events->items, now, kEventTtlSeconds))
        store_->Delete(key);  // NotFound: deleted meanwhile
      events->items.clear();
      // Deleted objects, large LIST and watch bodies and this pass free a lot at once,
      // and glibc keeps what is freed in its per-thread arenas: give it back, so the
      // server's memory follows what it holds (10 minutes of churn: see
      // docs/performance.md).
      malloc_trim(0);
    }
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
