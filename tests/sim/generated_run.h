// Runs a generated cluster and workload (the YAML `muster gen` writes) through the
// simulator with the invariant checker on, as `muster simulate` would.
#pragma once

#include "api/decode.h"
#include "sim/generator.h"
#include "sim/simulator.h"

namespace muster::sim::testing {

inline Result<SimulationResult> SimulateGenerated(const ClusterSpec& cluster,
                                                  const WorkloadSpec& jobs) {
  api::DecodeResult r;
  api::DecodeText(ClusterYaml(cluster), "cluster.yaml", r);
  api::DecodeText(WorkloadYaml(jobs), "jobs.yaml", r);
  if (r.HasErrors()) return InvalidArgument("generated inputs do not decode");
  SimOptions options;
  options.check_invariants = true;
  return Simulate(r.manifests, options);
}

}  // namespace muster::sim::testing
