// QuotaController: serve's counterpart of kube-controller-manager's resource quota
// controller. Keeps every ResourceQuota's status (hard as its spec, used summed from
// the store, resource_quota.h) up to date: a namespace is recounted shortly after
// any object in it changes, and every namespace with quotas at start-up. The
// create-time check (CheckQuota) sums from the store itself, so a status written a
// moment late never lets a create through.
//
// The namespace's own ServiceAccount "default" is made here too, as the service
// account controller does, for every namespace that has none.
#pragma once

#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "server/serve.h"

namespace muster::server {

class QuotaController : public Controller {
 public:
  std::string name() const override { return "quota controller"; }
  Status Start(ServeContext& context) override;
  void Stop() override;

  // Recounts the quotas of `ns` and writes the statuses that changed (also for tests).
  static void Sync(ObjectStore& store, const std::string& ns);
  // Creates ServiceAccount "default" in `ns` when it is missing.
  static void EnsureDefaultAccount(ObjectStore& store, const std::string& ns);

 private:
  void Loop();

  ObjectStore* store_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> dirty_;   // namespaces to recount
  std::set<std::string> new_ns_;  // namespaces created: default account
  bool stopping_ = false;
  WatchHub::SubscriptionId subscription_ = 0;
  std::thread thread_;
};

}  // namespace muster::server
