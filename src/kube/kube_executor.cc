#include "kube/kube_executor.h"

namespace muster::kube {

void KubeExecutor::Started(const engine::WorkloadRecord& record, Time /*now*/) {
  pending_[record.key()] = Action::kAdmit;
}

void KubeExecutor::Stopped(const engine::WorkloadRecord& record, Time /*now*/,
                           engine::StopCause cause) {
  switch (cause) {
    case engine::StopCause::kEvicted:
      pending_[record.key()] = Action::kSuspend;
      break;
    case engine::StopCause::kFailed:  // the job's controller failed it: nothing to undo
    case engine::StopCause::kSucceeded:
    case engine::StopCause::kDeleted:
      pending_.erase(record.key());  // the job ended by itself or is gone
      break;
  }
}

}  // namespace muster::kube
