#include "server/scheduler_controller.h"

#include <chrono>
#include <iostream>

#include "control/pod_workloads.h"
#include "control/store_snapshot.h"
#include "server/emulated_executor.h"
#include "server/local_executor.h"
#include "server/metrics.h"

namespace muster::server {

Time SchedulerController::WallClock::Now() const {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

SchedulerController::~SchedulerController() { Stop(); }

void SchedulerController::Log(const std::string& line) {
  std::cerr << "muster serve: scheduler: " << line << std::endl;
}

Status SchedulerController::Start(ServeContext& context) {
  store_ = &context.store;
  metrics_ = context.metrics;
  views_ = context.views;
  data_dir_ = context.data_dir;
  if (metrics_ != nullptr) DeclareSchedulerMetrics(*metrics_);
  if (executor_kind_ == ExecutorKind::kEmulated) {
    processes_ = std::make_unique<ProcessSupervisor>(data_dir_ + "/pods");
    executor_ = std::make_unique<EmulatedExecutor>(*store_);
    pod_exec_ = std::make_unique<PodExec>(PodExec::Config{});  // its pods run nothing
  } else {
    auto kubelet = MakeLocalKubelet(*store_, data_dir_, kubelet_options_, std::cerr);
    if (!kubelet.ok()) return kubelet.status();
    processes_ = std::move(kubelet->processes);
    executor_ = std::move(kubelet->executor);
    pod_exec_ = std::move(kubelet->exec);
  }
  // The emulated executor's pods run nothing: no metrics (its supervisor runs no process).
  pod_metrics_ = std::make_unique<PodMetrics>(processes_.get());
  if (context.api != nullptr) {
    context.api->set_pod_exec(pod_exec_.get());
    context.api->set_pod_metrics(pod_metrics_.get());
  }
  sink_ = std::make_unique<StoreSink>(*store_);
  control::ReconcilerOptions options;
  options.mode = control::ReconcilerMode::kServe;
  options.scheduler_config = scheduler_config_;
  options.kueue_config = kueue_config_;
  options.log = [this](const std::string& line) { Log(line); };
  options.on_decision = [this](const engine::LogEntry& e, const engine::Engine& engine) {
    OnDecision(e, engine);
  };
  reconciler_ =
      std::make_unique<control::Reconciler>(clock_, *sink_, executor_.get(), std::move(options));
  step_ = std::make_unique<ServeStep>(*store_, *reconciler_, *executor_, clock_,
                                      [this](const std::string& line) { Log(line); });

  // Subscribe before reading, so no change between the read and the subscription is
  // lost; changes already reflected in the read are applied again harmlessly.
  subscription_ = store_->hub().Subscribe([this](const WatchHub::ChangePtr& change) {
    // Pods: only bare ones (control/pod_workloads.h), not the pods of jobs.
    const bool bare_pod =
        change->resource == "pods" && (change->type == control::ChangeType::kDeleted ||
                                       control::PodWorkloadOf(change->Object()).has_value());
    if (!control::IsConfigResource(change->resource) && !control::IsJobResource(change->resource) &&
        change->resource != "workloads.kueue.x-k8s.io" && !bare_pod)
      return;
    std::lock_guard<std::mutex> lock(mu_);
    // The first change of a burst wakes the loop, which takes the whole queue; one
    // notify per change woke it again and again during its pause after a step.
    if (changes_.empty()) cv_.notify_one();
    changes_.push_back(change);
  });
  std::map<std::string, RecoveredProcess> recovered;
  for (auto& p : processes_->Recover()) recovered[p.id] = p;
  executor_->SetRecovered(recovered);
  reconciler_->Build(*store_);
  executor_->SetRecovered({});
  StopOrphans(recovered);
  {
    std::lock_guard<std::mutex> lock(mu_);
    changes_.clear();  // the build read everything up to now
  }
  Step();
  thread_ = std::thread([this] { Loop(); });
  return Status();
}

void SchedulerController::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  if (subscription_ != 0 && store_ != nullptr) store_->hub().Unsubscribe(subscription_);
  subscription_ = 0;
  if (executor_ != nullptr) executor_->Shutdown();
  // Running processes are left running: a restarted server adopts them.
}

void SchedulerController::StopOrphans(const std::map<std::string, RecoveredProcess>& recovered) {
  std::set<std::string> owned;
  if (const engine::Engine* engine = reconciler_->engine()) {
    for (const auto& r : engine->workloads()) {
      if (r.phase != engine::Phase::kRunning) continue;
      for (auto& id : GangProcessIds(r.workload, r.plan)) owned.insert(std::move(id));
    }
  }
  for (const auto& [id, p] : recovered) {
    if (!p.running || orphans_.count(id) != 0 || owned.count(id) != 0) continue;
    Log("stopping process " + id + ": no running job owns it any more");
    processes_->Terminate(id, 10);
    orphans_.insert(id);
  }
}

bool SchedulerController::Step() {
  auto begin = std::chrono::steady_clock::now();
  const control::Reconciler::StepResult result = step_->Run();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (result.cycled) {
    UpdateMetrics(seconds);
    PublishView();  // the engine's state changes only in a cycle
  }
  return result.more;
}

void SchedulerController::PublishView() {
  if (views_ == nullptr) return;
  const auto begin = std::chrono::steady_clock::now();
  if (view_build_seconds_ >= kCheapViewSeconds &&
      std::chrono::duration<double>(begin - view_built_at_).count() <
          kViewCostFactor * view_build_seconds_) {
    return;  // the next cycle after the pause publishes what changed meanwhile
  }
  views_->Publish(reconciler_->BuildView(clock_.Now(), views_->Current().get()));
  view_built_at_ = std::chrono::steady_clock::now();
  view_build_seconds_ = std::chrono::duration<double>(view_built_at_ - begin).count();
}

void SchedulerController::Loop() {
  // Under load, a step (which holds the store for its batch) is followed by a pause
  // as long as it took, so the API gets at least half of the store however long the
  // step grows; changes queue meanwhile.
  auto next_step = std::chrono::steady_clock::now();
  bool more = false;  // the last step left writes for the next one
  while (true) {
    std::deque<WatchHub::ChangePtr> changes;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (std::chrono::steady_clock::now() < next_step) {
        cv_.wait_until(lock, next_step, [this] { return stopping_; });
      }
      // Then for something to do (at least every 100 ms: timers, resyncs); the pause
      // alone ended in a step whether or not anything had changed, so an idle server
      // stepped without a break.
      if (!more) {
        cv_.wait_for(lock, std::chrono::milliseconds(100),
                     [this] { return stopping_ || !changes_.empty(); });
      }
      if (stopping_) return;
      changes.swap(changes_);
    }
    for (const auto& c : changes) reconciler_->Apply(*c);
    auto begin = std::chrono::steady_clock::now();
    more = Step();
    auto end = std::chrono::steady_clock::now();
    next_step = end + (end - begin);
  }
}

}  // namespace muster::server
