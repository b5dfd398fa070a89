#include "kube/kube_load.h"

#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "kube/fake_job_controller.h"
#include "kube/fake_kubelet.h"
#include "kube/kube_controller.h"
#include "kube/object_cache.h"
#include "kube/reflector.h"

namespace muster::kube::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
constexpr const char* kNamespace = "bench";

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

void SleepSeconds(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

char* Format(char* buf, size_t size, const char* fmt, double v) {
  std::snprintf(buf, size, fmt, v);
  return buf;
}

json NodeObject(int i, const LoadOptions& o) {
  char name[32];
  std::snprintf(name, sizeof name, "node-%05d", i);
  const json resources = {{"cpu", std::to_string(o.cpus_per_node)},
                          {"memory", "1536Gi"},
                          {"pods", "110"},
                          {"nvidia.com/gpu", std::to_string(o.gpus_per_node)},
                          {"ephemeral-storage", "1Ti"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {"kubernetes.io/os", "linux"},
              {"kubernetes.io/arch", "amd64"}}}}},
          {"status",
           {{"capacity", resources},
            {"allocatable", resources},
            {"conditions",
             json::array({{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}})}}}};
}

std::vector<json> QueueObjects(const LoadOptions& o) {
  return {
      {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
       {"kind", "ResourceFlavor"},
       {"metadata", {{"name", "default-flavor"}}},
       {"spec", json::object()}},
      {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
       {"kind", "ClusterQueue"},
       {"metadata", {{"name", "cq"}}},
       {"spec",
        {{"namespaceSelector", json::object()},
         {"resourceGroups",
          json::array(
              {{{"coveredResources", {"cpu", "nvidia.com/gpu"}},
                {"flavors",
                 json::array(
                     {{{"name", "default-flavor"},
                       {"resources",
                        json::array({{{"name", "cpu"},
                                      {"nominalQuota", std::to_string(o.cpus_per_node * o.nodes)}},
                                     {{"name", "nvidia.com/gpu"},
                                      {"nominalQuota",
                                       std::to_string(o.gpus_per_node * o.nodes)}}})}}})}}})}}}},
      {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
       {"kind", "LocalQueue"},
       {"metadata", {{"name", "lq"}, {"namespace", kNamespace}}},
       {"spec", {{"clusterQueue", "cq"}}}},
  };
}

// As bench/kube_real/kube_real.py makes them for muster: suspended, queue-labelled.
json JobObject(int i, const LoadOptions& o) {
  char name[32];
  std::snprintf(name, sizeof name, "train-%05d", i);
  const json labels = {{"kueue.x-k8s.io/queue-name", "lq"}};
  json spec = {{"restartPolicy", "Never"},
               {"terminationGracePeriodSeconds", 30},
               {"schedulerName", "muster"},
               {"containers", json::array({{{"name", "worker"},
                                            {"image", "registry.invalid/trainer:1"},
                                            {"command", {"sleep", "infinity"}},
                                            {"resources",
                                             {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}},
                                              {"limits", {{"nvidia.com/gpu", "1"}}}}}}})}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}, {"namespace", kNamespace}, {"labels", labels}}},
          {"spec",
           {{"completionMode", "Indexed"},
            {"completions", o.pods_per_job},
            {"parallelism", o.pods_per_job},
            {"backoffLimit", 0},
            {"suspend", true},
            {"template", {{"metadata", {{"labels", labels}}}, {"spec", spec}}}}}};
}

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

double LoadAverage() {
  double load = 0;
  std::ifstream("/proc/loadavg") >> load;
  return load;
}

// Waits until `done` or until `progress` (a count) has not grown for stall_seconds.
bool WaitProgress(const LoadOptions& o, const std::function<bool()>& done,
                  const std::function<int64_t()>& progress, const std::string& what,
                  std::string* stalled) {
  int64_t last = progress();
  Clock::time_point moved = Clock::now();
  Clock::time_point logged = Clock::now();
  while (!done()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int64_t now = progress();
    if (now != last) {
      last = now;
      moved = Clock::now();
    }
    if (o.log && Clock::now() - logged > std::chrono::seconds(10)) {
      logged = Clock::now();
      o.log(what + ": " + std::to_string(now));
    }
    if (Seconds(Clock::now() - moved) > o.stall_seconds) {
      *stalled = what + " (at " + std::to_string(now) + ")";
      return false;
    }
  }
  return true;
}

