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

#include <set>
#include <string>

#include "server/serve.h"
#include "server/store_change_loop.h"

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
  void Run(StoreChangeLoop::Changes& changes);

  ObjectStore* store_ = nullptr;
  // The namespaces there at start-up: their first run recounts them all.
  std::set<std::string> existing_;
  StoreChangeLoop loop_;
};

}  // namespace muster::server
