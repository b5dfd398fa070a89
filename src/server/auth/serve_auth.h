// How `muster serve` authenticates, from its flags (kube-apiserver's names):
// --tls-cert-file and --tls-private-key-file serve HTTPS; --client-ca-file makes a
// verified client certificate a user (CN) with groups (O); --token-auth-file is
// kube-apiserver's static token CSV. With either of the last two, every request
// must authenticate (anonymous requests are 401, not system:anonymous) and, with
// --authorization-mode RBAC (the default), be allowed by RBAC (rbac_authorizer.h);
// AlwaysAllow lets every authenticated user do everything. With neither, every
// request is the server's own user (identity.h, in system:masters) and serve listens
// on loopback only: a non-loopback --listen is refused, as is one without TLS.
// --auto-tls makes the TLS and client-CA files itself (serve_pki.h).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "server/auth/authenticator.h"
#include "server/auth/serve_pki.h"
#include "server/auth/tls.h"

namespace muster::server::auth {

struct AuthOptions {
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::string client_ca_file;
  std::string token_auth_file;
  std::string authorization_mode = "RBAC";  // or "AlwaysAllow"
  // Serve HTTPS with certificates muster makes in DATA/pki (serve_pki.h), verify
  // client certificates against its CA, write DATA/admin.kubeconfig.
  bool auto_tls = false;
};

struct ServeAuth {
  std::shared_ptr<TlsContext> tls;  // null: plain HTTP
  Authenticator authenticator;
  // Requests are authorized with RBAC: authentication is on and the mode is RBAC.
  bool rbac = false;
  std::optional<ServePki> pki;  // --auto-tls: what the admin kubeconfig is made of
};

// Whether a --listen host only accepts connections from this machine.
bool IsLoopbackHost(const std::string& host);

// Reads the files the options name; errors name the flag, the file and its line.
Result<ServeAuth> SetUpAuthentication(const AuthOptions& options, const std::string& listen_host,
                                      const std::string& data_dir = "");

}  // namespace muster::server::auth
