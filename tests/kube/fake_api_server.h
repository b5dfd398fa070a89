// FakeApiServer: an in-process Kubernetes API server for the kube adapter's tests. It
// is muster serve's own ObjectStore + ApiHandler (the same REST, JSON and watch
// protocol) on 127.0.0.1:<any port>, behind a wrapper that injects the faults a real
// cluster produces: slow answers, error codes (409, 410, 500...), watch streams that
// end early, ERROR 410 events, bookmarks, resources that are not served (a CRD not
// installed), and list paging (limit/continue). Every request is logged so tests can
// assert what a client sent. Pods are deleted gracefully, as kube-apiserver does it
// (server/graceful_deletion.h); the nodes' kubelets are played only that far: a pod
// marked with a grace period is deleted at once, as a kubelet does once its
// containers stopped.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kube/cluster_connection.h"
#include "kube/store_change_worker.h"
#include "server/api_handler.h"
#include "server/http_server.h"
#include "server/object_store.h"

namespace muster::kube::testing {

struct FakeApiServerOptions {
  // Changes the store keeps for watches that resume from an old resourceVersion; a
  // watch from before them answers 410 Gone (upstream's etcd compaction).
  size_t event_retention = 10000;
};

class FakeApiServer {
 public:
  // Opens the store in a fresh temporary directory and starts serving; aborts the test
  // binary if either fails (nothing to test without it).
  explicit FakeApiServer(FakeApiServerOptions options = {});
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  // "http://127.0.0.1:<port>".
  std::string url() const;
  // A connection to url() (plain HTTP, no credentials).
  ClusterConnection connection() const;
  // Objects written here are served (and watched) like objects created over HTTP.
  server::ObjectStore& store() { return *store_; }
  // Creates `object` (apiVersion and kind select the resource) like `kubectl create`;
  // returns it as stored. Aborts the test binary on failure.
  nlohmann::json Create(nlohmann::json object);

  // --- Faults. A request's "target" is its path, then "?" and its query parameters
  // sorted by name ("/api/v1/pods?limit=500"); `target_part` matches any substring.

  // Every answer waits this long first (slow responses).
  void SetDelay(std::chrono::milliseconds delay);
  // The next `count` requests with `method` ("" = any) whose target contains
  // `target_part` answer `code` with a metav1.Status body instead of being served.
  void FailNext(std::string method, std::string target_part, int code, int count = 1);
  // Before the next request with `method` ("" = any) whose target contains
  // `target_part` is served, `action` runs (on the server's thread): someone else's
  // write that lands between a client's read and its write.
  void BeforeNext(std::string method, std::string target_part, std::function<void()> action);
  // Forgets the FailNext rules not used up yet.
  void ClearFailures();
  // Every watch stream ends after `events` events (0: never): a dropped stream. The
  // events are sent together once the last one exists (or the watch times out).
  void EndWatchesAfter(int events);
  // The next watch whose target contains `target_part` answers 200 with these
  // newline-terminated watch-event lines and ends.
  void InjectNextWatch(std::string target_part, std::string lines);
  // ... an ERROR event with a 410 "too old resource version" Status.
  void GoneOnNextWatch(std::string target_part);
  // ... a BOOKMARK event at `resource_version` (the store's current one when 0).
  void BookmarkOnNextWatch(std::string target_part, const std::string& api_version,
                           const std::string& kind, int64_t resource_version = 0);
  // Requests whose path starts with `path_prefix` ("/apis/kubeflow.org/") answer 404
  // while absent: the API server does not serve the resource (its CRD is not installed).
  void SetAbsent(std::string path_prefix, bool absent);

  // --- The request log ("GET /api/v1/pods?limit=500"), in arrival order.
  std::vector<std::string> RequestLog() const;
  // Requests with `method` ("" = any) whose target contains `target_part`.
  int CountRequests(std::string_view method, std::string_view target_part) const;

 private:
  struct FailRule {
    std::string method;
    std::string target_part;
    int code = 500;
    int remaining = 0;
  };
  struct Action {
    std::string method;
    std::string target_part;
    std::function<void()> run;
  };
  struct Injection {
    std::string target_part;
    std::string lines;
  };

  server::ApiResult Handle(const server::ApiRequest& request);
  std::optional<server::ApiResponse> Fault(const server::ApiRequest& request,
                                           const std::string& target);
  server::ApiResult Page(const server::ApiRequest& request);
  server::ApiResult CutWatch(std::unique_ptr<server::WatchStream> stream, int events);
  // Sleeps `d` or until the server stops.
  void Wait(std::chrono::milliseconds d);

  std::string dir_;
  std::unique_ptr<server::ObjectStore> store_;
  std::unique_ptr<StoreChangeWorker> kubelets_;  // finish graceful pod deletions
  std::unique_ptr<server::ApiHandler> handler_;
  std::unique_ptr<server::HttpServer> http_;
  std::thread serve_thread_;
  int port_ = 0;

  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  std::chrono::milliseconds delay_{0};
  std::vector<FailRule> fail_rules_;
  std::vector<Action> actions_;
  std::vector<Injection> injections_;
  std::vector<std::string> absent_prefixes_;
  int end_watches_after_ = 0;
  std::vector<std::string> log_;
  // Paged lists: the full result of the first page's list, by continue-token id, so
  // every page comes from one consistent snapshot (as etcd serves them).
  std::map<int, nlohmann::json> snapshots_;
  int next_snapshot_ = 1;
};

}  // namespace muster::kube::testing
