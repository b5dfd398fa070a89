// Hand-built manifests, workloads and a fake PlacementOracle for admission tests
// (the YAML decoder is not needed: tests say exactly what the tree holds).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "admission/admission.h"
#include "model/manifest_set.h"

namespace muster::admission::testing {

inline Quantity Q(const std::string& s) { return Quantity::Parse(s).value(); }

struct R {  // one resource quota: name, nominal, borrowingLimit, lendingLimit
  std::string name;
  std::string nominal;
  std::optional<std::string> borrowing;
  std::optional<std::string> lending;
  R(std::string n, std::string nom, std::optional<std::string> b = std::nullopt,
    std::optional<std::string> l = std::nullopt)
      : name(std::move(n)),
        nominal(std::move(nom)),
        borrowing(std::move(b)),
        lending(std::move(l)) {}
  R(const char* n, const char* nom) : R(std::string(n), std::string(nom)) {}
  R(const char* n, const char* nom, const char* b)
      : R(std::string(n), std::string(nom), std::string(b)) {}
};

inline model::FlavorQuotas Flavor(const std::string& name, const std::vector<R>& rs) {
  model::FlavorQuotas fq;
  fq.name = name;
  for (const auto& r : rs) {
    model::ResourceQuota q;
    q.name = r.name;
    q.nominal_quota = Q(r.nominal);
    if (r.borrowing) q.borrowing_limit = Q(*r.borrowing);
    if (r.lending) q.lending_limit = Q(*r.lending);
    fq.resources.push_back(q);
  }
  return fq;
}

inline model::ResourceGroup Group(const std::vector<std::string>& covered,
                                  const std::vector<model::FlavorQuotas>& flavors) {
  return model::ResourceGroup{covered, flavors};
}

inline model::ClusterQueue CQ(const std::string& name, const std::string& cohort,
                              const std::vector<model::ResourceGroup>& groups) {
  model::ClusterQueue cq;
  cq.meta.name = name;
  cq.cohort = cohort;
  cq.resource_groups = groups;
  cq.namespace_selector = model::LabelSelector{};
  return cq;
}

inline model::LocalQueue LQ(const std::string& ns, const std::string& name, const std::string& cq) {
  model::LocalQueue lq;
  lq.meta.name = name;
  lq.meta.namespace_ = ns;
  lq.cluster_queue = cq;
  return lq;
}

inline model::ResourceFlavor RF(const std::string& name, model::StringMap labels = {}) {
  model::ResourceFlavor rf;
  rf.meta.name = name;
  rf.node_labels = std::move(labels);
  return rf;
}

inline model::VolcanoQueue VQ(const std::string& name, int32_t weight, bool reclaimable = true) {
  model::VolcanoQueue q;
  q.meta.name = name;
  q.weight = weight;
  q.reclaimable = reclaimable;
  return q;
}

inline model::Node GpuNode(const std::string& name, const std::string& gpus) {
  model::Node n;
  n.meta.name = name;
  n.allocatable = ResourceList::FromQuantities(
      {{"cpu", Q("64")}, {"memory", Q("512Gi")}, {"nvidia.com/gpu", Q(gpus)}});
  return n;
}

// A workload "ns/name" with one pod set (or more via AddPodSet).
struct W {
  model::Workload wl;
  explicit W(model::Workload w) : wl(std::move(w)) {}
  W(const std::string& key, const std::string& local_queue) {
    wl.key = key;
    auto slash = key.find('/');
    wl.meta.namespace_ = key.substr(0, slash);
    wl.meta.name = key.substr(slash + 1);
    wl.local_queue = local_queue;
  }
  W& PodSet(const std::string& name, int32_t count, const std::map<std::string, std::string>& req) {
    model::PodSet ps;
    ps.name = name;
    ps.count = count;
    ps.min_count = count;
    model::QuantityMap qm;
    for (const auto& [k, v] : req) qm[k] = Q(v);
    ps.requests = ResourceList::FromQuantities(qm);
    wl.pod_sets.push_back(ps);
    wl.min_available += count;
    return *this;
  }
  W& Priority(int32_t p) {
    wl.priority = p;
    return *this;
  }
  W& Order(int64_t o) {
    wl.meta.order = o;
    return *this;
  }
  W& Volcano(const std::string& q) {
    wl.volcano_queue = q;
    return *this;
  }
  // kueue.x-k8s.io/job-min-parallelism: the (single) pod set may shrink to `min`.
  W& MinParallelism(int32_t min) {
    wl.meta.annotations["kueue.x-k8s.io/job-min-parallelism"] = std::to_string(min);
    wl.pod_sets.back().min_count = min;
    return *this;
  }
  W& NeverPreempts() {
    wl.preemption_never = true;
    return *this;
  }
  operator model::Workload() const { return wl; }  // NOLINT: fixture convenience
};

// Physical capacity as one pool of resources; nullopt capacity = always fits.
class FakeOracle : public PlacementOracle {
 public:
  FakeOracle() = default;
  explicit FakeOracle(ResourceList capacity) : capacity_(std::move(capacity)) {}

