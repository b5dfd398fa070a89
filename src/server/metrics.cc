#include "server/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace muster::server {
namespace {

// Shortest text that reads back as the same double, as Go's
// strconv.FormatFloat(v, 'g', -1, 64) in the Prometheus client.
std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

// Label values escape backslash, double quote and newline; help text escapes
// backslash and newline (exposition format 0.0.4).
std::string Escape(const std::string& s, bool quote) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

// `{a="x",b="y"}`, with an optional extra `le` pair; "" when there is nothing.
std::string LabelText(const Labels& labels, const std::string* le = nullptr) {
  if (labels.empty() && le == nullptr) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ',';
    out += labels[i].first + "=\"" + Escape(labels[i].second, true) + "\"";
  }
  if (le != nullptr) out += std::string(labels.empty() ? "" : ",") + "le=\"" + *le + "\"";
  return out + "}";
}

// Kueue's generateExponentialBuckets(14): 1, then 2.5 doubling 13 times (to 10240 s).
std::vector<double> KueueWaitBuckets() {
  std::vector<double> b = {1};
  for (double v = 2.5; b.size() < 14; v *= 2) b.push_back(v);
  return b;
}

}  // namespace

bool MetricsRegistry::Declare(std::string name, Type type, std::string help,
                              std::vector<double> buckets) {
  std::lock_guard lock(mu_);
  if (families_.count(name) != 0) return false;
  std::sort(buckets.begin(), buckets.end());
  Family f;
  f.type = type;
  f.help = std::move(help);
  f.buckets = std::move(buckets);
  families_.emplace(std::move(name), std::move(f));
  return true;
}

bool MetricsRegistry::DeclareCounter(std::string name, std::string help) {
  return Declare(std::move(name), Type::kCounter, std::move(help), {});
}

bool MetricsRegistry::DeclareGauge(std::string name, std::string help) {
  return Declare(std::move(name), Type::kGauge, std::move(help), {});
}

bool MetricsRegistry::DeclareHistogram(std::string name, std::string help,
                                       std::vector<double> buckets) {
  return Declare(std::move(name), Type::kHistogram, std::move(help), std::move(buckets));
}

MetricsRegistry::Family* MetricsRegistry::Find(const std::string& name, Type type) {
  auto it = families_.find(name);
  return it != families_.end() && it->second.type == type ? &it->second : nullptr;
}

void MetricsRegistry::Add(const std::string& name, const Labels& labels, double delta) {
  std::lock_guard lock(mu_);
  if (Family* f = Find(name, Type::kCounter)) f->series[labels].value += delta;
}

void MetricsRegistry::Set(const std::string& name, const Labels& labels, double value) {
  std::lock_guard lock(mu_);
  if (Family* f = Find(name, Type::kGauge)) f->series[labels].value = value;
}

void MetricsRegistry::ClearGauge(const std::string& name) {
  std::lock_guard lock(mu_);
  if (Family* f = Find(name, Type::kGauge)) f->series.clear();
}

void MetricsRegistry::Observe(const std::string& name, const Labels& labels, double value) {
  std::lock_guard lock(mu_);
  Family* f = Find(name, Type::kHistogram);
  if (f == nullptr) return;
  Series& s = f->series[labels];
  s.bucket_hits.resize(f->buckets.size());
  // Buckets are upper bounds inclusive (le); a value above them all only counts in +Inf.
  auto bucket = std::lower_bound(f->buckets.begin(), f->buckets.end(), value);
  if (bucket != f->buckets.end()) ++s.bucket_hits[bucket - f->buckets.begin()];
  ++s.count;
  s.sum += value;
}

