// A Volcano Queue's status as Volcano's queue controller keeps it: the queue's state
// and how many of its PodGroups are in each phase, plus what its running jobs hold
// (`allocated`). muster is the scheduler, so the counts come from its engine: a job
// waiting for admission is a Pending PodGroup, one admitted but not yet placed is
// Inqueue, a placed one Running, a finished one Completed.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/resource_list.h"
#include "engine/engine.h"
#include "model/volcano.h"

namespace muster::control {

struct VolcanoQueueTally {
  int32_t pending = 0;
  int32_t inqueue = 0;
  int32_t running = 0;
  int32_t completed = 0;
  ResourceList allocated;
};

// Per Volcano queue name, over every submitted job of the engine.
std::map<std::string, VolcanoQueueTally> TallyVolcanoQueues(const engine::Engine& engine);

// The status object: state, pending, inqueue, running, completed, unknown, allocated.
nlohmann::json VolcanoQueueStatus(const model::VolcanoQueue& queue, const VolcanoQueueTally& tally);

}  // namespace muster::control
