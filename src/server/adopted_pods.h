// What a restarted server adopts must match the engine's current assignment: an
// elastic gang may have shrunk just before the previous server stopped, leaving Pod
// objects of replicas it no longer runs (their processes, owned by no running gang,
// are stopped at start-up). Both executors drop those objects when they adopt a gang.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/object_store.h"

namespace muster::server {

// Lives for one start-up's adoptions (ServeExecutor::SetRecovered): each namespace's
// pods are listed once and indexed by owner uid. A restart adopts every running
// gang, and listing the namespace once per gang made a restart quadratic in jobs
// (minutes at 10,000).
class AdoptedPodSweeper {
 public:
  explicit AdoptedPodSweeper(ObjectStore& store) : store_(store) {}

  // Deletes the Pod objects of namespace `ns` whose owner is the job `job_uid` and
  // whose name is not in `keep`. Returns how many.
  int DeleteOutsideGang(const std::string& ns, const std::string& job_uid,
                        const std::set<std::string>& keep);

 private:
  using PodsByOwner = std::unordered_map<std::string, std::vector<std::string>>;
  const PodsByOwner& Index(const std::string& ns);

  ObjectStore& store_;
  std::map<std::string, PodsByOwner> by_namespace_;
};

}  // namespace muster::server
