// The pod template fields the executors act on: env valueFrom and envFrom, volumes
// and volumeMounts, hostname, imagePullPolicy; and their errors with field paths.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace muster::api {
namespace {

using testing::Decode;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::Lines;

const model::PodSpec& SpecOf(const DecodeResult& r) {
  return std::get<model::BatchJob>(r.manifests.jobs.at(0)).spec.tmpl.spec;
}

TEST(DecodePodSpec, EnvSourcesVolumesAndMounts) {
  auto r = Decode(R"(apiVersion: batch/v1
kind: Job
metadata:
  name: j
spec:
  template:
    spec:
      restartPolicy: Never
      hostname: h
      subdomain: s
      serviceAccountName: trainer
      containers:
      - name: main
        image: img
        imagePullPolicy: Never
        command: ["sh"]
        envFrom:
        - prefix: CFG_
          configMapRef: {name: settings, optional: true}
        - secretRef: {name: token}
        env:
        - name: IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
        - name: MEM
          valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}
        - name: KEY
          valueFrom: {configMapKeyRef: {name: settings, key: lr}}
        - name: PASS
          valueFrom: {secretKeyRef: {name: token, key: value, optional: true}}
        volumeMounts:
        - {name: scratch, mountPath: /scratch}
        - {name: cfg, mountPath: /etc/cfg, readOnly: true, subPath: conf}
        - {name: data, mountPath: /data}
      volumes:
      - name: scratch
        emptyDir: {medium: Memory, sizeLimit: 64Mi}
      - name: cfg
        configMap:
          name: settings
          defaultMode: 0440
          items: [{key: lr, path: conf/lr, mode: 0400}]
      - name: data
        persistentVolumeClaim: {claimName: datasets, readOnly: true}
      - name: host
        hostPath: {path: /srv/data, type: Directory}
      - name: meta
        downwardAPI:
          items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]
)");
  EXPECT_THAT(Lines(r), IsEmpty());
  const model::PodSpec& spec = SpecOf(r);
  EXPECT_EQ(spec.hostname, "h");
  EXPECT_EQ(spec.service_account_name, "trainer");
  const model::Container& c = spec.containers.at(0);
  EXPECT_EQ(c.image_pull_policy, "Never");
  ASSERT_EQ(c.env_from.size(), 2u);
  EXPECT_EQ(c.env_from[0].prefix, "CFG_");
  EXPECT_EQ(c.env_from[0].config_map, "settings");
  EXPECT_TRUE(c.env_from[0].optional);
  EXPECT_EQ(c.env_from[1].secret, "token");
  ASSERT_EQ(c.env.size(), 4u);
  EXPECT_EQ(c.env[0].value_from->field_path, "status.podIP");
  EXPECT_EQ(c.env[1].value_from->resource, "limits.memory");
  EXPECT_EQ(c.env[1].value_from->divisor->ToString(), "1Mi");
  EXPECT_EQ(c.env[2].value_from->config_map_key->key, "lr");
  EXPECT_TRUE(c.env[3].value_from->secret_key->optional);
  ASSERT_EQ(c.volume_mounts.size(), 3u);
  EXPECT_EQ(c.volume_mounts[1].sub_path, "conf");
  EXPECT_TRUE(c.volume_mounts[1].read_only);
  ASSERT_EQ(spec.volumes.size(), 5u);
  EXPECT_EQ(spec.volumes[0].kind, model::VolumeKind::kEmptyDir);
  EXPECT_EQ(spec.volumes[0].medium, "Memory");
  EXPECT_EQ(spec.volumes[0].size_limit->ToString(), "64Mi");
  EXPECT_EQ(spec.volumes[1].kind, model::VolumeKind::kConfigMap);
  EXPECT_EQ(spec.volumes[1].default_mode, 0440);  // YAML 1.1 octal, as kubectl reads it
  EXPECT_EQ(spec.volumes[1].items.at(0).mode, 0400);
  EXPECT_EQ(spec.volumes[2].kind, model::VolumeKind::kPersistentVolumeClaim);
  EXPECT_EQ(spec.volumes[2].source, "datasets");
  EXPECT_TRUE(spec.volumes[2].read_only);
  EXPECT_EQ(spec.volumes[3].host_path_type, "Directory");
  EXPECT_EQ(spec.volumes[4].downward_items.at(0).second, "metadata.labels");
}

