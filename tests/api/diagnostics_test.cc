// Bad input: exact diagnostic lines (file:line, object, field path, message).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace muster::api {
namespace {

using testing::Decode;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::Lines;

TEST(Diagnostics, ClusterQueueFieldErrors) {
  auto r = Decode(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq
spec:
  queueingStrategy: Foo
  resourceGroups:
  - coveredResources: ["cpu", "nvidia.com/gpu"]
    flavors:
    - name: a
      resources:
      - {name: cpu, nominalQuota: 1}
      - {name: nvidia.com/gpu, nominalQuota: 1}
    - name: b
      resources:
      - {name: cpu, nominalQuota: 1}
      - name: nvidia.com/gpu
        nominalQuota: "12x"
    - name: a
      resources:
      - {name: cpu, nominalQuota: 1}
  - coveredResources: ["cpu"]
    flavors:
    - name: c
      resources:
      - {name: cpu, nominalQuota: -1}
)");
  EXPECT_TRUE(r.HasErrors());
  EXPECT_THAT(
      Lines(r),
      ElementsAre("t.yaml:6: ClusterQueue cq: spec.queueingStrategy: \"Foo\" is not one of "
                  "StrictFIFO, BestEffortFIFO",
                  "t.yaml:18: ClusterQueue cq: spec.resourceGroups[0].flavors[1].resources[1]."
                  "nominalQuota: \"12x\" is not a quantity",
                  "t.yaml:19: ClusterQueue cq: spec.resourceGroups[0].flavors[2].name: flavor "
                  "\"a\" is already listed at spec.resourceGroups[0].flavors[0]; a flavor "
                  "appears once per ClusterQueue",
                  "t.yaml:21: ClusterQueue cq: spec.resourceGroups[0].flavors[2].resources: has 1 "
                  "resources but coveredResources lists 2; every flavor needs a nominalQuota for "
                  "each covered resource",
                  "t.yaml:22: ClusterQueue cq: spec.resourceGroups[1].coveredResources[0]: "
                  "resource \"cpu\" is already covered by spec.resourceGroups[0]; each resource "
                  "belongs to one resource group",
                  "t.yaml:26: ClusterQueue cq: spec.resourceGroups[1].flavors[0].resources[0]."
                  "nominalQuota: \"-1\" must not be negative"));
  EXPECT_TRUE(r.manifests.cluster_queues.empty());  // a malformed object is not used
}

TEST(Diagnostics, NodeAnnotationAndTypeErrors) {
  auto r = Decode(R"(---
apiVersion: v1
kind: Node
metadata:
  name: n1
  annotations:
    sim.muster.dev/fail-at: "soon"
status:
  allocatable: [cpu]
)");
  EXPECT_THAT(Lines(r),
              ElementsAre("t.yaml:7: Node n1: metadata.annotations[sim.muster.dev/fail-at]: "
                          "\"soon\" is not a duration: use seconds (\"90\", \"1.5\") or a Go "
                          "duration (\"90s\", \"15m\", \"2h\", \"1h30m\")",
                          "t.yaml:9: Node n1: status.allocatable: must be a map, got a list"));
}

TEST(Diagnostics, UnknownKindMissingFieldsAndSyntax) {
  auto r = Decode(R"(apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
---
kind: Node
metadata: {name: x}
---
apiVersion: v1
kind: Node
metadata: {namespace: a}
---
- just a list
)");
  EXPECT_THAT(Lines(r),
              ElementsAre("t.yaml:2: Widget w: kind: warning: unknown kind Widget (apiVersion "
                          "example.com/v1); object skipped",
                          "t.yaml:5: Node: apiVersion: is required",
                          "t.yaml:10: Node: metadata.name: is required (set metadata.name or "
                          "metadata.generateName)",
                          "t.yaml:12: a document must be a map with apiVersion, kind and "
                          "metadata, got a list"));
  EXPECT_TRUE(r.HasErrors());
}

TEST(Diagnostics, YamlSyntaxErrorIsOneLine) {
  auto r = Decode("apiVersion: v1\nkind: Node\nmetadata: {name: [x\n");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].file, "t.yaml");
  EXPECT_FALSE(r.diagnostics[0].warning);
  EXPECT_THAT(r.diagnostics[0].ToString(), ::testing::StartsWith("t.yaml:"));
  EXPECT_THAT(r.diagnostics[0].message, ::testing::StartsWith("invalid YAML: "));
}

