// WatchHub: the ordered stream of committed changes. The store publishes every
// committed write here (in resourceVersion order, under the store's write lock);
// HTTP watches read a bounded history from it and block for more, and in-process
// subscribers (the engine, later the executor) get a callback per change.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "control/change.h"
#include "core/status.h"

namespace muster::server {

class WatchHub {
 public:
  // Changes are kept and handed out shared: every watch and subscriber reads the same
  // change, and one that queues it or wakes for it copies a pointer, not the object.
  using ChangePtr = std::shared_ptr<const control::Change>;
  using Callback = std::function<void(const ChangePtr&)>;
  using SubscriptionId = int64_t;

  // `retention`: how many changes are kept for watches that resume from an older
  // resourceVersion; older ones answer 410 Gone.
  explicit WatchHub(size_t retention = 10000) : retention_(retention) {}

  // Sets the history after a restart: `current_rv` is the store's resourceVersion
  // and `history` the retained changes (ascending, all <= current_rv).
  void Reset(int64_t current_rv, std::vector<control::Change> history);

  // Appends a committed change; wakes waiting watches and calls subscribers.
  void Publish(control::Change change);

  // Changes with resource_version > `since`, at most `max`. kFailedPrecondition
  // ("too old") when changes after `since` were already dropped from history.
  Result<std::vector<ChangePtr>> Since(int64_t since, size_t max = 1000) const;

  // Blocks until a change newer than `since` exists, `timeout` passes or Close()
  // is called. Returns whether there is something new.
  bool WaitNewer(int64_t since, std::chrono::milliseconds timeout) const;

  int64_t current_rv() const;
  // Wakes every waiting watch for good: the server is shutting down.
  void Close();
  bool closed() const;

  // The callback runs on the writer's thread, after the commit and in commit order,
  // while the store's write lock is held: it must be quick and must not call back
  // into the store (queue the change and return). Returns an id for Unsubscribe.
  SubscriptionId Subscribe(Callback callback);
  void Unsubscribe(SubscriptionId id);

 private:
  const size_t retention_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<ChangePtr> history_;
  int64_t current_rv_ = 0;
  int64_t oldest_servable_ = 0;  // a watch from rv >= this sees every later change
  bool closed_ = false;
  std::mutex subscribers_mu_;
  std::map<SubscriptionId, Callback> subscribers_;
  SubscriptionId next_id_ = 1;
};

}  // namespace muster::server
