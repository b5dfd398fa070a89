#include "kube/fake_kubelet.h"

#include <ctime>
#include <utility>

namespace muster::kube::testing {
namespace {

using nlohmann::json;

std::string StatusTime() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

FakeKubelet::FakeKubelet(server::ObjectStore& store)
    : store_(store),
      worker_(
          store, [this](const StoreChangeWorker::ChangePtr& change) { return Observe(change); },
          [this](StoreChangeWorker::Batch& batch) { ReportRunning(batch); }) {}

bool FakeKubelet::Observe(const StoreChangeWorker::ChangePtr& change) {
  // Runs under the store's write lock: note the time, nothing else.
  if (change->resource != "pods") return false;
  const json& md = change->Object()["metadata"];
  const std::string uid = md.value("uid", "");
  std::lock_guard<std::mutex> lock(mu_);
  if (change->type == control::ChangeType::kDeleted) {
    live_.erase(uid);
    running_.erase(uid);
    return false;
  }
  live_.insert(uid);
  const json& object = change->Object();
  auto spec = object.find("spec");
  if (spec == object.end() || !spec->is_object() || spec->value("nodeName", "").empty()) {
    return false;
  }
  if (bound_.insert(uid).second) {
    const TimePoint now = std::chrono::steady_clock::now();
    if (!counts_.first_bound) counts_.first_bound = now;
    counts_.last_bound = now;
  }
  auto status = object.find("status");
  const std::string phase =
      status != object.end() && status->is_object() ? status->value("phase", "") : "";
  if (phase == "Running") running_.insert(uid);
  return phase == "Pending" || phase.empty();
}

FakeKubelet::Counts FakeKubelet::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  Counts c = counts_;
  c.bound = static_cast<int64_t>(bound_.size());
  c.live = static_cast<int64_t>(live_.size());
  c.running = static_cast<int64_t>(running_.size());
  return c;
}

void FakeKubelet::ReportRunning(const StoreChangeWorker::Batch& batch) {
  // One status write per pod, all in one store commit.
  int64_t refused = 0;
  (void)store_.Batch([&] {
    for (const auto& change : batch) {
      const json& md = change->Object()["metadata"];
      const std::string uid = md.value("uid", "");
      auto written = store_.Mutate(
          {"pods", change->namespace_, change->name},
          [&](const json& current) -> Result<json> {
            if (current["metadata"].value("uid", "") != uid) {
              return Status(StatusCode::kNotFound, "replaced");
            }
            json next = current;
            const std::string now = StatusTime();
            json& status = next["status"];
            if (status.value("phase", "") == "Running") return next;
            status["phase"] = "Running";
            status["startTime"] = now;
            status["hostIP"] = "10.0.0.1";
            status["podIP"] = "10.1.0.1";
            status["conditions"] = json::array();
            for (const char* type : {"Initialized", "ContainersReady", "Ready", "PodScheduled"}) {
              status["conditions"].push_back(
                  {{"type", type}, {"status", "True"}, {"lastTransitionTime", now}});
            }
            return next;
          },
          server::WriteScope::kStatus);
      if (!written.ok() && written.status().code() != StatusCode::kNotFound) ++refused;
    }
  });
  std::lock_guard<std::mutex> lock(mu_);
  counts_.errors += refused;
}

}  // namespace muster::kube::testing
