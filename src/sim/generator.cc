#include "sim/generator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/clock.h"
#include "core/resource_name.h"

namespace muster::sim {
namespace {

std::string Padded(const char* prefix, int64_t i, int width) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s%0*lld", prefix, width, static_cast<long long>(i));
  return buf;
}

std::string NodeName(int32_t i) { return Padded("node-", i, 5); }
std::string RackName(int32_t r) { return Padded("rack-", r, 4); }
std::string BlockName(int32_t b) { return Padded("block-", b, 3); }
std::string QueueNamespace(int32_t q) { return Padded("team-", q, 4); }
std::string CohortName(int32_t c) { return Padded("cohort-", c, 3); }
std::string CqName(int32_t q) { return Padded("cq-", q, 4); }

// Zone z's share of `total` when split over `zones` (the first zones take the remainder).
int64_t ZoneShare(int64_t total, int32_t zones, int32_t z) {
  return total / zones + (z < total % zones ? 1 : 0);
}

// Uniform double in [0, 1) from the top 53 bits.
double Unit(Rng& rng) { return static_cast<double>(rng.Next() >> 11) * 0x1.0p-53; }

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", s);
  return buf;
}

}  // namespace

int32_t EffectiveRacks(const ClusterSpec& spec) {
  int32_t racks = spec.racks > 0 ? spec.racks : (spec.nodes + 31) / 32;
  return std::clamp(racks, 1, std::max(1, spec.nodes));
}

int32_t RackOfNode(const ClusterSpec& spec, int32_t node) {
  return static_cast<int32_t>(int64_t{node} * EffectiveRacks(spec) / std::max(1, spec.nodes));
}

int32_t BlockOfRack(const ClusterSpec& spec, int32_t rack) {
  int32_t racks = EffectiveRacks(spec);
  int32_t blocks = std::clamp(spec.blocks, 1, racks);
  return static_cast<int32_t>(int64_t{rack} * blocks / racks);
}

