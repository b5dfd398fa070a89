// GarbageCollector: serve's counterpart of kube-controller-manager's garbage
// collector. Deleting an owner deletes what it owns (metadata.ownerReferences):
// a Job's Pods, a JobSet's Jobs, anything a user or controller marked as owned.
// An owner deleted with propagationPolicy Orphan (the API handler then deletes it
// with the "orphan" finalizer) leaves its dependents, without the references to it.
// Dependents whose owners all vanished while the server was down are collected at
// start-up. Deletes carry the dependent's uid as a precondition, so an object
// re-created under the same name is never taken for the old one.
//
// Events expire an hour after they were last recorded (kube-apiserver's --event-ttl
// default), so a busy server's event list does not grow for ever.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/owner_graph.h"
#include "server/serve.h"

namespace muster::server {

class GarbageCollector : public Controller {
 public:
  std::string name() const override { return "garbage collector"; }
  Status Start(ServeContext& context) override;
  void Stop() override;

  // Carries out one batch of decisions against the store (also used by tests).
  static void Execute(ObjectStore& store, const OwnerGraph::Work& work);

  static constexpr double kEventTtlSeconds = 3600;
  // The events among `events` last recorded (lastTimestamp, eventTime or creation,
  // the latest) more than `ttl` seconds before `now` (Unix seconds).
  static std::vector<control::ObjectKey> ExpiredEvents(const std::vector<nlohmann::json>& events,
                                                       double now, double ttl);

 private:
  void Loop();

  ObjectStore* store_ = nullptr;
  OwnerGraph graph_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<control::Change> changes_;
  bool stopping_ = false;
  WatchHub::SubscriptionId subscription_ = 0;
  std::thread thread_;
};

}  // namespace muster::server