class InProcess : public SchedulerUnderTest {
 public:
  explicit InProcess(double resync_seconds) : resync_seconds_(resync_seconds) {}
  Status Start(const FakeApiServer& server) override {
    client_ = std::make_unique<KubeClient>(server.connection());
    cache_ = std::make_unique<ObjectCache>();
    KubeOptions options;
    options.resync_seconds = resync_seconds_;
    for (const control::ResourceType* t : WatchedResources()) {
      options.watched.push_back(t->StoreKey());
      reflectors_.push_back(std::make_unique<Reflector>(*client_, *t, *cache_, ReflectorOptions{}));
    }
    controller_ = std::make_unique<KubeController>(*client_, *cache_, options);
    controller_->Start();
    for (auto& r : reflectors_) r->Start();
    return Status::Ok();
  }
  void Stop() override {
    if (!controller_) return;
    for (auto& r : reflectors_) r->RequestStop();
    controller_->Stop();
    for (auto& r : reflectors_) r->Stop();
    controller_.reset();
    reflectors_.clear();
    cache_.reset();
    client_.reset();
  }
  std::optional<Usage> Sample() override { return std::nullopt; }

 private:
  double resync_seconds_;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<ObjectCache> cache_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::unique_ptr<KubeController> controller_;
};

}  // namespace

std::unique_ptr<SchedulerUnderTest> InProcessScheduler(double resync_seconds) {
  return std::make_unique<InProcess>(resync_seconds);
}

LoadResult RunLoad(const LoadOptions& o, SchedulerUnderTest& scheduler) {
  LoadResult r;
  const int64_t gangs =
      std::min<int64_t>(o.jobs, int64_t{o.nodes} * o.gpus_per_node / o.pods_per_job);
  r.fitting = gangs * o.pods_per_job;
  auto log = [&](const std::string& line) {
    if (o.log) o.log(line);
  };

  FakeApiServer fake;
  for (int i = 0; i < o.nodes; ++i) fake.Create(NodeObject(i, o));
  for (auto& q : QueueObjects(o)) fake.Create(std::move(q));
  FakeJobController jobs(fake.store());
  FakeKubelet kubelet(fake.store());
  fake.SetDelay(o.delay);

  if (Status s = scheduler.Start(fake); !s.ok()) {
    r.stalled = "start: " + s.ToString();
    return r;
  }
  auto synced = [&] {
    auto cq = fake.store().Get({"clusterqueues.kueue.x-k8s.io", "", "cq"});
    return cq.ok() && cq->contains("status");
  };
  // Done, or the run cannot go on: stop the scheduler and return what was measured.
  auto finish = [&] {
    const Clock::time_point stop = Clock::now();
    scheduler.Stop();
    r.stop_s = Seconds(Clock::now() - stop);
    r.pods_created = jobs.pods_created();
    return r;
  };
  if (!WaitProgress(
          o, synced, [] { return 0; }, "waiting for muster kube to sync", &r.stalled)) {
    return finish();
  }
  log("synced; creating " + std::to_string(o.jobs) + " Jobs");

  const int64_t requests_before = fake.CountRequests("", "");
  const std::optional<Usage> before = scheduler.Sample();
  if (before) r.rss_start_bytes = before->rss_bytes;
  if (o.on_binding_start) o.on_binding_start();
  r.load_start = LoadAverage();
  const double harness_before = ProcessCpuSeconds();
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < o.jobs; ++i) fake.Create(JobObject(i, o));
  r.create_s = Seconds(Clock::now() - start);

  auto bound = [&] { return kubelet.counts().bound; };
  const bool all_bound = WaitProgress(
      o, [&] { return bound() >= r.fitting; }, bound, "pods bound", &r.stalled);
  const std::optional<Usage> at_bound = scheduler.Sample();
  r.harness_cpu_s = ProcessCpuSeconds() - harness_before;
  if (o.on_binding_end) o.on_binding_end();
  const FakeKubelet::Counts counts = kubelet.counts();
  r.bound = counts.bound;
  r.requests = fake.CountRequests("", "") - requests_before;
  if (counts.first_bound) r.first_bound_s = Seconds(*counts.first_bound - start);
  if (counts.last_bound) r.bind_s = Seconds(*counts.last_bound - start);
  if (r.bind_s > 0) r.pods_per_s = static_cast<double>(r.bound) / r.bind_s;
  if (before && at_bound) {
    r.cpu_s = at_bound->cpu_seconds - before->cpu_seconds;
    if (r.bound > 0) r.ms_per_pod = *r.cpu_s * 1000 / static_cast<double>(r.bound);
  }
  if (!all_bound) return finish();
  log("all " + std::to_string(r.fitting) + " fitting pods bound");

  auto running = [&] { return kubelet.counts().running; };
  if (!WaitProgress(
          o, [&] { return running() >= r.fitting; }, running, "pods Running", &r.stalled)) {
    return finish();
  }
  SleepSeconds(o.settle_seconds);
  const std::optional<Usage> idle_start = scheduler.Sample();
  SleepSeconds(o.idle_seconds);
  const std::optional<Usage> idle_end = scheduler.Sample();
  if (idle_start && idle_end) {
    r.idle_pct = (idle_end->cpu_seconds - idle_start->cpu_seconds) * 100 / o.idle_seconds;
    r.rss_bytes = idle_end->rss_bytes;
    r.hwm_bytes = idle_end->hwm_bytes;
  }

  // Newest first: the Jobs still pending go before any quota is freed, so none of
  // them is admitted on the way out (upstream's GC order is arbitrary; this keeps the
  // run to the pods that fit).
  log("deleting every Job");
  for (int i = o.jobs - 1; i >= 0; --i) {
    const std::string name = JobObject(i, o)["metadata"]["name"].get<std::string>();
    (void)fake.store().Delete({"jobs.batch", kNamespace, name});
  }
  auto live = [&] { return kubelet.counts().live; };
  if (!WaitProgress(
          o, [&] { return live() == 0; }, [&] { return -live(); }, "pods left", &r.stalled)) {
    return finish();
  }
  SleepSeconds(o.settle_seconds);
  if (auto after = scheduler.Sample()) r.rss_after_delete_bytes = after->rss_bytes;
  return finish();
}

