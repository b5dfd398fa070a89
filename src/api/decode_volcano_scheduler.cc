// Volcano's scheduler configuration (volcano-scheduler.conf: `actions` and `tiers`
// of plugins with arguments, as pkg/scheduler/conf/scheduler_conf.go defines it)
// mapped onto muster's SchedulerConfiguration. What muster acts on is mapped; every
// action, plugin, argument or switch it does not act on gets a warning saying what
// muster does instead (docs/scheduler-configuration.md has the table).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/decode_common.h"
#include "core/text.h"

namespace muster::api::internal {
namespace {

std::vector<std::string> SplitList(std::string_view s) {
  std::vector<std::string> out;
  for (std::string& item : SplitTrimmed(s, ',')) {
    if (!item.empty()) out.push_back(std::move(item));
  }
  return out;
}

// Actions muster has (its admission cycle does what they do) and what it says
// about the others.
void MapActions(const YamlValue& actions, model::VolcanoSchedulingConfig& volcano) {
  if (!actions.IsSet()) {
    actions.Warn(
        "is not set; muster runs its whole cycle (enqueue, allocate, preempt, reclaim, backfill)");
    return;
  }
  auto text = actions.String();
  if (!text) return;
  volcano.preempt = false;
  volcano.reclaim = false;
  std::set<std::string> seen;
  bool allocate = false;
  for (const std::string& a : SplitList(*text)) {
    if (!seen.insert(a).second) {
      actions.Warn("action " + Quote(a) + " is listed twice; muster runs each action once");
      continue;
    }
    if (a == "allocate") {
      allocate = true;
    } else if (a == "enqueue" || a == "backfill") {
      // enqueue: muster checks queue capability and quota when it admits a gang, and
      // admits only what can be placed. backfill: pods without requests are placed
      // in the same cycle as every other pod.
    } else if (a == "preempt" || a == "gangpreempt") {
      volcano.preempt = true;
    } else if (a == "reclaim" || a == "gangreclaim") {
      volcano.reclaim = true;
    } else if (a == "shuffle") {
      actions.Warn(
          "action shuffle is not supported: muster does not evict running pods to "
          "rebalance nodes (no rescheduling); running gangs stay where they are");
    } else if (a == "elect" || a == "reserve") {
      actions.Warn("action " + a +
                   " is not supported: muster reserves nodes for a starving gang itself "
                   "(SchedulerConfiguration reservationAfter, sla-waiting-time)");
    } else {
      actions.Warn("unknown action " + Quote(a) +
                   "; muster's actions are enqueue, allocate, preempt, reclaim and backfill");
    }
  }
  if (!allocate) {
    actions.Warn("has no allocate action, so Volcano would bind nothing; muster allocates anyway");
  }
}

// Per-plugin argument readers. Unknown arguments are reported by the caller.
using ArgSet = std::set<std::string>;

void MapBinpack(const YamlValue& args, model::SchedulerConfiguration& cfg, ArgSet& used,
                bool& binpack_on) {
  int64_t weight = 1;
  if (auto w = args.Get("binpack.weight").Int(0, 1000000)) weight = *w;
  used.insert("binpack.weight");
  if (weight == 0) {
    binpack_on = false;
    return;
  }
  binpack_on = true;
  cfg.scoring = model::ScoringPolicy::kBinpack;
  // Volcano's defaults: cpu and memory weight 1, extended resources only when listed.
  std::map<std::string, int64_t> weights = {{"cpu", 1}, {"memory", 1}};
  if (auto w = args.Get("binpack.cpu").Int(0, 1000000)) weights["cpu"] = *w;
  if (auto w = args.Get("binpack.memory").Int(0, 1000000)) weights["memory"] = *w;
  used.insert("binpack.cpu");
  used.insert("binpack.memory");
  used.insert("binpack.resources");
  if (auto list = args.Get("binpack.resources").String()) {
    for (const std::string& r : SplitList(*list)) {
      std::string key = "binpack.resources." + r;
      used.insert(key);
      int64_t w = 1;
      if (auto v = args.Get(key).Int(0, 1000000)) w = *v;
      weights[r] = w;
    }
  }
  cfg.binpack_weights = std::move(weights);
}

// nodeorder's kube-scheduler scores: muster keeps one scoring policy, so the
// leastrequested / mostrequested balance picks it unless binpack does.
void MapNodeOrder(const YamlValue& plugin, const YamlValue& args,
                  model::SchedulerConfiguration& cfg, ArgSet& used, bool binpack_on) {
  int64_t least = 1, most = 0;  // Volcano's defaults
  if (auto w = args.Get("leastrequested.weight").Int(0, 1000000)) least = *w;
  if (auto w = args.Get("mostrequested.weight").Int(0, 1000000)) most = *w;
  used.insert("leastrequested.weight");
  used.insert("mostrequested.weight");
  const char* others =
      "its balancedresource, nodeaffinity, podaffinity, tainttoleration, imagelocality and "
      "podtopologyspread weights are not used (muster filters on required node affinity and "
      "taints, and scores PreferNoSchedule taints down)";
  if (binpack_on) {
    plugin.Warn(std::string("nodeorder: muster scores nodes with one policy and binpack, also "
                            "listed, decides (scoringPolicy Binpack); ") +
                others);
    return;
  }
  if (most > least) {
    cfg.scoring = model::ScoringPolicy::kBinpack;
    plugin.Warn(std::string("nodeorder: mostrequested outweighs leastrequested, so muster packs "
                            "nodes (scoringPolicy Binpack); ") +
                others);
  } else {
    cfg.scoring = model::ScoringPolicy::kSpread;
    plugin.Warn(std::string("nodeorder: muster spreads pods over the least requested nodes "
                            "(scoringPolicy Spread); ") +
                others);
  }
}

// What muster does instead of a plugin it does not have.
const std::map<std::string, std::string, std::less<>>& Unsupported() {
  static const std::map<std::string, std::string, std::less<>> kUnsupported = {
      {"overcommit",
       "muster admits a job only when its whole gang can be placed, so enqueue never "
       "over-admits (no overcommit-factor)"},
      {"tdm",
       "time-division sharing of nodes with another scheduler is not supported; muster "
       "schedules on every node at all times"},
      {"capacity",
       "muster divides Volcano queue capacity as proportion does (weight, capability, "
       "deserved, guarantee, parent queues)"},
      {"deviceshare",
       "muster shares GPUs through fractional nvidia.com/gpu requests and MIG resources, "
       "not through the deviceshare plugin"},
      {"extender", "muster calls no scheduler extenders"},
      {"pdb", "muster does not read PodDisruptionBudgets when it picks victims"},
      {"rescheduling", "muster does not evict running pods to rebalance nodes"},
      {"usage", "muster scores nodes by requests, not by measured usage"},
      {"resource-strategy-fit",
       "muster scores with its one scoring policy (SchedulerConfiguration scoringPolicy)"},
      {"resourcequota", "muster checks ResourceQuota objects at admission itself"},
      {"cdp", "muster has no cooldown protection for elastic pods"},
      {"nodegroup", "muster places by node labels, affinity and topology, not node groups"},
  };
  return kUnsupported;
}

// Plugins muster acts on without arguments of its own.
bool Builtin(std::string_view name) {
  static const std::set<std::string, std::less<>> kBuiltin = {
      "priority",   "gang",      "conformance",           "predicates",
      "proportion", "numaaware", "network-topology-aware"};
  return kBuiltin.count(name) != 0;
}

void MapPlugin(const YamlValue& plugin, const std::string& name, model::SchedulerConfiguration& cfg,
               bool binpack_on) {
  YamlValue args = plugin.Get("arguments");
  ArgSet used;
  if (name == "sla") {
    used.insert("sla-waiting-time");
    ReadPositiveDuration(args.Get("sla-waiting-time"), cfg.volcano.sla_waiting_seconds);
  } else if (name == "task-topology") {
    used.insert("task-topology.weight");
    if (auto w = args.Get("task-topology.weight").Int(0, 1000000)) {
      cfg.volcano.task_topology_weight = static_cast<int32_t>(*w);
    }
  } else if (name == "binpack") {
    bool on = false;
    MapBinpack(args, cfg, used, on);
  } else if (name == "nodeorder") {
    MapNodeOrder(plugin.Get("name"), args, cfg, used, binpack_on);
  } else if (name == "drf") {
    if (plugin.Get("enableHierarchy").IsSet() &&
        plugin.Get("enableHierarchy").Bool().value_or(false)) {
      plugin.Get("enableHierarchy")
          .Warn(
              "hierarchical DRF is not supported: muster orders a queue's jobs by dominant "
              "share and divides capacity among queues by proportion (parent queues included)");
    }
  } else if (name == "predicates") {
    if (args.IsSet()) {
      args.Warn(
          "predicates arguments are not used: muster always filters on node resources, "
          "selectors, affinity, taints and NUMA alignment");
    }
    return;
  } else if (name == "numaaware") {
    if (args.IsSet()) {
      args.Warn(
          "numaaware arguments are not used: muster aligns pods to NUMA zones as each "
          "node's NodeResourceTopology policy says and does not score zones");
    }
    return;
  }
  for (const auto& [key, value] : args.Entries()) {
    if (used.count(key)) continue;
    value.Warn("argument " + key + " of plugin " + name + " is not used by muster");
  }
}

// Switches that turn single plugin functions on or off (enableJobOrder...).
void MapSwitches(const YamlValue& plugin, const std::string& name,
                 model::SchedulerConfiguration& cfg) {
  static const char* const kSwitches[] = {
      "enableJobOrder",       "enableHierarchy",     "enableJobReady",      "enableJobPipelined",
      "enableTaskOrder",      "enablePreemptable",   "enableReclaimable",   "enablePreemptive",
      "enableQueueOrder",     "enabledClusterOrder", "enablePredicate",     "enableBestNode",
      "enableNodeOrder",      "enableTargetJob",     "enableReservedNodes", "enableJobEnqueued",
      "enabledVictim",        "enableJobStarving",   "enabledOverused",     "enabledAllocatable",
      "enabledHyperNodeOrder"};
  for (const char* sw : kSwitches) {
    YamlValue v = plugin.Get(sw);
    if (!v.IsSet() || std::string_view(sw) == "enableHierarchy") continue;
    auto on = v.Bool();
    if (!on) continue;
    if (*on) continue;  // on is what muster does anyway
    if (name == "drf" && std::string_view(sw) == "enableJobOrder") {
      cfg.volcano.drf_job_order = false;
    } else if (name == "sla" && std::string_view(sw) == "enableJobOrder") {
      v.Warn(
          "muster always orders jobs with an SLA ahead; only the whole sla plugin can be "
          "left out");
    } else {
      v.Warn(std::string(sw) + ": false is not supported; muster keeps plugin " + name +
             " whole (leave the plugin out to turn it off where muster can)");
    }
  }
}

}  // namespace

void DecodeVolcanoSchedulerConf(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::SchedulerConfiguration cfg;
  cfg.mapped_from = "volcano-scheduler.conf";
  // Volcano acts only on what the configuration lists.
  cfg.volcano.drf_job_order = false;
  cfg.volcano.sla = false;
  cfg.volcano.task_topology = false;
  // kube-scheduler's least-requested spreading is Volcano's default node order.
  cfg.scoring = model::ScoringPolicy::kSpread;
  MapActions(root.Get("actions"), cfg.volcano);

  std::map<std::string, int> seen;
  std::vector<std::pair<std::string, YamlValue>> plugins;
  for (const YamlValue& tier : root.Get("tiers").Items()) {
    for (const YamlValue& plugin : tier.Get("plugins").Items()) {
      auto name = plugin.Get("name").String();
      if (!name) {
        if (!plugin.Get("name").IsSet()) plugin.Get("name").Error("is required");
        continue;
      }
      if (seen[*name]++ > 0) {
        plugin.Get("name").Warn("plugin " + *name +
                                " is listed twice; Volcano runs it twice, muster uses the first");
        continue;
      }
      plugins.emplace_back(*name, plugin);
    }
  }
  // binpack decides the scoring policy over nodeorder wherever each is listed.
  bool binpack_on = false;
  for (auto& [name, plugin] : plugins) {
    if (name != "binpack") continue;
    int64_t w = 1;
    if (auto v = plugin.Get("arguments").Get("binpack.weight").Int(0, 1000000)) w = *v;
    binpack_on = w > 0;
  }
  for (auto& [name, plugin] : plugins) {
    if (name == "drf") cfg.volcano.drf_job_order = true;
    if (name == "sla") cfg.volcano.sla = true;
    if (name == "task-topology") cfg.volcano.task_topology = true;
    auto unsupported = Unsupported().find(name);
    if (unsupported != Unsupported().end()) {
      plugin.Get("name").Warn("plugin " + name + " is not supported: " + unsupported->second);
      continue;
    }
    bool known = Builtin(name) || name == "sla" || name == "task-topology" || name == "binpack" ||
                 name == "nodeorder" || name == "drf";
    if (!known) {
      plugin.Get("name").Warn("unknown plugin " + Quote(name) + "; ignored");
      continue;
    }
    MapPlugin(plugin, name, cfg, binpack_on);
    MapSwitches(plugin, name, cfg);
  }
  YamlValue tiers = root.Get("tiers");
  if (!seen.count("gang")) {
    tiers.Warn("has no gang plugin; muster always schedules a job's minimum as a gang");
  }
  if (!seen.count("priority")) {
    tiers.Warn("has no priority plugin; muster always orders jobs by priority first");
  }
  if (!seen.count("proportion") && !seen.count("capacity")) {
    tiers.Warn(
        "has no proportion plugin; muster always divides capacity among Volcano queues "
        "by weight, capability and deserved");
  }
  if (!seen.count("predicates")) {
    tiers.Warn(
        "has no predicates plugin; muster always filters nodes on resources, selectors, "
        "affinity and taints");
  }
  for (const YamlValue& c : root.Get("configurations").Items()) {
    std::string action = c.Get("name").String().value_or("");
    c.Warn("arguments of action " + Quote(action) +
           " are not used: muster's actions take no arguments");
  }
  if (root.Get("metrics").IsSet()) {
    root.Get("metrics").Warn("is not used: muster serves its metrics at /metrics");
  }

  if (out.manifests.scheduler_config) {
    const auto& first = *out.manifests.scheduler_config;
    root.Error("a second scheduler configuration; the first is at " + first.meta.source.file + ":" +
               std::to_string(first.meta.source.line));
  }
  cfg.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.scheduler_config = std::move(cfg);
}

void DecodeVolcanoSchedulerConfigMap(const YamlValue& root, const model::ObjectMeta& meta,
                                     DecodeResult& out) {
  YamlValue data = root.Get("data").Get(kVolcanoSchedulerConfKey);
  auto text = data.String();
  if (!text) return;
  // The conf is a YAML document inside a string: parsed on its own, with lines
  // counted from the line after the block scalar's indicator ("volcano-scheduler.conf: |").
  DocContext ctx(root.ctx().file(), &out.diagnostics);
  ctx.set_line_offset(data.line());
  ctx.SetObject(meta.kind, meta.namespace_, meta.name);
  YAML::Node node;
  try {
    node = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    data.Error("invalid YAML: " + e.msg);
    return;
  }
  std::string path = "data[" + std::string(kVolcanoSchedulerConfKey) + "]";
  YamlValue conf(node, path, data.line(), &ctx);
  if (!conf.IsMap()) {
    data.Error("must hold a YAML map with actions and tiers");
    return;
  }
  model::ObjectMeta m = meta;
  m.order = out.next_order++;
  m.source = {root.ctx().file(), root.line()};
  DecodeVolcanoSchedulerConf(conf, std::move(m), out);
}

}  // namespace muster::api::internal
