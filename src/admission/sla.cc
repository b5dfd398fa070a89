// Volcano's sla plugin in the queue order (cluster_queue.h QueueKey): a job with an
// sla-waiting-time (its annotation, else the plugin argument) is ordered by the
// time it should have started by, creation plus the waiting time, ahead of jobs
// without one. The other half of the plugin, reserving nodes for a job that has
// waited that long, is the engine's reservation (engine/reservations.h).
#include "admission/admitter_impl.h"

namespace muster::admission {

Time AdmitterImpl::SlaDeadline(const WorkloadState& ws) const {
  if (!volcano_cfg_.sla) return kNoSlaDeadline;
  std::optional<double> wait = ws.wl().sla_waiting_seconds;
  if (!wait) wait = volcano_cfg_.sla_waiting_seconds;
  if (!wait) return kNoSlaDeadline;
  return ws.qkey.created + *wait;
}

}  // namespace muster::admission
