#include "server/pod_printer.h"

#include <algorithm>
#include <string>

#include "control/json_fields.h"
#include "server/table_printer.h"

namespace muster::server {
namespace {

using control::ArrayField;
using control::IntField;
using control::ObjectField;
using control::StringField;
using nlohmann::json;

// `object` has `key` and it is an object (a container state that is set).
bool HasObject(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_object();
}

// "Signal:9" or "ExitCode:1", for a terminated container that gave no reason.
std::string EndedWithout(const json& terminated) {
  const int64_t signal = IntField(terminated, "signal");
  return signal != 0 ? "Signal:" + std::to_string(signal)
                     : "ExitCode:" + std::to_string(IntField(terminated, "exitCode"));
}

bool ConditionTrue(const json& status, const std::string& type) {
  for (const json& c : ArrayField(status, "conditions")) {
    if (StringField(c, "type") == type) return StringField(c, "status") == "True";
  }
  return false;
}

std::string OrNone(const std::string& v) { return v.empty() ? "<none>" : v; }

}  // namespace

PodPrint PrintPod(const json& pod, int64_t now_unix) {
  const json& spec = ObjectField(pod, "spec");
  const json& status = ObjectField(pod, "status");
  PodPrint out;
  int64_t restarts = 0;
  int64_t ready = 0;
  int64_t last_restart = -1;  // when the latest previous container ended
  std::string reason = StringField(status, "phase");
  if (!StringField(status, "reason").empty()) reason = StringField(status, "reason");
  for (const json& c : ArrayField(status, "conditions")) {
    if (StringField(c, "type") == "PodScheduled" && StringField(c, "reason") == "SchedulingGated") {
      reason = "SchedulingGated";
    }
  }

  // Init containers run one after the other: the first not done says where it is.
  const json& init_statuses = ArrayField(status, "initContainerStatuses");
  const size_t init_count = ArrayField(spec, "initContainers").size();
  bool initializing = false;
  for (size_t i = 0; i < init_statuses.size(); ++i) {
    const json& c = init_statuses[i];
    restarts += IntField(c, "restartCount");
    const json& state = ObjectField(c, "state");
    const json& terminated = ObjectField(state, "terminated");
    const json& waiting = ObjectField(state, "waiting");
    const bool ended = HasObject(state, "terminated");
    if (ended && IntField(terminated, "exitCode") == 0) continue;
    initializing = true;
    if (ended) {
      const std::string r = StringField(terminated, "reason");
      reason = "Init:" + (r.empty() ? EndedWithout(terminated) : r);
    } else if (!StringField(waiting, "reason").empty() &&
               StringField(waiting, "reason") != "PodInitializing") {
      reason = "Init:" + StringField(waiting, "reason");
    } else {
      reason = "Init:" + std::to_string(i) + "/" + std::to_string(init_count);
    }
    break;
  }

  if (!initializing || ConditionTrue(status, "Initialized")) {
    bool has_running = false;
    const json& statuses = ArrayField(status, "containerStatuses");
    for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
      const json& c = *it;
      restarts += IntField(c, "restartCount");
      const json& last = ObjectField(ObjectField(c, "lastState"), "terminated");
      if (HasObject(ObjectField(c, "lastState"), "terminated")) {
        last_restart = std::max(last_restart, ParseTimestamp(StringField(last, "finishedAt")));
      }
      const json& state = ObjectField(c, "state");
      const json& terminated = ObjectField(state, "terminated");
      const json& waiting = ObjectField(state, "waiting");
      if (!StringField(waiting, "reason").empty()) {
        reason = StringField(waiting, "reason");
      } else if (HasObject(state, "terminated")) {
        const std::string r = StringField(terminated, "reason");
        reason = r.empty() ? EndedWithout(terminated) : r;
      } else if (c.is_object() && c.value("ready", json()) == true && HasObject(state, "running")) {
        has_running = true;
        ++ready;
      }
    }
    // A container still runs beside one that completed.
    if (reason == "Completed" && has_running) {
      reason = ConditionTrue(status, "Ready") ? "Running" : "NotReady";
    }
  }
  if (control::BeingDeleted(pod)) {
    reason = StringField(status, "reason") == "NodeLost" ? "Unknown" : "Terminating";
  }

  out.ready = std::to_string(ready) + "/" + std::to_string(ArrayField(spec, "containers").size());
  out.status = reason;
  out.restarts = std::to_string(restarts);
  if (restarts > 0 && last_restart >= 0) {
    out.restarts += " (" + HumanAge(now_unix - last_restart) + " ago)";
  }
  out.ip = OrNone(StringField(status, "podIP"));
  out.node = OrNone(StringField(spec, "nodeName"));
  out.nominated_node = OrNone(StringField(status, "nominatedNodeName"));
  const json& gates = ArrayField(spec, "readinessGates");
  if (gates.empty()) {
    out.readiness_gates = "<none>";
  } else {
    size_t true_gates = 0;
    for (const json& g : gates) {
      true_gates += ConditionTrue(status, StringField(g, "conditionType")) ? 1 : 0;
    }
    out.readiness_gates = std::to_string(true_gates) + "/" + std::to_string(gates.size());
  }
  return out;
}

}  // namespace muster::server
