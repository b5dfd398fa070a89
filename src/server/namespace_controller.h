// NamespaceController: serve's counterpart of kube-controller-manager's namespace
// controller. A Namespace marked for deletion (namespace_lifecycle.h) is emptied:
// every object in it is deleted (background cascading: the garbage collector takes
// what they own), its status.conditions say what remains and which finalizers hold
// it (the five conditions upstream writes, with its reasons and messages), and once
// nothing is left the "kubernetes" finalizer comes off spec.finalizers and the
// Namespace goes. Namespaces marked while the server was down are finished at
// start-up, and any change in a terminating namespace (a finalizer taken off, an
// object written into it by a controller) is another pass over it.
#pragma once

#include <atomic>
#include <set>
#include <string>

#include "core/status.h"
#include "server/serve.h"
#include "server/store_change_loop.h"

namespace muster::server {

class ObjectStore;

// One namespace's deletion, with no thread: tests drive it directly.
class NamespaceDeleter {
 public:
  // One pass over Namespace `name` at `now` (RFC 3339): deletes what is left in it,
  // writes its deletion conditions and, once nothing is left, takes the "kubernetes"
  // finalizer off. True when there is nothing more to do for it (gone, not being
  // deleted, or no longer waiting on "kubernetes"); false while content remains or a
  // write failed (another pass is due).
  static Result<bool> Sync(ObjectStore& store, const std::string& name, const std::string& now);

  // Namespaces stored by a muster before namespace lifecycle (no spec) get the
  // "kubernetes" finalizer and the name label, so that deleting them empties them.
  static void AdoptLegacyNamespaces(ObjectStore& store);
};

class NamespaceController : public Controller {
 public:
  std::string name() const override { return "namespace controller"; }
  Status Start(ServeContext& context) override;
  void Stop() override;

 private:
  void Run(StoreChangeLoop::Changes& changes);

  ObjectStore* store_ = nullptr;
  // The loop's thread only, after Start: namespaces being deleted, and those whose
  // content changed since their last pass.
  std::set<std::string> terminating_;
  std::set<std::string> dirty_;
  // terminating_.size(), read by the writers' filter.
  std::atomic<size_t> terminating_count_{0};
  StoreChangeLoop loop_;
};

}  // namespace muster::server
