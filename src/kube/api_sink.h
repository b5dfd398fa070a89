// ApiSink: the reconciler's writes sent to a Kubernetes API server
// (control/status_sink.h). Writes run on a small pool of worker threads, so they go
// out concurrently within the client's QPS and burst (KubeClient's rate limiter): a
// slow API server delays each job by its own writes only, and a gang's bindings start
// as soon as its own admission is written, not after every other job's. Results are
// queued for the reconciler's thread; `on_result` wakes it.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "control/status_sink.h"
#include "kube/api_writer.h"

namespace muster::kube {

class ApiSink : public control::StatusSink {
 public:
  // `workers`: concurrent requests at most (0: every write runs in Submit, on the
  // caller's thread). `on_result` is called (from a worker) after each result is queued.
  ApiSink(KubeClient& client, int workers, std::function<void()> on_result = nullptr);
  ~ApiSink() override;
  ApiSink(const ApiSink&) = delete;
  ApiSink& operator=(const ApiSink&) = delete;

  void Submit(control::WriteOp op) override;
  std::vector<control::WriteResult> TakeResults() override;

  // Drops the writes not started yet and waits for the running ones (shutdown).
  void Stop();

 private:
  void Work();
  // `op.object` is consumed: a Workload is written from it in place, not from a copy.
  control::WriteResult Run(control::WriteOp& op);
  control::WriteResult WriteWorkload(control::WriteOp& op);
  control::WriteResult WriteJob(const control::WriteOp& op, bool status);
  control::WriteResult PatchJob(const control::WriteOp& op, const nlohmann::json& patch);

  ApiWriter writer_;
  std::function<void()> on_result_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<control::WriteOp> queue_;
  std::vector<control::WriteResult> results_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace muster::kube