std::string MetricsRegistry::Render() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    static const char* const kTypeName[] = {"counter", "gauge", "histogram"};
    out += "# HELP " + name + " " + Escape(f.help, false) + "\n";
    out += "# TYPE " + name + " " + kTypeName[static_cast<int>(f.type)] + "\n";
    for (const auto& [labels, s] : f.series) {
      if (f.type != Type::kHistogram) {
        out += name + LabelText(labels) + " " + FormatValue(s.value) + "\n";
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t i = 0; i < f.buckets.size(); ++i) {
        cumulative += i < s.bucket_hits.size() ? s.bucket_hits[i] : 0;
        std::string le = FormatValue(f.buckets[i]);
        out += name + "_bucket" + LabelText(labels, &le) + " " + std::to_string(cumulative) + "\n";
      }
      const std::string inf = "+Inf";
      out += name + "_bucket" + LabelText(labels, &inf) + " " + std::to_string(s.count) + "\n";
      out += name + "_sum" + LabelText(labels) + " " + FormatValue(s.sum) + "\n";
      out += name + "_count" + LabelText(labels) + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

void DeclareSchedulerMetrics(MetricsRegistry& r) {
  // Help texts are Kueue's own, so the metrics read the same in either system.
  r.DeclareGauge(kKueuePendingWorkloads,
                 "The number of pending workloads, per 'cluster_queue' and 'status'.\n"
                 "'status' can have the following values:\n"
                 "- \"active\" means that the workloads are in the admission queue.\n"
                 "- \"inadmissible\" means there was a failed admission attempt for these "
                 "workloads and they won't be retried until cluster conditions, which could "
                 "make this workload admissible, change");
  r.DeclareCounter(kKueueAdmittedWorkloadsTotal,
                   "The total number of admitted workloads per 'cluster_queue'");
  r.DeclareCounter(
      kKueueEvictedWorkloadsTotal,
      "The number of evicted workloads per 'cluster_queue',\n"
      "The label 'reason' can have the following values:\n"
      "- \"Preempted\" means that the workload was evicted in order to free resources for a "
      "workload with a higher priority or reclamation of nominal quota.\n"
      "- \"PodsReadyTimeout\" means that the eviction took place due to a PodsReady timeout.\n"
      "- \"AdmissionCheck\" means that the workload was evicted because at least one admission "
      "check transitioned to False.\n"
      "- \"ClusterQueueStopped\" means that the workload was evicted because the ClusterQueue "
      "is stopped.\n"
      "- \"Deactivated\" means that the workload was evicted because spec.active is set to "
      "false");
  r.DeclareHistogram(
      kKueueAdmissionWaitTimeSeconds,
      "The time between a workload was created or requeued until admission, per 'cluster_queue'",
      KueueWaitBuckets());
  r.DeclareGauge(kKueueClusterQueueResourceUsage,
                 "Reports the cluster_queue's total resource usage within all the flavors");
  r.DeclareGauge(kKueueClusterQueueNominalQuota,
                 "Reports the cluster_queue's resource nominal quota within all the flavors");
  r.DeclareGauge(kKueueReservingActiveWorkloads,
                 "The number of Workloads that are reserving quota, per 'cluster_queue'");
  r.DeclareGauge(kKueueAdmittedActiveWorkloads,
                 "The number of admitted Workloads that are active (unsuspended and not "
                 "finished), per 'cluster_queue'");
  // Prometheus' default buckets (5 ms .. 10 s), which Kueue also uses for its
  // admission attempt duration.
  r.DeclareHistogram(kSchedulingCycleDurationSeconds,
                     "The time one scheduling cycle (admission and placement) took",
                     {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
  if (r.DeclareCounter(kPodsPlacedTotal, "The total number of pods bound to a node")) {
    r.Add(kPodsPlacedTotal, {}, 0);
  }
  const std::pair<const char*, const char*> gauges[] = {
      {kGpusAllocated, "GPUs allocated to bound pods"},
      {kGpusTotal, "GPUs the nodes offer"},
      {kRunningProcesses, "Pod processes the local executor is running"}};
  for (const auto& [name, help] : gauges) {
    if (r.DeclareGauge(name, help)) r.Set(name, {}, 0);
  }
}

void DeclareApiMetrics(MetricsRegistry& r) {
  r.DeclareCounter(kApiRequestsTotal, "API requests by verb, resource and HTTP response code");
}

}  // namespace muster::server
