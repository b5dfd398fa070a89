// FakeKubelet: plays the kubelet of every fake Node against the fake API server's
// store, for the kube benchmark (tests/kube/kube_load.h). A pod bound to a node
// (spec.nodeName set) and still Pending is reported Running and Ready through the
// status subresource, as the kubelet's status manager writes it. It is also the
// benchmark's clock: it records when each pod was first seen bound.
// Writes go straight into the store (no HTTP), as FakeJobController's do.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "kube/store_change_worker.h"
#include "server/object_store.h"

namespace muster::kube::testing {

class FakeKubelet {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // Subscribes to `store` at once: every pod written after this is seen.
  explicit FakeKubelet(server::ObjectStore& store);
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  struct Counts {
    int64_t bound = 0;    // pods ever seen bound (by uid)
    int64_t live = 0;     // pods that exist now
    int64_t running = 0;  // pods that exist and were reported Running
    std::optional<TimePoint> first_bound, last_bound;
    int64_t errors = 0;  // status writes the store refused (not: pod gone)
  };
  Counts counts() const;

 private:
  // In the store's commit: counts the pod; true for a bound pod still Pending.
  bool Observe(const StoreChangeWorker::ChangePtr& change);
  // On the worker: reports the batch's pods Running, in one store commit.
  void ReportRunning(const StoreChangeWorker::Batch& batch);

  server::ObjectStore& store_;
  mutable std::mutex mu_;
  Counts counts_;
  std::set<std::string> live_, bound_, running_;  // uids
  StoreChangeWorker worker_;                      // last: stops before the members it uses go
};

}  // namespace muster::kube::testing