std::string LoadResult::Line() const {
  char buf[64];
  std::string s = "fitting=" + std::to_string(fitting) + " bound=" + std::to_string(bound) +
                  " pods_created=" + std::to_string(pods_created);
  s += " create_s=" + std::string(Format(buf, sizeof buf, "%.2f", create_s));
  s += " first_bound_s=" + std::string(Format(buf, sizeof buf, "%.2f", first_bound_s));
  s += " bind_s=" + std::string(Format(buf, sizeof buf, "%.2f", bind_s));
  s += " pods_per_s=" + std::string(Format(buf, sizeof buf, "%.1f", pods_per_s));
  s += " requests=" + std::to_string(requests);
  if (cpu_s) s += " cpu_s=" + std::string(Format(buf, sizeof buf, "%.2f", *cpu_s));
  if (ms_per_pod) s += " ms_per_pod=" + std::string(Format(buf, sizeof buf, "%.3f", *ms_per_pod));
  if (idle_pct) s += " idle_pct=" + std::string(Format(buf, sizeof buf, "%.2f", *idle_pct));
  auto mb = [&](int64_t bytes) {
    return std::string(Format(buf, sizeof buf, "%.0f", static_cast<double>(bytes) / 1e6));
  };
  if (rss_bytes) s += " rss_mb=" + mb(*rss_bytes);
  if (hwm_bytes) s += " hwm_mb=" + mb(*hwm_bytes);
  if (rss_after_delete_bytes) s += " rss_after_delete_mb=" + mb(*rss_after_delete_bytes);
  if (rss_start_bytes) s += " rss_start_mb=" + mb(*rss_start_bytes);
  s += " harness_cpu_s=" + std::string(Format(buf, sizeof buf, "%.2f", harness_cpu_s));
  s += " load_start=" + std::string(Format(buf, sizeof buf, "%.1f", load_start));
  s += " stop_s=" + std::string(Format(buf, sizeof buf, "%.2f", stop_s));
  if (!stalled.empty()) s += " stalled=\"" + stalled + "\"";
  return s;
}

std::string LoadResult::Json() const {
  json j = {{"fitting", fitting},
            {"bound", bound},
            {"pods_created", pods_created},
            {"create_s", create_s},
            {"first_bound_s", first_bound_s},
            {"bind_s", bind_s},
            {"pods_per_s", pods_per_s},
            {"requests", requests},
            {"harness_cpu_s", harness_cpu_s},
            {"load_start", load_start},
            {"stop_s", stop_s}};
  if (cpu_s) j["cpu_s"] = *cpu_s;
  if (ms_per_pod) j["ms_per_pod"] = *ms_per_pod;
  if (idle_pct) j["idle_pct"] = *idle_pct;
  if (rss_bytes) j["rss_bytes"] = *rss_bytes;
  if (hwm_bytes) j["hwm_bytes"] = *hwm_bytes;
  if (rss_after_delete_bytes) j["rss_after_delete_bytes"] = *rss_after_delete_bytes;
  if (rss_start_bytes) j["rss_start_bytes"] = *rss_start_bytes;
  if (!stalled.empty()) j["stalled"] = stalled;
  return j.dump();
}

}  // namespace muster::kube::testing