model::ManifestSet GenerateCluster(const ClusterSpec& spec) {
  model::ManifestSet m;
  const int32_t zones = std::max(1, spec.numa);
  m.nodes.reserve(static_cast<size_t>(spec.nodes));
  m.node_topologies.reserve(static_cast<size_t>(spec.nodes));
  for (int32_t i = 0; i < spec.nodes; ++i) {
    model::Node n;
    n.meta.api_version = "v1";
    n.meta.kind = "Node";
    n.meta.name = NodeName(i);
    n.meta.order = i;
    int32_t rack = RackOfNode(spec, i);
    n.meta.labels = {{kGenHostLabel, n.meta.name},
                     {kGenRackLabel, RackName(rack)},
                     {kGenBlockLabel, BlockName(BlockOfRack(spec, rack))},
                     {kGenGpuProductLabel, spec.gpu_product}};
    n.allocatable.Set(kCpu, spec.cpu_per_node * 1000);
    n.allocatable.Set(kMemory, spec.memory_gi_per_node * kGi);
    n.allocatable.Set(kNvidiaGpu, spec.gpus_per_node);
    n.allocatable.Set(kPods, 110);
    model::NodeTopology t;
    t.meta.api_version = "topology.node.k8s.io/v1alpha2";
    t.meta.kind = "NodeResourceTopology";
    t.meta.name = n.meta.name;
    // best-effort at pod scope: pods that fit a zone are aligned, whole-node pods
    // may span zones (single-numa-node would reject 8-GPU pods on 2 zones).
    t.policy = model::TopologyManagerPolicy::kBestEffort;
    t.scope = model::TopologyManagerScope::kPod;
    for (int32_t z = 0; z < zones; ++z) {
      model::NumaZone zone;
      zone.name = "node-" + std::to_string(z);
      zone.id = z;
      zone.allocatable.Set(kCpu, ZoneShare(spec.cpu_per_node, zones, z) * 1000);
      zone.allocatable.Set(kMemory, ZoneShare(spec.memory_gi_per_node, zones, z) * kGi);
      zone.allocatable.Set(kNvidiaGpu, ZoneShare(spec.gpus_per_node, zones, z));
      for (int32_t o = 0; o < zones; ++o)
        zone.costs["node-" + std::to_string(o)] = o == z ? 10 : 21;
      t.zones.push_back(std::move(zone));
    }
    m.nodes.push_back(std::move(n));
    m.node_topologies.push_back(std::move(t));
  }
  model::Topology topo;
  topo.meta.api_version = "kueue.x-k8s.io/v1beta1";
  topo.meta.kind = "Topology";
  topo.meta.name = kGenTopologyName;
  topo.levels = {kGenBlockLabel, kGenRackLabel, kGenHostLabel};
  m.topologies.push_back(topo);
  model::ResourceFlavor rf;
  rf.meta.api_version = "kueue.x-k8s.io/v1beta1";
  rf.meta.kind = "ResourceFlavor";
  rf.meta.name = kGenFlavorName;
  rf.node_labels = {{kGenGpuProductLabel, spec.gpu_product}};
  rf.topology_name = kGenTopologyName;
  m.resource_flavors.push_back(rf);

  const int32_t queues = std::max(0, spec.cluster_queues);
  const int32_t cohorts = std::clamp(spec.cohorts, 1, std::max(1, queues));
  for (int32_t q = 0; q < queues; ++q) {
    model::ClusterQueue cq;
    cq.meta.api_version = "kueue.x-k8s.io/v1beta1";
    cq.meta.kind = "ClusterQueue";
    cq.meta.name = CqName(q);
    cq.meta.order = q;
    cq.cohort = CohortName(q % cohorts);
    cq.namespace_selector = model::LabelSelector{};
    cq.preemption.within_cluster_queue = model::PreemptionPolicy::kLowerPriority;
    cq.preemption.reclaim_within_cohort = model::PreemptionPolicy::kAny;
    model::FlavorQuotas fq;
    fq.name = kGenFlavorName;
    // Even split of the whole cluster; the remainder stays unassigned (borrowable
    // by nobody), which keeps every ClusterQueue's quota the same.
    int64_t n = spec.nodes;
    fq.resources.push_back(
        {"cpu", Quantity::FromInt(n * spec.cpu_per_node / queues), std::nullopt, std::nullopt});
    fq.resources.push_back(
        {"memory",
         Quantity::FromInt(n * spec.memory_gi_per_node / queues * kGi, Quantity::Format::kBinarySI),
         std::nullopt, std::nullopt});
    fq.resources.push_back({"nvidia.com/gpu", Quantity::FromInt(n * spec.gpus_per_node / queues),
                            std::nullopt, std::nullopt});
    cq.resource_groups.push_back({{"cpu", "memory", "nvidia.com/gpu"}, {fq}});
    m.cluster_queues.push_back(std::move(cq));
    model::LocalQueue lq;
    lq.meta.api_version = "kueue.x-k8s.io/v1beta1";
    lq.meta.kind = "LocalQueue";
    lq.meta.name = "lq";
    lq.meta.namespace_ = QueueNamespace(q);
    lq.cluster_queue = CqName(q);
    m.local_queues.push_back(std::move(lq));
  }
  return m;
}

