// TFJob TF_CONFIG, as the training operator's genTFConfigJSONStr builds it: the
// cluster spec of every replica type but Evaluator, and this pod's task.
#include <map>
#include <string>
#include <vector>

#include "workloads/rank_internal.h"

namespace muster::workloads::internal {
namespace {

constexpr int32_t kDefaultTfPort = 2222;

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

void TensorFlowIdentity(const model::Workload& w, int32_t pod_set, int32_t index,
                        const RankContext& context, PodIdentity* id) {
  // A single-replica TFJob is not distributed: the operator sets no TF_CONFIG.
  if (w.TotalCount() == 1) return;

  // std::map keeps the replica types sorted, so the string is deterministic.
  std::map<std::string, std::vector<std::string>> cluster;
  for (size_t i = 0; i < w.pod_sets.size(); ++i) {
    const model::PodSet& ps = w.pod_sets[i];
    // The evaluator watches checkpoints; it is not a member of the training cluster.
    if (ps.name == "evaluator") continue;
    int32_t port = DeclaredPort(ps.tmpl, "tensorflow", "tfjob-port", kDefaultTfPort);
    std::vector<std::string>& hosts = cluster[ps.name];
    for (int32_t k = 0; k < ps.count; ++k) {
      // The operator's per-replica Service: "<job>-<type>-<index>.<ns>.svc".
      hosts.push_back(
          AddressOf(w, context, static_cast<int32_t>(i), k, "." + w.meta.namespace_ + ".svc") +
          ":" + std::to_string(port));
    }
  }

  std::string json = "{\"cluster\":{";
  bool first_type = true;
  for (const auto& [type, hosts] : cluster) {
    json += (first_type ? "" : ",") + JsonString(type) + ":[";
    first_type = false;
    for (size_t k = 0; k < hosts.size(); ++k) json += (k ? "," : "") + JsonString(hosts[k]);
    json += "]";
  }
  json += "},\"environment\":\"cloud\",\"task\":{\"index\":" + std::to_string(index) +
          ",\"type\":" + JsonString(w.pod_sets[pod_set].name) + "}}";
  id->env["TF_CONFIG"] = json;
}

}  // namespace muster::workloads::internal
