// MusterProcess: `muster kube` as a child process against the fake API server, for
// the kube benchmark (tests/kube/kube_load.h). Its own process, so /proc/<pid> gives
// the scheduler's CPU and memory apart from the fake API server, the fake Job
// controller and the fake kubelet that run in the benchmark's process.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "kube/kube_load.h"

namespace muster::kube::testing {

class MusterProcess : public SchedulerUnderTest {
 public:
  // `binary`: the muster executable; `extra_args` follow `kube --kubeconfig FILE`;
  // its output goes to `log_path`.
  MusterProcess(std::string binary, std::vector<std::string> extra_args, std::string log_path);
  ~MusterProcess() override;

  Status Start(const FakeApiServer& server) override;
  void Stop() override;
  std::optional<Usage> Sample() override;
  pid_t pid() const { return pid_; }

 private:
  std::string binary_;
  std::vector<std::string> extra_args_;
  std::string log_path_;
  std::string kubeconfig_;
  pid_t pid_ = -1;
};

}  // namespace muster::kube::testing