TEST(DecodePodSpec, ErrorsNameTheField) {
  auto r = Decode(R"(apiVersion: batch/v1
kind: Job
metadata:
  name: j
spec:
  template:
    spec:
      containers:
      - name: main
        env:
        - name: BOTH
          value: x
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: NONE
          valueFrom: {}
        envFrom:
        - {configMapRef: {name: a}, secretRef: {name: b}}
        volumeMounts:
        - {name: nope, mountPath: /x}
        - {name: v, mountPath: /y, subPath: ../escape}
      volumes:
      - name: v
        emptyDir: {}
        hostPath: {path: /tmp}
      - name: rel
        hostPath: {path: relative}
      - name: nfs
        nfs: {server: s, path: /}
)");
  EXPECT_TRUE(r.HasErrors());
  EXPECT_THAT(
      Lines(r),
      ElementsAre(
          "t.yaml:13: Job default/j: spec.template.spec.containers[0].env[0].valueFrom: may not "
          "be specified when `value` is not empty",
          "t.yaml:15: Job default/j: spec.template.spec.containers[0].env[1].valueFrom: must "
          "specify exactly one of: fieldRef, resourceFieldRef, configMapKeyRef or secretKeyRef",
          "t.yaml:17: Job default/j: spec.template.spec.containers[0].envFrom[0]: must specify "
          "exactly one of: configMapRef or secretRef",
          "t.yaml:19: Job default/j: spec.template.spec.containers[0].volumeMounts[0].name: Not "
          "found: \"nope\" (no volume of the pod has this name)",
          "t.yaml:20: Job default/j: spec.template.spec.containers[0].volumeMounts[1].subPath: "
          "must be a relative path not containing '..'",
          "t.yaml:22: Job default/j: spec.template.spec.volumes[0]: may not specify more than 1 "
          "volume type",
          "t.yaml:26: Job default/j: spec.template.spec.volumes[1].hostPath.path: must be an "
          "absolute path",
          "t.yaml:27: Job default/j: spec.template.spec.volumes[2]: warning: volume source is "
          "not one muster provides (emptyDir, hostPath, configMap, secret, "
          "persistentVolumeClaim, downwardAPI): a pod mounting it fails to start"));
}

// Requests count every container; serve's executors start the first container only,
// so the others and the init containers are named, not dropped silently.
TEST(DecodePodSpec, ContainersServeDoesNotRunAreWarnedAbout) {
  auto r = Decode(R"(apiVersion: batch/v1
kind: Job
metadata:
  name: j
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
      - {name: fetch, image: img, command: ["true"]}
      containers:
      - {name: main, image: img, command: ["true"]}
      - {name: shipper, image: img, command: ["true"]}
)");
  EXPECT_FALSE(r.HasErrors());
  EXPECT_THAT(Lines(r),
              ElementsAre("t.yaml:10: Job default/j: spec.template.spec.initContainers: warning: "
                          "not run by muster serve: its pods start their first container only (a "
                          "kubelet under muster kube runs them)",
                          "t.yaml:13: Job default/j: spec.template.spec.containers[1]: warning: "
                          "not run by muster serve: its pods start their first container (main) "
                          "only (a kubelet under muster kube runs it)"));
  EXPECT_EQ(SpecOf(r).containers.size(), 2u);
  EXPECT_EQ(SpecOf(r).init_containers.size(), 1u);
}

}  // namespace
}  // namespace muster::api
