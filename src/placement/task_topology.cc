#include "placement/task_topology.h"

#include <algorithm>
#include <tuple>

#include "core/resource_name.h"
#include "placement/scorers/scorer.h"

namespace muster::placement {
namespace {

// Volcano's affinityPriority: the larger, the earlier a task's pods are bucketed.
constexpr int32_t kSelfAntiAffinity = 4;
constexpr int32_t kInterAffinity = 3;
constexpr int32_t kSelfAffinity = 2;
constexpr int32_t kInterAntiAffinity = 1;

// Bucket.CalcResReq: 1 cpu-milli, 1 MiB of memory and one thousandth of any other
// resource (GPUs) weigh the same.
int64_t ReqScore(const ResourceList& r) {
  int64_t score = 0;
  for (ResourceId id : r.SortedIds()) {
    int64_t v = r.Get(id);
    if (id == kCpu) {
      score += v;
    } else if (id == kMemory) {
      score += v / (1024 * 1024);
    } else if (ResourceNames::Name(id) != "pods") {
      score += v * 1000;
    }
  }
  return score;
}

bool Fits(const ResourceList& want, const ResourceList& free) {
  for (ResourceId id : want.SortedIds()) {
    if (want.Get(id) > free.Get(id)) return false;
  }
  return true;
}

}  // namespace

std::optional<TaskTopologyPlan> TaskTopologyPlan::Make(const model::Workload& workload,
                                                       const std::vector<int32_t>& counts,
                                                       const std::vector<ResourceList>& requests,
                                                       int32_t weight) {
  if (!workload.task_topology || weight <= 0) return std::nullopt;
  const model::TaskTopology& topo = *workload.task_topology;
  const size_t n = workload.pod_sets.size();
  TaskTopologyPlan t;
  t.weight_ = weight;
  t.requests_ = requests;
  t.requests_.resize(n);
  t.priority_.assign(n, 0);
  t.exist_order_.assign(n, 0);
  t.affine_.resize(n);
  t.anti_.resize(n);
  t.self_affine_.assign(n, false);
  t.self_anti_.assign(n, false);
  std::map<std::string, int32_t> index;
  for (size_t i = 0; i < n; ++i) {
    t.names_.push_back(workload.pod_sets[i].name);
    index.emplace(workload.pod_sets[i].name, static_cast<int32_t>(i));
  }
  auto mark = [&](int32_t task, int32_t priority) {
    t.priority_[task] = std::max(t.priority_[task], priority);
  };
  auto apply = [&](const std::vector<std::vector<std::string>>& groups, bool anti) {
    for (const auto& group : groups) {
      std::vector<int32_t> ids;
      for (const std::string& name : group) {
        auto it = index.find(name);
        if (it != index.end()) ids.push_back(it->second);
      }
      if (ids.size() == 1) {
        (anti ? t.self_anti_ : t.self_affine_)[ids[0]] = true;
        mark(ids[0], anti ? kSelfAntiAffinity : kSelfAffinity);
        continue;
      }
      for (size_t a = 0; a < ids.size(); ++a) {
        for (size_t b = 0; b < a; ++b) {
          (anti ? t.anti_ : t.affine_)[ids[a]].insert(ids[b]);
          (anti ? t.anti_ : t.affine_)[ids[b]].insert(ids[a]);
        }
        mark(ids[a], anti ? kInterAntiAffinity : kInterAffinity);
      }
    }
  };
  apply(topo.affinity, false);
  apply(topo.anti_affinity, true);
  for (size_t k = 0; k < topo.task_order.size(); ++k) {
    auto it = index.find(topo.task_order[k]);
    if (it != index.end())
      t.exist_order_[it->second] = static_cast<int32_t>(topo.task_order.size() - k);
  }

  // Pods of tasks with a topology, strongest first (Volcano sorts them in reverse
  // TaskOrder before bucketing), then by task name and index.
  struct Member {
    int32_t pod_set, ordinal, bucket;
  };
  std::vector<Member> members;
  std::vector<Pod> outside;
  for (size_t p = 0; p < n; ++p) {
    int32_t count = p < counts.size() ? counts[p] : workload.pod_sets[p].count;
    for (int32_t k = 0; k < count; ++k) {
      if (t.priority_[p] > 0) {
        members.push_back({static_cast<int32_t>(p), k, -1});
      } else {
        outside.push_back({static_cast<int32_t>(p), -1});
      }
    }
  }
  if (members.empty()) return std::nullopt;
  std::stable_sort(members.begin(), members.end(), [&](const Member& a, const Member& b) {
    int32_t o = t.Order(a.pod_set, b.pod_set);
    if (o != 0) return o > 0;
    if (t.names_[a.pod_set] != t.names_[b.pod_set])
      return t.names_[a.pod_set] < t.names_[b.pod_set];
    return a.ordinal < b.ordinal;
  });
  // buildBucket: the bucket a pod is most attracted to; ties to the lighter one; a
  // new bucket when every one repels it.
  for (Member& m : members) {
    int32_t best = -1, best_aff = 0;
    for (size_t b = 0; b < t.buckets_.size(); ++b) {
      int32_t aff = t.Affinity(m.pod_set, t.buckets_[b].tasks, false);
      if (best < 0 || aff > best_aff ||
          (aff == best_aff && t.buckets_[b].req_score < t.buckets_[best].req_score)) {
        best = static_cast<int32_t>(b);
        best_aff = aff;
      }
    }
    if (best < 0 || best_aff < 0) {
      best = static_cast<int32_t>(t.buckets_.size());
      t.buckets_.emplace_back();
    }
    Bucket& bucket = t.buckets_[best];
    m.bucket = best;
    bucket.tasks[m.pod_set]++;
    bucket.request += t.requests_[m.pod_set];
    bucket.req_score += ReqScore(t.requests_[m.pod_set]);
  }
  std::vector<int32_t> size(t.buckets_.size(), 0);
  for (const Member& m : members) size[m.bucket]++;
  for (int32_t s : size) t.bucket_max_size_ = std::max(t.bucket_max_size_, s);
  // TaskOrderFn: bucketed pods first, the biggest bucket first, older buckets
  // before younger ones; inside a bucket the stronger task first.
  std::stable_sort(members.begin(), members.end(), [&](const Member& a, const Member& b) {
    if (a.bucket != b.bucket) {
      if (size[a.bucket] != size[b.bucket]) return size[a.bucket] > size[b.bucket];
      return a.bucket < b.bucket;
    }
    return t.Order(a.pod_set, b.pod_set) > 0;
  });
  for (const Member& m : members) {
    t.buckets_[m.bucket].pending.insert(t.pods_.size());
    t.pods_.push_back({m.pod_set, m.bucket});
  }
  t.pods_.insert(t.pods_.end(), outside.begin(), outside.end());
  return t;
}

int32_t TaskTopologyPlan::Order(int32_t a, int32_t b) const {
  if (a == b) return 0;
  if (exist_order_[a] != exist_order_[b]) return exist_order_[a] > exist_order_[b] ? 1 : -1;
  if (priority_[a] != priority_[b]) return priority_[a] > priority_[b] ? 1 : -1;
  return 0;
}

int32_t TaskTopologyPlan::Affinity(int32_t task, const std::map<int32_t, int32_t>& tasks,
                                   bool only_anti) const {
  int32_t score = 0;
  for (const auto& [other, count] : tasks) {
    bool same = other == task;
    if (!only_anti && (same ? self_affine_[task] : affine_[task].count(other) != 0)) score += count;
    if (same ? self_anti_[task] : anti_[task].count(other) != 0) score -= count;
  }
  return score;
}

int64_t TaskTopologyPlan::Bonus(size_t k, int32_t node, const ResourceList& free) const {
  if (k >= pods_.size() || pods_[k].bucket < 0) return 0;
  const Pod& pod = pods_[k];
  const Bucket& bucket = buckets_[pod.bucket];
  // 1. Pods of its bucket already on the node.
  int64_t score = 0;
  if (auto it = bucket.on_node.find(node); it != bucket.on_node.end()) score += it->second;
  // 2. Pods of the job there that its task is anti-affine to.
  if (auto it = node_tasks_.find(node); it != node_tasks_.end()) {
    int32_t anti = Affinity(pod.pod_set, it->second, true);
    if (anti < 0) score += anti;
  }
  // 3. Its bucket's pods still to place, less those the node could not also hold.
  score += static_cast<int64_t>(bucket.pending.size());
  if (!Fits(bucket.request, free)) {
    ResourceList remains = bucket.request;
    for (auto it = bucket.pending.rbegin(); it != bucket.pending.rend(); ++it) {
      if (*it == k) continue;
      remains -= requests_[pods_[*it].pod_set];
      --score;
      if (Fits(remains, free)) break;
    }
  }
  if (bucket_max_size_ <= 0) return 0;
  return score * weight_ * kMaxScore / bucket_max_size_;
}

void TaskTopologyPlan::Bound(size_t k, int32_t node) {
  if (k >= pods_.size()) return;
  const Pod& pod = pods_[k];
  node_tasks_[node][pod.pod_set]++;
  if (pod.bucket < 0) return;
  Bucket& bucket = buckets_[pod.bucket];
  bucket.on_node[node]++;
  if (bucket.pending.erase(k) > 0) bucket.request -= requests_[pod.pod_set];
}

}  // namespace muster::placement
