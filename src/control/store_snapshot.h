// StoreSnapshot: what the scheduler controller needs from the object store, decoded
// into the engine's model: the cluster and queue configuration (nodes, topology,
// flavors, queues, priority classes, configuration objects) as one ManifestSet, and
// every job as a Workload keyed by its store object. Objects were validated when they
// were written; one that no longer decodes (or builds) is reported, not fatal.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "control/object_reader.h"
#include "model/manifest_set.h"
#include "model/workload.h"

namespace muster::control {

// Store resources (ResourceType::StoreKey()) whose change means the engine must be
// rebuilt: everything the ManifestSet holds except jobs.
bool IsConfigResource(std::string_view store_key);
// The store keys IsConfigResource accepts, in the order snapshots read them.
const std::vector<std::string>& ConfigResources();
// Store resources that are job kinds (batch Job, PyTorchJob, TFJob, MPIJob, JobSet,
// Volcano Job): each becomes one Workload.
bool IsJobResource(std::string_view store_key);

struct JobRef {
  std::string resource;  // store key of the job's kind
  std::string namespace_;
  std::string name;
  std::string kind;
  std::string api_version;
  std::string uid;
};

struct SnapshotJob {
  JobRef ref;
  model::Workload workload;
  std::string created;  // metadata.creationTimestamp (RFC 3339 UTC: sorts as text)
};

struct StoreSnapshot {
  model::ManifestSet config;      // no jobs
  std::vector<SnapshotJob> jobs;  // by (creationTimestamp, namespace, name)
  // Objects that could not be used, one line each ("pytorchjobs.kubeflow.org
  // default/x: spec.pytorchReplicaSpecs: ..."), keyed by "<resource>/<ns>/<name>".
  std::map<std::string, std::string> problems;
};

// Reads every config and job object (one List per resource type).
Result<StoreSnapshot> ReadStoreSnapshot(const ObjectReader& store);

// One configuration object (of store resource `resource`) decoded alone; the first
// error when it does not decode.
Result<model::ManifestSet> DecodeConfigObject(const std::string& resource,
                                              const nlohmann::json& object);

// Every job object decoded against `config`, by (creationTimestamp, namespace,
// name); the ones that do not decode are in `problems` ("<resource>/<ns>/<name>").
std::vector<SnapshotJob> ReadJobs(const ObjectReader& store, const model::ManifestSet& config,
                                  std::map<std::string, std::string>& problems);

// A job object as api::DecodeObject decodes it, before it is built against the
// configuration: what a writer that decoded the object anyway hands to the reconciler
// with the change (Change::decoded).
struct DecodedJob {
  model::JobObject job;
};

// Decodes one job object against `config` (priority classes, pod groups).
// `decoded`: the object already decoded under JobDecodeSource(object) (a writer's), which is
// then only built against `config`.
Result<model::Workload> DecodeJob(const nlohmann::json& object, const model::ManifestSet& config,
                                  const DecodedJob* decoded = nullptr);

// The source name DecodeJob decodes `object` under ("store:<kind> <name>"): a writer
// that decodes under the same name gets the same JobObject (its source included).
std::string JobDecodeSource(const nlohmann::json& object);

}  // namespace muster::control
