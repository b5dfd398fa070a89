// Pod addresses and names on one machine. Each pod gets its own loopback address
// (127.B.x.y: the whole of 127/8 is the loopback interface, so nothing is
// configured), recorded in status.podIP; B is derived from the data directory, so two
// servers on one machine hand out different addresses. The names a cluster's DNS would
// give are written into the pod's own /etc/hosts (bind-mounted in its private mount
// namespace), the way the kubelet manages that file:
//
//   - the pod itself: "<ip> <hostname>.<subdomain>.<ns>.svc.cluster.local <hostname>";
//   - "<hostname>.<subdomain>" (+ ".<ns>", ".<ns>.svc", ".<ns>.svc.cluster.local") of
//     every running pod whose subdomain is a Service of its namespace that selects it
//     (CoreDNS's headless-Service pod records), or whose controller creates that
//     Service itself (JobSet, MPIJob, Volcano svc plugin);
//   - the per-replica Services the Kubeflow training operator creates: "<pod>"
//     (PyTorchJob "<job>-master-0", TFJob "<job>-worker-1"...) and its long forms;
//   - every Service "<svc>" (and long forms) with the addresses of the running pods it
//     selects. A ClusterIP is not emulated: the name resolves to the pods themselves,
//     like a headless Service, and ports are the pods' (no port -> targetPort mapping).
// Short forms (without the namespace) only for the pod's own namespace, as the
// search path "<ns>.svc.cluster.local svc.cluster.local cluster.local" gives.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "model/meta.h"

namespace muster::server {

class PodAddressPool {
 public:
  // Addresses 127.<second_octet>.0.1 onwards.
  explicit PodAddressPool(uint8_t second_octet) : octet_(second_octet) {}
  // 16..254 from a hash of `tag` (the data directory).
  static uint8_t OctetFor(const std::string& tag);

  // The lowest free address; "" when all ~65,000 are in use.
  std::string Allocate();
  // Marks `ip` used (a pod adopted after a restart); false if it is not one of ours.
  bool Reserve(const std::string& ip);
  void Release(const std::string& ip);
  size_t used() const { return used_.size(); }

 private:
  uint8_t octet_;
  std::set<uint32_t> used_;  // low 16 bits
};

// What the hosts file needs to know about a running pod.
struct DnsPod {
  std::string namespace_;
  std::string hostname;
  std::string subdomain;
  std::string ip;
  model::StringMap labels;
  bool subdomain_by_controller = false;  // the job's controller creates the Service
  bool per_pod_service = false;          // Kubeflow's "<pod>" Service
};

struct DnsService {
  std::string namespace_;
  std::string name;
  model::StringMap selector;  // spec.selector; empty selects nothing (no endpoints)
};

// The /etc/hosts of pod `self` among `pods` (running pods, `self` included) and
// `services`. Deterministic: pods and services in (namespace, name) order.
std::string HostsFile(const DnsPod& self, const std::vector<DnsPod>& pods,
                      const std::vector<DnsService>& services);

inline constexpr char kClusterDomain[] = "cluster.local";

}  // namespace muster::server