std::string ClusterYaml(const ClusterSpec& spec) {
  model::ManifestSet m = GenerateCluster(spec);
  std::string out;
  out.reserve(static_cast<size_t>(spec.nodes) * 1400 + 4096);
  out += "# muster gen cluster --nodes " + std::to_string(spec.nodes) + " --gpus-per-node " +
         std::to_string(spec.gpus_per_node) + " --numa " + std::to_string(spec.numa) + " --racks " +
         std::to_string(EffectiveRacks(spec)) + " --blocks " + std::to_string(spec.blocks) +
         " --cluster-queues " + std::to_string(spec.cluster_queues) + " --cohorts " +
         std::to_string(spec.cohorts) + " --seed " + std::to_string(spec.seed) + "\n";
  const int32_t zones = std::max(1, spec.numa);
  for (const auto& n : m.nodes) {
    out += "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + n.meta.name + "\n  labels:\n";
    for (const auto& [k, v] : n.meta.labels) out += "    " + k + ": " + v + "\n";
    out += "status:\n  allocatable: {cpu: \"" + std::to_string(spec.cpu_per_node) +
           "\", memory: " + std::to_string(spec.memory_gi_per_node) + "Gi, nvidia.com/gpu: \"" +
           std::to_string(spec.gpus_per_node) + "\", pods: \"110\"}\n";
  }
  for (const auto& t : m.node_topologies) {
    out +=
        "---\napiVersion: topology.node.k8s.io/v1alpha2\nkind: NodeResourceTopology\nmetadata:\n  "
        "name: " +
        t.meta.name +
        "\nattributes:\n- {name: topologyManagerPolicy, value: best-effort}\n"
        "- {name: topologyManagerScope, value: pod}\nzones:\n";
    for (int32_t z = 0; z < zones; ++z) {
      std::string cpu = std::to_string(ZoneShare(spec.cpu_per_node, zones, z));
      std::string mem = std::to_string(ZoneShare(spec.memory_gi_per_node, zones, z)) + "Gi";
      std::string gpu = std::to_string(ZoneShare(spec.gpus_per_node, zones, z));
      out += "- name: node-" + std::to_string(z) + "\n  type: Node\n  costs: [";
      for (int32_t o = 0; o < zones; ++o) {
        out += (o ? ", " : "") + std::string("{name: node-") + std::to_string(o) +
               ", value: " + (o == z ? "10" : "21") + "}";
      }
      out += "]\n  resources:\n";
      out += "  - {name: cpu, capacity: \"" + cpu + "\", allocatable: \"" + cpu +
             "\", available: \"" + cpu + "\"}\n";
      out += "  - {name: memory, capacity: " + mem + ", allocatable: " + mem +
             ", available: " + mem + "}\n";
      out += "  - {name: nvidia.com/gpu, capacity: \"" + gpu + "\", allocatable: \"" + gpu +
             "\", available: \"" + gpu + "\"}\n";
    }
  }
  out +=
      std::string("---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata:\n  name: ") +
      kGenTopologyName + "\nspec:\n  levels:\n  - nodeLabel: " + kGenBlockLabel +
      "\n  - nodeLabel: " + kGenRackLabel + "\n  - nodeLabel: " + kGenHostLabel + "\n";
  out += std::string(
             "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: ") +
         kGenFlavorName + "\nspec:\n  nodeLabels:\n    " + kGenGpuProductLabel + ": " +
         spec.gpu_product + "\n  topologyName: " + kGenTopologyName + "\n";
  for (const auto& cq : m.cluster_queues) {
    const auto& res = cq.resource_groups[0].flavors[0].resources;
    out += "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: " +
           cq.meta.name + "\nspec:\n  cohort: " + cq.cohort +
           "\n  namespaceSelector: {}\n  queueingStrategy: BestEffortFIFO\n"
           "  preemption:\n    withinClusterQueue: LowerPriority\n    reclaimWithinCohort: Any\n"
           "  resourceGroups:\n  - coveredResources: [\"cpu\", \"memory\", \"nvidia.com/gpu\"]\n"
           "    flavors:\n    - name: " +
           std::string(kGenFlavorName) + "\n      resources:\n";
    for (const auto& r : res) {
      out += "      - {name: " + r.name + ", nominalQuota: " + r.nominal_quota.ToString() + "}\n";
    }
  }
  for (const auto& lq : m.local_queues) {
    out += "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: " +
           lq.meta.name + "\n  namespace: " + lq.meta.namespace_ +
           "\nspec:\n  clusterQueue: " + lq.cluster_queue + "\n";
  }
  return out;
}

Result<JobMix> ParseJobMix(std::string_view text) {
  JobMix mix{0, 0, 0};
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(pos, end - pos);
    size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      return InvalidArgument("mix item \"" + std::string(item) + "\" is not CLASS:FRACTION");
    }
    std::string cls(item.substr(0, colon));
    std::string value(item.substr(colon + 1));
    char* parse_end = nullptr;
    double v = std::strtod(value.c_str(), &parse_end);
    if (value.empty() || *parse_end != '\0' || !(v >= 0) || !std::isfinite(v)) {
      return InvalidArgument("mix fraction \"" + value + "\" is not a non-negative number");
    }
    if (cls == "small") {
      mix.small = v;
    } else if (cls == "medium") {
      mix.medium = v;
    } else if (cls == "large") {
      mix.large = v;
    } else {
      return InvalidArgument("unknown job class \"" + cls + "\" (small, medium, large)");
    }
    pos = end + 1;
  }
  if (mix.small + mix.medium + mix.large <= 0) return InvalidArgument("mix sums to 0");
  return mix;
}

