// KubeController: the engine inside a real cluster (`muster kube`), as an adapter
// around the control layer's Reconciler in cluster mode (control/reconciler.h): one
// thread, a queue of the cache's changes, and a sink that writes to the API server
// concurrently (ApiSink). Reflectors mirror the cluster into an ObjectCache; every
// change the cache takes is queued here and applied in delivery order; write results
// come back through the sink. Nothing is scheduled before every watched resource has
// listed once (no decision on a partial view); then the reconciler is built from the
// cache (adopting the gangs that already run) and steps whenever a change or a result
// arrives, and at least every resync interval.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "control/reconciler.h"
#include "kube/api_sink.h"
#include "kube/kube_client.h"
#include "kube/memory_trim.h"
#include "kube/object_cache.h"
#include "model/manifest_set.h"
#include "ui/view_publisher.h"

namespace muster::kube {

struct KubeOptions {
  // Pods whose spec.schedulerName is one of these are bound by muster.
  std::vector<std::string> scheduler_names = {"muster"};
  // Kueue's manageJobsWithoutQueueName: also admit jobs that name no queue.
  bool manage_jobs_without_queue_name = false;
  double resync_seconds = 1.0;  // a cycle runs at least this often
  // Steps start at most this often while changes keep coming: a burst of watch events
  // (a Job's pods created, bound, reported running) is applied and reconciled in one
  // step instead of one step per event. The first change after a quiet spell is
  // stepped at once.
  double min_step_interval_seconds = 0.01;
  // Queue statuses are written at most this often (ReconcilerOptions).
  double queue_status_seconds = 0.5;
  // Store keys the reflectors fill; scheduling waits until all have synced.
  std::vector<std::string> watched;
  // Writes in flight at most (within the client's QPS and burst).
  int write_workers = 16;
  // `--config`: replaces the cluster's configuration objects of these kinds.
  std::optional<model::SchedulerConfiguration> scheduler_config;
  std::optional<model::KueueConfiguration> kueue_config;
  // Where each step's scheduler view is published (the dashboard); may be null.
  ui::ViewPublisher* views = nullptr;
};

class KubeController {
 public:
  KubeController(KubeClient& client, ObjectCache& cache, KubeOptions options);
  ~KubeController();
  KubeController(const KubeController&) = delete;
  KubeController& operator=(const KubeController&) = delete;

  // Subscribes to the cache and starts the thread.
  void Start();
  // Stops the thread and the writes not started yet; returns within a request's time.
  void Stop();

  // Snapshots for tests and status output (taken on the controller thread).
  struct Stats {
    bool synced = false;
    int64_t cycles = 0;
    int64_t bindings = 0;
    int64_t conflicts = 0;  // writes retried after a 409
    int64_t admitted = 0;   // admission writes done
    int64_t evicted = 0;    // eviction writes done
    int64_t parked = 0;     // jobs the API server refused to start
  };
  Stats stats() const;

 private:
  class WallClock : public Clock {
   public:
    Time Now() const override;
  };

  void Loop();
  void Publish();
  // Builds the scheduler view (control/scheduler_view.h) and publishes it.
  void PublishView();

  KubeClient& client_;
  ObjectCache& cache_;
  KubeOptions options_;
  WallClock clock_;
  std::unique_ptr<ApiSink> sink_;
  std::unique_ptr<control::Reconciler> reconciler_;
  bool synced_ = false;
  MemoryTrimmer trimmer_;  // controller thread only

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<control::Change> changes_;
  bool results_ready_ = false;
  bool stopping_ = false;
  // The loop is waiting out the interval between steps (Loop): only Stop wakes it
  // then, so a change or a write result does not (each wake was a futex call and two
  // context switches per watch event, only to sleep again).
  bool pacing_ = false;
  // Changes or write results are queued for the loop (its main wait's condition).
  bool HasWork() const { return !changes_.empty() || results_ready_; }
  // Whether queuing a change or a result now can end the loop's wait, so is worth a
  // notify: not while it paces, nor once work is queued (it was woken for that).
  bool LoopAwaitsWork() const { return !HasWork() && !pacing_; }
  bool started_ = false;
  Stats published_;
  std::thread thread_;
};

}  // namespace muster::kube
