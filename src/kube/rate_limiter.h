// RateLimiter: a client-side token bucket (sustained QPS plus a burst), like the
// limiter client-go puts in front of every request so one busy client cannot flood the
// API server. Thread-safe; waiters are served in arrival order because each one
// reserves its token before sleeping.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>

namespace muster::kube {

class RateLimiter {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  using Sleep = std::function<void(std::chrono::nanoseconds)>;

  // `qps` <= 0 means unlimited. `burst` < 1 is treated as 1. The clock and sleep are
  // injectable so tests run without real time; empty means steady_clock / this_thread.
  RateLimiter(double qps, int burst, Clock clock = {}, Sleep sleep = {});

  // Takes one token, sleeping until it is due when the bucket is empty.
  void Acquire();
  // Takes one token if one is available now; never sleeps.
  bool TryAcquire();

  // How long an Acquire() now would sleep (0 when a token is available).
  std::chrono::nanoseconds WaitTime();

 private:
  // Adds the tokens earned since the last call; caller holds mu_.
  void Refill(std::chrono::steady_clock::time_point now);

  const double qps_;
  const double burst_;
  Clock clock_;
  Sleep sleep_;
  std::mutex mu_;
  double tokens_;  // may go negative: tokens reserved by waiters not yet due
  std::chrono::steady_clock::time_point last_;
};

}  // namespace muster::kube
