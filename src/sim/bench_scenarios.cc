// The placement and admission scenarios of `muster bench`, and the dispatcher.
#include "sim/bench_scenarios.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <memory>
#include <string>
#include <variant>

#include "core/resource_name.h"
#include "engine/engine.h"
#include "placement/placement.h"
#include "sim/bench_decisions.h"
#include "sim/event_queue.h"
#include "sim/generator.h"

namespace muster::sim {
namespace bench_internal {

namespace {
double NowWall() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double NowCpu() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto tv = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return tv(u.ru_utime) + tv(u.ru_stime);
}
}  // namespace

Stopwatch::Stopwatch() : wall0_(NowWall()), cpu0_(NowCpu()) {}
double Stopwatch::WallSeconds() const { return NowWall() - wall0_; }
double Stopwatch::CpuSeconds() const { return NowCpu() - cpu0_; }

double Percentile(std::vector<double>& values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

void SetLatency(BenchResult& r, std::vector<double>& ms) {
  r.p50_ms = Percentile(ms, 0.50);
  r.p99_ms = Percentile(ms, 0.99);
  r.max_ms = Percentile(ms, 1.0);
}

int64_t Scaled(int64_t n, double scale) {
  return std::max<int64_t>(1, std::llround(static_cast<double>(n) * scale));
}

namespace {

void Finish(BenchResult& r, const Stopwatch& sw) {
  r.wall_seconds = sw.WallSeconds();
  r.cpu_seconds = sw.CpuSeconds();
  r.throughput = r.wall_seconds > 0 ? static_cast<double>(r.work) / r.wall_seconds : 0;
}

// kube-scheduler SchedulingBasic's pod: small cpu/memory requests, no devices, no queue.
model::Workload BasicPod(int64_t i) {
  model::Workload w;
  w.meta.kind = "Pod";
  w.meta.api_version = "v1";
  w.meta.namespace_ = "default";
  w.meta.name = "pod-" + std::to_string(1000000 + i);
  w.meta.order = i;
  w.key = w.meta.namespace_ + "/" + w.meta.name;
  model::PodSet ps;
  ps.name = "main";
  ps.requests.Set(kCpu, 1000);
  ps.requests.Set(kMemory, 4 * kGi);
  w.pod_sets.push_back(std::move(ps));
  w.min_available = 1;
  return w;
}

// The planner loop of gang-10k (and placement-5k's fallback): plan, commit; when
// the cluster is full, release the oldest running gangs and retry. Latency per gang
// counts every plan attempt and the commit, not the releases.
struct PlannerRun {
  int64_t pods = 0;
  int64_t gangs = 0;
  int64_t unplaceable = 0;  // do not fit even on an empty enough cluster
  int64_t release_rounds = 0;
  double busy_seconds = 0;
  std::vector<double> gang_ms;
};

PlannerRun RunPlanner(placement::ClusterState& cluster, const placement::GangPlanner& planner,
                      std::vector<model::Workload>& workloads, std::string* decisions) {
  PlannerRun run;
  std::deque<const model::Workload*> running;
  run.gang_ms.reserve(workloads.size());
  for (auto& w : workloads) {
    placement::PlacementRequest req;
    req.workload = &w;
    double spent = 0;
    bool placed = false;
    while (true) {
      Stopwatch sw;
      auto r = planner.Plan(cluster, req);
      bool ok = false;
      if (auto* plan = std::get_if<placement::GangPlan>(&r)) {
        ok = cluster.Commit(*plan, w).ok();
        if (ok) run.pods += static_cast<int64_t>(plan->pods.size());
        if (ok && decisions != nullptr) AppendPlan(cluster, *plan, *decisions);
      }
      spent += sw.WallSeconds();
      if (ok) {
        placed = true;
        break;
      }
      if (running.empty()) break;
      ++run.release_rounds;
      for (int k = 0; k < 8 && !running.empty(); ++k) {
        cluster.Release(running.front()->key);
        running.pop_front();
      }
    }
    run.busy_seconds += spent;
    if (placed) {
      ++run.gangs;
      running.push_back(&w);
      run.gang_ms.push_back(spent * 1e3);
    } else {
      ++run.unplaceable;
    }
  }
  return run;
}

Result<std::unique_ptr<placement::ClusterState>> BuildState(const model::ManifestSet& m) {
  return placement::BuildClusterState(m.nodes, m.node_topologies, m.topologies, m.hyper_nodes);
}

}  // namespace

Result<BenchResult> Placement5k(const BenchOptions& options) {
  BenchResult r;
  r.scenario = "placement-5k";
  r.unit = "pods";
  Stopwatch setup;
  ClusterSpec cs;
  cs.nodes = static_cast<int32_t>(Scaled(5000, options.scale));
  const int64_t pods = Scaled(50000, options.scale);
  r.size = std::to_string(cs.nodes) + " nodes, " + std::to_string(pods) + " single-pod workloads";
  model::ManifestSet m = GenerateCluster(cs);
  std::vector<model::Workload> workloads;
  workloads.reserve(static_cast<size_t>(pods));
  for (int64_t i = 0; i < pods; ++i) workloads.push_back(BasicPod(i));
  std::vector<std::string> keys;
  keys.reserve(workloads.size());
  for (const auto& w : workloads) keys.push_back(w.key);

  // The real engine path: Submit, then RunCycle (admission of queue-less
  // workloads, the planner through the PlacementBridge, commit), in batches of
  // 1,000 arrivals per cycle as kube-scheduler's measured pods arrive.
  auto parts = engine::BuildEngineParts(m);
  if (!parts.ok()) return parts.status();
  if (options.no_shortcuts) parts->admitter->DisableShortcuts();
  SimClock clock;
  engine::Engine eng(m, std::move(workloads), std::move(*parts), clock);
  r.setup_seconds = setup.WallSeconds();
  r.path = "engine";
  r.p99_of = "cycle";
  std::vector<double> cycle_ms;
  const int64_t batch = 1000;
  Stopwatch sw;
  for (int64_t start = 0; start < pods; start += batch) {
    const int64_t arrival_wave = start / batch;  // virtual seconds: one wave a second
    clock.Set(static_cast<double>(arrival_wave));
    Stopwatch cycle;
    for (int64_t i = start; i < std::min(pods, start + batch); ++i) {
      Status s = eng.Submit(keys[static_cast<size_t>(i)]);
      if (!s.ok()) return s;
    }
    Status s = eng.RunCycle();
    if (!s.ok()) return s;
    cycle_ms.push_back(cycle.WallSeconds() * 1e3);
  }
  Finish(r, sw);
  int64_t running = 0;
  for (const auto& rec : eng.workloads()) running += rec.phase == engine::Phase::kRunning;
  r.work = running;
  r.throughput = r.wall_seconds > 0 ? static_cast<double>(r.work) / r.wall_seconds : 0;
  SetLatency(r, cycle_ms);
  r.details.push_back({"cycles", static_cast<double>(cycle_ms.size())});
  r.details.push_back({"pending", static_cast<double>(pods - running)});
  if (options.decisions != nullptr) AppendEngineDecisions(eng, *options.decisions);
  return r;
}

Result<BenchResult> Gang10k(const BenchOptions& options) {
  BenchResult r;
  r.scenario = "gang-10k";
  r.unit = "pods";
  r.path = "planner";  // per-gang latency needs one plan per gang, not engine cycles
  r.p99_of = "gang";
  Stopwatch setup;
  ClusterSpec cs;
  cs.nodes = static_cast<int32_t>(Scaled(10000, options.scale));
  cs.racks = static_cast<int32_t>(Scaled(250, options.scale));
  cs.blocks = static_cast<int32_t>(Scaled(25, options.scale));
  const int64_t target_pods = Scaled(100000, options.scale);
  model::ManifestSet m = GenerateCluster(cs);
  auto state = BuildState(m);
  if (!state.ok()) return state.status();
  // Enough jobs for the target; the mix averages about 35 pods per job.
  WorkloadSpec ws;
  ws.jobs = static_cast<int32_t>(target_pods / 10 + 16);
  ws.seed = 6;
  ws.rack_gpus = cs.nodes / EffectiveRacks(cs) * cs.gpus_per_node;
  std::vector<model::Workload> workloads;
  int64_t pods = 0;
  for (const auto& plan : PlanJobs(ws)) {
    if (pods >= target_pods) break;
    pods += plan.pods;
    workloads.push_back(PlanToWorkload(plan, static_cast<int64_t>(workloads.size())));
  }
  auto planner = placement::MakeGangPlanner(model::SchedulerConfiguration{});
  r.size = std::to_string(cs.nodes) + " nodes x 8 GPUs, " + std::to_string(EffectiveRacks(cs)) +
           " racks, " + std::to_string(workloads.size()) + " gangs / " + std::to_string(pods) +
           " pods";
  r.setup_seconds = setup.WallSeconds();
  Stopwatch sw;
  PlannerRun run = RunPlanner(**state, *planner, workloads, options.decisions);
  Finish(r, sw);
  r.work = run.pods;
  // Throughput over plan + commit time only: the releases that make room stand in
  // for completions, which are not the scheduler's work.
  r.throughput = run.busy_seconds > 0 ? static_cast<double>(run.pods) / run.busy_seconds : 0;
  SetLatency(r, run.gang_ms);
  r.details.push_back({"gangs", static_cast<double>(run.gangs)});
  r.details.push_back({"unplaceable", static_cast<double>(run.unplaceable)});
  r.details.push_back({"release_rounds", static_cast<double>(run.release_rounds)});
  return r;
}

Result<BenchResult> Admission1kCq(const BenchOptions& options) {
  BenchResult r;
  r.scenario = "admission-1k-cq";
  r.unit = "admissions";
  r.path = "engine";
  // The headline latency is a wave's (its submissions and the cycles they take); the
  // admission cycles' own p50/p99/max are in the details.
  r.p99_of = "wave";
  Stopwatch setup;
  ClusterSpec cs;
  cs.cluster_queues = static_cast<int32_t>(Scaled(1000, options.scale));
  cs.cohorts = static_cast<int32_t>(Scaled(100, options.scale));
  cs.nodes = cs.cluster_queues;  // one 8-GPU node of nominal quota per ClusterQueue
  const int64_t total = Scaled(50000, options.scale);
  model::ManifestSet m = GenerateCluster(cs);
  auto classes = GeneratedPriorityClasses();
  std::vector<model::Workload> workloads;
  workloads.reserve(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) {
    JobPlan p;
    p.name = "wl-" + std::to_string(1000000 + i);
    char ns[32];
    std::snprintf(ns, sizeof(ns), "team-%04lld", static_cast<long long>(i % cs.cluster_queues));
    p.namespace_ = ns;
    p.local_queue = "lq";
    p.pods = 1 + static_cast<int32_t>(i % 2);
    p.gpus_per_pod = 1;
    p.cpu_milli_per_pod = 4000;
    p.memory_gi_per_pod = 32;
    // Later waves carry higher priorities, so they preempt within their queue and
    // reclaim lent quota in the cohort.
    const auto& pc = classes[static_cast<size_t>((i * 7 / total + i % 3) % 3)];
    p.priority_class = pc.meta.name;
    p.priority = pc.value;
    workloads.push_back(PlanToWorkload(p, i));
  }
  std::vector<std::string> keys;
  keys.reserve(workloads.size());
  for (const auto& w : workloads) keys.push_back(w.key);
  auto parts = engine::BuildEngineParts(m);
  if (!parts.ok()) return parts.status();
  if (options.no_shortcuts) parts->admitter->DisableShortcuts();
  SimClock clock;
  // One admission cycle per RunCycle call, so each is timed on its own (what Kueue
  // calls a scheduling cycle); the calls of a wave make the same cycles as one call.
  engine::EngineOptions eo;
  eo.max_cycles_per_call = 1;
  engine::Engine eng(m, std::move(workloads), std::move(*parts), clock, eo);
  r.size = std::to_string(cs.cluster_queues) + " ClusterQueues in " + std::to_string(cs.cohorts) +
           " cohorts, " + std::to_string(cs.nodes) + " nodes, " + std::to_string(total) +
           " workloads";
  r.setup_seconds = setup.WallSeconds();

  // Ten arrival waves; before each, a deterministic seventh of the running
  // workloads finishes (freeing quota some other queue borrows or reclaims).
  const int waves = 10;
  std::vector<double> cycle_ms, admission_cycle_ms;
  int64_t admissions = 0, preemptions = 0;
  double busy = 0;
  Stopwatch all;
  for (int wave = 0; wave < waves; ++wave) {
    clock.Set(wave);
    std::vector<std::string> done;
    int64_t seen = 0;
    for (const auto& rec : eng.workloads()) {
      if (rec.phase == engine::Phase::kRunning && ++seen % 7 == 0) done.push_back(rec.workload.key);
    }
    for (const auto& key : done) {
      Status s = eng.Succeed(key);
      if (!s.ok()) return s;
    }
    Stopwatch cycle;
    for (int64_t i = total * wave / waves; i < total * (wave + 1) / waves; ++i) {
      Status s = eng.Submit(keys[static_cast<size_t>(i)]);
      if (!s.ok()) return s;
    }
    for (int calls = 0; calls == 0 || !eng.Settled(); ++calls) {
      if (calls == 1000) return Internal("admission-1k-cq: wave did not settle in 1000 cycles");
      Stopwatch one;
      Status s = eng.RunCycle();
      if (!s.ok()) return s;
      admission_cycle_ms.push_back(one.WallSeconds() * 1e3);
    }
    double dt = cycle.WallSeconds();
    busy += dt;
    cycle_ms.push_back(dt * 1e3);
    for (const auto& rec : eng.workloads()) {
      if (rec.admit_time && *rec.admit_time == wave) ++admissions;
      for (const auto& e : rec.evictions) preemptions += e.time == wave;
    }
  }
  r.wall_seconds = busy;
  r.cpu_seconds = all.CpuSeconds();
  r.work = admissions;
  r.throughput = busy > 0 ? static_cast<double>(admissions) / busy : 0;
  SetLatency(r, cycle_ms);
  r.details.push_back({"cycles", static_cast<double>(eng.cycles())});
  r.details.push_back({"preemptions", static_cast<double>(preemptions)});
  // `cycle` above is a whole wave (its 5,000 arrivals and about six admission
  // cycles); these are the admission cycles one by one.
  r.details.push_back({"admission_cycle_p50_ms", Percentile(admission_cycle_ms, 0.50)});
  r.details.push_back({"admission_cycle_p99_ms", Percentile(admission_cycle_ms, 0.99)});
  r.details.push_back({"admission_cycle_max_ms", Percentile(admission_cycle_ms, 1.0)});
  if (options.decisions != nullptr) AppendEngineDecisions(eng, *options.decisions);
  return r;
}

}  // namespace bench_internal

std::vector<std::string> BenchScenarioNames() {
  return {"placement-5k", "gang-10k", "admission-1k-cq", "kueue-baseline", "sim-philly"};
}

Result<BenchResult> RunBenchScenario(const std::string& name, const BenchOptions& options) {
  Result<BenchResult> r = InvalidArgument("unknown scenario \"" + name + "\"");
  if (name == "placement-5k") r = bench_internal::Placement5k(options);
  if (name == "gang-10k") r = bench_internal::Gang10k(options);
  if (name == "admission-1k-cq") r = bench_internal::Admission1kCq(options);
  if (name == "kueue-baseline") r = bench_internal::KueueBaseline(options);
  if (name == "sim-philly") r = bench_internal::SimPhilly(options);
  if (r.ok()) {
    r->scale = options.scale;
    r->peak_rss_kb = PeakRssKb();
  }
  return r;
}

int64_t PeakRssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return 0;
}

}  // namespace muster::sim
