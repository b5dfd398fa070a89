#include "kube/kube_controller.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iostream>

#include "control/process_heap.h"

namespace muster::kube {

Time KubeController::WallClock::Now() const {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

KubeController::KubeController(KubeClient& client, ObjectCache& cache, KubeOptions options)
    : client_(client), cache_(cache), options_(std::move(options)) {}

KubeController::~KubeController() { Stop(); }

void KubeController::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_) return;
    started_ = true;
    stopping_ = false;
  }
  sink_ = std::make_unique<ApiSink>(client_, options_.write_workers, [this] {
    std::lock_guard<std::mutex> lock(mu_);
    const bool wake = LoopAwaitsWork();
    results_ready_ = true;
    if (wake) cv_.notify_one();
  });
  control::ReconcilerOptions ro;
  ro.mode = control::ReconcilerMode::kCluster;
  ro.manage_jobs_without_queue_name = options_.manage_jobs_without_queue_name;
  ro.scheduler_names = options_.scheduler_names;
  ro.resync_seconds = options_.resync_seconds;
  ro.queue_status_interval = options_.queue_status_seconds;
  ro.scheduler_config = options_.scheduler_config;
  ro.kueue_config = options_.kueue_config;
  ro.log = [](const std::string& line) { std::cerr << "muster kube: " << line << std::endl; };
  reconciler_ = std::make_unique<control::Reconciler>(clock_, *sink_, nullptr, std::move(ro));
  synced_ = false;
  cache_.Subscribe([this](control::Change change) {
    std::lock_guard<std::mutex> lock(mu_);
    const bool wake = LoopAwaitsWork();
    changes_.push_back(std::move(change));
    if (wake) cv_.notify_one();
  });
  thread_ = std::thread([this] { Loop(); });
}

void KubeController::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_) return;
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  cache_.Subscribe(nullptr);
  if (sink_) sink_->Stop();
  std::lock_guard<std::mutex> lock(mu_);
  started_ = false;
}

KubeController::Stats KubeController::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return published_;
}

void KubeController::Publish() {
  const auto& s = reconciler_->stats();
  Stats out;
  out.synced = synced_;
  out.cycles = s.cycles;
  out.bindings = s.bindings;
  out.conflicts = s.conflicts;
  out.admitted = s.admitted;
  out.evicted = s.evicted;
  out.parked = s.parked;
  std::lock_guard<std::mutex> lock(mu_);
  published_ = out;
}

void KubeController::PublishView() {
  if (options_.views == nullptr) return;
  options_.views->Publish(reconciler_->BuildView(clock_.Now(), options_.views->Current().get()));
}

void KubeController::Loop() {
  auto last_step = std::chrono::steady_clock::now();
  const auto resync = std::chrono::duration<double>(options_.resync_seconds);
  const auto min_interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(0.0, options_.min_step_interval_seconds)));
  bool again = true;
  while (true) {
    std::deque<control::Change> changes;
    bool results = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(again ? 20 : 200),
                   [this] { return stopping_ || HasWork(); });
      if (stopping_) return;
      // On the real API server a step per watch event made 57,000 steps for 8,000
      // pods; waiting out the interval batches what arrives meanwhile.
      const auto since_step = std::chrono::steady_clock::now() - last_step;
      if (synced_ && since_step < min_interval) {
        pacing_ = true;
        cv_.wait_for(lock, min_interval - since_step, [this] { return stopping_; });
        pacing_ = false;
        if (stopping_) return;
      }
      changes.swap(changes_);
      results = results_ready_;
      results_ready_ = false;
    }
    // Objects come from anyone with API access: one of an unexpected shape is logged
    // and skipped, never allowed to stop the scheduler.
    try {
      if (!synced_) {
        // The first complete view: build from it and adopt what runs. The changes
        // queued so far are in the view the build reads.
        if (!cache_.Synced(options_.watched)) continue;
        synced_ = true;
        reconciler_->Build(cache_);
        again = true;
      } else {
        for (const auto& c : changes) reconciler_->Apply(c);
      }
      auto now = std::chrono::steady_clock::now();
      if (trimmer_.Observe(cache_.size(),
                           std::chrono::duration<double>(now.time_since_epoch()).count())) {
        control::ReleaseFreeHeap();
      }
      if (changes.empty() && !results && !again && now - last_step < resync) continue;
      control::Reconciler::StepResult step = reconciler_->Step();
      last_step = now;
      if (step.cycled) PublishView();  // the engine's state changes only in a cycle
      // A failed write is tried again soon, not at the next resync.
      again = step.retry;
    } catch (const std::exception& e) {
      std::cerr << "muster kube: " << e.what() << " (retried next pass)" << std::endl;
      again = true;
    }
    Publish();
  }
}

}  // namespace muster::kube