std::vector<model::PriorityClass> GeneratedPriorityClasses() {
  std::vector<model::PriorityClass> out(3);
  const char* names[] = {"gen-low", "gen-mid", "gen-high"};
  int32_t values[] = {100, 500, 1000};
  for (int i = 0; i < 3; ++i) {
    out[i].meta.api_version = "scheduling.k8s.io/v1";
    out[i].meta.kind = "PriorityClass";
    out[i].meta.name = names[i];
    out[i].value = values[i];
  }
  return out;
}

std::vector<JobPlan> PlanJobs(const WorkloadSpec& spec) {
  std::vector<JobPlan> out;
  out.reserve(static_cast<size_t>(std::max(0, spec.jobs)));
  const auto classes = GeneratedPriorityClasses();
  double total = spec.mix.small + spec.mix.medium + spec.mix.large;
  if (total <= 0) total = 1;
  Rng arrivals(spec.seed ^ 0x5eed5eed5eed5eedULL);
  double now = 0;
  const int32_t gpn = std::max(1, spec.gpus_per_node);
  for (int32_t i = 0; i < spec.jobs; ++i) {
    // Each job draws from its own stream so a job's shape does not depend on how
    // many draws earlier jobs made.
    Rng rng(spec.seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(i) + 1);
    JobPlan p;
    p.name = Padded("job-", i, 6);
    if (spec.queues > 0) {
      p.namespace_ =
          QueueNamespace(static_cast<int32_t>(rng.Uniform(static_cast<uint64_t>(spec.queues))));
      p.local_queue = "lq";
    } else {
      p.namespace_ = "default";
    }
    double u = Unit(rng) * total;
    p.job_class = u < spec.mix.small                     ? JobClass::kSmall
                  : u < spec.mix.small + spec.mix.medium ? JobClass::kMedium
                                                         : JobClass::kLarge;
    int pc = 0;
    switch (p.job_class) {
      case JobClass::kSmall: {  // one pod, 1-8 GPUs: notebooks, fine-tuning
        static const int32_t kGpus[] = {1, 1, 2, 4, 8};
        p.pods = 1;
        p.gpus_per_pod = std::min(gpn, kGpus[rng.Uniform(5)]);
        p.duration = 600 + static_cast<double>(rng.Uniform(3000));
        pc = 0;
        break;
      }
      case JobClass::kMedium: {  // 2-32 whole-node pods
        p.pods = 2 + static_cast<int32_t>(rng.Uniform(31));
        p.gpus_per_pod = gpn;
        p.pytorch = rng.Uniform(2) == 0;
        p.duration = 1800 + static_cast<double>(rng.Uniform(7200));
        pc = 1;
        break;
      }
      case JobClass::kLarge: {  // 64-512 one-GPU data-parallel workers in one domain
        p.pods = 64 + static_cast<int32_t>(rng.Uniform(449));
        p.gpus_per_pod = 1;
        p.pytorch = true;
        p.topology_level =
            p.pods * p.gpus_per_pod <= spec.rack_gpus / 2 ? kGenRackLabel : kGenBlockLabel;
        p.duration = 3600 + static_cast<double>(rng.Uniform(14400));
        pc = 2;
        break;
      }
    }
    p.cpu_milli_per_pod = int64_t{4000} * p.gpus_per_pod;
    p.memory_gi_per_pod = int64_t{32} * p.gpus_per_pod;
    p.priority_class = classes[static_cast<size_t>(pc)].meta.name;
    p.priority = classes[static_cast<size_t>(pc)].value;
    // Exponential inter-arrival times from the shared stream, rounded to ms so
    // the YAML (3 decimals) and the Workload agree exactly.
    now += -std::log(1 - Unit(arrivals)) * spec.mean_interarrival_seconds;
    p.submit_at = std::round(now * 1000) / 1000;
    out.push_back(std::move(p));
  }
  return out;
}

