#include "server/table_printer.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <utility>

#include "server/label_selector.h"
#include "server/pod_printer.h"

namespace muster::server {
namespace {

using nlohmann::json;

struct Column {
  std::string name;
  std::string type;  // "string", "integer"
  std::string description;
  std::function<json(const json&)> cell;
  int priority = 0;  // 1: shown only with -o wide
};

Column Path(std::string name, const std::string& path, int priority = 0) {
  return {std::move(name), "string", path,
          [path](const json& o) -> json { return FieldValue(o, path); }, priority};
}

// The first non-empty of several paths (v1beta1 and v1beta2 spell some fields
// differently).
Column FirstOf(std::string name, std::vector<std::string> paths) {
  return {std::move(name), "string", paths[0],
          [paths](const json& o) -> json {
            for (const auto& p : paths) {
              std::string v = FieldValue(o, p);
              if (!v.empty()) return v;
            }
            return "";
          },
          0};
}

Column Count(std::string name, const std::string& path) {
  return {std::move(name), "integer", path,
          [path](const json& o) -> json {
            std::string v = FieldValue(o, path);
            return v.empty() ? json(0) : json(std::strtoll(v.c_str(), nullptr, 10));
          },
          0};
}

// The status ("True"/"False"/"Unknown") of a status.conditions entry, "" if absent.
std::string ConditionStatus(const json& o, const std::string& type) {
  if (!o.is_object() || !o.contains("status") || !o["status"].is_object()) return "";
  const json& st = o["status"];
  if (!st.contains("conditions") || !st["conditions"].is_array()) return "";
  for (const auto& c : st["conditions"]) {
    if (c.is_object() && c.value("type", "") == type) return c.value("status", "");
  }
  return "";
}

Column Condition(std::string name, const std::string& type) {
  return {std::move(name), "string", "status.conditions[" + type + "]",
          [type](const json& o) -> json { return ConditionStatus(o, type); }, 0};
}

// Where a kind puts Age among its own columns (as kubectl's printers do, before the
// -o wide ones or, for ResourceQuota, first); RenderTable fills it.
Column AgeHere() { return {"Age", "string", "", nullptr, 0}; }

// Service: TYPE CLUSTER-IP EXTERNAL-IP PORT(S), SELECTOR with -o wide.
std::vector<Column> ServiceColumns() {
  auto external = [](const json& o) -> json {
    const json spec = o.value("spec", json::object());
    std::string ips;
    for (const auto& ip : spec.value("externalIPs", json::array())) {
      if (ip.is_string()) ips += (ips.empty() ? "" : ",") + ip.get<std::string>();
    }
    const std::string type = spec.value("type", "ClusterIP");
    if (type == "LoadBalancer" && ips.empty()) return "<pending>";
    if (type == "ExternalName") return spec.value("externalName", "<none>");
    return ips.empty() ? "<none>" : ips;
  };
  auto ports = [](const json& o) -> json {
    std::string out;
    const json list = o.value("spec", json::object()).value("ports", json::array());
    for (const auto& p : list) {
      if (!p.is_object()) continue;
      std::string one = p.value("port", json(0)).dump();
      if (p.contains("nodePort")) one += ":" + p["nodePort"].dump();
      out += (out.empty() ? "" : ",") + one + "/" + p.value("protocol", "TCP");
    }
    return out.empty() ? "<none>" : out;
  };
  auto selector = [](const json& o) -> json {
    std::string out;
    const json sel = o.value("spec", json::object()).value("selector", json::object());
    for (const auto& [k, v] : sel.items()) {
      out += (out.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : "");
    }
    return out.empty() ? "<none>" : out;
  };
  return {Path("Type", "spec.type"),
          Path("Cluster-IP", "spec.clusterIP"),
          {"External-IP", "string", "External IPs", external, 0},
          {"Port(s)", "string", "Ports", ports, 0},
          AgeHere(),
          {"Selector", "string", "Selector", selector, 1}};
}

// PersistentVolumeClaim: STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS
// VOLUMEATTRIBUTESCLASS.
std::vector<Column> ClaimColumns() {
  auto capacity = [](const json& o) -> json {
    const json status = o.value("status", json::object());
    const json cap = status.value("capacity", json::object()).value("storage", json(""));
    return cap.is_string() ? cap : json(cap.dump());
  };
  auto modes = [](const json& o) -> json {
    std::string out;
    for (const auto& m : o.value("status", json::object()).value("accessModes", json::array())) {
      const std::string mode = m.is_string() ? m.get<std::string>() : "";
      const std::string abbr = mode == "ReadWriteOnce"      ? "RWO"
                               : mode == "ReadOnlyMany"     ? "ROX"
                               : mode == "ReadWriteMany"    ? "RWX"
                               : mode == "ReadWriteOncePod" ? "RWOP"
                                                            : mode;
      out += (out.empty() ? "" : ",") + abbr;
    }
    return out;
  };
  auto attributes_class = [](const json& o) -> json {
    std::string v = FieldValue(o, "spec.volumeAttributesClassName");
    return v.empty() ? "<unset>" : v;
  };
  return {Path("Status", "status.phase"),
          Path("Volume", "spec.volumeName"),
          {"Capacity", "string", "Capacity", capacity, 0},
          {"Access Modes", "string", "Access modes", modes, 0},
          Path("StorageClass", "spec.storageClassName"),
          {"VolumeAttributesClass", "string", "VolumeAttributesClass", attributes_class, 0},
          AgeHere(),
          Path("VolumeMode", "spec.volumeMode", 1)};
}

// ResourceQuota's REQUEST or LIMIT: "name: used/hard, ..." of status.hard, limits.*
// in LIMIT and the rest in REQUEST.
Column QuotaColumn(std::string name, bool limits) {
  return {std::move(name), "string", "used/hard",
          [limits](const json& o) -> json {
            const json status = o.value("status", json::object());
            const json hard = status.value("hard", json::object());
            const json used = status.value("used", json::object());
            std::string out;
            for (const auto& [r, h] : hard.items()) {
              if ((r.rfind("limits", 0) == 0) != limits) continue;
              const json u = used.value(r, json("0"));
              out += (out.empty() ? "" : ", ") + r + ": " +
                     (u.is_string() ? u.get<std::string>() : u.dump()) + "/" +
                     (h.is_string() ? h.get<std::string>() : h.dump());
            }
            return out;
          },
          0};
}

// A job's state as its controller's printer columns show it: the latest condition
// that holds (Kubeflow's STATE column), or Volcano's status.state.phase.
Column JobState() {
  return {"State", "string", "status",
          [](const json& o) -> json {
            std::string phase = FieldValue(o, "status.state.phase");
            if (!phase.empty()) return phase;
            std::string state;
            const json* conditions = nullptr;
            if (o.is_object() && o.contains("status") && o["status"].is_object() &&
                o["status"].contains("conditions")) {
              conditions = &o["status"]["conditions"];
            }
            if (conditions != nullptr && conditions->is_array()) {
              for (const auto& c : *conditions) {
                if (c.is_object() && c.value("status", "") == "True") state = c.value("type", "");
              }
            }
            return state;
          },
          0};
}

bool JobCondition(const json& o, const char* type) { return ConditionStatus(o, type) == "True"; }

// "a,b" of the pod template's containers' `field` (kubectl's layoutContainerCells);
// `cron`: the template of a CronJob's jobTemplate.
std::string TemplateContainers(const json& o, const char* field, bool cron = false) {
  const json* containers = &o;
  if (cron) {
    for (const char* key : {"spec", "jobTemplate"}) {
      if (!containers->is_object() || !containers->contains(key)) return "";
      containers = &(*containers)[key];
    }
  }
  for (const char* key : {"spec", "template", "spec", "containers"}) {
    if (!containers->is_object() || !containers->contains(key)) return "";
    containers = &(*containers)[key];
  }
  std::string out;
  if (!containers->is_array()) return out;
  for (const json& c : *containers) {
    if (!out.empty()) out += ",";
    if (c.is_object()) out += c.value(field, "");
  }
  return out;
}

// kubectl's printJob: STATUS, COMPLETIONS, DURATION, AGE; wide: CONTAINERS, IMAGES,
// SELECTOR.
std::vector<Column> BatchJobColumns(int64_t now_unix) {
  auto status = [](const json& o) -> json {
    if (JobCondition(o, "Complete")) return "Complete";
    if (JobCondition(o, "Failed")) return "Failed";
    if (!FieldValue(o, "metadata.deletionTimestamp").empty()) return "Terminating";
    if (JobCondition(o, "Suspended")) return "Suspended";
    if (JobCondition(o, "FailureTarget")) return "FailureTarget";
    return "Running";
  };
  auto completions = [](const json& o) -> json {
    const std::string succeeded = [&] {
      std::string v = FieldValue(o, "status.succeeded");
      return v.empty() ? std::string("0") : v;
    }();
    const std::string want = FieldValue(o, "spec.completions");
    if (!want.empty()) return succeeded + "/" + want;
    const std::string parallelism = FieldValue(o, "spec.parallelism");
    if (!parallelism.empty() && std::strtoll(parallelism.c_str(), nullptr, 10) > 1) {
      return succeeded + "/1 of " + parallelism;
    }
    return succeeded + "/1";
  };
  auto duration = [now_unix](const json& o) -> json {
    const int64_t start = ParseTimestamp(FieldValue(o, "status.startTime"));
    if (start < 0) return "";
    const int64_t end = ParseTimestamp(FieldValue(o, "status.completionTime"));
    return HumanAge((end < 0 ? now_unix : end) - start);
  };
  return {{"Status", "string", "Status of the job.", status, 0},
          {"Completions", "string", "The number of pods which reached phase Succeeded.",
           completions, 0},
          {"Duration", "string", "Time required to complete the job.", duration, 0},
          AgeHere(),
          {"Containers", "string", "Names of each container in the template.",
           [](const json& o) -> json { return TemplateContainers(o, "name"); }, 1},
          {"Images", "string", "Images referenced by each container in the template.",
           [](const json& o) -> json { return TemplateContainers(o, "image"); }, 1},
          {"Selector", "string", "A label query over pods that should match the pod count.",
           [](const json& o) -> json {
             const json* spec = o.is_object() && o.contains("spec") ? &o["spec"] : nullptr;
             return FormatLabelSelector(
                 spec != nullptr && spec->is_object() ? spec->value("selector", json()) : json());
           },
           1}};
}

// kubectl's printCronJob: SCHEDULE, TIMEZONE, SUSPEND, ACTIVE, LAST SCHEDULE, AGE;
// wide: CONTAINERS, IMAGES, SELECTOR.
std::vector<Column> CronJobColumns(int64_t now_unix) {
  auto or_none = [](const std::string& v) -> json { return v.empty() ? "<none>" : v; };
  return {Path("Schedule", "spec.schedule"),
          {"Timezone", "string", "The time zone the schedule is read in.",
           [or_none](const json& o) -> json { return or_none(FieldValue(o, "spec.timeZone")); }, 0},
          {"Suspend", "boolean", "Whether new Jobs are held.",
           [](const json& o) -> json {
             // kubectl's printBoolPtr.
             const std::string v = FieldValue(o, "spec.suspend");
             return v.empty() ? "<unset>" : v == "true" ? "True" : "False";
           },
           0},
          {"Active", "integer", "The number of running jobs.",
           [](const json& o) -> json {
             const json* active = o.is_object() && o.contains("status") &&
                                          o["status"].is_object() && o["status"].contains("active")
                                      ? &o["status"]["active"]
                                      : nullptr;
             return active != nullptr && active->is_array() ? active->size() : 0;
           },
           0},
          {"Last Schedule", "string", "When a job was last scheduled.",
           [now_unix](const json& o) -> json {
             const int64_t t = ParseTimestamp(FieldValue(o, "status.lastScheduleTime"));
             return t < 0 ? json("<none>") : json(HumanAge(now_unix - t));
           },
           0},
          AgeHere(),
          {"Containers", "string", "Names of each container in the template.",
           [](const json& o) -> json { return TemplateContainers(o, "name", true); }, 1},
          {"Images", "string", "Images referenced by each container in the template.",
           [](const json& o) -> json { return TemplateContainers(o, "image", true); }, 1},
          {"Selector", "string", "A label query over pods that should match the pod count.",
           [or_none](const json& o) -> json {
             return or_none(FieldValue(o, "spec.jobTemplate.spec.selector"));
           },
           1}};
}

size_t EntriesOf(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_object() ? o[key].size() : 0;
}

// kubectl's printers for the core kinds (pkg/printers/internalversion).
std::vector<Column> CoreColumns(const std::string& k) {
  if (k == "ConfigMap") {
    return {
        {"Data", "integer", "Number of data entries",
         [](const json& o) -> json { return EntriesOf(o, "data") + EntriesOf(o, "binaryData"); },
         0}};
  }
  if (k == "Secret") {
    return {Path("Type", "type"),
            {"Data", "integer", "Number of data entries",
             [](const json& o) -> json { return EntriesOf(o, "data"); }, 0}};
  }
  if (k == "ServiceAccount") {
    return {{"Secrets", "integer", "Number of secrets",
             [](const json& o) -> json {
               return o.contains("secrets") && o["secrets"].is_array() ? o["secrets"].size() : 0;
             },
             0}};
  }
  if (k == "Service") return ServiceColumns();
  if (k == "PersistentVolumeClaim") return ClaimColumns();
  if (k == "ResourceQuota") {
    return {AgeHere(), QuotaColumn("Request", false), QuotaColumn("Limit", true)};
  }
  return {};
}

// kubectl's pod columns (pod_printer.h): READY, STATUS, RESTARTS, AGE; wide: IP,
// NODE, NOMINATED NODE, READINESS GATES.
std::vector<Column> PodColumns(int64_t now_unix) {
  // The columns share one printing of the row's pod: printed once per row, not once
  // per column. The columns live for one RenderTable, whose rows stay where they are.
  auto printed = std::make_shared<std::pair<const json*, PodPrint>>(nullptr, PodPrint{});
  auto cell = [now_unix, printed](std::string PodPrint::*field) {
    return [now_unix, printed, field](const json& o) -> json {
      if (printed->first != &o) *printed = {&o, PrintPod(o, now_unix)};
      return printed->second.*field;
    };
  };
  return {{"Ready", "string", "The aggregate readiness state of this pod for accepting traffic.",
           cell(&PodPrint::ready), 0},
          {"Status", "string", "The aggregate status of the containers in this pod.",
           cell(&PodPrint::status), 0},
          {"Restarts", "string",
           "The number of times the containers in this pod have been restarted and when the last "
           "container in this pod has restarted.",
           cell(&PodPrint::restarts), 0},
          AgeHere(),
          {"IP", "string", "IP address allocated to the pod.", cell(&PodPrint::ip), 1},
          {"Node", "string", "Name of the node this pod is assigned to.", cell(&PodPrint::node), 1},
          {"Nominated Node", "string", "Name of the node this pod is nominated to run on.",
           cell(&PodPrint::nominated_node), 1},
          {"Readiness Gates", "string", "The pod's readiness gates.",
           cell(&PodPrint::readiness_gates), 1}};
}

std::vector<Column> KindColumns(const control::ResourceType& t, int64_t now_unix) {
  const std::string& k = t.kind;
  if (t.group.empty()) {
    if (auto core = CoreColumns(k); !core.empty()) return core;
  }
  if (k == "ClusterQueue") {
    return {FirstOf("Cohort", {"spec.cohort", "spec.cohortName"}),
            Path("Strategy", "spec.queueingStrategy", 1),
            Count("Pending Workloads", "status.pendingWorkloads"),
            Count("Admitted Workloads", "status.admittedWorkloads")};
  }
  if (k == "LocalQueue") {
    return {Path("ClusterQueue", "spec.clusterQueue"),
            Count("Pending Workloads", "status.pendingWorkloads"),
            Count("Admitted Workloads", "status.admittedWorkloads")};
  }
  if (k == "Workload") {
    return {Path("Queue", "spec.queueName"), Path("Reserved in", "status.admission.clusterQueue"),
            Condition("Admitted", "Admitted"), Condition("Finished", "Finished")};
  }
  if (k == "Cohort") return {FirstOf("Parent", {"spec.parent", "spec.parentName"})};
  if (k == "Job" && t.group == "batch") return BatchJobColumns(now_unix);
  if (k == "CronJob" && t.group == "batch") return CronJobColumns(now_unix);
  if (k == "Job" || k == "PyTorchJob" || k == "TFJob" || k == "MPIJob" || k == "JobSet" ||
      k == "TrainJob") {
    return {JobState()};
  }
  if (k == "PriorityClass" || k == "WorkloadPriorityClass") return {Path("Value", "value")};
  if (k == "Pod" && t.group.empty()) return PodColumns(now_unix);
  if (k == "Namespace") {
    return {{"Status", "string", "status.phase",
             [](const json& o) -> json {
               std::string v = FieldValue(o, "status.phase");
               return v.empty() ? "Active" : v;
             },
             0}};
  }
  if (k == "Event") {
    return {Path("Type", "type"),
            Path("Reason", "reason"),
            {"Object", "string", "involvedObject",
             [](const json& o) -> json {
               return FieldValue(o, "involvedObject.kind") + "/" +
                      FieldValue(o, "involvedObject.name");
             },
             0},
            Path("Message", "message")};
  }
  if (k == "Queue") {
    return {Path("Weight", "spec.weight"), Path("State", "status.state"),
            Path("Parent", "spec.parent")};
  }
  // muster.dev/v1alpha1 scheduler views (ui/view_api.h).
  if (k == "WorkloadView") {
    return {Path("Queue", "queue.clusterQueue"),
            Path("State", "state"),
            Path("Position", "positionInClusterQueue"),
            Path("Priority", "priority"),
            Path("Reason", "reason"),
            Path("Message", "message", 1)};
  }
  if (k == "QueueView") {
    return {Path("Kind", "queue.kind"), Path("Parent", "parent"),
            Count("Pending", "workloads.pending"), Count("Admitted", "workloads.admitted"),
            Path("Share", "fairSharing.weightedShare")};
  }
  // "used/allocatable" GPUs of a NodeView or the ClusterView (resource names hold dots,
  // so no dotted path reaches them).
  const Column gpus = {"GPUs", "string", "used/allocatable nvidia.com/gpu",
                       [](const json& o) -> json {
                         auto get = [&](const char* m) -> std::string {
                           if (!o.contains(m) || !o[m].is_object()) return "0";
                           return o[m].value("nvidia.com/gpu", "0");
                         };
                         return get("used") + "/" + get("allocatable");
                       },
                       0};
  if (k == "NodeView") return {Path("Ready", "ready"), gpus};
  if (k == "ClusterView") {
    return {Path("Nodes", "nodes.total"), gpus, Count("Pending", "workloads.Pending"),
            Count("Running", "workloads.Running")};
  }
  if (k == "RoleBinding" || k == "ClusterRoleBinding") {
    return {{"Role", "string", "roleRef",
             [](const json& o) -> json {
               return FieldValue(o, "roleRef.kind") + "/" + FieldValue(o, "roleRef.name");
             },
             0}};
  }
  if (k == "PodGroup") {
    return {Path("Status", "status.phase"), Path("MinMember", "spec.minMember"),
            Path("Queue", "spec.queue")};
  }
  return {};
}

json PartialMetadata(const json& object) {
  json md = object.is_object() && object.contains("metadata") ? object["metadata"] : json::object();
  return {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", md}};
}

}  // namespace

std::string HumanAge(int64_t s) {
  if (s < 0) s = 0;
  const int64_t m = s / 60, h = s / 3600, d = s / 86400;
  auto str = [](int64_t v) { return std::to_string(v); };
  if (s < 120) return str(s) + "s";
  if (m < 10) return s % 60 == 0 ? str(m) + "m" : str(m) + "m" + str(s % 60) + "s";
  if (h < 3) return str(m) + "m";
  if (h < 8) return m % 60 == 0 ? str(h) + "h" : str(h) + "h" + str(m % 60) + "m";
  if (h < 48) return str(h) + "h";
  if (d < 8) return h % 24 == 0 ? str(d) + "d" : str(d) + "d" + str(h % 24) + "h";
  if (d < 730) return str(d) + "d";  // two years
  return str(d / 365) + "y";
}

int64_t ParseTimestamp(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end) return -1;
  return static_cast<int64_t>(timegm(&tm));
}

json RenderTable(const control::ResourceType& type, const std::vector<json>& objects,
                 const std::string& resource_version, const TableOptions& options) {
  std::vector<Column> cols;
  cols.push_back(Path("Name", "metadata.name"));
  cols.back().description = "Name must be unique within a namespace.";
  const Column age = {"Age", "string", "Time since creation",
                      [&options](const json& o) -> json {
                        int64_t t = ParseTimestamp(FieldValue(o, "metadata.creationTimestamp"));
                        return t < 0 ? "<unknown>" : HumanAge(options.now_unix - t);
                      },
                      0};
  bool aged = false;
  for (auto& c : KindColumns(type, options.now_unix)) {
    aged = aged || !c.cell;
    if (c.cell) {
      cols.push_back(std::move(c));
    } else {
      cols.push_back(age);
    }
  }
  if (!aged) cols.push_back(age);

  json table = {{"kind", "Table"},
                {"apiVersion", "meta.k8s.io/v1"},
                {"metadata", {{"resourceVersion", resource_version}}},
                {"columnDefinitions", json::array()},
                {"rows", json::array()}};
  if (!options.no_headers) {
    for (const auto& c : cols) {
      json def = {{"name", c.name},
                  {"type", c.type},
                  {"format", c.name == "Name" ? "name" : ""},
                  {"description", c.description},
                  {"priority", c.priority}};
      table["columnDefinitions"].push_back(std::move(def));
    }
  }
  for (const auto& o : objects) {
    json cells = json::array();
    for (const auto& c : cols) cells.push_back(c.cell(o));
    json row = {{"cells", cells}};
    if (options.include == IncludeObject::kMetadata) row["object"] = PartialMetadata(o);
    if (options.include == IncludeObject::kObject) row["object"] = o;
    table["rows"].push_back(std::move(row));
  }
  return table;
}

}  // namespace muster::server
