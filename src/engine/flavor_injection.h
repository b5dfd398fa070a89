// What Kueue writes into a job's pod templates when it admits the job: each pod set
// gains its assigned flavors' spec.nodeLabels in its nodeSelector and their
// spec.tolerations among its tolerations, so the pods it runs say where they may go
// (a pod on a spot node tolerates the spot taint). Serve's executors build their Pod
// objects from the result; kube mode patches the same into the job
// (control/job_templates.h). Placement reads the flavors' labels and tolerations
// itself (PlacementBridge::BuildRequest): this changes no decision.
#pragma once

#include <map>
#include <string>

#include "admission/admission.h"
#include "model/kueue.h"
#include "model/workload.h"

namespace muster::engine {

// `workload` with the flavors of `assignment` (by name in `flavors`) merged into its
// pod sets' templates: a flavor's node label sets that nodeSelector key, a
// toleration is appended unless the pod set has it already. Pod sets the assignment
// does not name, and unknown flavors, are left as they are.
model::Workload WithFlavorInjection(const model::Workload& workload,
                                    const admission::Assignment& assignment,
                                    const std::map<std::string, model::ResourceFlavor>& flavors);

}  // namespace muster::engine
