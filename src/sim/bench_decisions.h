// What a `muster bench` scenario decided, as deterministic text (`muster bench
// --decisions FILE`): the engine's decision log and every workload's final state
// (phase, times, flavors, nodes and devices of each pod, evictions), or the gang
// planner's plans. bench/decisions_check.sh compares it byte for byte with the
// output of a reference build, so an optimisation that changes a decision shows.
#pragma once

#include <string>

#include "engine/engine.h"
#include "placement/placement.h"

namespace muster::sim {

// Appends the decision log and the final state of every workload record.
void AppendEngineDecisions(const engine::Engine& engine, std::string& out);

// Appends one line for a committed gang plan: key and, per pod, node and devices.
void AppendPlan(const placement::ClusterState& cluster, const placement::GangPlan& plan,
                std::string& out);

}  // namespace muster::sim