model::Workload PlanToWorkload(const JobPlan& plan, int64_t order) {
  model::Workload w;
  w.meta.api_version = plan.pytorch ? "kubeflow.org/v1" : "batch/v1";
  w.meta.kind = plan.pytorch ? "PyTorchJob" : "Job";
  w.meta.name = plan.name;
  w.meta.namespace_ = plan.namespace_;
  w.meta.order = order;
  w.key = plan.namespace_ + "/" + plan.name;
  w.local_queue = plan.local_queue;
  if (!plan.local_queue.empty()) w.meta.labels["kueue.x-k8s.io/queue-name"] = plan.local_queue;
  w.priority = plan.priority;
  w.priority_class = plan.priority_class;
  w.sim.submit_at = plan.submit_at;
  w.sim.duration = plan.duration;
  auto make = [&](const std::string& name, int32_t count) {
    model::PodSet ps;
    ps.name = name;
    ps.count = count;
    ps.min_count = count;
    ps.requests.Set(kCpu, plan.cpu_milli_per_pod);
    ps.requests.Set(kMemory, plan.memory_gi_per_pod * kGi);
    ps.requests.Set(kNvidiaGpu, plan.gpus_per_pod);
    ps.indexed = !plan.pytorch;
    if (!plan.topology_level.empty()) {
      ps.topology.mode = model::TopologyRequest::Mode::kRequired;
      ps.topology.level = plan.topology_level;
    }
    w.pod_sets.push_back(std::move(ps));
  };
  if (plan.pytorch) {
    make("master", 1);
    if (plan.pods > 1) make("worker", plan.pods - 1);
  } else {
    make("main", plan.pods);
  }
  w.min_available = plan.pods;
  return w;
}

namespace {

void AppendTemplate(std::string& out, const JobPlan& p, const std::string& indent,
                    const char* container) {
  out += indent + "template:\n";
  if (!p.topology_level.empty()) {
    out += indent + "  metadata:\n" + indent + "    annotations:\n" + indent +
           "      kueue.x-k8s.io/podset-required-topology: " + p.topology_level + "\n";
  }
  std::string cpu = std::to_string(p.cpu_milli_per_pod / 1000);
  std::string mem = std::to_string(p.memory_gi_per_pod) + "Gi";
  std::string gpu = std::to_string(p.gpus_per_pod);
  out += indent + "  spec:\n";
  if (!p.pytorch) out += indent + "    restartPolicy: Never\n";
  out += indent + "    priorityClassName: " + p.priority_class + "\n" + indent +
         "    containers:\n" + indent + "    - name: " + container + "\n" + indent +
         "      image: registry.example.com/train:1.0\n" + indent + "      resources:\n" + indent +
         "        requests: {cpu: \"" + cpu + "\", memory: " + mem + ", nvidia.com/gpu: \"" + gpu +
         "\"}\n" + indent + "        limits: {nvidia.com/gpu: \"" + gpu + "\"}\n";
}

}  // namespace

std::string WorkloadYaml(const WorkloadSpec& spec) {
  std::string out = "# muster gen workload --jobs " + std::to_string(spec.jobs) +
                    " --mix small:" + std::to_string(spec.mix.small) +
                    ",medium:" + std::to_string(spec.mix.medium) +
                    ",large:" + std::to_string(spec.mix.large) + " --queues " +
                    std::to_string(spec.queues) + " --seed " + std::to_string(spec.seed) + "\n";
  for (const auto& pc : GeneratedPriorityClasses()) {
    out += "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: " +
           pc.meta.name + "\nvalue: " + std::to_string(pc.value) + "\n";
  }
  for (const auto& p : PlanJobs(spec)) {
    out += std::string("---\napiVersion: ") + (p.pytorch ? "kubeflow.org/v1" : "batch/v1") +
           "\nkind: " + (p.pytorch ? "PyTorchJob" : "Job") + "\nmetadata:\n  name: " + p.name +
           "\n  namespace: " + p.namespace_ + "\n";
    if (!p.local_queue.empty()) {
      out += "  labels:\n    kueue.x-k8s.io/queue-name: " + p.local_queue + "\n";
    }
    out += "  annotations:\n    sim.muster.dev/submit-at: \"" + Seconds(p.submit_at) +
           "\"\n    sim.muster.dev/duration: \"" + Seconds(p.duration) + "\"\nspec:\n";
    if (p.pytorch) {
      out +=
          "  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      restartPolicy: "
          "OnFailure\n";
      AppendTemplate(out, p, "      ", "pytorch");
      if (p.pods > 1) {
        out += "    Worker:\n      replicas: " + std::to_string(p.pods - 1) +
               "\n      restartPolicy: OnFailure\n";
        AppendTemplate(out, p, "      ", "pytorch");
      }
    } else {
      std::string n = std::to_string(p.pods);
      out += "  parallelism: " + n + "\n  completions: " + n +
             "\n  completionMode: Indexed\n  backoffLimit: 0\n";
      AppendTemplate(out, p, "  ", "train");
    }
  }
  return out;
}

}  // namespace muster::sim
