#include "kube/leader_election.h"

#include <unistd.h>

#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>

namespace muster::kube {
namespace {

using nlohmann::json;

int64_t WholeSeconds(std::chrono::milliseconds d) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::llround(d.count() / 1000.0)));
}

}  // namespace

std::string DefaultLeaderIdentity() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof(host), "muster");
  }
  std::random_device rd;
  char suffix[17];
  std::snprintf(suffix, sizeof(suffix), "%08x%08x", rd(), rd());
  return std::string(host) + "_" + suffix;
}

std::string FormatMicroTime(std::chrono::system_clock::time_point t) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(micros / 1000000);
  int64_t frac = micros % 1000000;
  if (frac < 0) {
    frac += 1000000;
    secs -= 1;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

LeaderElector::LeaderElector(KubeClient& client, LeaderElectionConfig config)
    : client_(client), config_(std::move(config)) {
  if (config_.identity.empty()) config_.identity = DefaultLeaderIdentity();
  if (config_.lease_namespace.empty()) config_.lease_namespace = "default";
}

LeaderElector::~LeaderElector() { Stop(); }

std::chrono::steady_clock::time_point LeaderElector::Now() const {
  return config_.clock ? config_.clock() : std::chrono::steady_clock::now();
}

std::string LeaderElector::LeasesPath() const {
  return ApiPrefix("coordination.k8s.io", "v1") + "/namespaces/" + config_.lease_namespace +
         "/leases";
}

std::string LeaderElector::LeasePath() const { return LeasesPath() + "/" + config_.lease_name; }

std::string LeaderElector::observed_holder() const {
  std::lock_guard lock(mu_);
  return observed_holder_;
}

bool LeaderElector::TryAcquireOrRenew() {
  try {
    const auto now = Now();
    const std::string now_text = FormatMicroTime(std::chrono::system_clock::now());
    const int64_t duration_s = WholeSeconds(config_.lease_duration);

    HttpResponse got = client_.Get(LeasePath());
    if (got.code == 404) {
      json lease = {
          {"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}},
          {"spec",
           {{"holderIdentity", config_.identity},
            {"leaseDurationSeconds", duration_s},
            {"acquireTime", now_text},
            {"renewTime", now_text},
            {"leaseTransitions", 0}}}};
      HttpResponse created = client_.Request("POST", LeasesPath(), lease.dump());
      if (!created.ok()) return false;  // 409: another replica created it first
      const json stored = json::parse(created.body, nullptr, false);
      std::lock_guard lock(mu_);
      observed_record_ = stored.is_object() ? stored.value("spec", json::object()).dump() : "";
      observed_time_ = now;
      observed_holder_ = config_.identity;
      last_lease_ = created.body;
      return true;
    }
    if (!got.ok()) return false;
    json lease = json::parse(got.body, nullptr, false);
    if (!lease.is_object()) return false;
    const json spec = lease.value("spec", json::object());
    const std::string holder = spec.value("holderIdentity", "");
    const int64_t record_duration_s = spec.value("leaseDurationSeconds", int64_t{0});
    const auto record_duration = record_duration_s > 0
                                     ? std::chrono::milliseconds(record_duration_s * 1000)
                                     : config_.lease_duration;
    {
      std::lock_guard lock(mu_);
      const std::string record = spec.dump();
      if (record != observed_record_) {
        observed_record_ = record;
        observed_time_ = now;
      }
      observed_holder_ = holder;
      // Someone else holds an unexpired lease: expiry counts from when WE saw it change.
      if (!holder.empty() && holder != config_.identity && now < observed_time_ + record_duration) {
        return false;
      }
    }

    json new_spec = spec;
    new_spec["holderIdentity"] = config_.identity;
    new_spec["leaseDurationSeconds"] = duration_s;
    new_spec["renewTime"] = now_text;
    if (holder != config_.identity) {
      new_spec["acquireTime"] = now_text;
      new_spec["leaseTransitions"] = spec.value("leaseTransitions", int64_t{0}) + 1;
    }
    lease["spec"] = new_spec;  // metadata.resourceVersion makes the PUT conditional
    HttpResponse put = client_.Request("PUT", LeasePath(), lease.dump());
    if (!put.ok()) return false;  // 409: the lease changed since our GET; next period
    const json stored = json::parse(put.body, nullptr, false);
    std::lock_guard lock(mu_);
    observed_record_ = stored.is_object() ? stored.value("spec", json::object()).dump() : "";
    observed_time_ = now;
    observed_holder_ = config_.identity;
    last_lease_ = put.body;
    return true;
  } catch (const std::exception&) {  // a malformed lease (wrong field types)
    return false;
  }
}

bool LeaderElector::Release() {
  try {
    for (int attempt = 0; attempt < 2; ++attempt) {
      json lease;
      if (attempt == 0) {
        std::lock_guard lock(mu_);
        lease = json::parse(last_lease_.empty() ? "null" : last_lease_, nullptr, false);
      }
      if (!lease.is_object()) {  // no cached write, or it went stale: read the lease
        HttpResponse got = client_.Get(LeasePath());
        if (!got.ok()) return false;
        lease = json::parse(got.body, nullptr, false);
        if (!lease.is_object()) return false;
      }
      json spec = lease.value("spec", json::object());
      if (spec.value("holderIdentity", "") != config_.identity) return false;  // not ours
      const std::string now_text = FormatMicroTime(std::chrono::system_clock::now());
      spec["holderIdentity"] = "";
      spec["leaseDurationSeconds"] = 1;
      spec["acquireTime"] = now_text;
      spec["renewTime"] = now_text;
      lease["spec"] = spec;
      HttpResponse put = client_.Request("PUT", LeasePath(), lease.dump());
      if (put.ok()) {
        std::lock_guard lock(mu_);
        last_lease_.clear();
        observed_holder_.clear();
        return true;
      }
      if (put.code != 409) return false;
      std::lock_guard lock(mu_);
      last_lease_.clear();  // stale resourceVersion: retry from a fresh GET
    }
  } catch (const std::exception&) {
  }
  return false;
}

void LeaderElector::Start() {
  std::lock_guard join_lock(join_mu_);
  std::lock_guard lock(mu_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] { Run(); });
}

void LeaderElector::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  std::lock_guard join_lock(join_mu_);  // two concurrent Stop()s must not both join
  if (thread_.joinable()) thread_.join();
}

void LeaderElector::Run() {
  auto last_renew = Now();
  auto step_down = [this] {
    leader_.store(false);
    if (config_.on_stopped_leading) config_.on_stopped_leading();
  };
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stop_) break;
    }
    const bool holds = TryAcquireOrRenew();
    const auto now = Now();
    if (holds) {
      last_renew = now;
      if (!leader_.load()) {
        leader_.store(true);
        if (config_.on_started_leading) config_.on_started_leading();
      }
    } else if (leader_.load()) {
      // Another holder means we lost it; otherwise (errors, conflicts) keep leading
      // until renew_deadline, which ends before a standby may take over.
      const std::string holder = observed_holder();
      const bool taken = !holder.empty() && holder != config_.identity;
      if (taken || now - last_renew >= config_.renew_deadline) step_down();
    }
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, config_.retry_period, [this] { return stop_; });
  }
  if (leader_.load()) {
    if (config_.release_on_stop) Release();
    step_down();
  }
}

}  // namespace muster::kube
