// KubeLoad: issue 13's kube-mode measurement against the in-process fake API server
// (tests/kube/fake_api_server.h) instead of a real control plane
// (bench/kube_real/): N Nodes x G GPUs, a ResourceFlavor / ClusterQueue / LocalQueue
// owning all of it, then J suspended Indexed Jobs x P one-GPU pods with muster's
// queue label and schedulerName. FakeJobController makes the pods of admitted Jobs,
// FakeKubelet reports bound pods Running; the scheduler under test is muster kube,
// either in this process (the smoke test) or as a child process (the benchmark,
// bench/kube_fake/), so that its CPU and memory are its own.
//
// One run: set up, start the scheduler and wait until it has written the
// ClusterQueue's status (synced), create the Jobs, wait until every fitting pod is
// bound, let everything settle Running, measure an idle window, delete every Job,
// wait until every pod is gone, measure memory again, stop the scheduler.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/status.h"
#include "kube/fake_api_server.h"

namespace muster::kube::testing {

struct LoadOptions {
  int nodes = 50;
  int gpus_per_node = 8;
  int cpus_per_node = 96;
  int jobs = 60;
  int pods_per_job = 8;
  // Every API request muster makes waits this long before it is served (a real API
  // server's latency; 0: none).
  std::chrono::milliseconds delay{0};
  double settle_seconds = 2;  // before each idle or memory sample
  double idle_seconds = 5;    // the idle-CPU window
  // A run fails when nothing new is bound for this long, or when the scheduler has not
  // synced within it.
  double stall_seconds = 60;
  // Called just before the first Job create and once every fitting pod is bound (or
  // the wait stalled): where a profiler of the binding window starts and stops.
  std::function<void()> on_binding_start, on_binding_end;
  // Progress lines ("bound 4000/8000 after 12.3 s") go here when set.
  std::function<void(const std::string&)> log;
};

// What a scheduler process used so far: CPU seconds (user + system), resident and
// peak resident memory. Not known for a scheduler sharing this process.
struct Usage {
  double cpu_seconds = 0;
  int64_t rss_bytes = 0;
  int64_t hwm_bytes = 0;
};

// muster kube, started against a fake API server.
class SchedulerUnderTest {
 public:
  virtual ~SchedulerUnderTest() = default;
  virtual Status Start(const FakeApiServer& server) = 0;
  // Stops it (SIGTERM for a process) and waits until it has.
  virtual void Stop() = 0;
  // nullopt where its usage cannot be told apart from the harness's.
  virtual std::optional<Usage> Sample() = 0;
};

struct LoadResult {
  int64_t fitting = 0;  // pods of the gangs that fit: floor(GPUs / P) gangs, at most J
  int64_t bound = 0;    // pods bound when the run stopped waiting
  int64_t pods_created = 0;
  double create_s = 0;       // creating the J Jobs took
  double first_bound_s = 0;  // first Job create to the first pod bound
  double bind_s = 0;         // first Job create to the last fitting pod bound
  double pods_per_s = 0;     // fitting / bind_s
  int64_t requests = 0;      // API requests muster made, first Job create to all bound
  // From the scheduler's Sample(); absent for an in-process scheduler.
  std::optional<double> cpu_s;       // in the binding window
  std::optional<double> ms_per_pod;  // cpu_s / fitting
  std::optional<double> idle_pct;    // CPU over the idle window, % of one core
  std::optional<int64_t> rss_bytes, hwm_bytes, rss_after_delete_bytes;
  std::optional<int64_t> rss_start_bytes;  // synced, before the first Job create
  // This process's CPU in the binding window: the fake API server, Job controller
  // and kubelet (and muster kube too when it runs in-process).
  double harness_cpu_s = 0;
  double load_start = 0;  // the machine's 1-minute load average at the first create
  double stop_s = 0;      // Stop() took
  // Set when the run did not complete: what it waited for.
  std::string stalled;

  // "fitting=8000 bound=8000 bind_s=... " (absent figures left out).
  std::string Line() const;
  std::string Json() const;
};

// Runs the scenario once with a fresh fake API server.
LoadResult RunLoad(const LoadOptions& options, SchedulerUnderTest& scheduler);

// muster kube's KubeController and reflectors in this process, as `muster kube`
// wires them (kube/kube_mode.cc), with `resync_seconds`.
std::unique_ptr<SchedulerUnderTest> InProcessScheduler(double resync_seconds = 1.0);

}  // namespace muster::kube::testing
