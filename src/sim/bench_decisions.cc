#include "sim/bench_decisions.h"

#include <fmt/format.h>

namespace muster::sim {
namespace {

std::string TimeText(const std::optional<Time>& t) { return t ? fmt::format("{}", *t) : "-"; }

}  // namespace

void AppendPlan(const placement::ClusterState& cluster, const placement::GangPlan& plan,
                std::string& out) {
  out += "plan " + plan.workload_key;
  for (const auto& p : plan.pods) {
    out += fmt::format(" {}/{}@{}", p.pod_set, p.index,
                       p.node >= 0 ? cluster.GetNode(p.node).meta.name : std::string("?"));
    if (!p.gpus.empty()) out += fmt::format("[{}]", fmt::join(p.gpus, ","));
    if (p.numa_zone >= 0) out += fmt::format("z{}", p.numa_zone);
  }
  out += "\n";
}

void AppendEngineDecisions(const engine::Engine& engine, std::string& out) {
  out += engine.log().ToString();
  for (const auto& r : engine.workloads()) {
    out += fmt::format("workload {} {} submit={} firstAdmit={} admit={} start={} finish={}",
                       r.key(), engine::PhaseName(r.phase), TimeText(r.submit_time),
                       TimeText(r.first_admit_time), TimeText(r.admit_time), TimeText(r.start_time),
                       TimeText(r.finish_time));
    for (const auto& ps : r.assignment.pod_sets) {
      out += fmt::format(" {}x{}", ps.pod_set, ps.count);
      for (const auto& [res, flavor] : ps.flavors) out += fmt::format(" {}={}", res, flavor);
    }
    if (r.assignment.borrows) out += " borrows";
    for (const auto& e : r.evictions) {
      out += fmt::format(" evicted@{}:{}:{}:{}", e.time, e.reason, e.detail, e.by);
    }
    if (r.failures > 0) out += fmt::format(" failures={}", r.failures);
    out += "\n";
    if (!r.plan.pods.empty()) AppendPlan(engine.cluster(), r.plan, out);
  }
}

}  // namespace muster::sim
