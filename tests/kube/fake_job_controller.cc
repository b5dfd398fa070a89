#include "kube/fake_job_controller.h"

#include <chrono>
#include <ctime>
#include <iostream>
#include <utility>

namespace muster::kube::testing {
namespace {

using nlohmann::json;

constexpr const char* kWorkloads = "workloads.kueue.x-k8s.io";

std::string Now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Upstream names a pod "<job>-<index>-<5 random characters>"; a counter keeps the
// names unique and the runs reproducible.
std::string Suffix(int64_t n) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string s(5, 'b');
  for (int i = 4; i >= 0; --i) {
    s[i] = kAlphabet[n % 27];
    n /= 27;
  }
  return s;
}

std::string JobOfPod(const json& pod) {
  const json& md = pod["metadata"];
  for (const auto& ref : md.value("ownerReferences", json::array())) {
    if (ref.value("kind", "") == "Job" && ref.value("controller", false)) {
      return md.value("namespace", "") + "/" + ref.value("name", "");
    }
  }
  return "";
}

}  // namespace

FakeJobController::FakeJobController(server::ObjectStore& store)
    : store_(store),
      worker_(
          store,
          // In the store's commit: only a look at the kind.
          [](const StoreChangeWorker::ChangePtr& change) {
            return change->resource == "jobs.batch" || change->resource == "pods" ||
                   change->resource == kWorkloads;
          },
          [this](StoreChangeWorker::Batch& batch) { Handle(batch); }) {}

int64_t FakeJobController::pods_created() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pods_created_;
}

int64_t FakeJobController::errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}

void FakeJobController::Handle(const StoreChangeWorker::Batch& batch) {
  for (const auto& change : batch) {
    if (change->resource == "jobs.batch") {
      OnJob(*change);
    } else if (change->resource == kWorkloads) {
      OnWorkload(*change);
    } else {
      OnPod(*change);
    }
  }
}

void FakeJobController::OnJob(const control::Change& change) {
  const std::string key = change.namespace_ + "/" + change.name;
  const json& job = change.Object();
  const std::string uid = job["metadata"].value("uid", "");
  auto it = jobs_.find(key);
  if (it != jobs_.end() && it->second.uid != uid) {
    // The same name again: the earlier Job's pods are garbage.
    DeletePods(change.namespace_, change.name, it->second);
    jobs_.erase(it);
    it = jobs_.end();
  }
  if (change.type == control::ChangeType::kDeleted) {
    if (it != jobs_.end()) {
      DeletePods(change.namespace_, change.name, it->second);
      jobs_.erase(it);
    }
    pods_of_.erase(key);
    // The garbage collector: every other object the Job owned goes too.
    auto owned = workloads_of_.find(uid);
    if (owned != workloads_of_.end()) {
      (void)store_.Batch([&] {
        for (const auto& wl : owned->second) {
          const size_t slash = wl.find('/');
          (void)store_.Delete({kWorkloads, wl.substr(0, slash), wl.substr(slash + 1)});
        }
      });
      workloads_of_.erase(owned);
    }
    return;
  }
  JobState& state = it != jobs_.end() ? it->second : jobs_[key];
  state.uid = uid;
  const bool suspended = job.value("spec", json::object()).value("suspend", false);
  if (suspended && state.pods > 0) {
    DeletePods(change.namespace_, change.name, state);
  } else if (!suspended && state.pods == 0) {
    CreatePods(job, state);
  }
}

void FakeJobController::OnPod(const control::Change& change) {
  const std::string key = JobOfPod(change.Object());
  auto job = jobs_.find(key);
  if (key.empty() || job == jobs_.end()) return;
  auto& pods = pods_of_[key];
  auto pod = pods.find(change.name);
  if (pod == pods.end()) return;
  JobState& state = job->second;
  if (change.type == control::ChangeType::kDeleted) return;  // counted when deleted here
  const bool running =
      change.Object().value("status", json::object()).value("phase", "") == "Running";
  if (!running || pod->second) return;
  pod->second = true;
  ++state.running;
  if (state.running < state.pods || state.ready_written) return;
  state.ready_written = true;
  const int ready = state.running;
  auto written = store_.Mutate(
      {"jobs.batch", change.namespace_, key.substr(key.find('/') + 1)},
      [&](const json& current) -> Result<json> {
        json next = current;
        next["status"]["ready"] = ready;
        return next;
      },
      server::WriteScope::kStatus);
  if (!written.ok() && written.status().code() != StatusCode::kNotFound) {
    std::lock_guard<std::mutex> lock(mu_);
    ++errors_;
  }
}

