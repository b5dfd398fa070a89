// Reflector: keeps one resource of the cluster mirrored in the ObjectCache, as
// client-go's reflector does. It lists (paged, ?limit=), replaces the cache's copy,
// then watches from the list's resourceVersion with bookmarks:
//   ADDED/MODIFIED/DELETED -> ObjectCache::Apply; BOOKMARK -> only the version advances;
//   ERROR 410 or HTTP 410 (the version was compacted away) -> relist, so objects deleted
//   meanwhile still reach the cache as deletions;
//   a stream that ends or breaks -> watch again from the last version seen (no relist);
//   failed requests -> exponential backoff with jitter, reset after a success.
// A resource the server does not serve (404: its CRD is not installed) is "absent":
// synced with no objects, and listed again every `absent_recheck` so a CRD installed
// later is picked up.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "control/resource_types.h"
#include "kube/backoff.h"
#include "kube/kube_client.h"
#include "kube/object_cache.h"

namespace muster::kube {

struct ReflectorOptions {
  int page_size = 500;  // ?limit= of each list request
  // ?timeoutSeconds= of each watch: the server ends it then and the reflector watches
  // again from where it was, so a silently dead connection cannot last forever.
  int watch_timeout_s = 300;
  BackoffPolicy backoff;
  std::function<double()> random;  // jitter source in [0, 1); empty: seeded std::mt19937
  std::chrono::milliseconds absent_recheck{60000};
  // Where problems are reported (one line each, without a trailing newline); empty:
  // stderr with a "muster kube: " prefix. Called from the reflector's thread.
  std::function<void(const std::string&)> log;
};

struct ReflectorCounters {
  uint64_t lists = 0;        // complete lists (all pages): the first one and relists
  uint64_t watches = 0;      // watch requests sent
  uint64_t relists_410 = 0;  // relists because the watched resourceVersion was too old
  uint64_t errors = 0;       // failed requests, each followed by a backoff
  uint64_t events = 0;       // watch events applied, bookmarks included
};

class Reflector {
 public:
  // `type` must outlive the reflector (control::ResourceTypes() entries do).
  Reflector(KubeClient& client, const control::ResourceType& type, ObjectCache& cache,
            ReflectorOptions options = {});
  ~Reflector();  // Stop()
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Starts the list/watch thread. Call once.
  void Start();
  // Ends the thread: at once from a watch or a backoff, after the request in flight
  // for a list (bounded by ClientOptions::timeout_s). Idempotent.
  void Stop();
  // Asks the thread to end without waiting for it (Stop() then joins): stopping many
  // reflectors costs one watch poll interval instead of one each.
  void RequestStop();

  // The first list completed (or the resource was found absent): the cache holds a
  // complete view of this resource from then on.
  bool synced() const { return synced_.load(); }
  // The server does not serve this resource (every version answered 404).
  bool absent() const { return absent_.load(); }
  // The last resourceVersion seen (list, event or bookmark).
  std::string resource_version() const;
  // The version being listed and watched (the first served one of type.versions).
  std::string version() const;
  ReflectorCounters counters() const;
  // The ObjectCache key: type.StoreKey().
  const std::string& resource() const { return resource_; }
  const control::ResourceType& type() const { return type_; }

 private:
  enum class Outcome { kOk, kGone, kNotFound, kAbsent, kFailed, kStopped };

  void Run();
  // One list (when `need_list`) or one watch; clears or sets `need_list`.
  void RunOnce(bool& need_list);
  Outcome List();
  Outcome ListVersion(const std::string& version, std::vector<nlohmann::json>& items,
                      std::string& resource_version);
  Outcome Watch();
  // Counts a failure, logs the first of a streak, then waits out the backoff.
  void Fail(const std::string& what);
  void Recovered();
  // Waits `d`; false when Stop() came first.
  bool Sleep(std::chrono::milliseconds d);
  bool stopping() const { return stop_.load(); }
  std::string CollectionPath(const std::string& version) const;
  // List items omit apiVersion and kind upstream; the cache's readers need them.
  // (metadata.managedFields, which nothing reads, is left out when parsing.)
  void Complete(nlohmann::json& object, const std::string& version) const;
  void Log(const std::string& line) const;

  KubeClient& client_;
  const control::ResourceType& type_;
  ObjectCache& cache_;
  ReflectorOptions options_;
  const std::string resource_;
  Backoff backoff_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<bool> absent_{false};
  bool failing_ = false;  // in a streak of failures (logged once); reflector thread only
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::string resource_version_;
  std::string version_;
  ReflectorCounters counters_;
};

// The resources `muster kube` mirrors: Nodes, Pods, PriorityClasses,
// NodeResourceTopology, batch Jobs, JobSets, PyTorchJob/MPIJob/TFJob, Volcano
// Jobs/PodGroups/Queues/HyperNodes, the Kueue kinds (ResourceFlavor, ClusterQueue,
// LocalQueue, Cohort, WorkloadPriorityClass, Topology, Workload) and muster's
// SchedulerConfiguration. Entries of control::ResourceTypes().
const std::vector<const control::ResourceType*>& WatchedResources();

}  // namespace muster::kube