TEST(Diagnostics, VolcanoJobChecks) {
  auto r = Decode(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: vj
spec:
  minAvailable: 5
  policies:
  - {event: PodEvicted, action: RestartJob}
  - {event: PodEvicted, action: Explode}
  tasks:
  - name: w
    replicas: 2
    minAvailable: 3
    template: {spec: {containers: [{name: c, image: i}]}}
  - name: w
    replicas: 1
    template: {spec: {containers: [{name: c, image: i}]}}
)");
  EXPECT_THAT(
      Lines(r),
      ElementsAre(
          "t.yaml:6: Job default/vj: spec.minAvailable: 5 is more than the total replicas of all "
          "tasks (3)",
          "t.yaml:9: Job default/vj: spec.policies[1].event: event \"PodEvicted\" is already "
          "handled by another policy",
          "t.yaml:9: Job default/vj: spec.policies[1].action: \"Explode\" is not one of AbortJob, "
          "RestartJob, RestartTask, RestartPod, RestartPartition, TerminateJob, CompleteJob, "
          "ResumeJob",
          "t.yaml:13: Job default/vj: spec.tasks[0].minAvailable: 3 is more than the task's "
          "replicas (2)",
          "t.yaml:15: Job default/vj: spec.tasks[1].name: task name \"w\" is used by another "
          "task"));
}

TEST(Diagnostics, CrossObject) {
  auto r = Decode(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: c1}
spec: {parentName: c2}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: c2}
spec: {parentName: c1}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: missing}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: missing}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas}
spec: {topologyName: nowhere}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: ghost, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: j
  labels: {kueue.x-k8s.io/queue-name: nope}
spec:
  template:
    spec:
      priorityClassName: vip
      restartPolicy: Never
      containers: [{name: c}]
)");
  EXPECT_THAT(
      Lines(r),
      ElementsAre(
          "t.yaml:4: Cohort c1: spec.parentName: Cohort cycle: c1 -> c2 -> c1",
          "t.yaml:14: LocalQueue team/lq: spec.clusterQueue: warning: ClusterQueue \"missing\" "
          "is not in the input",
          "t.yaml:16: LocalQueue team/lq: metadata.name: LocalQueue \"team/lq\" is already "
          "defined at t.yaml:11",
          "t.yaml:19: LocalQueue team/lq: spec.clusterQueue: warning: ClusterQueue \"missing\" "
          "is not in the input",
          "t.yaml:24: ResourceFlavor tas: spec.topologyName: warning: Topology \"nowhere\" is "
          "not in the input",
          "t.yaml:32: ClusterQueue cq: spec.resourceGroups[0].flavors[0].name: warning: "
          "ResourceFlavor \"ghost\" is not in the input",
          "t.yaml:38: Job default/j: metadata.labels[kueue.x-k8s.io/queue-name]: warning: "
          "LocalQueue \"default/nope\" is not in the input",
          "t.yaml:42: Job default/j: spec.template.spec.priorityClassName: warning: "
          "PriorityClass \"vip\" is not in the input"));
}

TEST(Diagnostics, VolcanoQueueCycle) {
  auto r = Decode(R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: a}
spec: {parent: a}
)");
  EXPECT_THAT(Lines(r), ElementsAre("t.yaml:4: Queue a: spec.parent: Queue cycle: a -> a"));
}

TEST(Diagnostics, BatchJobTypeErrors) {
  auto r = Decode(R"(apiVersion: batch/v1
kind: Job
metadata: {generateName: j-}
spec:
  parallelism: many
  template: {spec: {containers: {name: c}}}
)");
  EXPECT_THAT(Lines(r),
              ElementsAre("t.yaml:5: Job default/j-00001: spec.parallelism: \"many\" is not an "
                          "integer",
                          "t.yaml:6: Job default/j-00001: spec.template.spec.containers: must be "
                          "a list, got a map"));
}

TEST(Diagnostics, MissingFileIsAnErrorLine) {
  auto r = LoadPaths({"/nonexistent/muster/x.yaml"});
  EXPECT_THAT(Lines(r), ElementsAre("/nonexistent/muster/x.yaml: no such file or directory"));
  EXPECT_TRUE(r.HasErrors());
}

TEST(Diagnostics, DeepNestingDoesNotCrash) {
  std::string deep(100000, '[');
  auto r = Decode("apiVersion: v1\nkind: Node\nmetadata: {name: " + deep + "\n");
  EXPECT_TRUE(r.HasErrors());
  std::string block = "a:\n";
  for (int i = 1; i < 3000; ++i) block += std::string(i, ' ') + "- \n";
  r = Decode(block);  // must not crash; any diagnostic is fine
  std::string dashes = "x: ";
  for (int i = 0; i < 5000; ++i) dashes += "- ";
  r = Decode(dashes + "\n");
  SUCCEED();
}

// Fuzzer finding: yaml-cpp 0.7's LoadAll loops forever (allocating) on a flow
// collection followed by a top-level ",". Must finish with at most an error.
TEST(Diagnostics, StrayTopLevelCommaDoesNotHang) {
  auto r = Decode("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metan\"},\"status\":{\"n\"}\n");
  r = Decode("{}, b\n---\n[], b\n");
  SUCCEED();
}

