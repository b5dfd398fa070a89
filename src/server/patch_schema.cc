#include "server/patch_schema.h"

namespace muster::server {
namespace {

PatchField Merge(std::string key, const PatchSchema* schema = nullptr) {
  return PatchField{true, false, std::move(key), schema};
}
PatchField Struct(const PatchSchema* schema) { return PatchField{false, false, "", schema}; }

struct Schemas {
  PatchSchema object_meta{{{"finalizers", Merge("")}, {"ownerReferences", Merge("uid")}}};
  PatchSchema container{{{"ports", Merge("containerPort")},
                         {"env", Merge("name")},
                         {"volumeMounts", Merge("mountPath")},
                         {"volumeDevices", Merge("devicePath")}}};
  PatchSchema pod_spec{{{"containers", Merge("name", &container)},
                        {"initContainers", Merge("name", &container)},
                        {"ephemeralContainers", Merge("name", &container)},
                        {"volumes", PatchField{true, true, "name", nullptr}},
                        {"imagePullSecrets", Merge("name")},
                        {"hostAliases", Merge("ip")},
                        {"topologySpreadConstraints", Merge("topologyKey")},
                        {"schedulingGates", Merge("name")},
                        {"resourceClaims", PatchField{true, true, "name", nullptr}}}};
  PatchSchema pod_template{{{"metadata", Struct(&object_meta)}, {"spec", Struct(&pod_spec)}}};
  PatchSchema pod_status{
      {{"conditions", Merge("type")}, {"podIPs", Merge("ip")}, {"hostIPs", Merge("ip")}}};
  PatchSchema conditions_status{{{"conditions", Merge("type")}}};
  PatchSchema job_spec{{{"template", Struct(&pod_template)}}};
  PatchSchema job_template{{{"metadata", Struct(&object_meta)}, {"spec", Struct(&job_spec)}}};
  PatchSchema cronjob_spec{{{"jobTemplate", Struct(&job_template)}}};
  PatchSchema service_spec{{{"ports", Merge("port")}}};
  PatchSchema node_spec{{{"podCIDRs", Merge("")}}};
  PatchSchema node_status{{{"conditions", Merge("type")}, {"addresses", Merge("type")}}};

  PatchSchema plain{{{"metadata", Struct(&object_meta)}}};
  PatchSchema pod{{{"metadata", Struct(&object_meta)},
                   {"spec", Struct(&pod_spec)},
                   {"status", Struct(&pod_status)}}};
  PatchSchema job{{{"metadata", Struct(&object_meta)},
                   {"spec", Struct(&job_spec)},
                   {"status", Struct(&conditions_status)}}};
  // status.active is atomic upstream: replaced whole.
  PatchSchema cronjob{{{"metadata", Struct(&object_meta)}, {"spec", Struct(&cronjob_spec)}}};
  PatchSchema service{{{"metadata", Struct(&object_meta)},
                       {"spec", Struct(&service_spec)},
                       {"status", Struct(&conditions_status)}}};
  PatchSchema service_account{{{"metadata", Struct(&object_meta)}, {"secrets", Merge("name")}}};
  PatchSchema node{{{"metadata", Struct(&object_meta)},
                    {"spec", Struct(&node_spec)},
                    {"status", Struct(&node_status)}}};
  PatchSchema with_conditions{
      {{"metadata", Struct(&object_meta)}, {"status", Struct(&conditions_status)}}};
};

const Schemas& All() {
  static const Schemas kSchemas;
  return kSchemas;
}

}  // namespace

const PatchField* PatchSchema::Find(const std::string& name) const {
  auto it = fields.find(name);
  return it == fields.end() ? nullptr : &it->second;
}

bool IsBuiltInKind(const control::ResourceType& type) {
  const std::string& g = type.group;
  return g.empty() || g == "batch" || g == "scheduling.k8s.io" ||
         g == "rbac.authorization.k8s.io" || g == "coordination.k8s.io" ||
         g == "authorization.k8s.io";
}

const PatchSchema* SchemaOf(const control::ResourceType& type) {
  if (!IsBuiltInKind(type)) return nullptr;
  const Schemas& s = All();
  const std::string& k = type.kind;
  if (k == "Pod") return &s.pod;
  if (k == "Job" && type.group == "batch") return &s.job;
  if (k == "CronJob" && type.group == "batch") return &s.cronjob;
  if (k == "Service") return &s.service;
  if (k == "ServiceAccount") return &s.service_account;
  if (k == "Node") return &s.node;
  if (k == "Namespace" || k == "PersistentVolumeClaim") return &s.with_conditions;
  return &s.plain;
}

}  // namespace muster::server
