// What kube-apiserver fills in on the core kinds before validating them, and what
// its allocators and a provisioner set on create:
//
// - Secret: `stringData` merged into `data` (base64) and dropped, as upstream's
//   conversion does; `type` Opaque when unset.
// - Service: type ClusterIP, sessionAffinity None, port protocol TCP and targetPort
//   the port; an update that leaves clusterIP out keeps the stored one. On create a
//   ClusterIP Service gets a free address of kServiceCidr (upstream's default range,
//   drawn at random as its allocator does). muster serve has no kube-proxy, so the
//   address is not routed: a Service's name resolves (pods' /etc/hosts,
//   pod_network.h) to the addresses of the pods it selects, headless or not.
// - PersistentVolumeClaim: volumeMode Filesystem and storageClassName "local" when
//   unset (the default class); on create it is bound at once, as a
//   WaitForFirstConsumer-less local provisioner would: spec.volumeName, status Bound
//   with the requested capacity and the access modes. The volume is the directory
//   DATA/volumes/<namespace>/<claim> (pod_paths.h ClaimDir), made for the first pod
//   that mounts it and owned by that pod's user; its size is not enforced.
// - batch/v1 Job: SetDefaults_Job (batch_job_defaults.h; the generated selector is
//   the create path's, once the uid is drawn).
// - Pod: SetDefaults_Pod (a limit without a request is the request),
//   SetDefaults_PodSpec and SetDefaults_Container (control/pod_spec_json.h:
//   restartPolicy Always, dnsPolicy, schedulerName, terminationGracePeriodSeconds,
//   serviceAccountName, imagePullPolicy by tag...), as kube-apiserver stores a pod;
//   an update keeps the stored spec.priority and spec.preemptionPolicy where it
//   leaves them out (the Priority plugin's, pod_priority.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "control/object_reader.h"
#include "control/resource_types.h"
#include "core/status.h"

namespace muster::server {

inline constexpr char kServiceCidr[] = "10.96.0.0/12";
inline constexpr char kDefaultStorageClass[] = "local";
inline constexpr char kLocalProvisioner[] = "muster.dev/local";

// Whether `ip` is an IPv4 address of kServiceCidr.
bool InServiceRange(const std::string& ip);

// Upstream's defaults for `object` of core `type`; `current` is the stored object on
// an update (nullptr on create).
void DefaultCoreObject(const control::ResourceType& type, nlohmann::json& object,
                       const nlohmann::json* current);

// On create, after validation: a ClusterIP Service's address (kInvalidArgument when an
// address it names is taken, kUnavailable when the range is full) and a
// claim's binding.
Status AllocateOnCreate(const control::ResourceType& type, const control::ObjectReader& store,
                        nlohmann::json& object);

}  // namespace muster::server
