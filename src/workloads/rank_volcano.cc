// Volcano Job plugins: env (task index) and svc (every task's hostnames and count),
// as pkg/controllers/job/plugins/{env,svc} write them (the svc plugin also in its
// ConfigMap "<job>-svc", mounted at /etc/volcano: "<task>.host", one host a line).
#include <algorithm>
#include <cctype>
#include <string>

#include "workloads/rank_internal.h"

namespace muster::workloads::internal {
namespace {

// Task "param-server" -> "param_server": the svc plugin's file key form.
std::string FileKey(std::string_view task) {
  std::string out(task);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

// Task "param-server" -> "PARAM_SERVER": the svc plugin's env key form.
std::string EnvKey(std::string_view task) {
  std::string out = FileKey(task);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

void VolcanoIdentity(const model::Workload& w, int32_t pod_set, int32_t index,
                     const RankContext& context, PodIdentity* id) {
  const auto& plugins = w.rank.volcano_plugins;
  if (plugins.contains("env")) {
    id->env["VK_TASK_INDEX"] = std::to_string(index);
    id->env["VC_TASK_INDEX"] = std::to_string(index);
  }
  (void)pod_set;
  if (!plugins.contains("svc")) return;
  for (size_t i = 0; i < w.pod_sets.size(); ++i) {
    const model::PodSet& ps = w.pod_sets[i];
    // Pods resolve as "<hostname>.<subdomain>" through the job's headless Service,
    // named like the job unless the template sets a subdomain.
    const std::string& subdomain =
        ps.tmpl.spec.subdomain.empty() ? w.meta.name : ps.tmpl.spec.subdomain;
    std::string hosts;
    std::string lines;  // the ConfigMap the plugin mounts at /etc/volcano
    for (int32_t k = 0; k < ps.count; ++k) {
      std::string host = AddressOf(w, context, static_cast<int32_t>(i), k, "." + subdomain);
      hosts += (k > 0 ? "," : "") + host;
      lines += (k > 0 ? "\n" : "") + host;
    }
    id->volcano_hostfiles[FileKey(ps.name) + ".host"] = lines;
    std::string key = EnvKey(ps.name);
    id->env["VC_" + key + "_HOSTS"] = hosts;
    id->env["VC_" + key + "_NUM"] = std::to_string(ps.count);
  }
}

}  // namespace muster::workloads::internal
