// What `kubectl get pods` prints for a Pod, computed as kube-apiserver's table printer
// (printPod) computes it: READY (ready containers / containers), STATUS (the phase,
// or the reason a container waits or ended, SchedulingGated, Init:N/M while init
// containers run, Terminating once marked for deletion), RESTARTS (with how long ago
// the last one ended), and with -o wide IP, NODE, NOMINATED NODE and READINESS GATES.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace muster::server {

struct PodPrint {
  std::string ready;            // "1/2"
  std::string status;           // "Running", "Completed", "CrashLoopBackOff", "Init:0/1", ...
  std::string restarts;         // "0", "3 (2m10s ago)"
  std::string ip;               // status.podIP, "<none>"
  std::string node;             // spec.nodeName, "<none>"
  std::string nominated_node;   // status.nominatedNodeName, "<none>"
  std::string readiness_gates;  // "1/2", "<none>"
};

PodPrint PrintPod(const nlohmann::json& pod, int64_t now_unix);

}  // namespace muster::server
