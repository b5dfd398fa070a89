// ApiWriter: the typed writes `muster kube` makes to the API server, with Kubernetes
// status codes mapped to muster Status codes (404 kNotFound, 409 kConflict or
// kAlreadyExists, 422/400 kInvalidArgument, 410 kFailedPrecondition, 5xx and transport
// errors kUnavailable). Replace() sends the object's metadata.resourceVersion, so a
// write based on a stale view fails with kConflict and is retried on a fresh one,
// never clobbering someone else's change.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "control/resource_types.h"
#include "core/status.h"
#include "kube/kube_client.h"

namespace muster::kube {

class ApiWriter {
 public:
  explicit ApiWriter(KubeClient& client) : client_(client) {}

  // `resource`: a store key ("jobs.batch", "workloads.kueue.x-k8s.io", "pods").
  Result<nlohmann::json> Get(const std::string& resource, const std::string& namespace_,
                             const std::string& name);
  Result<nlohmann::json> Create(const std::string& resource, const nlohmann::json& object);
  // PUT of the whole object (or of its status subresource).
  Result<nlohmann::json> Replace(const std::string& resource, const nlohmann::json& object);
  Result<nlohmann::json> ReplaceStatus(const std::string& resource, const nlohmann::json& object);
  // JSON merge patch of the status subresource (queue counts: no precondition needed,
  // muster is the only writer of those fields).
  Result<nlohmann::json> MergePatchStatus(const std::string& resource,
                                          const std::string& namespace_, const std::string& name,
                                          const nlohmann::json& patch);
  // JSON patch (RFC 6902) of the object: a failed `test` operation is a 422, as
  // kube-apiserver answers it (kInvalidArgument).
  Result<nlohmann::json> JsonPatch(const std::string& resource, const std::string& namespace_,
                                   const std::string& name, const nlohmann::json& patch);
  Status Delete(const std::string& resource, const std::string& namespace_,
                const std::string& name);
  // POST pods/<name>/binding: kConflict when the pod is already bound.
  Status Bind(const std::string& namespace_, const std::string& pod, const std::string& node);
  // A core/v1 Event: created, or (`repeat`: EventCorrelator's count) the earlier one
  // merge-patched with its new count, lastTimestamp and message, and created again
  // when it is gone, as client-go's recorder does.
  Status CreateEvent(const nlohmann::json& event, bool repeat = false);

  // "/apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>[/<sub>]]".
  static Result<std::string> Path(const std::string& resource, const std::string& namespace_,
                                  const std::string& name = "", const std::string& sub = "");

 private:
  Result<nlohmann::json> Send(const char* method, const std::string& path, const std::string& body,
                              const char* content_type);
  // For writes whose answer is not read (bindings, deletes, events): no parse.
  Status SendIgnoringBody(const char* method, const std::string& path, const std::string& body,
                          const char* content_type);

  KubeClient& client_;
};

// The served type with store key `resource`; nullptr if none.
const control::ResourceType* TypeOfResource(const std::string& resource);

}  // namespace muster::kube
