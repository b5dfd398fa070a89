// GET /api/v1/namespaces/{ns}/pods/{name}/log, as the Kubernetes API server answers
// it (what `kubectl logs` sends): the pod's output from the files the local executor
// writes under the data directory (pod_paths.h, rotated: log_files.h), as text/plain;
// streamed while the pod runs when follow=true, and streamed in chunks when it is
// larger than 1 MiB. tailLines reads backwards from the end (never the whole log).
#pragma once

#include <optional>
#include <string>

#include "server/api_handler.h"
#include "server/object_store.h"

namespace muster::server {

struct PodLogTarget {
  std::string namespace_;
  std::string name;
};

// The pod a ".../pods/{name}/log" path names; nullopt for any other path.
std::optional<PodLogTarget> MatchPodLogPath(const std::string& path);

// Query: previous, tailLines, limitBytes, follow, container, timestamps (ignored).
// 404 when the pod does not exist, 400 when its log does not exist yet or the
// container is not the pod's.
ApiResult HandlePodLog(ObjectStore& store, const std::string& data_dir, const PodLogTarget& target,
                       const ApiRequest& request);

}  // namespace muster::server
