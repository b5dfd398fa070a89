// DELETE of one object, or of a collection (DeleteCollection: what the label and field
// selectors match), as kube-apiserver answers it: DeleteOptions from the query or
// the body (preconditions on resourceVersion and uid, propagationPolicy or the legacy
// orphanDependents, each kind's default policy), dryRun, and the `orphan` finalizer an
// owner leaves with when its dependents are orphaned (garbage_collector.h). An object
// its finalizers hold is marked and answered as it is now (graceful_deletion.h).
#pragma once

#include "server/api_handler.h"
#include "server/object_store.h"
#include "server/request_target.h"

namespace muster::server {

ApiResult HandleDelete(ObjectStore& store, const RequestTarget& t, const ApiRequest& r);

}  // namespace muster::server
