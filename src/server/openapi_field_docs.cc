// The field documentation behind the published schemas (openapi_schemas.h): for each
// kind, what it is and the fields muster acts on, in upstream's terms and with what
// muster does with them. Paths are dotted from the object's root.
#include "server/openapi_schemas.h"

namespace muster::server {
namespace {

// Fields every job kind shares through its pod templates.
constexpr const char* kTemplateDoc =
    "The pod template of the job's pods: containers, resources (requests and limits, GPUs as "
    "nvidia.com/gpu), volumes, priorityClassName, nodeSelector and tolerations are read by "
    "admission and placement.";
constexpr const char* kReplicasDoc = "Number of pods of this replica type.";
constexpr const char* kRestartDoc =
    "Restart policy of the replica type's pods: Always, OnFailure, Never or ExitCode.";
constexpr const char* kRunPolicyDoc =
    "Policies of the job's run: suspension, cleanup, back-off and gang scheduling.";
constexpr const char* kSuspendRunDoc =
    "Whether the job is suspended. Kueue semantics: a queued job is held suspended until "
    "admitted; muster unsuspends it on admission and suspends it again when it is evicted.";
constexpr const char* kSchedulingPolicyDoc =
    "Gang scheduling: minAvailable pods start together; queue and priorityClass are read.";

}  // namespace

const std::vector<KindDoc>& KindDocs() {
  static const std::vector<KindDoc> kDocs = {
      {"batch",
       "Job",
       "Job represents the configuration of a single job. muster admits it through Kueue's "
       "queues (label kueue.x-k8s.io/queue-name), runs its pods as one gang and writes its "
       "status as the Job controller does.",
       {
           {"spec", "object", "Specification of the desired behavior of a job."},
           {"spec.parallelism", "integer",
            "Pods running at once; the gang muster admits and places together."},
           {"spec.completions", "integer",
            "Successful pods needed for the job to succeed (null: any one pod's success)."},
           {"spec.completionMode", "string",
            "NonIndexed or Indexed: Indexed pods get JOB_COMPLETION_INDEX as their rank."},
           {"spec.backoffLimit", "integer", "Retries before the job is marked failed."},
           {"spec.activeDeadlineSeconds", "integer",
            "Seconds the job may run once started before it is failed (DeadlineExceeded)."},
           {"spec.suspend", "boolean",
            "Suspended jobs create no pods. A queued job is held suspended until Kueue admits "
            "it; muster sets it false on admission and true again on eviction."},
           {"spec.template", "object", kTemplateDoc},
       }},
      {"batch",
       "CronJob",
       "CronJob makes a Job from its jobTemplate at each time its schedule names, as "
       "kube-controller-manager's CronJob controller does; each Job is then admitted like "
       "any other (label the jobTemplate with kueue.x-k8s.io/queue-name to queue it).",
       {
           {"spec", "object", "Specification of the desired behavior of a cron job."},
           {"spec.schedule", "string",
            "The schedule in Cron format (five fields, or @hourly, @daily, @weekly, "
            "@monthly, @yearly)."},
           {"spec.timeZone", "string",
            "The time zone the schedule is read in (a name of the time zone database); UTC "
            "when unset."},
           {"spec.concurrencyPolicy", "string",
            "Allow (default), Forbid (skip a time while a Job runs) or Replace (delete the "
            "running Jobs first)."},
           {"spec.suspend", "boolean", "No new Jobs while true; running ones go on."},
           {"spec.startingDeadlineSeconds", "integer",
            "A time missed by more than this many seconds is skipped."},
           {"spec.successfulJobsHistoryLimit", "integer",
            "Finished successful Jobs kept (default 3); older ones are deleted."},
           {"spec.failedJobsHistoryLimit", "integer",
            "Finished failed Jobs kept (default 1); older ones are deleted."},
           {"spec.jobTemplate", "object", "The Job made at each time: metadata and spec."},
       }},
      {"kueue.x-k8s.io",
       "ClusterQueue",
       "ClusterQueue is Kueue's cluster-wide queue: quotas per flavor and resource, a "
       "queueing strategy and preemption policy, optionally in a cohort that shares unused "
       "quota.",
       {
           {"spec", "object", "ClusterQueueSpec defines the desired state of ClusterQueue."},
           {"spec.cohort", "string",
            "The cohort the ClusterQueue belongs to. ClusterQueues of a cohort can borrow "
            "unused quota from each other (up to borrowingLimit) and lend theirs (up to "
            "lendingLimit). v1beta2 calls it cohortName.",
            "v1beta1"},
           {"spec.cohortName", "string",
            "The cohort the ClusterQueue belongs to (v1beta1: cohort). ClusterQueues of a "
            "cohort can borrow unused quota from each other (up to borrowingLimit) and lend "
            "theirs (up to lendingLimit).",
            "v1beta2"},
           {"spec.queueingStrategy", "string",
            "StrictFIFO (the head blocks the queue while it cannot be admitted) or "
            "BestEffortFIFO (default: inadmissible workloads are skipped). Both order by "
            "priority, then creation time."},
           {"spec.namespaceSelector", "object",
            "Namespaces whose LocalQueues may submit to this ClusterQueue (empty: all)."},
           {"spec.resourceGroups", "[]object",
            "Resource groups: each covers some resources and lists flavors, tried in order."},
           {"spec.resourceGroups[].coveredResources", "[]string",
            "Resources this group covers (cpu, memory, nvidia.com/gpu...)."},
           {"spec.resourceGroups[].flavors", "[]object",
            "The ResourceFlavors of the group, in preference order, with their quotas."},
           {"spec.resourceGroups[].flavors[].name", "string", "The ResourceFlavor's name."},
           {"spec.resourceGroups[].flavors[].resources", "[]object",
            "Quota per covered resource: name, nominalQuota, borrowingLimit, lendingLimit."},
           {"spec.resourceGroups[].flavors[].resources[].nominalQuota", "quantity",
            "What the queue's admitted workloads may use of this flavor and resource."},
           {"spec.resourceGroups[].flavors[].resources[].borrowingLimit", "quantity",
            "How much more the queue may borrow from its cohort (absent: no limit)."},
           {"spec.resourceGroups[].flavors[].resources[].lendingLimit", "quantity",
            "How much of its unused quota the queue may lend to its cohort (absent: all)."},
           {"spec.preemption", "object",
            "When admitted workloads may be preempted: withinClusterQueue, "
            "reclaimWithinCohort, borrowWithinCohort."},
           {"spec.flavorFungibility", "object",
            "Whether to try the next flavor before borrowing or preempting (whenCanBorrow, "
            "whenCanPreempt)."},
           {"spec.fairSharing", "object", "Fair-sharing weight of the queue within its cohort."},
           {"spec.stopPolicy", "string",
            "None, Hold (admit nothing new) or HoldAndDrain (also evict admitted workloads)."},
       }},
      {"kueue.x-k8s.io",
       "LocalQueue",
       "LocalQueue is a namespace's entry to a ClusterQueue: jobs name it in their "
       "kueue.x-k8s.io/queue-name label.",
       {
           {"spec", "object", "LocalQueueSpec defines the desired state of LocalQueue."},
           {"spec.clusterQueue", "string", "The ClusterQueue this LocalQueue submits to."},
           {"spec.stopPolicy", "string", "None, Hold or HoldAndDrain, as for ClusterQueues."},
       }},
      {"kueue.x-k8s.io",
       "ResourceFlavor",
       "ResourceFlavor is a kind of node (GPU model, zone...): quotas are per flavor, and "
       "admission injects its node labels and tolerations into the pods.",
       {
           {"spec", "object", "ResourceFlavorSpec defines the desired state of ResourceFlavor."},
           {"spec.nodeLabels", "map", "Labels of the nodes of this flavor; pods are placed there."},
           {"spec.nodeTaints", "[]object", "Taints the flavor's nodes have."},
           {"spec.tolerations", "[]object", "Tolerations added to admitted pods."},
           {"spec.topologyName", "string", "The Topology for topology-aware scheduling."},
       }},
      {"kueue.x-k8s.io",
       "Cohort",
       "Cohort groups ClusterQueues (and other cohorts) that share quota; it may hold quota "
       "of its own.",
       {
           {"spec", "object", "CohortSpec defines the desired state of Cohort."},
           {"spec.parentName", "string", "The parent cohort (muster also reads parent)."},
           {"spec.resourceGroups", "[]object",
            "Quota the cohort itself holds, as a ClusterQueue's."},
           {"spec.fairSharing", "object", "Fair-sharing weight within the parent cohort."},
       }},
      {"kueue.x-k8s.io",
       "WorkloadPriorityClass",
       "WorkloadPriorityClass gives Kueue workloads a priority independent of pod priority.",
       {
           {"value", "integer", "The priority; higher is admitted first and may preempt."},
           {"description", "string", "Free text."},
       }},
      {"kueue.x-k8s.io",
       "Topology",
       "Topology lists the node label levels (block, rack, host) for topology-aware "
       "scheduling.",
       {
           {"spec", "object", "TopologySpec defines the desired state of Topology."},
           {"spec.levels", "[]object", "Node labels from the widest level to the narrowest."},
           {"spec.levels[].nodeLabel", "string", "The node label of this level."},
       }},
      {"kueue.x-k8s.io",
       "Workload",
       "Workload is Kueue's record of a job's admission; muster writes it for every queued "
       "job (name <kind>-<job name>).",
       {
           {"spec", "object", "WorkloadSpec: the job's pod sets, queue and priority."},
           {"spec.queueName", "string", "The LocalQueue the job was submitted to."},
           {"spec.priority", "integer", "The workload's priority."},
           {"spec.podSets", "[]object", "Pod sets: name, count and pod template."},
           {"status.admission", "object",
            "The ClusterQueue and flavors the workload was "
            "admitted with."},
           {"status.conditions", "[]object",
            "QuotaReserved, Admitted, Evicted, Finished... with reasons as Kueue writes them."},
       }},
      {"kubeflow.org",
       "PyTorchJob",
       "PyTorchJob is Kubeflow's distributed PyTorch job: a Master and Workers started as "
       "one gang, with torchrun's rendezvous environment (MASTER_ADDR, RANK, WORLD_SIZE). "
       "Queued through Kueue by the label kueue.x-k8s.io/queue-name.",
       {
           {"spec", "object", "PyTorchJobSpec is the desired state of a PyTorchJob."},
           {"spec.pytorchReplicaSpecs", "object",
            "Replica specs by type (Master, Worker): replicas, restartPolicy, template."},
           {"spec.pytorchReplicaSpecs.Master", "object",
            "The master replica (at most one pod): rank 0, the rendezvous host MASTER_ADDR."},
           {"spec.pytorchReplicaSpecs.Worker", "object",
            "The worker replicas: ranks after the master's, started with it as one gang."},
           {"spec.pytorchReplicaSpecs.Master.replicas", "integer", kReplicasDoc},
           {"spec.pytorchReplicaSpecs.Master.restartPolicy", "string", kRestartDoc},
           {"spec.pytorchReplicaSpecs.Master.template", "object", kTemplateDoc},
           {"spec.pytorchReplicaSpecs.Worker.replicas", "integer", kReplicasDoc},
           {"spec.pytorchReplicaSpecs.Worker.restartPolicy", "string", kRestartDoc},
           {"spec.pytorchReplicaSpecs.Worker.template", "object", kTemplateDoc},
           {"spec.runPolicy", "object", kRunPolicyDoc},
           {"spec.runPolicy.suspend", "boolean", kSuspendRunDoc},
           {"spec.runPolicy.schedulingPolicy", "object", kSchedulingPolicyDoc},
           {"spec.runPolicy.backoffLimit", "integer", "Retries before the job is failed."},
           {"spec.runPolicy.activeDeadlineSeconds", "integer", "Run time limit in seconds."},
           {"spec.runPolicy.cleanPodPolicy", "string",
            "Pods removed at the end: All, Running, "
            "None."},
           {"spec.elasticPolicy", "object",
            "Elastic training: minReplicas..maxReplicas workers, rdzvBackend, nProcPerNode."},
           {"spec.nprocPerNode", "string", "Processes per node (torchrun --nproc-per-node)."},
       }},
      {"kubeflow.org",
       "TFJob",
       "TFJob is Kubeflow's distributed TensorFlow job: Chief, PS, Worker and Evaluator "
       "replicas started as one gang, with TF_CONFIG. Queued through Kueue by the label "
       "kueue.x-k8s.io/queue-name.",
       {
           {"spec", "object", "TFJobSpec is the desired state of a TFJob."},
           {"spec.tfReplicaSpecs", "object",
            "Replica specs by type (Chief, PS, Worker, Evaluator): replicas, restartPolicy, "
            "template."},
           {"spec.runPolicy", "object", kRunPolicyDoc},
           {"spec.runPolicy.suspend", "boolean", kSuspendRunDoc},
           {"spec.runPolicy.schedulingPolicy", "object", kSchedulingPolicyDoc},
           {"spec.successPolicy", "string", "\"\" (chief or worker 0) or AllWorkers."},
       }},
      {"kubeflow.org",
       "MPIJob",
       "MPIJob (Kubeflow v2beta1) is an MPI job: a Launcher and Workers with a hostfile. "
       "Queued through Kueue by the label kueue.x-k8s.io/queue-name.",
       {
           {"spec", "object", "MPIJobSpec is the desired state of an MPIJob."},
           {"spec.mpiReplicaSpecs", "object",
            "Replica specs by type (Launcher, Worker): replicas, restartPolicy, template."},
           {"spec.slotsPerWorker", "integer", "MPI slots per worker in the hostfile."},
           {"spec.runPolicy", "object", kRunPolicyDoc},
           {"spec.runPolicy.suspend", "boolean", kSuspendRunDoc},
           {"spec.mpiImplementation", "string", "OpenMPI, Intel or MPICH."},
           {"spec.launcherCreationPolicy", "string",
            "AtStartup (default): the launcher starts with the workers; WaitForWorkersReady: "
            "once every worker runs."},
       }},
      {"jobset.x-k8s.io",
       "JobSet",
       "JobSet runs a group of replicated Jobs as one workload, admitted and placed as one "
       "gang. Queued through Kueue by the label kueue.x-k8s.io/queue-name.",
       {
           {"spec", "object", "JobSetSpec defines the desired state of JobSet."},
           {"spec.replicatedJobs", "[]object", "Jobs by name, each with replicas and a template."},
           {"spec.replicatedJobs[].name", "string", "Name of the replicated job."},
           {"spec.replicatedJobs[].replicas", "integer", "Copies of the job template."},
           {"spec.replicatedJobs[].template", "object", "A batch/v1 Job template."},
           {"spec.suspend", "boolean", "Held true until Kueue admits the JobSet."},
           {"spec.successPolicy", "object", "Which jobs must succeed: operator All or Any."},
           {"spec.failurePolicy", "object", "maxRestarts of the whole JobSet."},
           {"spec.startupPolicy", "object", "AnyOrder or InOrder start of replicated jobs."},
       }},
      {"trainer.kubeflow.org",
       "TrainJob",
       "TrainJob (Kubeflow Trainer v2) runs as its runtime's JobSet, the trainer step with "
       "numNodes pods admitted and placed as one gang. Queued through Kueue by the label "
       "kueue.x-k8s.io/queue-name.",
       {
           {"spec", "object", "The runtime it uses and the trainer's overrides."},
           {"spec.runtimeRef", "object",
            "name, kind (ClusterTrainingRuntime by default or TrainingRuntime) and apiGroup of "
            "the runtime; the TrainJob waits while it does not exist."},
           {"spec.trainer", "object",
            "image, command, args, env, numNodes, resourcesPerNode and numProcPerNode of the "
            "trainer's node container."},
           {"spec.trainer.numNodes", "integer", "Training nodes: the gang's size."},
           {"spec.suspend", "boolean", "Whether the TrainJob is suspended."},
       }},
      {"trainer.kubeflow.org",
       "TrainingRuntime",
       "TrainingRuntime: a namespaced blueprint of TrainJobs (ML policy and JobSet template).",
       {
           {"spec", "object", "The runtime's ML policy, pod group policy and JobSet template."},
           {"spec.mlPolicy", "object",
            "numNodes and the framework: torch (numProcPerNode) or mpi."},
           {"spec.mlPolicy.numNodes", "integer", "Training nodes unless the TrainJob sets them."},
           {"spec.mlPolicy.torch", "object", "The torch plugin: PET_* env on every node pod."},
           {"spec.podGroupPolicy", "object", "Gang scheduling (coscheduling or volcano)."},
           {"spec.template", "object",
            "A JobSet template; the replicated job of the trainer step runs the nodes."},
       }},
      {"trainer.kubeflow.org",
       "ClusterTrainingRuntime",
       "ClusterTrainingRuntime: a cluster-wide blueprint of TrainJobs (ML policy and JobSet "
       "template).",
       {
           {"spec", "object", "The runtime's ML policy, pod group policy and JobSet template."},
           {"spec.mlPolicy", "object",
            "numNodes and the framework: torch (numProcPerNode) or mpi."},
           {"spec.mlPolicy.numNodes", "integer", "Training nodes unless the TrainJob sets them."},
           {"spec.mlPolicy.torch", "object", "The torch plugin: PET_* env on every node pod."},
           {"spec.podGroupPolicy", "object", "Gang scheduling (coscheduling or volcano)."},
           {"spec.template", "object",
            "A JobSet template; the replicated job of the trainer step runs the nodes."},
       }},
      {"batch.volcano.sh",
       "Job",
       "Volcano Job: tasks of pods gang-scheduled through a Volcano Queue.",
       {
           {"spec", "object", "Specification of the desired behavior of the Volcano job."},
           {"spec.queue", "string", "The Volcano Queue the job is scheduled from."},
           {"spec.minAvailable", "integer", "Pods that must be placed together (the gang)."},
           {"spec.tasks", "[]object", "Tasks: name, replicas, template, policies."},
           {"spec.tasks[].name", "string", "Task name."},
           {"spec.tasks[].replicas", "integer", "Pods of the task."},
           {"spec.tasks[].template", "object", kTemplateDoc},
           {"spec.policies", "[]object", "Actions on events (PodFailed: RestartJob...)."},
           {"spec.maxRetry", "integer", "Restarts before the job fails."},
           {"spec.priorityClassName", "string", "PriorityClass of the job."},
           {"spec.schedulerName", "string", "volcano (muster schedules it either way)."},
       }},
      {"scheduling.volcano.sh",
       "Queue",
       "Volcano Queue: a share of the cluster by weight, capability and guarantee.",
       {
           {"spec", "object", "QueueSpec represents the template of Queue."},
           {"spec.weight", "integer", "Share of the cluster proportional to the weight."},
           {"spec.capability", "map", "Upper bound of what the queue's jobs may use."},
           {"spec.guarantee", "object", "Resources reserved for the queue."},
           {"spec.deserved", "map", "What the queue deserves (capacity plugin)."},
           {"spec.reclaimable", "boolean",
            "Whether others may reclaim what it uses above its "
            "share."},
           {"spec.parent", "string", "Parent queue (hierarchical queues)."},
       }},
      {"scheduling.volcano.sh",
       "PodGroup",
       "Volcano PodGroup: a gang of pods (minMember) scheduled together.",
       {
           {"spec", "object", "Specification of the desired behavior of the pod group."},
           {"spec.minMember", "integer", "Pods that must be placed together."},
           {"spec.queue", "string", "The Volcano Queue of the group."},
           {"spec.minResources", "map", "Resources the gang needs at least."},
           {"spec.priorityClassName", "string", "PriorityClass of the group."},
       }},
      {"scheduling.k8s.io",
       "PriorityClass",
       "PriorityClass maps a priority class name to the integer priority of pods and "
       "workloads.",
       {
           {"value", "integer", "The priority; higher is admitted first and may preempt."},
           {"globalDefault", "boolean", "Used for pods that name no priority class."},
           {"preemptionPolicy", "string", "PreemptLowerPriority or Never."},
           {"description", "string", "Free text."},
       }},
      {"",
       "Pod",
       "Pod is a collection of containers that run on a host. muster runs bare pods as "
       "workloads (Kueue's pod integration) and writes its jobs' pods.",
       {
           {"spec", "object", "Specification of the desired behavior of the pod."},
           {"spec.containers", "[]object",
            "The containers: image, command, args, env, "
            "resources."},
           {"spec.nodeName", "string", "The node the pod is bound to (set by muster)."},
           {"spec.priorityClassName", "string", "The pod's PriorityClass."},
       }},
      {"apiextensions.k8s.io",
       "CustomResourceDefinition",
       "CustomResourceDefinition describes a custom kind. muster's are read-only: its "
       "custom kinds are built in.",
       {
           {"spec", "object", "The kind's group, names, scope and versions."},
           {"spec.group", "string", "The API group of the kind."},
           {"spec.names", "object", "plural, singular, kind, listKind and shortNames."},
           {"spec.scope", "string", "Namespaced or Cluster."},
           {"spec.versions", "[]object", "Served versions; one is the storage version."},
       }},
      // Kinds muster stores and serves but does not schedule by: what they are.
      {"", "Namespace", "Namespace provides a scope for names.", {}},
      {"", "Event", "Event reports what happened to an object (muster's decisions too).", {}},
      {"", "ConfigMap", "ConfigMap holds configuration data for pods to consume.", {}},
      {"", "Secret", "Secret holds secret data (base64 in data) for pods to consume.", {}},
      {"",
       "Service",
       "Service names a set of pods (by selector); pods resolve its name to their addresses.",
       {}},
      {"",
       "PersistentVolumeClaim",
       "PersistentVolumeClaim asks for a volume; muster's local provisioner binds it to a "
       "directory under the data directory.",
       {}},
      {"",
       "ResourceQuota",
       "ResourceQuota limits what a namespace's objects may use in total.",
       {}},
      {"", "ServiceAccount", "ServiceAccount is an identity for processes in pods.", {}},
      {"",
       "LimitRange",
       "LimitRange sets default requests and limits for a namespace's containers and bounds "
       "what its containers and pods may ask for; Kueue (and muster) charge jobs the defaults "
       "and hold jobs outside the bounds.",
       {}},
      {"coordination.k8s.io", "Lease", "Lease is a lock with a holder and a renew time.", {}},
      {"topology.node.k8s.io",
       "NodeResourceTopology",
       "NodeResourceTopology lists a node's NUMA zones and their resources; placement keeps a "
       "pod's GPUs and CPUs in one zone where the policy asks.",
       {}},
      {"topology.volcano.sh",
       "HyperNode",
       "HyperNode groups nodes (or other HyperNodes) into a network tier for Volcano's "
       "network-topology-aware scheduling.",
       {}},
      {"config.kueue.x-k8s.io",
       "Configuration",
       "Kueue's manager configuration, as muster reads it for its own scheduling.",
       {}},
      {"muster.dev",
       "SchedulerConfiguration",
       "muster's own scheduler settings (docs/scheduler-configuration.md).",
       {}},
      {"rbac.authorization.k8s.io",
       "ClusterRole",
       "ClusterRole is a cluster-wide set of rules.",
       {}},
      {"rbac.authorization.k8s.io",
       "ClusterRoleBinding",
       "ClusterRoleBinding grants a ClusterRole's rules to subjects everywhere.",
       {}},
      {"rbac.authorization.k8s.io", "Role", "Role is a set of rules in one namespace.", {}},
      {"rbac.authorization.k8s.io",
       "RoleBinding",
       "RoleBinding grants a Role's or ClusterRole's rules to subjects in its namespace.",
       {}},
      {"",
       "Node",
       "Node is this machine (or an emulated node): capacity, allocatable GPUs and labels "
       "muster places pods by.",
       {
           {"spec", "object", "NodeSpec describes the attributes a node is created with."},
           {"spec.taints", "[]object", "Taints pods must tolerate."},
           {"spec.unschedulable", "boolean", "Cordoned: no new pods are placed here."},
       }},
  };
  return kDocs;
}

}  // namespace muster::server
