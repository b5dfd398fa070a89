// PickFreePort: a TCP port for a job's rendezvous (MASTER_PORT) that no other local
// job will be handed, so two jobs on one machine never collide.
#pragma once

#include <set>

#include "core/status.h"

namespace muster::server {

// The first port >= `first` that is not in `reserved` (ports handed to running jobs)
// and can be bound now on both 127.0.0.1 and 0.0.0.0 (a job's store may listen on
// either). Free *now* only: the caller reserves it until the job ends. InvalidArgument
// when `first` is outside 1..65535, Unavailable when no port up to 65535 is free.
Result<int> PickFreePort(int first, const std::set<int>& reserved);

}  // namespace muster::server