void FakeJobController::OnWorkload(const control::Change& change) {
  const json& md = change.Object()["metadata"];
  const std::string key = change.namespace_ + "/" + change.name;
  for (const auto& ref : md.value("ownerReferences", json::array())) {
    if (ref.value("kind", "") != "Job") continue;
    const std::string owner = ref.value("uid", "");
    if (change.type == control::ChangeType::kDeleted) {
      auto it = workloads_of_.find(owner);
      if (it != workloads_of_.end()) it->second.erase(key);
    } else {
      workloads_of_[owner].insert(key);
    }
  }
}

void FakeJobController::CreatePods(const json& job, JobState& state) {
  const json& md = job["metadata"];
  const std::string name = md.value("name", "");
  const std::string ns = md.value("namespace", "");
  const std::string uid = md.value("uid", "");
  const json& spec = job["spec"];
  const int parallelism = spec.value("parallelism", 1);
  const json& tmpl = spec.value("template", json::object());
  const json tmpl_md = tmpl.value("metadata", json::object());
  auto& names = pods_of_[ns + "/" + name];
  int64_t created = 0;
  Status batch = store_.Batch([&] {
    for (int index = 0; index < parallelism; ++index) {
      const std::string i = std::to_string(index);
      json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
      json labels = tmpl_md.value("labels", json::object());
      labels["batch.kubernetes.io/job-name"] = name;
      labels["job-name"] = name;
      labels["batch.kubernetes.io/controller-uid"] = uid;
      labels["controller-uid"] = uid;
      labels["batch.kubernetes.io/job-completion-index"] = i;
      json annotations = tmpl_md.value("annotations", json::object());
      annotations["batch.kubernetes.io/job-completion-index"] = i;
      const std::string pod_name = name + "-" + i + "-" + Suffix(serial_++);
      pod["metadata"] = {{"name", pod_name},
                         {"namespace", ns},
                         {"labels", labels},
                         {"annotations", annotations},
                         {"ownerReferences", json::array({{{"apiVersion", "batch/v1"},
                                                           {"kind", "Job"},
                                                           {"name", name},
                                                           {"uid", uid},
                                                           {"controller", true},
                                                           {"blockOwnerDeletion", true}}})}};
      pod["spec"] = tmpl.value("spec", json::object());
      pod["spec"]["hostname"] = name + "-" + i;
      for (auto& c : pod["spec"]["containers"]) {
        c["env"].push_back({{"name", "JOB_COMPLETION_INDEX"},
                            {"valueFrom",
                             {{"fieldRef",
                               {{"fieldPath",
                                 "metadata.labels['batch.kubernetes.io/"
                                 "job-completion-index']"}}}}}});
      }
      pod["status"] = {{"phase", "Pending"}};
      if (store_.Create({"pods", ns, pod_name}, std::move(pod)).ok()) {
        names[pod_name] = false;
        ++created;
      }
    }
    (void)store_.Mutate(
        {"jobs.batch", ns, name},
        [&](const json& current) -> Result<json> {
          json next = current;
          next["status"]["active"] = static_cast<int>(created);
          next["status"]["ready"] = 0;
          if (!next["status"].contains("startTime")) next["status"]["startTime"] = Now();
          return next;
        },
        server::WriteScope::kStatus);
  });
  std::lock_guard<std::mutex> lock(mu_);
  if (!batch.ok()) {
    ++errors_;
    names.clear();
    return;
  }
  pods_created_ += created;
  state.pods = static_cast<int>(created);
  state.running = 0;
  state.ready_written = false;
}

void FakeJobController::DeletePods(const std::string& ns, const std::string& job, JobState& state) {
  auto& names = pods_of_[ns + "/" + job];
  Status batch = store_.Batch([&] {
    for (const auto& [pod, running] : names) (void)store_.Delete({"pods", ns, pod});
  });
  names.clear();
  state.pods = 0;
  state.running = 0;
  state.ready_written = false;
  if (!batch.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++errors_;
  }
}

}  // namespace muster::kube::testing
