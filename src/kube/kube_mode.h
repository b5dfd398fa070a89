// RunKube: the `muster kube` process. Connects to the API server, mirrors what muster
// reads (one reflector per watched resource), serves the admission webhook when asked,
// and runs the KubeController — on every replica, or only on the leader when leader
// election is on (a replica that loses the lease exits, as client-go controllers do,
// so two never write at once). SIGTERM/SIGINT stop it cleanly, releasing the lease.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "kube/kube_client.h"
#include "kube/kube_controller.h"

namespace muster::kube {

struct KubeModeOptions {
  std::string kubeconfig;  // empty: $KUBECONFIG, in-cluster, ~/.kube/config
  std::string context;
  ClientOptions client;
  KubeOptions controller;
  bool leader_elect = false;
  std::string lease_namespace;  // empty: the connection's namespace
  std::string lease_name = "muster-scheduler";
  int webhook_port = 0;  // 0: no webhook listener
  std::string webhook_cert_dir = "/etc/muster/certs";
  // The dashboard's listener (kube/dashboard_server.h); 0: none.
  int dashboard_port = 0;
  std::string dashboard_host = "127.0.0.1";
};

// Returns 1 when the connection or the webhook cannot be set up. Otherwise it does not
// return: once every thread has stopped it ends the process (_Exit) with 0 after a
// clean shutdown or 2 when leadership was lost, instead of freeing its state object
// by object.
int RunKube(const KubeModeOptions& options, std::ostream& out, std::ostream& err);

}  // namespace muster::kube