  Check CanPlace(const model::Workload& wl, const Assignment& a,
                 const std::vector<std::string>& assume_evicted) override {
    ++can_place_calls;
    if (Fits(wl, a, assume_evicted)) return {true, "", ""};
    return {false, "InsufficientResources", "insufficient nodes for " + wl.key};
  }
  std::optional<std::vector<std::string>> PhysicalVictims(
      const model::Workload& wl, const Assignment& a,
      const std::vector<std::string>& cands) override {
    std::vector<std::string> out;
    bool fits = false;
    for (const auto& c : cands) {
      out.push_back(c);
      if (Fits(wl, a, out)) {
        fits = true;
        break;
      }
    }
    if (!fits) return std::nullopt;
    for (int i = static_cast<int>(out.size()) - 2; i >= 0; --i) {
      std::vector<std::string> without = out;
      without.erase(without.begin() + i);
      if (Fits(wl, a, without)) out = without;
    }
    return out;
  }
  void Commit(const model::Workload& wl, const Assignment& a) override {
    used_[wl.key] = Total(wl, a);
    workloads_[wl.key] = wl;
    committed.push_back(wl.key);
  }
  void Release(const std::string& key) { used_.erase(key); }
  // Elastic victims: what the workload holds with `counts` pods per pod set.
  Check CanPlaceShrinking(
      const model::Workload& wl, const Assignment& a, const std::vector<std::string>& evicted,
      const std::vector<std::pair<std::string, std::vector<int32_t>>>& shrink_to) override {
    std::map<std::string, ResourceList> saved = used_;
    for (const auto& [key, counts] : shrink_to) Resize(key, counts);
    bool fits = Fits(wl, a, evicted);
    used_ = std::move(saved);
    return {fits, fits ? "" : "InsufficientResources", fits ? "" : "insufficient nodes"};
  }
  void Resize(const std::string& key, const std::vector<int32_t>& counts) {
    auto it = workloads_.find(key);
    if (it == workloads_.end()) return;
    Assignment a;
    for (size_t i = 0; i < it->second.pod_sets.size(); ++i) {
      a.pod_sets.push_back({it->second.pod_sets[i].name, i < counts.size() ? counts[i] : 0, {}});
    }
    used_[key] = Total(it->second, a);
  }

  void Unnominate(const std::string& key) override { unnominated.push_back(key); }

  int can_place_calls = 0;
  std::vector<std::string> committed;
  std::vector<std::string> unnominated;  // Unnominate calls, in order

 private:
  // Pods the assignment admits (partial admission may lower a pod set's count).
  static ResourceList Total(const model::Workload& wl, const Assignment& a) {
    ResourceList t;
    for (size_t i = 0; i < wl.pod_sets.size(); ++i) {
      int32_t n = i < a.pod_sets.size() && a.pod_sets[i].count > 0 ? a.pod_sets[i].count
                                                                   : wl.pod_sets[i].count;
      t += wl.pod_sets[i].requests.Scaled(n);
    }
    return t;
  }
  bool Fits(const model::Workload& wl, const Assignment& a,
            const std::vector<std::string>& evicted) const {
    if (!capacity_) return true;
    ResourceList used = Total(wl, a);
    for (const auto& [k, r] : used_) {
      if (std::find(evicted.begin(), evicted.end(), k) == evicted.end()) used += r;
    }
    return used.LessEqual(*capacity_);
  }
  std::optional<ResourceList> capacity_;
  std::map<std::string, ResourceList> used_;
  std::map<std::string, model::Workload> workloads_;
};

// Plays the engine: applies decisions (evicts victims, requeues them) and runs
// cycles at a time until nothing changes, checking invariants after each.
struct Harness {
  std::unique_ptr<Admitter> admitter;
  FakeOracle oracle;
  std::vector<Decision> log;
  // key -> eviction details "detail by preemptor"
  std::map<std::string, std::vector<std::string>> evictions;
  std::map<std::string, std::vector<std::string>> shrinks;  // elastic victims, same form
  std::set<std::string> running;
  std::function<void()> before_cycle;  // runs before every RunCycle when set

