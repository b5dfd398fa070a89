// Clock and Rng are injected so the engine never reads wall time or global
// randomness: the simulator gives virtual time, the server the real clock.
#pragma once

#include <cstdint>

namespace muster {

// Seconds since the start of the run (simulate) or the Unix epoch (serve/kube).
using Time = double;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time Now() const = 0;
};

// Deterministic generator (splitmix64): same seed, same sequence, on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  uint64_t Uniform(uint64_t n) { return n == 0 ? 0 : Next() % n; }

 private:
  uint64_t state_;
};

}  // namespace muster
