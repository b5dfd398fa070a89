// StoreChangeWorker: the subscribe / queue / worker-thread loop the kube tests'
// fakes (FakeJobController, FakeKubelet) play the cluster with. `accept` runs in
// the store's commit, under its write lock, so it only looks at the change (and may
// note counters); the changes it accepts are handed, in batches and in commit
// order, to `handle` on the worker's own thread, where store writes are allowed.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "server/object_store.h"
#include "server/watch_hub.h"

namespace muster::kube::testing {

class StoreChangeWorker {
 public:
  using ChangePtr = server::WatchHub::ChangePtr;
  using Batch = std::deque<ChangePtr>;

  // Subscribes at once: every change committed after this is offered to `accept`.
  StoreChangeWorker(server::ObjectStore& store, std::function<bool(const ChangePtr&)> accept,
                    std::function<void(Batch&)> handle);
  // Unsubscribes, then ends the worker after the batch it is handling.
  ~StoreChangeWorker();
  StoreChangeWorker(const StoreChangeWorker&) = delete;
  StoreChangeWorker& operator=(const StoreChangeWorker&) = delete;

 private:
  void Loop();

  server::ObjectStore& store_;
  std::function<bool(const ChangePtr&)> accept_;
  std::function<void(Batch&)> handle_;
  server::WatchHub::SubscriptionId subscription_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  Batch queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace muster::kube::testing
