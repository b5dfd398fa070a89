// SchedulerController: the engine inside `muster serve`, as an adapter around the
// control layer's Reconciler (control/reconciler.h): one thread, a queue of store
// changes and a sink that writes into the store. Every committed change of a job, a
// configuration object or a Workload is queued by a hub subscription and applied in
// resourceVersion order (the one ordered path); then the reconciler steps: it
// reconfigures the engine in memory when the cluster or queue configuration changed,
// runs a cycle, and its writes (Workload objects, job status, queue status, Events)
// go into the store in transactions of up to 32 jobs (ServeStep: a gang starts only
// once the transaction that records its admission committed). The executor (local processes; the
// emulated pods of `--executor emulated`) runs the gangs and writes their Pod objects.
//
// After a restart (kill -9 included) the reconciler is built from the store and
// adopts the gangs whose processes survived (their Workload object records the
// admission and placement); a gang that can no longer be adopted is stopped and
// requeued, processes no running job owns are stopped, and finished jobs stay
// finished.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "control/reconciler.h"
#include "server/local_kubelet.h"
#include "server/pod_metrics.h"
#include "server/process_supervisor.h"
#include "server/serve.h"
#include "server/serve_executor.h"
#include "server/serve_step.h"
#include "server/store_sink.h"
#include "ui/view_publisher.h"

namespace muster::server {

class SchedulerController : public Controller {
 public:
  // `executor`: local processes (LocalExecutor, configured by `kubelet`) or emulated
  // pods (EmulatedExecutor).
  explicit SchedulerController(ExecutorKind executor = ExecutorKind::kLocal,
                               KubeletOptions kubelet = {})
      : executor_kind_(executor), kubelet_options_(std::move(kubelet)) {}
  ~SchedulerController() override;

  // The configuration of `muster serve --config`: it takes the place of stored
  // SchedulerConfiguration / Kueue Configuration objects. Before Start.
  void SetConfiguration(std::optional<model::SchedulerConfiguration> scheduler_config,
                        std::optional<model::KueueConfiguration> kueue_config) {
    scheduler_config_ = std::move(scheduler_config);
    kueue_config_ = std::move(kueue_config);
  }

  std::string name() const override { return "scheduler"; }
  Status Start(ServeContext& context) override;
  void Stop() override;

 private:
  class WallClock : public Clock {
   public:
    Time Now() const override;
  };

  void Loop();
  // One reconciler step and its writes (ServeStep); metrics after it. True when it
  // left writes for the next step.
  bool Step();
  // Processes a previous server left that no adopted gang owns are stopped.
  void StopOrphans(const std::map<std::string, RecoveredProcess>& recovered);
  void OnDecision(const engine::LogEntry& entry, const engine::Engine& engine);
  void UpdateMetrics(double cycle_seconds);
  void CountGauges(const engine::Engine& engine);  // UpdateMetrics' queue and GPU gauges
  void Log(const std::string& line);
  // Builds the scheduler view (control/scheduler_view.h) and publishes it. A view
  // that took long to build (thousands of workloads) is rebuilt at most once per
  // kViewCostFactor times its build time: the dashboard may lag a second, the
  // scheduler spends at most a tenth of its time on it. (Views of 40 ms, 10,000
  // jobs, were rebuilt after every cycle: a tenth of the server's CPU while a burst
  // of submissions ran five cycles a second.)
  void PublishView();
  static constexpr double kViewCostFactor = 10;
  static constexpr double kCheapViewSeconds = 0.005;  // always rebuilt below this
  std::chrono::steady_clock::time_point view_built_at_{};
  // When UpdateMetrics last counted its gauges (none yet: nullopt), and how long it took.
  std::optional<std::chrono::steady_clock::time_point> gauges_at_;
  std::chrono::steady_clock::duration gauges_cost_{};
  double view_build_seconds_ = 0;

  std::optional<model::SchedulerConfiguration> scheduler_config_;
  std::optional<model::KueueConfiguration> kueue_config_;
  ObjectStore* store_ = nullptr;
  MetricsRegistry* metrics_ = nullptr;
  ui::ViewPublisher* views_ = nullptr;
  std::string data_dir_;
  WallClock clock_;
  std::unique_ptr<ProcessSupervisor> processes_;
  std::unique_ptr<PodExec> pod_exec_;        // `kubectl exec` into the executor's pods
  std::unique_ptr<PodMetrics> pod_metrics_;  // `kubectl top` of them
  ExecutorKind executor_kind_;
  KubeletOptions kubelet_options_;
  std::unique_ptr<ServeExecutor> executor_;
  std::unique_ptr<StoreSink> sink_;
  std::unique_ptr<control::Reconciler> reconciler_;
  std::unique_ptr<ServeStep> step_;
  std::set<std::string> orphans_;  // processes of no adopted gang, being stopped

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WatchHub::ChangePtr> changes_;
  bool stopping_ = false;
  WatchHub::SubscriptionId subscription_ = 0;
  std::thread thread_;
};

}  // namespace muster::server
