// GET /api/v1/namespaces/{ns}/pods/{name}/log, as the Kubernetes API server answers
// it (what `kubectl logs` sends): the pod's output from the files the local executor
// writes under the data directory (pod_paths.h, rotated: log_files.h), as text/plain;
// streamed while the pod runs when follow=true, and streamed in chunks when it is
// larger than 1 MiB. tailLines reads backwards from the end (never the whole log).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/api_handler.h"
#include "server/object_store.h"
#include "server/pod_paths.h"

namespace muster::server {

using PodLogTarget = PodName;

// The names of a pod object's spec.containers, in order.
std::vector<std::string> PodContainerNames(const nlohmann::json& pod);

// The pod a ".../pods/{name}/log" path names; nullopt for any other path.
std::optional<PodLogTarget> MatchPodLogPath(const std::string& path);

// Query: previous, tailLines, limitBytes, follow, container, timestamps (ignored).
// 404 when the pod does not exist, 400 when its log does not exist yet or the
// container is not the pod's.
ApiResult HandlePodLog(ObjectStore& store, const std::string& data_dir, const PodLogTarget& target,
                       const ApiRequest& request);

}  // namespace muster::server
