// LeaderElector: leader election on a coordination.k8s.io/v1 Lease, following
// client-go's leaderelection package, so two muster replicas can run and only one
// schedules. The holder renews the lease every retry_period; a standby takes it once
// the holder stops renewing for lease_duration, judged by when the standby last SAW the
// record change (its own clock), never by comparing clocks across machines. Stop()
// releases the lease (holderIdentity "", like client-go's ReleaseOnCancel) so a standby
// takes over on its next retry instead of waiting for expiry.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "kube/kube_client.h"

namespace muster::kube {

struct LeaderElectionConfig {
  std::string lease_namespace = "default";
  std::string lease_name = "muster-scheduler";
  std::string identity;  // unique per replica; empty: DefaultLeaderIdentity()
  // How long a standby waits, after last seeing the lease change, before taking it.
  std::chrono::milliseconds lease_duration{15000};
  // How long the leader keeps leading while its renewals fail (< lease_duration, so it
  // steps down before a standby may take over).
  std::chrono::milliseconds renew_deadline{10000};
  // Time between acquire / renew attempts.
  std::chrono::milliseconds retry_period{2000};
  // Give the lease up on Stop() so a standby takes over at once.
  bool release_on_stop = true;
  // Called on the elector's thread; must return promptly (start or stop work elsewhere)
  // and must not call Stop().
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  // Monotonic clock for expiry judgments; empty: steady_clock. Tests inject one.
  std::function<std::chrono::steady_clock::time_point()> clock;
};

class LeaderElector {
 public:
  // `client` must outlive the elector.
  LeaderElector(KubeClient& client, LeaderElectionConfig config);
  ~LeaderElector();  // Stop()
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Starts the election thread. Call once.
  void Start();
  // Ends the thread; when leading, releases the lease (release_on_stop) and calls
  // on_stopped_leading. Idempotent; safe from any thread but the callbacks'.
  void Stop();

  bool is_leader() const { return leader_.load(); }
  const std::string& identity() const { return config_.identity; }
  // The holder seen in the lease at the last attempt ("" when none or unknown).
  std::string observed_holder() const;

  // One attempt to acquire or renew the lease: what the thread does every
  // retry_period. True when this replica holds the lease afterwards. Public so tests
  // can step an election deterministically without the thread.
  bool TryAcquireOrRenew();
  // Gives the lease up when this replica holds it (holderIdentity ""). True on success.
  bool Release();

 private:
  void Run();
  std::string LeasesPath() const;
  std::string LeasePath() const;
  std::chrono::steady_clock::time_point Now() const;

  KubeClient& client_;
  LeaderElectionConfig config_;
  std::atomic<bool> leader_{false};

  mutable std::mutex mu_;                                  // guards the observation below and stop_
  std::string observed_record_;                            // the lease spec last seen, serialized
  std::chrono::steady_clock::time_point observed_time_{};  // when it last changed
  std::string observed_holder_;
  std::string last_lease_;  // our last successful write (for Release), JSON
  bool stop_ = false;
  std::condition_variable wake_;
  std::mutex join_mu_;  // guards thread_
  std::thread thread_;
};

// "<hostname>_<random hex>", unique per process like client-go's usual identity.
std::string DefaultLeaderIdentity();

// RFC 3339 with microseconds in UTC ("2026-01-02T03:04:05.000006Z"), the Lease's
// MicroTime format.
std::string FormatMicroTime(std::chrono::system_clock::time_point t);

}  // namespace muster::kube
