// ClusterConnection: where the Kubernetes API server is and how muster authenticates
// to it, resolved like client-go does: --kubeconfig, else $KUBECONFIG (first file of
// the list that exists), else the in-cluster service account, else ~/.kube/config.
#pragma once

#include <string>
#include <string_view>

#include "core/base64.h"  // DecodeBase64 (certificates in kubeconfigs)
#include "core/status.h"

namespace muster::kube {

struct ClusterConnection {
  std::string server;  // "https://host:port" (http:// allowed for tests and proxies)
  // Trust: PEM data (certificate-authority-data, decoded) or a file; both empty means
  // the system CAs. insecure_skip_tls_verify disables verification (kubeconfig field).
  std::string ca_pem;
  std::string ca_file;
  bool insecure_skip_tls_verify = false;
  // Client certificate authentication: PEM data or files.
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string client_cert_file;
  std::string client_key_file;
  // Bearer token (token, or tokenFile / the service-account token file, read at load).
  std::string token;
  std::string token_file;  // re-read on 401 (service-account tokens rotate)
  std::string namespace_;  // the context's namespace, else "default"
  std::string source;      // for messages: "kubeconfig /x (context c)" or "in-cluster"
};

// Loads `context` (empty: current-context) of the kubeconfig file at `path`. Errors name
// the file and the missing or malformed field.
Result<ClusterConnection> LoadKubeconfig(const std::string& path, const std::string& context);

// The in-cluster service account: $KUBERNETES_SERVICE_HOST/_PORT and token, ca.crt and
// namespace under `account_dir`.
Result<ClusterConnection> LoadInCluster(
    const std::string& account_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// client-go's order (see above). `kubeconfig_flag` and `context` come from the command line.
// `account_dir` is the in-cluster service-account directory (tests point it elsewhere).
Result<ClusterConnection> ResolveConnection(
    const std::string& kubeconfig_flag, const std::string& context,
    const std::string& account_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// The whole of a local file (a token, a certificate, a kubeconfig); false when it
// cannot be read.
bool ReadLocalFile(const std::string& path, std::string* out);

}  // namespace muster::kube
