// Backoff: exponential delays with jitter between failed attempts, like client-go's
// (800 ms doubling to 30 s, up to +100% jitter so a restarted API server is not hit by
// every client at once). The random source is injectable so tests are deterministic.
#pragma once

#include <chrono>
#include <functional>

namespace muster::kube {

struct BackoffPolicy {
  std::chrono::milliseconds initial{800};
  std::chrono::milliseconds max{30000};  // the base delay stops growing here
  double factor = 2.0;
  double jitter = 1.0;  // a delay is base * (1 + jitter * random()), random() in [0, 1)
};

class Backoff {
 public:
  // `random` returns values in [0, 1); empty: a seeded std::mt19937.
  explicit Backoff(BackoffPolicy policy = {}, std::function<double()> random = {});

  // The delay before the next attempt after one more failure.
  std::chrono::milliseconds Next();
  // After a success: the next failure waits `initial` again.
  void Reset() { failures_ = 0; }
  int failures() const { return failures_; }

 private:
  BackoffPolicy policy_;
  std::function<double()> random_;
  int failures_ = 0;
};

}  // namespace muster::kube
