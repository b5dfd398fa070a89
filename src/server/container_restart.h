// The kubelet's restart of a container in place, for serve's bare Pods: with
// restartPolicy Always the container is started again whenever it exits, with
// OnFailure when it failed (a job's pods restart as their job's policy says, through
// the job). The first restart is at once, the next after 10 s, doubling to 5 minutes
// (CrashLoopBackOff meanwhile); a container that ran 10 minutes starts the sequence
// over, as the kubelet forgets a back-off left alone that long.
#pragma once

#include <string>

namespace muster::server {

// Whether a container of a pod with `restart_policy` that ended with `exit_code` is
// started again.
bool RestartsInPlace(const std::string& restart_policy, int exit_code);

class RestartBackOff {
 public:
  // Seconds before restarting a container that ran `ran_seconds`; advances the back-off.
  double Wait(double ran_seconds);

 private:
  double next_ = 0;  // the next wait; 0: none yet (the first restart is at once)
};

}  // namespace muster::server
