#include "server/pod_log.h"

#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "server/api_status.h"
#include "server/log_files.h"
#include "server/log_stream.h"
#include "server/pod_paths.h"

namespace muster::server {
namespace {

using nlohmann::json;

// A log up to this size is answered as one body; a larger one is streamed.
constexpr uint64_t kMaxBody = 1 << 20;

// A non-negative integer query parameter; nullopt when absent, an error message
// when malformed.
std::optional<int64_t> Count(const ApiRequest& r, const std::string& key, std::string& error) {
  const std::string v = QueryParam(r, key);
  if (v.empty()) return std::nullopt;
  if (v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos) {
    error = key + ": Invalid value: \"" + v + "\": must be a non-negative integer";
    return std::nullopt;
  }
  return std::stoll(v);
}

// status.containerStatuses says the container runs or ran.
bool ContainerStarted(const nlohmann::json& pod, const std::string& container) {
  const auto* status = pod.contains("status") ? &pod["status"] : nullptr;
  if (status == nullptr || !status->is_object() || !status->contains("containerStatuses")) {
    return false;
  }
  for (const auto& c : (*status)["containerStatuses"]) {
    if (!c.is_object() || c.value("name", "") != container || !c.contains("state")) continue;
    const auto& state = c["state"];
    return state.is_object() && (state.contains("running") || state.contains("terminated"));
  }
  return false;
}

}  // namespace

std::vector<std::string> PodContainerNames(const nlohmann::json& pod) {
  std::vector<std::string> names;
  if (!pod.contains("spec") || !pod["spec"].is_object()) return names;
  const nlohmann::json& spec = pod["spec"];
  if (!spec.contains("containers") || !spec["containers"].is_array()) return names;
  for (const auto& c : spec["containers"]) {
    if (c.is_object() && c.contains("name") && c["name"].is_string()) {
      names.push_back(c["name"].get<std::string>());
    }
  }
  return names;
}

std::optional<PodLogTarget> MatchPodLogPath(const std::string& path) {
  return MatchPodSubresourcePath(path, "log");
}

ApiResult HandlePodLog(ObjectStore& store, const std::string& data_dir, const PodLogTarget& target,
                       const ApiRequest& request) {
  if (request.method != "GET") {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested "
                         "resource"));
  }
  const control::ObjectKey key{"pods", target.namespace_, target.name};
  auto pod = store.Get(key);
  if (!pod.ok()) return ErrorResponse(FromStatus(pod.status(), "pods", "", target.name));

  std::string error;
  const std::optional<int64_t> tail = Count(request, "tailLines", error);
  const std::optional<int64_t> limit = Count(request, "limitBytes", error);
  if (!error.empty()) return ErrorResponse(BadRequest(error));
  if (limit && *limit == 0)
    return ErrorResponse(BadRequest("limitBytes: Invalid value: 0: must be > 0"));

  const std::vector<std::string> containers = PodContainerNames(*pod);
  std::string container = QueryParam(request, "container");
  if (!container.empty() &&
      std::find(containers.begin(), containers.end(), container) == containers.end()) {
    return ErrorResponse(
        BadRequest("container " + container + " is not valid for pod " + target.name));
  }
  if (container.empty()) container = containers.empty() ? target.name : containers.front();

  const bool previous = IsTrueParam(QueryParam(request, "previous"));
  const std::string path = PodLogPath(data_dir, target.namespace_, target.name, previous);
  const std::vector<std::string> segments = LogSegments(path);
  if (segments.empty()) {
    if (previous) {
      return ErrorResponse(BadRequest("previous terminated container \"" + container +
                                      "\" in pod \"" + target.name + "\" not found"));
    }
    // A container the pod's status reports started (an emulated pod writes no file)
    // has an empty log, as the kubelet answers for one that printed nothing.
    if (ContainerStarted(*pod, container)) return ApiResponse{200, "text/plain", ""};
    return ErrorResponse(BadRequest("container \"" + container + "\" in pod \"" + target.name +
                                    "\" is waiting to start: ContainerCreating"));
  }
  std::optional<uint64_t> cap;
  if (limit) cap = static_cast<uint64_t>(*limit);
  // The previous attempt's log does not grow: following it is reading it.
  const bool follow = IsTrueParam(QueryParam(request, "follow")) && !previous;

  // Where the live file stands now; a tail or a head is read from there, and a
  // follow goes on from it.
  struct stat st {};
  const uint64_t live_size = ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  if (tail) {
    // Read backwards from the end: a few blocks however large the log is.
    std::string text = ReadTailLines(segments, *tail);
    if (follow)
      return std::make_unique<LogStream>(store, key, path, std::move(text), live_size, cap);
    if (cap && text.size() > *cap) text.resize(*cap);
    return ApiResponse{200, "text/plain", std::move(text)};
  }
  if (!follow && (cap ? *cap : LogSize(segments)) <= kMaxBody) {
    return ApiResponse{200, "text/plain", ReadHead(segments, cap.value_or(kMaxBody))};
  }
  // The whole log (up to the cap), streamed in chunks: rotated files oldest first,
  // then the live one.
  std::vector<std::string> backlog(segments.begin(), segments.end());
  if (!backlog.empty() && backlog.back() == path) backlog.pop_back();
  return std::make_unique<LogStream>(store, key, path, "", 0, cap, follow, std::move(backlog));
}

}  // namespace muster::server
