// What a restarted server adopts must match the engine's current assignment: an
// elastic gang may have shrunk just before the previous server stopped, leaving Pod
// objects of replicas it no longer runs (their processes, owned by no running gang,
// are stopped at start-up). Both executors drop those objects when they adopt a gang.
#pragma once

#include <set>
#include <string>

#include "server/object_store.h"

namespace muster::server {

// Deletes the Pod objects of namespace `ns` whose owner is the job `job_uid` and
// whose name is not in `keep`. Returns how many.
int DeletePodsOutsideGang(ObjectStore& store, const std::string& ns, const std::string& job_uid,
                          const std::set<std::string>& keep);

}  // namespace muster::server