TEST(Diagnostics, DocumentsSplitWithDirectivesAndMarkers) {
  auto r = Decode(R"(%YAML 1.2
---
apiVersion: v1
kind: Node
metadata: {name: a}
--- {apiVersion: v1, kind: Node, metadata: {name: b}}
---
# only a comment
---
apiVersion: v1
kind: Node
metadata: {name: c, labels: {x: [bad]}}
)");
  EXPECT_THAT(Lines(r), ElementsAre("t.yaml:12: Node c: metadata.labels[x]: must be a scalar "
                                    "value, got a list"));
  ASSERT_EQ(r.manifests.nodes.size(), 2u);
  EXPECT_EQ(r.manifests.nodes[1].meta.name, "b");
  EXPECT_EQ(r.manifests.nodes[1].meta.source.line, 6);
}

TEST(Diagnostics, QuantitiesOutOfBoundsNameTheFieldAndTheRange) {
  auto r = Decode(R"(apiVersion: v1
kind: Node
metadata: {name: n}
status:
  allocatable:
    nvidia.com/gpu: "1e30"
    memory: 9999999999999Ti
---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      containers:
      - name: c
        resources:
          limits: {nvidia.com/gpu: "2147483648", cpu: abc}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: a
      resources:
      - {name: nvidia.com/gpu, nominalQuota: "0.5"}
)");
  EXPECT_THAT(
      Lines(r),
      ElementsAre(
          "t.yaml:6: Node n: status.allocatable[nvidia.com/gpu]: Invalid value: \"1e30\": "
          "nvidia.com/gpu must be less than or equal to 1024 (the most GPUs one node may have)",
          "t.yaml:7: Node n: status.allocatable[memory]: Invalid value: \"9999999999999Ti\": "
          "memory must be less than or equal to 8Pi",
          "t.yaml:18: Job default/j: "
          "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: "
          "Invalid value: \"2147483648\": nvidia.com/gpu must be less than or equal to "
          "1000000000",
          "t.yaml:18: Job default/j: spec.template.spec.containers[0].resources.limits[cpu]: "
          "\"abc\" "
          "is not a quantity",
          "t.yaml:29: ClusterQueue cq: spec.resourceGroups[0].flavors[0].resources[0]."
          "nominalQuota: Invalid value: \"0.5\": nvidia.com/gpu must be an integer"));
  EXPECT_TRUE(r.manifests.nodes.empty());
}

TEST(Diagnostics, NamesFollowKubernetesRules) {
  auto r = Decode(R"(apiVersion: v1
kind: Node
metadata: {name: a..b}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, resources: {requests: {cpu: abc}}}]}
)");
  EXPECT_THAT(
      Lines(r),
      ElementsAre("t.yaml:3: Node a..b: metadata.name: Invalid value: \"a..b\": a lowercase "
                  "RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                  "'-' or '.', and must start and end with an alphanumeric character (e.g. "
                  "'example.com', regex used for validation is "
                  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                  "t.yaml:8: Pod default/p: spec.containers[0].resources.requests[cpu]: "
                  "\"abc\" is not a quantity"));
}

TEST(Diagnostics, ValidInputHasNone) {
  auto r = Decode(R"(apiVersion: v1
kind: Node
metadata: {name: n}
status: {capacity: {cpu: 4}}
)");
  EXPECT_THAT(Lines(r), IsEmpty());
}

TEST(Diagnostics, FieldsNoDecoderReadsAreWarnedAboutWhenAsked) {
  const std::string yaml = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq
  finalizers: [x]
spec:
  namespaceSelector: {matchLabels: {team: a}}
  admissionChecks: [prov]
  unknownThing:
  resourceGroups:
  - coveredResources: ["cpu"]
    extra: 1
    flavors:
    - name: a
      resources:
      - {name: cpu, nominalQuota: 1, typo: 2}
status:
  pendingWorkloads: 3
)";
  DecodeResult off = Decode(yaml);
  EXPECT_THAT(Lines(off),
              ElementsAre("t.yaml:14: ClusterQueue cq: spec.resourceGroups[0].flavors"
                          "[0].name: warning: ResourceFlavor \"a\" is not in the input"));
  DecodeResult on;
  on.warn_unread_fields = true;
  DecodeText(yaml, "t.yaml", on);
  SortDiagnostics(on);
  // A null field is absent; metadata, status and free-form maps are not checked.
  EXPECT_THAT(Lines(on),
              ElementsAre("t.yaml:8: ClusterQueue cq: spec.admissionChecks: warning: unknown "
                          "field, or one muster does not act on: ignored",
                          "t.yaml:12: ClusterQueue cq: spec.resourceGroups[0].extra: warning: "
                          "unknown field, or one muster does not act on: ignored",
                          "t.yaml:16: ClusterQueue cq: spec.resourceGroups[0].flavors[0]."
                          "resources[0].typo: warning: unknown field, or one muster does not act "
                          "on: ignored"));
  EXPECT_FALSE(on.HasErrors());
}

}  // namespace
}  // namespace muster::api
