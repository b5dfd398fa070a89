#include "kube/rate_limiter.h"

#include <algorithm>
#include <thread>

namespace muster::kube {

RateLimiter::RateLimiter(double qps, int burst, Clock clock, Sleep sleep)
    : qps_(qps),
      burst_(std::max(burst, 1)),
      clock_(clock ? std::move(clock) : [] { return std::chrono::steady_clock::now(); }),
      sleep_(sleep ? std::move(sleep)
                   : [](std::chrono::nanoseconds d) { std::this_thread::sleep_for(d); }),
      tokens_(burst_),
      last_(clock_()) {}

void RateLimiter::Refill(std::chrono::steady_clock::time_point now) {
  if (now <= last_) return;
  const double elapsed_s = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed_s * qps_);
  last_ = now;
}

void RateLimiter::Acquire() {
  if (qps_ <= 0) return;
  std::chrono::nanoseconds wait{0};
  {
    std::lock_guard lock(mu_);
    Refill(clock_());
    // Reserve the token now (the balance may go negative) and sleep outside the lock,
    // so concurrent callers queue up in order instead of racing for each refill.
    tokens_ -= 1;
    if (tokens_ < 0) {
      wait = std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(-tokens_ / qps_));
    }
  }
  if (wait.count() > 0) sleep_(wait);
}

bool RateLimiter::TryAcquire() {
  if (qps_ <= 0) return true;
  std::lock_guard lock(mu_);
  Refill(clock_());
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

std::chrono::nanoseconds RateLimiter::WaitTime() {
  if (qps_ <= 0) return std::chrono::nanoseconds{0};
  std::lock_guard lock(mu_);
  Refill(clock_());
  if (tokens_ >= 1) return std::chrono::nanoseconds{0};
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>((1 - tokens_) / qps_));
}

}  // namespace muster::kube