  explicit Harness(const model::ManifestSet& m, FakeOracle o = FakeOracle())
      : oracle(std::move(o)) {
    auto a = MakeAdmitter(m);
    EXPECT_TRUE(a.ok()) << a.status().message();
    admitter = std::move(a).value();
  }
  void Submit(const model::Workload& wl, Time t = 0) { admitter->Enqueue(wl, t); }
  // By value: callers may pass a reference into `running`, which this erases.
  void Finish(std::string key) {
    oracle.Release(key);
    running.erase(key);
    admitter->Remove(key);
  }
  // Runs cycles until one admits or preempts nothing.
  std::vector<Decision> Run(Time t = 0) {
    std::vector<Decision> all;
    for (int i = 0; i < 100; ++i) {
      if (before_cycle) before_cycle();
      std::vector<Decision> ds = admitter->RunCycle(t, oracle);
      bool moved = false;
      for (const Decision& d : ds) {
        all.push_back(d);
        log.push_back(d);
        if (d.kind == Decision::Kind::kAdmit) {
          running.insert(d.workload_key);
          moved = true;
        } else if (d.kind == Decision::Kind::kPreempt) {
          for (const Victim& v : d.victims) {
            if (!v.shrink_to.empty()) {  // an elastic victim gives up pods
              shrinks[v.workload_key].push_back(v.detail + " by " + d.workload_key);
              const Decision* admitted = LastAdmit(v.workload_key);
              if (admitted != nullptr) {
                Assignment a = admitted->assignment;
                for (size_t i = 0; i < a.pod_sets.size() && i < v.shrink_to.size(); ++i) {
                  a.pod_sets[i].count = v.shrink_to[i];
                }
                EXPECT_TRUE(admitter->Resize(v.workload_key, a).ok());
              }
              oracle.Resize(v.workload_key, v.shrink_to);
              continue;
            }
            evictions[v.workload_key].push_back(v.detail + " by " + d.workload_key);
            oracle.Release(v.workload_key);
            running.erase(v.workload_key);
            admitter->Requeue(v.workload_key, t);
          }
          moved = true;
        } else if (d.kind == Decision::Kind::kEvict) {
          evictions[d.workload_key].push_back(d.reason);
          oracle.Release(d.workload_key);
          running.erase(d.workload_key);
          admitter->Requeue(d.workload_key, t);
          moved = true;
        }
      }
      auto inv = admitter->CheckInvariants();
      EXPECT_TRUE(inv.empty()) << inv.front();
      if (!moved) break;
    }
    return all;
  }
  bool Running(const std::string& key) const { return running.count(key) > 0; }
  std::string Reason(const std::string& key) const {
    auto d = admitter->PendingReason(key);
    return d ? d->reason + ": " + d->message : "";
  }
  const Decision* LastAdmit(const std::string& key) const {
    for (auto it = log.rbegin(); it != log.rend(); ++it) {
      if (it->kind == Decision::Kind::kAdmit && it->workload_key == key) return &*it;
    }
    return nullptr;
  }
};

// One ClusterQueue "cq" with `cpu` CPUs of flavor "default", one LocalQueue ns/lq.
inline model::ManifestSet CpuQueue(const char* cpu) {
  model::ManifestSet m;
  m.resource_flavors = {RF("default")};
  m.cluster_queues = {CQ("cq", "", {Group({"cpu"}, {Flavor("default", {{"cpu", cpu}})})})};
  m.local_queues = {LQ("ns", "lq", "cq")};
  return m;
}

// A ClusterQueue of `nominal` GPUs of flavor "gpu", lending up to `borrowing`.
inline model::ClusterQueue GpuCQ(const std::string& name, const std::string& cohort,
                                 const char* nominal,
                                 std::optional<std::string> borrowing = std::nullopt) {
  return CQ(
      name, cohort,
      {Group({"nvidia.com/gpu"}, {Flavor("gpu", {R("nvidia.com/gpu", nominal, borrowing)})})});
}

// A one-pod workload asking for n GPUs.
inline W Gpus(const std::string& key, const std::string& lq, const std::string& n, int32_t prio,
              int64_t order) {
  W w(key, lq);
  w.PodSet("main", 1, {{"nvidia.com/gpu", n}}).Priority(prio).Order(order);
  return w;
}

}  // namespace muster::admission::testing
