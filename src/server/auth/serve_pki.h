// --auto-tls: the certificates muster serve makes for itself, as kubeadm does for a
// cluster. DATA/pki holds a CA (10 years), the serving certificate it signs (SANs:
// localhost, the loopback addresses, this host's name and addresses, the listen
// host; renewed when it no longer covers them or has under 30 days left) and an
// admin client certificate (CN muster-admin, O system:masters; renewed likewise).
// After binding, DATA/admin.kubeconfig points kubectl at the server with that
// certificate: the first credential of a secured server. Kept across restarts, so
// kubeconfigs handed out stay valid.
#pragma once

#include <string>

#include "core/status.h"
#include "server/auth/pki.h"

namespace muster::server::auth {

inline constexpr char kAdminUser[] = "muster-admin";

struct ServePki {
  std::string dir;  // DATA/pki
  std::string ca_cert_file;
  std::string server_cert_file;
  std::string server_key_file;
  KeyPair ca;  // the key is read too: it signs renewals
  KeyPair admin;
};

// Creates what is missing or due for renewal under DATA/pki.
Result<ServePki> EnsureServePki(const std::string& data_dir, const std::string& listen_host);

// The kubeconfig text for `server_url` ("https://127.0.0.1:8080") with `pki`'s CA and
// admin certificate.
std::string AdminKubeconfig(const ServePki& pki, const std::string& server_url);

// Writes AdminKubeconfig to DATA/admin.kubeconfig (0600); returns its path.
Result<std::string> WriteAdminKubeconfig(const std::string& data_dir, const ServePki& pki,
                                         const std::string& server_url);

}  // namespace muster::server::auth
